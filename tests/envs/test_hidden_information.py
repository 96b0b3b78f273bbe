"""An agent's observation arrays hold nothing of another agent's hidden facts.

As in the engine's hidden-information tests (tests/games/*/test_hidden_information.py
and test_observation.py, whose shufflers are used here): in a copy of the game, shuffle
what an agent may not know (the other hands and the draw pile, the other missions, the
other headquarters picks before the reveal, the enemy's unseen Stratego ranks) while
every public fact stays, and the agent's observation arrays, action mask included,
must be byte-identical. This is checked for every agent, the one deciding and the
others, at many points of masked random games (parts of factored decisions included);
and the checker is shown to catch an observation that leaks.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arena.envs import risk_v0, stratego_v0
from arena.games.risk.variants.missions import deck_for

TESTS = Path(__file__).resolve().parents[1]


def load(relative: str) -> Any:
    """A module of the test suite by path (the tests are not a package)."""
    name = "envs_hidden_" + relative.replace("/", "_").removesuffix(".py")
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, TESTS / relative)
        assert spec is not None and spec.loader is not None
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name]


RISK_CARDS = load("games/risk/test_observation.py").rearranged  # (state, seat, shift)
STRATEGO_RANKS = load("games/stratego/test_hidden_information.py").twin  # (state, seat, rng)

Shuffle = Callable[[Any, int, random.Random], Any]


def risk_shuffle(state: Any, seat: int, rng: random.Random) -> Any:
    """A copy of ``state`` with everything ``seat`` may not know moved: the other hands
    and the draw pile (rotated), the other missions (redealt from the deck), the other
    headquarters picks before their reveal (moved to other territories of theirs)."""
    hidden = sum(len(h) for q, h in enumerate(state.hands) if q != seat) + len(state.draw_pile)
    other = RISK_CARDS(state, seat, rng.randrange(1, max(2, hidden)))
    missions = other.variant_data.get("missions")
    if missions is not None:
        ids = [m.id for m in deck_for("standard", state.num_players)]
        for q in range(state.num_players):
            if q != seat:
                missions["assigned"][q] = rng.choice(ids)
    capital = other.variant_data.get("capital")
    if capital is not None and not capital["revealed"]:
        for q, picked in enumerate(capital["hq"]):
            if q != seat and picked is not None:
                capital["hq"][q] = rng.choice([t for t, o in enumerate(state.owner) if o == q])
    return other


def stratego_shuffle(state: Any, seat: int, rng: random.Random) -> Any:
    return STRATEGO_RANKS(state, seat, rng)


def hidden_facts(state: Any) -> Any:
    """What the shufflers move, to count the checks where they moved something."""
    if hasattr(state, "hands"):
        return state.hands, state.draw_pile, state.variant_data
    return state.rank


def arrays(env: Any, state: Any, seat: int) -> dict[str, bytes]:
    """``seat``'s observation arrays of ``state`` as the environment makes them, with the
    parts of its decision chosen so far; and, if it decides, a fresh mask of the state's
    own decision (the options must not depend on hidden facts either)."""
    table = env.unwrapped.table
    codec = table.codec
    chooser = table.chooser if seat == table.seat else None
    out = {k: v.tobytes() for k, v in codec.observe(seat, state.observation(seat), chooser).items()}
    if not state.terminal and state.current_player == seat:
        out["fresh mask"] = codec.chooser(seat, state.decision()).mask.tobytes()
    return out


def leaks(
    env: Any, shuffle: Shuffle, rng: random.Random, observe=arrays, moved: list[int] | None = None
) -> list[str]:
    """The arrays of any agent that change when the others' hidden facts are shuffled
    (``moved`` counts the shuffles that moved a hidden fact)."""
    table = env.unwrapped.table
    state = table.state
    found = []
    for seat in range(table.num_players):
        seen = observe(env, state, seat)
        for _ in range(2):
            shuffled = shuffle(state, seat, rng)
            if moved is not None:
                moved.append(hidden_facts(shuffled) != hidden_facts(state))
            other = observe(env, shuffled, seat)
            found += [f"seat {seat}: {key}" for key in seen if seen[key] != other[key]]
    return found


def play_checking(env: Any, shuffle: Shuffle, seed: int, every: int) -> int:
    """A masked random game, checked every ``every`` steps; returns the checks made that
    shuffled some hidden fact."""
    env.reset(seed=seed)
    rng = random.Random(seed)
    moved: list[int] = []
    for step, agent in enumerate(env.agent_iter()):
        _, _, terminated, truncated, info = env.last(observe=False)
        if terminated or truncated:
            env.step(None)
            continue
        if step % every == 0:
            # the environment's own observation is the one checked
            own = {k: v.tobytes() for k, v in env.observe(agent).items()}
            seat = env.possible_agents.index(agent)
            made = arrays(env, env.unwrapped.game_state, seat)
            assert all(own[k] == made[k] for k in own)
            problems = leaks(env, shuffle, rng, moved=moved)
            assert not problems, f"step {step}: {problems}"
        legal = info["action_mask"].view(bool).nonzero()[0]
        env.step(int(rng.choice(legal.tolist())))
    return sum(moved)


RISK_RULES = {
    "classic-4": dict(num_players=4, options={"turn-limit": "12"}),
    "missions-4": dict(num_players=4, variants=["missions"], options={"turn-limit": "12"}),
    "capital-3": dict(num_players=3, variants=["capital"], options={"turn-limit": "12"}),
    "neutral-2": dict(num_players=2, variants=["neutral"], options={"turn-limit": "12"}),
}


@pytest.mark.parametrize("name", RISK_RULES)
def test_risk_observations_hide_other_hands_missions_and_headquarters(name: str) -> None:
    env = risk_v0.env(**RISK_RULES[name])
    checks = sum(play_checking(env, risk_shuffle, seed, every=23) for seed in range(2))
    assert checks > 100  # shuffles that moved hidden facts


@pytest.mark.parametrize("rules", ["classic", "isf", "barrage"])
def test_stratego_observations_hide_unseen_enemy_ranks(rules: str) -> None:
    env = stratego_v0.env(rules=rules, options={"turn-limit": "400"})
    checks = sum(play_checking(env, stratego_shuffle, seed, every=17) for seed in range(2))
    assert checks > 50  # shuffles that moved hidden ranks


def test_the_shufflers_really_move_hidden_facts() -> None:
    env = risk_v0.env(num_players=4, variants=["missions"], options={"turn-limit": "30"})
    env.reset(seed=4)
    rng = random.Random(4)
    state = env.unwrapped.game_state
    while sum(len(h) for h in state.hands[1:]) < 4:  # until the other seats hold cards
        mask = env.last(observe=False)[4]["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask).tolist())))
    others = [risk_shuffle(state, 0, rng) for _ in range(5)]
    dealt = state.variant_data["missions"]["assigned"]
    for other in others:
        assert other.hands[0] == state.hands[0] and other.hands[1:] != state.hands[1:]
        cards = [c for hand in other.hands for c in hand] + other.draw_pile
        assert sorted(cards) == sorted([c for hand in state.hands for c in hand] + state.draw_pile)
        assert other.variant_data["missions"]["assigned"][0] == dealt[0]
    assert any(o.variant_data["missions"]["assigned"][1:] != dealt[1:] for o in others)


def leaky(env: Any, state: Any, seat: int) -> dict[str, bytes]:
    """A broken observation: ``seat``'s arrays made from the next seat's observation
    (its hand, its mission, its own Stratego ranks)."""
    codec = env.unwrapped.table.codec
    nxt = (seat + 1) % env.unwrapped.table.num_players
    made = codec.arrays(seat, state.observation(nxt))
    return {k: v.tobytes() for k, v in made.items()}


@pytest.mark.parametrize("module", ["risk", "stratego"])
def test_the_checker_catches_a_leaky_observation(module: str) -> None:
    if module == "risk":
        env, shuffle = risk_v0.env(num_players=3, options={"turn-limit": "40"}), risk_shuffle
    else:
        env, shuffle = stratego_v0.env(), stratego_shuffle
    env.reset(seed=9)
    rng = random.Random(9)
    found = []
    for step, _ in enumerate(env.agent_iter()):
        _, _, terminated, _, info = env.last(observe=False)
        if terminated:
            break
        if step % 50 == 0 and step > 0:
            assert not leaks(env, shuffle, rng)
            found += leaks(env, shuffle, rng, observe=leaky)
            if found:
                break
        env.step(int(rng.choice(np.flatnonzero(info["action_mask"]).tolist())))
    key = "hand" if module == "risk" else "board"
    assert any(f": {key}" in problem for problem in found), found
