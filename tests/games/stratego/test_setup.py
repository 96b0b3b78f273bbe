"""The fallback setup and the SDK's setup helper.

The fallback setup (``default_action``, played for a seat that timed out or kept
sending illegal setups) is legal, random from the match's seed, the same for the same
seed, and never puts the flag on the front row. The SDK's ``Bot.default_setup`` makes
setups of the same kind.
"""

from __future__ import annotations

import json
import random

import pytest

from arena.engine.core import Decision
from arena.games.stratego.board import NEIGHBOURS, SETUP_ROWS, SIZE
from arena.games.stratego.setup import back_row, guarded_setup
from arena.games.stratego.state import StrategoState
from arena.plugins import load_registry
from arena.sdk import Bot

REGISTRY = load_registry()
GAME = REGISTRY.game("stratego")
#: every rule set: the classic rules, with the rescue rule too, and each registered variant
VARIANTS = sorted(name for game, name in REGISTRY.variants if game == "stratego")
RULE_SETS = ["classic", "classic+rescue", *VARIANTS]

FRONT_ROW = {0: 3, 1: 6}
BACK_ROW = {0: 0, 1: 9}


def test_the_rule_sets_include_isf_and_barrage() -> None:
    assert {"isf", "barrage"} <= set(VARIANTS)


def new_state(rule_set: str, seed: int = 0) -> StrategoState:
    if rule_set.startswith("classic"):
        options = {"rescue": "on"} if rule_set.endswith("rescue") else {}
        return GAME.new_state(2, seed, options)
    return GAME.new_state(2, seed, {}, REGISTRY.resolve_variants("stratego", [rule_set]))


@pytest.mark.parametrize("rule_set", RULE_SETS)
def test_play_starts_with_the_squares_of_both_armies_shown_without_ranks(rule_set: str) -> None:
    state = new_state(rule_set, seed=6)
    setups = []
    for seat in (0, 1):
        setups.append(state.default_action())
        state.apply(seat, setups[seat])
    assert state.decision().kind == "move"
    for seat in (0, 1):
        board = state.observation(seat)["board"]
        enemy = {s for s, x in enumerate(board) if x and x["owner"] != seat}
        assert enemy == {int(s) for s in setups[1 - seat]["placement"]}
        assert all(board[s]["rank"] is None for s in enemy)


# --- the fallback setup -----------------------------------------------------------------

SEEDS = range(300)


def flag_square(placement: dict[str, str]) -> int:
    return next(int(s) for s, name in placement.items() if name == "flag")


def assert_guarded(placement: dict[str, str], seat: int, bombs: int) -> None:
    """The flag on the back row, and bombs on the squares next to it (as many as fit),
    the one in front first."""
    flag = flag_square(placement)
    assert flag // SIZE == BACK_ROW[seat] != FRONT_ROW[seat]
    guards = [s for s in NEIGHBOURS[flag] if s // SIZE in SETUP_ROWS[seat]]
    on_guards = sum(placement.get(str(s)) == "bomb" for s in guards)
    assert on_guards == min(bombs, len(guards)), placement
    in_front = flag + SIZE if seat == 0 else flag - SIZE
    assert placement[str(in_front)] == "bomb", placement


@pytest.mark.parametrize("rule_set", RULE_SETS)
def test_the_fallback_setup_is_legal_random_reproducible_and_guards_the_flag(
    rule_set: str,
) -> None:
    seen: list[set[str]] = [set(), set()]
    flag_columns: list[set[int]] = [set(), set()]
    mirrored = 0
    for seed in SEEDS:
        state = new_state(rule_set, seed)
        bombs = state.rules.army["bomb"]
        again = new_state(rule_set, seed)
        setups = []
        for seat in (0, 1):
            action = state.default_action()
            assert action == state.default_action(), "asking twice gives the same fallback"
            assert action == again.default_action(), "the same seed, the same fallback"
            state.apply(seat, action)  # legal, or IllegalAction fails the test
            again.apply(seat, action)
            placement = action["placement"]
            assert_guarded(placement, seat, bombs)
            seen[seat].add(json.dumps(placement, sort_keys=True))
            flag_columns[seat].add(flag_square(placement) % SIZE)
            setups.append(placement)
        assert state.decision().kind == "move"
        mirror = {str((9 - int(s) // SIZE) * SIZE + int(s) % SIZE): n for s, n in setups[1].items()}
        mirrored += mirror == setups[0]
    for seat in (0, 1):
        assert len(seen[seat]) == len(SEEDS), "two seeds gave the same fallback"
        assert flag_columns[seat] == set(range(SIZE)), "the flag's column is predictable"
    assert mirrored == 0, "seat 1's fallback mirrors seat 0's"


def test_the_fallback_follows_the_match_seed_not_a_global_generator() -> None:
    random.seed(1)
    first = new_state("classic", seed=77).default_action()
    random.seed(2)
    assert new_state("classic", seed=77).default_action() == first
    state = new_state("classic", seed=77)
    state.rng.random()  # the state's generator moves on; the fallback was drawn at the start
    assert state.default_action() == first
    assert state.clone().default_action() == first


def test_guarded_setup_refuses_an_army_that_does_not_fit() -> None:
    with pytest.raises(ValueError, match="41 pieces do not fit on 40 setup squares"):
        guarded_setup(list(range(40)), {"scout": 41}, random.Random(0))


def test_guarded_setup_without_a_flag_still_places_the_army() -> None:
    action = guarded_setup(list(range(60, 100)), {"bomb": 2, "scout": 3}, random.Random(0))
    assert sorted(action["placement"].values()) == ["bomb", "bomb", "scout", "scout", "scout"]
    assert back_row(range(60, 100)) == 9 and back_row(range(40)) == 0


# --- the SDK's helper -------------------------------------------------------------------


@pytest.mark.parametrize("rule_set", RULE_SETS)
def test_the_sdk_default_setup_is_legal_guarded_and_seedable(rule_set: str) -> None:
    for seed in range(40):
        state = new_state(rule_set, seed)
        for seat in (0, 1):
            decision = state.decision()
            wire = Decision(
                seat, decision.kind, lambda d=decision: json.loads(json.dumps(d.options))
            )
            action = Bot.default_setup(wire, random.Random(seed))
            assert action == Bot.default_setup(wire, random.Random(seed))
            assert_guarded(action["placement"], seat, state.rules.army["bomb"])
            state.apply(seat, action)
    unseeded = {
        json.dumps(Bot.default_setup(new_state("classic").decision())["placement"])
        for _ in range(5)
    }
    assert len(unseeded) == 5, "without a generator of its own the helper is still random"
