"""The setup phase: simultaneous in effect, and the fallback setup.

In the manual both players set up at the same time behind the board. The engine asks
seat 0 first, then seat 1; these tests show that seat 1 is given nothing of seat 0's
setup (observation, legal options, events), for every rule set: what it is shown does
not change by a byte whatever seat 0 placed. The fallback setup (``default_action``,
played for a seat that timed out or kept sending illegal setups) is legal, random from
the match's seed, the same for the same seed, and never puts the flag on the front row.
The SDK's ``Bot.default_setup`` makes setups of the same kind.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from arena.bots._stratego_common import random_setup
from arena.bots.stratego_heuristic import guarded_setup as heuristic_setup
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


def seat_zero_setups(state: StrategoState) -> list[dict[str, Any]]:
    """Setups of seat 0 as different as can be: uniform, guarded, laid out in order."""
    opts = state.decision().options
    in_order = [name for name, n in opts["army"].items() for _ in range(n)]
    return [
        random_setup(random.Random(1), opts),
        random_setup(random.Random(2), opts),
        heuristic_setup(random.Random(3), opts, 0),
        guarded_setup(opts["squares"], opts["army"], random.Random(4)),
        {
            "type": "setup",
            "placement": dict(zip(map(str, opts["squares"]), in_order, strict=False)),
        },
        {
            "type": "setup",
            "placement": dict(zip(map(str, opts["squares"][::-1]), in_order, strict=False)),
        },
    ]


def what_seat_one_is_shown(rule_set: str, setup: dict[str, Any]) -> str:
    """Everything seat 1 is given for its setup decision once seat 0 has placed
    ``setup``: its observation, its decision, the events it and a spectator may see."""
    state = new_state(rule_set, seed=11)
    events = state.apply(0, setup)
    decision = state.decision()
    assert (decision.player, decision.kind) == (1, "setup")
    shown = {
        "observation": state.observation(1),
        "decision": decision.to_json(),
        "events": [GAME.public_event(e, 1) for e in events],
        "spectator": [GAME.public_event(e, None) for e in events],
    }
    return json.dumps(shown)


@pytest.mark.parametrize("rule_set", RULE_SETS)
def test_seat_one_is_shown_the_same_bytes_whatever_seat_zero_placed(rule_set: str) -> None:
    setups = seat_zero_setups(new_state(rule_set))
    placements = {json.dumps(s["placement"], sort_keys=True) for s in setups}
    occupied = {frozenset(s["placement"]) for s in setups}
    assert len(placements) == len(setups), "the setups of seat 0 must differ"
    if rule_set == "barrage":
        assert len(occupied) > 1, "barrage setups must differ in the squares occupied too"
    shown = {what_seat_one_is_shown(rule_set, setup) for setup in setups}
    assert len(shown) == 1, "what seat 1 is shown depends on seat 0's setup"
    view = json.loads(shown.pop())
    assert all(e is None for e in view["events"] + view["spectator"])
    assert all(square is None for square in view["observation"]["board"])


@pytest.mark.parametrize("rule_set", RULE_SETS)
def test_during_setup_either_seat_sees_only_its_own_pieces(rule_set: str) -> None:
    state = new_state(rule_set, seed=5)
    for seat in (0, 1):
        for observer in (0, 1):
            shown = [x for x in state.observation(observer)["board"] if x]
            assert all(x["owner"] == observer and x["rank"] for x in shown)
            assert len(shown) == (observer < seat) * sum(state.rules.army.values())
        options = state.decision().options
        setup = guarded_setup(options["squares"], options["army"], random.Random())
        events = state.apply(seat, setup)
        assert events == [{"e": "setup", "p": seat, "pieces": len(setup["placement"])}]
        # a setup event reaches its own seat only: the other seat and spectators never
        assert GAME.public_event(events[0], seat) == events[0]
        assert GAME.public_event(events[0], 1 - seat) is None
        assert GAME.public_event(events[0], None) is None


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
