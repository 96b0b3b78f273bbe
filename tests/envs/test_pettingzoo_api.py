"""The AEC environments pass PettingZoo's own checks (api_test, seed_test) for several
rule sets, a seed gives the same whole episode, and bad input gets one clear line."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from arena.envs import risk_v0, stratego_v0
from arena.plugins import load_registry

#: name -> a maker of the wrapped environment; short turn limits keep games short
RULE_SETS: dict[str, Callable[..., Any]] = {
    "risk-classic-3": lambda **kw: risk_v0.env(options={"turn-limit": "8"}, **kw),
    "risk-missions-4": lambda **kw: risk_v0.env(
        num_players=4, variants=["missions"], options={"turn-limit": "8"}, **kw
    ),
    "risk-neutral-2": lambda **kw: risk_v0.env(
        num_players=2, variants=["neutral"], options={"turn-limit": "8"}, **kw
    ),
    "risk-capital-5-choose": lambda **kw: risk_v0.env(
        num_players=5,
        variants=["capital"],
        options={"turn-limit": "8", "defender-dice": "choose", "cards": "fixed"},
        **kw,
    ),
    "stratego-classic-rescue": lambda **kw: stratego_v0.env(options={"rescue": "on"}, **kw),
    "stratego-isf": lambda **kw: stratego_v0.env(rules="isf", **kw),
    "stratego-barrage": lambda **kw: stratego_v0.env(rules="barrage", **kw),
}


@pytest.mark.parametrize("name", RULE_SETS)
def test_pettingzoo_api_test_passes(name: str) -> None:
    api_test(RULE_SETS[name](), num_cycles=300)


@pytest.mark.parametrize("name", ["risk-classic-3", "risk-capital-5-choose", "stratego-isf"])
def test_pettingzoo_seed_test_passes(name: str) -> None:
    seed_test(RULE_SETS[name], num_cycles=200)


def episode_digest(env: Any, seed: int, policy_seed: int) -> tuple[str, int]:
    """A masked random episode to its end: a digest of every observation array, reward,
    termination and action, and the number of steps."""
    env.reset(seed=seed)
    rng = random.Random(policy_seed)
    digest = hashlib.sha256()
    steps = 0
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        digest.update(agent.encode())
        for key in sorted(obs):
            digest.update(key.encode() + obs[key].tobytes())
        digest.update(repr((reward, terminated, truncated)).encode())
        if terminated or truncated:
            env.step(None)
            continue
        action = rng.choice(np.flatnonzero(obs["action_mask"]).tolist())
        digest.update(str(action).encode())
        env.step(action)
        steps += 1
    return digest.hexdigest(), steps


@pytest.mark.parametrize("name", ["risk-missions-4", "stratego-barrage"])
def test_the_same_seed_gives_the_same_whole_episode(name: str) -> None:
    first, steps = episode_digest(RULE_SETS[name](), seed=11, policy_seed=3)
    again, _ = episode_digest(RULE_SETS[name](), seed=11, policy_seed=3)
    assert steps > 40  # more than the setups
    assert first == again
    assert episode_digest(RULE_SETS[name](), seed=11, policy_seed=4)[0] != first
    if name.startswith("risk"):  # Stratego has no chance: only the agents' choices count
        assert episode_digest(RULE_SETS[name](), seed=12, policy_seed=3)[0] != first


def test_a_reset_without_a_seed_goes_on_with_the_seeded_sequence() -> None:
    env = risk_v0.raw_env()
    env.reset(seed=5)
    first = env.game_seed
    env.reset()
    second = env.game_seed
    env.reset(seed=5)
    assert env.game_seed == first
    env.reset()
    assert env.game_seed == second != first


def test_render_ansi_is_the_board_arena_play_prints() -> None:
    for env in (stratego_v0.env(render_mode="ansi"), risk_v0.env(render_mode="ansi")):
        env.reset(seed=3)
        for _ in range(60):
            obs, *_ = env.last()
            env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        raw = env.unwrapped
        picture = env.render()
        assert picture == raw.table.game.render(raw.game_state)
        assert len(picture.splitlines()) > 10


def test_an_illegal_action_is_refused_in_one_line_and_changes_nothing() -> None:
    env = stratego_v0.env()
    env.reset(seed=1)
    obs, *_ = env.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    before = {k: v.tobytes() for k, v in obs.items()}
    with pytest.raises(ValueError, match=r"^action \d+ is not legal for seat 0's setup") as exc:
        env.step(illegal)
    assert "\n" not in str(exc.value)
    for bad in (10**6, -1, 2.5, "3", None):
        with pytest.raises(ValueError):
            env.step(bad)
    assert {k: v.tobytes() for k, v in env.last()[0].items()} == before


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: risk_v0.env(num_players=7), "risk takes 2 to 6 players, not 7"),
        (lambda: risk_v0.env(variants=["nope"]), "unknown variant 'nope' for risk"),
        (lambda: risk_v0.env(options={"cards": "few"}), "option cards='few'"),
        (lambda: stratego_v0.env(rules="fast"), "rules 'fast': expected one of"),
        (lambda: risk_v0.env(reward="money"), "unknown reward scheme 'money'"),
        (lambda: risk_v0.env(render_mode="human"), "render_mode 'human'"),
        (
            lambda: risk_v0.single_agent_env(opponents=["random", "genius"]),
            "unknown bot 'genius' for risk",
        ),
    ],
)
def test_bad_configurations_are_refused_with_the_reason(make, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_rewards_follow_the_final_places_under_each_scheme() -> None:
    from arena.envs.core import ranked, win_loss

    assert [win_loss((1, 2, 3), s) for s in range(3)] == [1.0, -1.0, -1.0]
    assert [win_loss((1, 1, 3), s) for s in range(3)] == [0.0, 0.0, -1.0]
    assert [ranked((1, 2, 3), s) for s in range(3)] == [1.0, 0.0, -1.0]
    assert [ranked((1, 1, 3), s) for s in range(3)] == [0.5, 0.5, -1.0]
    assert sum(ranked((2, 1, 2, 4), s) for s in range(4)) == 0.0
    env = stratego_v0.env(reward=lambda places, seat: 10.0 * (places[seat] == 1))
    env.reset(seed=2)
    rng = random.Random(2)
    for agent in env.agent_iter():
        obs, reward, terminated, _, info = env.last()
        if terminated:
            result = env.unwrapped.table.result()
            seat = int(agent.split("_")[1])
            assert reward == 10.0 * (result.places[seat] == 1)
            assert info == {"place": result.places[seat], "result": result.reason.value}
            env.step(None)
        else:
            env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))


def test_every_installed_house_bot_can_be_an_opponent() -> None:
    bots = load_registry().bots
    for game, name in bots:
        if game == "risk":
            env = risk_v0.single_agent_env(opponents=[name, name], options={"turn-limit": "3"})
        else:
            env = stratego_v0.single_agent_env(opponent=name)
        obs, info = env.reset(seed=1)
        assert info["action_mask"].any()
        assert (obs["action_mask"] == info["action_mask"]).all()
