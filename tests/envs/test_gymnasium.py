"""The single-agent environments pass Gymnasium's check_env, are made by id, play the
learner against house bots to the end, and reward the learner's final place."""

from __future__ import annotations

import random
import re
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import arena.envs  # noqa: F401 (registers the Gymnasium ids)
from arena.envs import risk_v0, stratego_v0
from arena.envs.core import ranked

DOC = Path(__file__).resolve().parents[2] / "docs" / "environments.md"


@pytest.mark.parametrize(
    "make",
    [
        lambda: risk_v0.single_agent_env(
            opponents=["aggressive", "defensive"],
            options={"turn-limit": "10"},
            render_mode="ansi",
            illegal_reward=-1.0,
        ),
        lambda: risk_v0.single_agent_env(
            opponents=["blitz"],
            seat=None,
            variants=["neutral"],
            render_mode="ansi",
            illegal_reward=-1.0,
        ),
        lambda: stratego_v0.single_agent_env(
            opponent="heuristic", render_mode="ansi", illegal_reward=-1.0
        ),
        lambda: stratego_v0.single_agent_env(
            rules="isf", seat=1, render_mode="ansi", illegal_reward=-1.0
        ),
    ],
)
def test_gymnasium_check_env_passes(make) -> None:
    """check_env steps with any action of the space: illegal_reward ends the episode."""
    check_env(make(), skip_render_check=False)


def test_an_illegal_action_raises_or_with_illegal_reward_ends_the_episode() -> None:
    for illegal_reward in (None, -5.0):
        env = stratego_v0.single_agent_env(illegal_reward=illegal_reward)
        observation, info = env.reset(seed=1)
        bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
        if illegal_reward is None:
            with pytest.raises(ValueError, match=f"^action {bad} is not legal"):
                env.step(bad)
            env.step(int(np.flatnonzero(info["action_mask"])[0]))  # nothing changed
            continue
        after, reward, done, truncated, info = env.step(bad)
        assert (reward, done, truncated) == (-5.0, True, False)
        assert info["illegal"].startswith(f"action {bad} is not legal")
        assert all(np.array_equal(after[k], observation[k]) for k in after)
        with pytest.raises(ValueError, match="the episode is over"):
            env.step(int(np.flatnonzero(observation["action_mask"])[0]))


def play(env: gymnasium.Env, seed: int) -> tuple[float, dict, int]:
    """A masked random learner to the end: the last reward, the last info, the steps."""
    observation, info = env.reset(seed=seed)
    rng = random.Random(seed)
    steps, done, reward = 0, False, 0.0
    while not done:
        assert np.array_equal(observation["action_mask"], info["action_mask"])
        assert np.array_equal(env.unwrapped.action_masks(), info["action_mask"].astype(bool))
        legal = info["action_mask"].view(bool).nonzero()[0]
        observation, reward, done, truncated, info = env.step(int(rng.choice(legal.tolist())))
        assert not truncated
        if not done:
            assert reward == 0.0
        steps += 1
    return reward, info, steps


def test_gymnasium_make_plays_the_learner_against_house_bots_by_name() -> None:
    env = gymnasium.make(
        "arena/Risk-v0", opponents=["aggressive", "blitz"], options={"turn-limit": "15"}
    )
    reward, info, steps = play(env, 3)
    result = env.unwrapped.table.result()
    assert steps > 20
    assert info == {"place": result.places[0], "result": result.reason.value}
    assert reward == (1.0 if info["place"] == 1 and result.places.count(1) == 1 else -1.0) or (
        reward == 0.0 and result.places.count(1) > 1 and info["place"] == 1
    )
    assert set(env.unwrapped.bots) == {1, 2}  # the learner is seat 0, the bots the others


def test_the_learner_plays_only_its_own_seat_and_gets_the_chosen_reward() -> None:
    env = stratego_v0.single_agent_env(opponent="random", seat=None, reward="ranked")
    seats = set()
    for seed in range(6):
        reward, info, _ = play(env, seed)
        seat = env.unwrapped.seat
        seats.add(seat)
        places = env.unwrapped.table.result().places
        assert reward == ranked(places, seat) and info["place"] == places[seat]
    assert seats == {0, 1}  # seat=None draws the learner's seat at each reset


def test_the_same_seed_gives_the_same_game_against_the_same_bots() -> None:
    def trace(seed: int) -> list[int]:
        env = risk_v0.single_agent_env(opponents=["random", "defensive"], seat=1)
        observation, _ = env.reset(seed=seed)
        out = []
        for _ in range(300):
            legal = np.flatnonzero(observation["action_mask"])
            action = int(legal[len(out) % len(legal)])
            out.append(action)
            observation, _, done, _, _ = env.step(action)
            out.append(int(observation["armies"].sum()))
            if done:
                break
        return out

    assert trace(8) == trace(8)
    assert trace(8) != trace(9)


def test_the_examples_of_environments_md_run(capsys) -> None:
    blocks = re.findall(r"^```python\n(.*?)^```", DOC.read_text(), re.MULTILINE | re.DOTALL)
    examples = [b for b in blocks if "import arena.envs" in b or "from arena.envs import" in b]
    assert len(examples) >= 2
    for example in examples:
        if "sb3_contrib" in example:
            continue  # the training example: the optional RL library, run by hand
        exec(compile(example, str(DOC), "exec"), {})
    printed = capsys.readouterr().out
    assert "turn_limit" in printed or "victory" in printed
