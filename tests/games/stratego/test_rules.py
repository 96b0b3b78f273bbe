"""One test per rule of Stratego in RULES.md, each named after the rule it checks.

Positions are built the way a game starts (both setups submitted through ``apply``)
and then laid out with :func:`position`, which empties the board and places chosen
pieces with the state's own ``_put`` so that the piece sets and the position hash stay
consistent. Every refusal goes through :func:`refused`, which also checks that the
refused action changed nothing: not the observations of either seat, not a single
internal field.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from itertools import pairwise
from typing import Any

import pytest

from arena.bots._stratego_belief import build_template
from arena.engine.core import Action, EndReason, IllegalAction
from arena.games.stratego.board import (
    HALF_ROWS,
    LAKES,
    SETUP_ROWS,
    SIZE,
    SQUARES,
    parse_square,
    square_name,
)
from arena.games.stratego.pieces import (
    BARRAGE_ARMY,
    BOMB,
    CLASSIC_ARMY,
    MARSHAL,
    NAMES,
    RANK_OF,
    SPY,
    strike,
)
from arena.games.stratego.state import PLAY, StrategoState
from arena.plugins import load_registry
from arena.referee.codec import observation_from_proto, to_json_text
from arena.referee.live import LiveMatch, Seat
from arena.v1 import arena_pb2 as pb

REGISTRY = load_registry()
GAME = REGISTRY.game("stratego")

#: the movable ranks from the weakest to the strongest (RULES.md lists them high to low)
STRENGTH = (
    "spy",
    "scout",
    "miner",
    "sergeant",
    "lieutenant",
    "captain",
    "major",
    "colonel",
    "general",
    "marshal",
)

# --- building positions ---------------------------------------------------------------


def new_game(variant: str | None = None, **options: str) -> StrategoState:
    """A fresh game; option names use ``_`` for ``-`` (``turn_limit="4"``)."""
    variants = REGISTRY.resolve_variants("stratego", [variant] if variant else [])
    opts = {name.replace("_", "-"): value for name, value in options.items()}
    return GAME.new_state(2, 0, opts, variants)


def setup_action(state: StrategoState) -> Action:
    """A legal setup for the seat to move: the army laid out square by square."""
    opts = state.decision().options
    names = [name for name, n in opts["army"].items() for _ in range(n)]
    return {
        "type": "setup",
        "placement": {square_name(s): n for s, n in zip(opts["squares"], names, strict=False)},
    }


def started(variant: str | None = None, **options: str) -> StrategoState:
    state = new_game(variant, **options)
    state.apply(0, setup_action(state))
    state.apply(1, setup_action(state))
    return state


def position(
    mine: Mapping[str, str],
    theirs: Mapping[str, str],
    variant: str | None = None,
    player: int = 0,
    **options: str,
) -> StrategoState:
    """A started game whose board holds only ``mine`` (seat 0) and ``theirs`` (seat 1)."""
    state = started(variant, **options)
    for s in range(SQUARES):
        if state.owner[s] >= 0:
            state._clear(s)
    state.pieces = [set(), set()]
    state.zview = [0, 0]
    for seat, pieces in enumerate((mine, theirs)):
        for i, (ref, name) in enumerate(pieces.items()):
            state._put(parse_square(ref), seat, RANK_OF[name], seat * 100 + i)
    state.player = player
    return state


def sq(ref: str) -> int:
    return parse_square(ref)


def move(a: str, b: str) -> Action:
    return {"type": "move", "from": a, "to": b}


def play(state: StrategoState, a: str, b: str) -> list[dict[str, Any]]:
    """Apply the current player's move ``a``-``b``, which must be listed as legal."""
    assert [sq(a), sq(b)] in state.legal_moves(state.player), f"{a}-{b} is not listed"
    return state.apply(state.player, move(a, b))


def snapshot(state: StrategoState) -> tuple[str, ...]:
    """Everything a refused action must leave as it was: both observations and every
    field of the state."""
    fields = {
        name: sorted(value) if isinstance(value, set) else value
        for name, value in vars(state).items()
        if name not in ("rules", "rng", "pieces", "chase", "evaders", "rescuers", "_result")
    }
    fields["pieces"] = [sorted(s) for s in state.pieces]
    fields["chase"] = [None if c is None else sorted(c) for c in state.chase]
    fields["evaders"] = [sorted(e) for e in state.evaders]
    fields["rescuers"] = [sorted(s) for s in state.rescuers]
    fields["result"] = repr(state._result)
    fields["rng"] = repr(state.rng.getstate())
    return (
        json.dumps(state.observation(0), sort_keys=True),
        json.dumps(state.observation(1), sort_keys=True),
        json.dumps(fields, sort_keys=True, default=repr),
    )


def refused(state: StrategoState, player: int, action: Any, *fragments: str) -> str:
    """Assert ``action`` is refused with a message holding every fragment, and that the
    refusal changed nothing; returns the message."""
    before = snapshot(state)
    moves_before = state.legal_moves(state.player) if state.phase == PLAY else None
    with pytest.raises(IllegalAction) as info:
        state.apply(player, action)
    message = str(info.value)
    assert info.value.reason, "an IllegalAction must carry a reason"
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert snapshot(state) == before, f"the refused {action!r} changed the state"
    if moves_before is not None:
        assert state.legal_moves(state.player) == moves_before
        if isinstance(action, dict) and action.get("type") == "move" and player == state.player:
            try:
                pair = [parse_square(action.get("from")), parse_square(action.get("to"))]
            except ValueError:
                pair = None
            assert pair not in moves_before, f"{action!r} is refused yet listed as legal"
    return message


def targets(state: StrategoState, ref: str) -> set[str]:
    """The squares the piece on ``ref`` may legally move to or strike."""
    s = sq(ref)
    return {square_name(t) for f, t in state.legal_moves(state.owner[s]) if f == s}


def board_entry(state: StrategoState, seat: int, ref: str) -> dict[str, Any] | None:
    return state.observation(seat)["board"][sq(ref)]


#: each side's Flag and a reserve piece far from the action (so that the side can move)
HOME0 = {"a1": "flag", "j2": "sergeant"}
HOME1 = {"j10": "flag", "j9": "sergeant"}

# --- the board and the pieces ---------------------------------------------------------


def test_board_is_ten_by_ten_with_two_two_by_two_lakes_no_piece_may_enter() -> None:
    assert {divmod(s, SIZE) for s in LAKES} == {
        (4, 2),
        (4, 3),
        (5, 2),
        (5, 3),
        (4, 6),
        (4, 7),
        (5, 6),
        (5, 7),
    }
    assert (square_name(0), square_name(99), sq("c5"), sq("h6")) == ("a1", "j10", 42, 57)
    assert started().observation(0)["lakes"] == sorted(LAKES)
    # a Scout and a Major on every square touching a lake: none may enter one
    shores: dict[int, list[int]] = {}
    for lake in LAKES:
        r, c = divmod(lake, SIZE)
        for n in ((r + 1) * SIZE + c, (r - 1) * SIZE + c, lake + 1, lake - 1):
            if n not in LAKES:
                shores.setdefault(n, []).append(lake)
    assert len(shores) == 16
    for piece in ("scout", "major"):
        mine = {**HOME0, **{square_name(s): piece for s in shores}}
        state = position(mine, HOME1)
        legal = state.legal_moves(0)
        assert len(legal) > 16, "the shore pieces must have some moves"
        assert not [m for m in legal if m[1] in LAKES]
        for s, lakes in shores.items():
            for lake in lakes:
                refused(state, 0, move(square_name(s), square_name(lake)), "is a lake")
    # the lakes stay empty after any setup: the setup rows do not touch them
    for seat in (0, 1):
        assert not {r * SIZE + c for r in SETUP_ROWS[seat] for c in range(SIZE)} & LAKES


def test_each_side_has_forty_pieces_ten_movable_ranks_bombs_and_flag() -> None:
    expected = {
        "marshal": 1,
        "general": 1,
        "colonel": 2,
        "major": 3,
        "captain": 4,
        "lieutenant": 4,
        "sergeant": 4,
        "miner": 5,
        "scout": 8,
        "spy": 1,
        "bomb": 6,
        "flag": 1,
    }
    assert expected == CLASSIC_ARMY
    state = new_game()
    assert state.decision().options["army"] == expected
    state = started()
    for seat in (0, 1):
        assert len(state.pieces[seat]) == 40
        on_board = Counter(NAMES[state.rank[s]] for s in state.pieces[seat])
        assert on_board == Counter(expected)
        assert all(state.owner[s] == seat for s in state.pieces[seat])
    # the order of strength, Marshal highest down to the Spy
    for weaker, stronger in pairwise(STRENGTH):
        assert RANK_OF[stronger] > RANK_OF[weaker]
    assert BARRAGE_ARMY == {
        "flag": 1,
        "marshal": 1,
        "general": 1,
        "miner": 1,
        "scout": 2,
        "spy": 1,
        "bomb": 1,
    }
    assert new_game("barrage").decision().options["army"] == BARRAGE_ARMY


# --- setup ------------------------------------------------------------------------------


def test_setup_places_all_forty_pieces_in_the_own_four_back_rows() -> None:
    state = new_game()
    decision = state.decision()
    assert (decision.player, decision.kind) == (0, "setup")
    assert decision.options["squares"] == list(range(40))
    assert decision.options["fill_rows"] is True
    events = state.apply(0, setup_action(state))
    assert events == [{"e": "setup", "p": 0, "pieces": 40}]
    assert state.decision().options["squares"] == list(range(60, 100))
    state.apply(1, setup_action(state))
    assert {s // SIZE for s in state.pieces[0]} == {0, 1, 2, 3}
    assert {s // SIZE for s in state.pieces[1]} == {6, 7, 8, 9}
    # every square of the four rows holds a piece; the two middle rows are empty
    assert state.pieces[0] == set(range(40)) and state.pieces[1] == set(range(60, 100))
    assert all(state.owner[s] < 0 for s in range(40, 60))
    assert (state.phase, state.player, state.decision().kind) == (1, 0, "move")
    # the opponent sees where the pieces stand, never which
    enemy = [e for e in state.observation(0)["board"] if e and e["owner"] == 1]
    assert len(enemy) == 40 and all(e["rank"] is None for e in enemy)


def test_setup_refuses_wrong_counts_naming_the_piece() -> None:
    state = new_game()
    action = setup_action(state)
    del action["placement"]["a1"]  # the first square holds the marshal
    refused(state, 0, action, "wrong pieces", "marshal 0 (expected 1)")
    action = setup_action(state)
    action["placement"]["a1"] = "scout"  # a ninth Scout instead of the Marshal
    refused(state, 0, action, "marshal 0 (expected 1)", "scout 9 (expected 8)")
    # 39 pieces leave a square of the four rows empty: refused
    action = setup_action(state)
    first_bomb = next(s for s, n in action["placement"].items() if n == "bomb")
    del action["placement"][first_bomb]
    refused(state, 0, action, "bomb 5 (expected 6)")
    # the barrage army is not the classic one
    barrage = {"type": "setup", "placement": dict(zip(["a1", "b1"], ["flag", "bomb"], strict=True))}
    refused(state, 0, barrage, "wrong pieces")


def test_setup_refuses_squares_outside_the_own_rows() -> None:
    state = new_game()
    action = setup_action(state)
    name = action["placement"].pop("j4")
    action["placement"]["j5"] = name  # row 5 is no-man's-land
    refused(state, 0, action, "j5 is outside your setup rows", "rows 1 to 4")
    state.apply(0, setup_action(state))
    # seat 1 may not set up in seat 0's rows, nor in the middle
    action = setup_action(state)
    name = action["placement"].pop("a7")
    action["placement"]["a4"] = name
    refused(state, 1, action, "a4 is outside your setup rows", "rows 7 to 10")
    action = setup_action(state)
    name = action["placement"].pop("a7")
    action["placement"]["a6"] = name
    refused(state, 1, action, "a6 is outside your setup rows")


def test_setup_refuses_an_unknown_piece() -> None:
    state = new_game()
    action = setup_action(state)
    action["placement"]["a1"] = "dragon"
    refused(state, 0, action, "unknown piece 'dragon'")
    action["placement"]["a1"] = "Marshal"  # names are exact
    refused(state, 0, action, "unknown piece 'Marshal'")
    action["placement"]["a1"] = 10  # a rank number is not a piece name
    refused(state, 0, action, "unknown piece 10")


def test_setup_refuses_a_piece_name_that_is_not_a_string() -> None:
    # a malformed action must be refused like any other, never crash the referee
    state = new_game()
    action = setup_action(state)
    action["placement"]["a1"] = ["marshal"]
    refused(state, 0, action, "unknown piece")


def test_setup_refuses_a_square_given_twice() -> None:
    state = new_game()
    pairs = [[s, n] for s, n in setup_action(state)["placement"].items()]
    pairs[1][0] = "a1"  # b1 dropped, a1 named twice
    refused(state, 0, {"type": "setup", "placement": pairs}, "a1 is given twice")
    # the same square by index and by name
    placement = dict(setup_action(state)["placement"])
    placement["0"] = placement.pop("b1")
    refused(state, 0, {"type": "setup", "placement": placement}, "given twice")
    refused(state, 0, {"type": "setup", "placement": "a1 flag"}, "'placement' must map squares")
    refused(state, 0, {"type": "setup"}, "'placement' must map squares")
    refused(state, 0, {"type": "setup", "placement": {"k1": "flag"}}, "unknown square 'k1'")


def test_setup_is_only_for_the_seat_to_set_up_and_only_once() -> None:
    state = new_game()
    refused(state, 1, setup_action(state), "not your turn")
    refused(state, 0, move("a4", "a5"), "'move' is not allowed in the setup phase")
    state.apply(0, setup_action(state))
    state.apply(1, setup_action(state))
    refused(state, 0, {"type": "setup", "placement": {}}, "not allowed in the move phase")


def test_barrage_setup_places_eight_pieces_anywhere_in_the_four_rows() -> None:
    state = new_game("barrage")
    assert state.decision().options["fill_rows"] is False
    scattered = {
        "a1": "flag",
        "j4": "marshal",
        "e2": "general",
        "c3": "miner",
        "h4": "scout",
        "b4": "scout",
        "g1": "spy",
        "d2": "bomb",
    }
    assert state.apply(0, {"type": "setup", "placement": scattered})[0]["pieces"] == 8
    front = dict(zip(["a7", "c7", "e7", "g7", "i7", "b10", "d9", "f8"], BARRAGE_ARMY, strict=False))
    front = {**front, "j8": "scout"}
    state.apply(1, {"type": "setup", "placement": front})
    assert {square_name(s) for s in state.pieces[0]} == set(scattered)
    assert Counter(NAMES[state.rank[s]] for s in state.pieces[1]) == Counter(BARRAGE_ARMY)
    assert state.decision().kind == "move"


def test_barrage_setup_refuses_wrong_counts_and_wrong_rows() -> None:
    state = new_game("barrage")
    army = ["flag", "marshal", "general", "miner", "scout", "scout", "spy", "bomb"]
    ok = dict(zip(["a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1"], army, strict=True))
    refused(state, 0, {"type": "setup", "placement": {**ok, "i1": "scout"}}, "scout 3 (expected 2)")
    missing = {s: n for s, n in ok.items() if n != "spy"}
    refused(state, 0, {"type": "setup", "placement": missing}, "spy 0 (expected 1)")
    refused(
        state, 0, {"type": "setup", "placement": {**ok, "i1": "colonel"}}, "colonel 1 (expected 0)"
    )
    moved = {("a5" if s == "a1" else s): n for s, n in ok.items()}
    refused(state, 0, {"type": "setup", "placement": moved}, "a5 is outside your setup rows")
    classic = setup_action(new_game())
    refused(state, 0, classic, "wrong pieces", "bomb 6 (expected 1)")


# --- movement ---------------------------------------------------------------------------


def test_a_piece_moves_one_square_orthogonally_never_diagonally() -> None:
    state = position({**HOME0, "e4": "major", "b2": "miner"}, HOME1)
    assert targets(state, "e4") == {"e3", "e5", "d4", "f4"}
    assert targets(state, "b2") == {"b1", "b3", "a2", "c2"}
    refused(state, 0, move("e4", "f5"), "moves one square forward, backward or sideways")
    refused(state, 0, move("e4", "e6"), "moves one square")
    refused(state, 0, move("e4", "a4"), "moves one square")
    refused(state, 0, move("e4", "e4"), "holds your own piece")
    events = play(state, "e4", "e5")
    assert events == [{"e": "move", "p": 0, "from": sq("e4"), "to": sq("e5")}]
    assert (state.owner[sq("e5")], NAMES[state.rank[sq("e5")]]) == (0, "major")
    assert state.owner[sq("e4")] < 0
    entry = board_entry(state, 1, "e5")
    assert entry == {
        "owner": 0,
        "rank": None,
        "moved": True,
        "moved_far": False,
        "revealed": False,
    }


def test_a_piece_never_moves_onto_an_own_piece_or_from_a_square_it_does_not_hold() -> None:
    state = position({**HOME0, "e4": "major", "e5": "captain"}, {**HOME1, "f4": "sergeant"})
    assert "e5" not in targets(state, "e4")
    refused(state, 0, move("e4", "e5"), "e5 holds your own piece")
    refused(state, 0, move("f4", "f5"), "no piece of yours on f4")
    refused(state, 0, move("g4", "g5"), "no piece of yours on g4")
    refused(state, 0, move("z9", "a1"), "'from'", "unknown square 'z9'")
    refused(state, 0, {"type": "move", "from": "e4"}, "'to'")
    refused(state, 1, move("f4", "f5"), "not your turn")


def test_bombs_and_the_flag_never_move() -> None:
    state = position({"a1": "flag", "e4": "bomb", "e2": "major"}, HOME1)
    assert {tuple(m) for m in state.legal_moves(0)} == {
        (sq("e2"), t) for t in (sq("e1"), sq("e3"), sq("d2"), sq("f2"))
    }
    refused(state, 0, move("e4", "e5"), "the bomb on e4 never moves")
    refused(state, 0, move("a1", "a2"), "the flag on a1 never moves")
    # nor do they strike
    state = position({"a1": "flag", "e4": "bomb", "e2": "major"}, {"e5": "spy", "a2": "flag"})
    refused(state, 0, move("e4", "e5"), "never moves")
    refused(state, 0, move("a1", "a2"), "never moves")


def test_scout_moves_any_number_of_empty_squares_in_a_straight_line() -> None:
    mine = {**HOME0, "e5": "scout", "e8": "captain"}
    theirs = {**HOME1, "e2": "sergeant"}
    state = position(mine, theirs)
    # left: d5 is a lake; right: g5 is a lake; up: blocked by the own e8; down: enemy e2
    assert targets(state, "e5") == {"f5", "e6", "e7", "e4", "e3"}
    events = play(state, "e5", "e7")
    assert events[0] == {"e": "move", "p": 0, "from": sq("e5"), "to": sq("e7")}
    assert board_entry(state, 1, "e7")["moved_far"] is True
    # a Scout's one-square move is not a far move
    state = position(mine, theirs)
    play(state, "e5", "e6")
    assert board_entry(state, 1, "e6")["moved_far"] is False
    # the Scout moves along the whole empty row
    state = position({**HOME0, "a3": "scout"}, HOME1)
    assert targets(state, "a3") == {f"{c}3" for c in "bcdefghij"} | {
        "a2",
        *(f"a{r}" for r in (4, 5, 6, 7, 8, 9, 10)),
    }


def test_scout_never_jumps_pieces_or_lakes_nor_moves_diagonally() -> None:
    mine = {**HOME0, "e5": "scout", "e8": "captain", "c4": "scout"}
    theirs = {**HOME1, "e2": "sergeant"}
    state = position(mine, theirs)
    refused(state, 0, move("e5", "e9"), "the Scout cannot pass e8")
    refused(state, 0, move("e5", "e1"), "the Scout cannot pass e2")
    refused(state, 0, move("e5", "g5"), "g5 is a lake")
    refused(state, 0, move("e5", "i5"), "the Scout cannot pass g5")
    refused(state, 0, move("e5", "b5"), "the Scout cannot pass d5")
    refused(state, 0, move("c4", "c7"), "the Scout cannot pass c5")
    refused(state, 0, move("e5", "g7"), "a Scout moves in a straight line, never diagonally")
    refused(state, 0, move("e5", "f6"), "straight line")
    assert "c7" not in targets(state, "c4") and "c6" not in targets(state, "c4")


# --- strikes --------------------------------------------------------------------------


def strike_position(attacker: str, defender: str, variant: str | None = None) -> StrategoState:
    return position({**HOME0, "e4": attacker}, {**HOME1, "e5": defender}, variant)


def test_strike_higher_rank_wins_and_moves_into_the_square() -> None:
    for i, weaker in enumerate(STRENGTH):
        for stronger in STRENGTH[i + 1 :]:
            # the stronger strikes: the weaker is removed, the winner takes the square
            state = strike_position(stronger, weaker)
            events = play(state, "e4", "e5")
            assert events == [
                {
                    "e": "strike",
                    "p": 0,
                    "from": sq("e4"),
                    "to": sq("e5"),
                    "attacker": stronger,
                    "defender": weaker,
                    "result": "attacker",
                }
            ]
            assert (state.owner[sq("e5")], NAMES[state.rank[sq("e5")]]) == (0, stronger)
            assert state.owner[sq("e4")] < 0
            assert state.captured == [[], [RANK_OF[weaker]]]
            if (weaker, stronger) == ("spy", "marshal"):
                continue  # the Spy striking the Marshal wins: its own test
            # the weaker strikes: the attacker is removed, the defender stays
            state = strike_position(weaker, stronger)
            events = play(state, "e4", "e5")
            assert events[0]["result"] == "defender", (weaker, stronger)
            assert (state.owner[sq("e5")], NAMES[state.rank[sq("e5")]]) == (1, stronger)
            assert state.owner[sq("e4")] < 0
            assert state.captured == [[RANK_OF[weaker]], []]


def test_strike_equal_ranks_are_both_removed() -> None:
    for name in STRENGTH:
        state = strike_position(name, name)
        events = play(state, "e4", "e5")
        assert events[0]["result"] == "both"
        assert state.owner[sq("e4")] < 0 and state.owner[sq("e5")] < 0
        assert state.captured == [[RANK_OF[name]], [RANK_OF[name]]]
        assert sq("e4") not in state.pieces[0] and sq("e5") not in state.pieces[1]


def test_spy_striking_the_marshal_wins() -> None:
    state = strike_position("spy", "marshal")
    events = play(state, "e4", "e5")
    assert events[0]["result"] == "attacker"
    assert (state.owner[sq("e5")], state.rank[sq("e5")]) == (0, SPY)
    assert state.captured == [[], [MARSHAL]]
    assert strike(SPY, MARSHAL) == 1


def test_marshal_striking_the_spy_wins() -> None:
    state = strike_position("marshal", "spy")
    assert play(state, "e4", "e5")[0]["result"] == "attacker"
    assert (state.owner[sq("e5")], state.rank[sq("e5")]) == (0, MARSHAL)


def test_spy_struck_by_anything_loses() -> None:
    for name in STRENGTH[1:]:
        state = strike_position(name, "spy")
        assert play(state, "e4", "e5")[0]["result"] == "attacker", name
        assert state.captured == [[], [SPY]]
    # the Spy only beats the Marshal when it strikes: struck by the Marshal it loses
    state = position({**HOME0, "e4": "spy"}, {**HOME1, "e5": "marshal"}, player=1)
    assert play(state, "e5", "e4")[0]["result"] == "attacker"
    assert (state.owner[sq("e4")], state.rank[sq("e4")]) == (1, MARSHAL)


def test_miner_defuses_a_bomb_and_takes_its_square() -> None:
    state = strike_position("miner", "bomb")
    assert play(state, "e4", "e5")[0]["result"] == "attacker"
    assert (state.owner[sq("e5")], NAMES[state.rank[sq("e5")]]) == (0, "miner")
    assert state.captured == [[], [BOMB]]
    assert board_entry(state, 1, "e5")["rank"] == "miner"


def test_any_other_piece_striking_a_bomb_is_removed_and_the_bomb_stays() -> None:
    for name in (n for n in STRENGTH if n != "miner"):
        state = strike_position(name, "bomb")
        assert play(state, "e4", "e5")[0]["result"] == "defender", name
        assert state.owner[sq("e4")] < 0
        assert (state.owner[sq("e5")], state.rank[sq("e5")]) == (1, BOMB)
        assert state.captured == [[RANK_OF[name]], []]
        assert board_entry(state, 0, "e5")["rank"] == "bomb"  # the bomb is now known


def test_capturing_the_flag_wins_the_game() -> None:
    for seat, (attacker, flag) in enumerate((("e4", "e5"), ("e5", "e4"))):
        mine = {"a1": "flag", "e4": "scout"} if seat == 0 else {"e4": "flag", "a1": "bomb"}
        theirs = {"e5": "flag", "j10": "bomb"} if seat == 0 else {"e5": "scout", "j9": "flag"}
        state = position(mine, theirs, player=seat)
        events = play(state, attacker, flag)
        assert events[0]["defender"] == "flag" and events[0]["result"] == "attacker"
        assert events[-1] == {
            "e": "game_over",
            "reason": "victory",
            "places": [1, 2] if seat == 0 else [2, 1],
        }
        assert state.terminal
        assert state.result().reason is EndReason.VICTORY
        assert state.result().winners == (seat,)
        refused(state, 1 - seat, move("a2", "a3"), "the game is over")
        refused(state, seat, move(flag, attacker), "the game is over")


def test_both_ranks_are_revealed_by_a_strike_and_stay_revealed_as_the_winner_moves_on() -> None:
    state = position(
        {**HOME0, "e4": "major", "b4": "captain"},
        {**HOME1, "e5": "captain", "b6": "colonel", "h8": "scout"},
    )
    assert board_entry(state, 1, "e4")["rank"] is None
    play(state, "e4", "e5")  # the Major strikes and wins
    history = state.observation(1)["history"]
    assert history[-1]["attacker"] == "major" and history[-1]["defender"] == "captain"
    assert state.observation(0)["history"] == history
    assert board_entry(state, 1, "e5") == {
        "owner": 0,
        "rank": "major",
        "moved": True,
        "moved_far": False,
        "revealed": True,
    }
    play(state, "h8", "h7")
    play(state, "e5", "e6")  # the revealed Major moves on: still known
    assert board_entry(state, 1, "e6")["rank"] == "major"
    assert board_entry(state, 1, "e6")["revealed"] is True
    assert board_entry(state, 1, "e5") is None
    # a defender that wins is revealed too, and stays revealed when it moves
    play(state, "b6", "b5")
    assert board_entry(state, 0, "b5")["rank"] is None
    play(state, "b4", "b5")  # the Captain strikes the Colonel and loses
    assert state.history[-1]["result"] == "defender"
    assert board_entry(state, 0, "b5")["rank"] == "colonel"
    play(state, "b5", "a5")
    assert board_entry(state, 0, "a5") == {
        "owner": 1,
        "rank": "colonel",
        "moved": True,
        "moved_far": False,
        "revealed": True,
    }
    assert board_entry(state, 0, "b5") is None
    assert board_entry(state, 0, "h7")["rank"] is None  # never struck: still hidden


# --- the end of the game --------------------------------------------------------------


def test_a_player_with_no_legal_move_or_strike_loses() -> None:
    # seat 1 has only a Bomb and its Flag left
    state = position({**HOME0, "e4": "major"}, {"j10": "flag", "j9": "bomb"})
    events = play(state, "e4", "e5")
    assert events[-1] == {"e": "game_over", "reason": "no_moves", "places": [1, 2]}
    assert state.result().reason is EndReason.NO_MOVES
    assert state.result().winners == (0,)
    # seat 0's only movable piece is boxed in by its own Bombs and the board's edge
    state = position(
        {"a1": "scout", "b1": "bomb", "a2": "bomb", "j1": "flag"},
        {**HOME1, "e7": "captain"},
        player=1,
    )
    events = play(state, "e7", "e6")
    assert events[-1]["reason"] == "no_moves" and events[-1]["places"] == [2, 1]
    assert state.result().winners == (1,)


def test_a_player_whose_only_moves_the_two_squares_rule_forbids_cannot_move_and_loses() -> None:
    # the Major can only go a1-a2-a1: its third such move is refused, it has no other
    state = position(
        {"a1": "major", "b1": "bomb", "b2": "bomb", "a3": "bomb", "j1": "flag"},
        {**HOME1, "e7": "captain"},
    )
    play(state, "a1", "a2")
    play(state, "e7", "e6")
    play(state, "a2", "a1")
    assert not state.terminal
    events = play(state, "e6", "f6")
    assert state.legal_moves(0) == []
    assert events[-1] == {"e": "game_over", "reason": "no_moves", "places": [2, 1]}


def test_neither_side_can_move_is_a_draw() -> None:
    # the last movable piece strikes a Bomb and is removed: nobody can move
    state = position({"a1": "flag", "e4": "marshal"}, {"j10": "flag", "e5": "bomb"})
    events = play(state, "e4", "e5")
    assert events[-1] == {"e": "game_over", "reason": "draw", "places": [1, 1]}
    assert state.result().reason is EndReason.DRAW
    assert state.result().winners == (0, 1)


def test_the_turn_limit_ends_the_game_in_a_draw() -> None:
    state = started(turn_limit="3")
    for ply in range(3):
        assert not state.terminal, ply
        s, t = sorted(state.legal_moves(state.player))[0]
        state.apply(state.player, {"type": "move", "from": s, "to": t})
    assert state.terminal
    assert state.ply == 3
    assert state.result().reason is EndReason.TURN_LIMIT
    assert state.result().places == (1, 1)
    refused(state, state.player, move("a4", "a5"), "the game is over")
    # the default limit is 3000 plies; 0 means none; a negative limit is refused
    assert new_game().rules.turn_limit == 3000
    assert new_game(turn_limit="0").rules.turn_limit == 0
    with pytest.raises(ValueError, match="turn-limit"):
        new_game(turn_limit="-1")


# --- the Scout's move and strike ------------------------------------------------------


def scout_lane(variant: str | None) -> StrategoState:
    return position({**HOME0, "e1": "scout"}, {**HOME1, "e6": "sergeant", "j8": "scout"}, variant)


def test_classic_scout_may_not_move_and_strike_in_the_same_turn() -> None:
    state = scout_lane(None)
    assert "e6" not in targets(state, "e1")
    assert targets(state, "e1") >= {"e2", "e3", "e4", "e5"}
    refused(state, 0, move("e1", "e6"), "a Scout may not move and strike in the same turn")
    # from the next square the strike is an ordinary one
    play(state, "e1", "e5")
    play(state, "j8", "j7")
    assert "e6" in targets(state, "e5")
    events = play(state, "e5", "e6")
    assert events[0]["result"] == "defender"


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_isf_and_barrage_scout_may_move_and_strike_at_the_end_of_its_move(variant: str) -> None:
    state = scout_lane(variant)
    assert "e6" in targets(state, "e1")
    assert "e7" not in targets(state, "e1")  # never past the struck piece
    events = play(state, "e1", "e6")
    assert events[0] == {
        "e": "strike",
        "p": 0,
        "from": sq("e1"),
        "to": sq("e6"),
        "attacker": "scout",
        "defender": "sergeant",
        "result": "defender",
    }
    assert state.owner[sq("e1")] < 0 and state.owner[sq("e6")] == 1
    # a Scout that wins its long strike takes the square and counts as moved far
    state = position({**HOME0, "e1": "scout"}, {**HOME1, "e6": "spy"}, variant)
    play(state, "e1", "e6")
    assert board_entry(state, 1, "e6") == {
        "owner": 0,
        "rank": "scout",
        "moved": True,
        "moved_far": True,
        "revealed": True,
    }
    # but still never over a piece
    state = position({**HOME0, "e1": "scout"}, {**HOME1, "e6": "spy", "e4": "bomb"}, variant)
    refused(state, 0, move("e1", "e6"), "cannot pass e4")


# --- the two-squares rule -------------------------------------------------------------


def shuttle_position(variant: str | None) -> StrategoState:
    return position(
        {**HOME0, "e3": "major", "b2": "captain"},
        {**HOME1, "h8": "colonel", "c8": "scout", "i7": "sergeant"},
        variant,
    )


#: the opponent's Colonel walks round this square while seat 0 shuttles
ROUND = ("h8", "h7", "g7", "g8")


def idle(state: StrategoState) -> None:
    """Seat 1 moves its Colonel one step round :data:`ROUND` (never back and forth)."""
    here = next(ref for ref in ROUND if state.owner[sq(ref)] == 1)
    play(state, here, ROUND[(ROUND.index(here) + 1) % len(ROUND)])


def test_classic_two_squares_rule_refuses_the_third_move_between_the_same_two_squares() -> None:
    state = shuttle_position(None)
    play(state, "e3", "e4")
    idle(state)
    play(state, "e4", "e3")
    idle(state)
    assert "e4" not in targets(state, "e3")
    refused(state, 0, move("e3", "e4"), "two-squares rule", "e3", "e4", "2 times")
    assert targets(state, "e3") == {"e2", "d3", "f3"}
    play(state, "e3", "f3")  # any other move is fine


def test_classic_two_squares_rule_counts_consecutive_moves_of_the_player_only() -> None:
    state = shuttle_position(None)
    play(state, "e3", "e4")
    idle(state)
    play(state, "b2", "b3")  # another piece moves: the run is broken
    idle(state)
    play(state, "e4", "e3")
    idle(state)
    play(state, "e3", "e4")  # allowed: only the 2nd consecutive move between e3 and e4
    idle(state)
    refused(state, 0, move("e4", "e3"), "two-squares rule")
    # leaving for a third square and coming back starts a new count
    play(state, "e4", "f4")
    idle(state)
    play(state, "f4", "e4")
    idle(state)
    assert "e3" in targets(state, "e4")
    play(state, "e4", "e3")


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_isf_two_squares_rule_refuses_the_fourth_move_whatever_the_opponent_does(
    variant: str,
) -> None:
    state = shuttle_position(variant)
    play(state, "e3", "e4")
    play(state, "h8", "h7")
    play(state, "e4", "e3")
    play(state, "h7", "h8")
    play(state, "e3", "e4")  # the third is allowed under ISF
    play(state, "i7", "i6")  # the opponent moves another piece: no matter
    refused(state, 0, move("e4", "e3"), "two-squares rule", "3 times")
    assert "e3" not in targets(state, "e4")


def test_isf_two_squares_rule_counts_strikes_as_moves() -> None:
    state = position(
        {**HOME0, "e3": "major", "b2": "captain"},
        {**HOME1, "e4": "scout", "h8": "colonel", "b5": "spy"},
        "isf",
    )
    play(state, "e3", "e4")  # a strike, won: the first move between e3 and e4
    assert state.history[-1]["result"] == "attacker"
    play(state, "b5", "b4")
    play(state, "e4", "e3")
    play(state, "b4", "b3")
    play(state, "e3", "e4")
    play(state, "b3", "b2")  # the opponent strikes in between (the Spy loses)
    assert state.history[-1]["result"] == "defender"
    refused(state, 0, move("e4", "e3"), "two-squares rule", "3 times")


def test_isf_two_squares_rule_refuses_a_strike_as_the_fourth_move() -> None:
    state = position(
        {**HOME0, "e3": "major", "b2": "captain"},
        {**HOME1, "h8": "colonel", "g3": "sergeant"},
        "isf",
    )
    play(state, "e3", "e4")
    play(state, "h8", "h7")
    play(state, "e4", "e3")
    play(state, "g3", "f3")
    play(state, "e3", "e4")
    play(state, "f3", "e3")  # an enemy steps onto the square the Major left
    assert "e3" not in targets(state, "e4")
    refused(state, 0, move("e4", "e3"), "two-squares rule")
    assert targets(state, "e4") == {"d4", "f4", "e5"}


# --- the two-squares rule for a Scout's long moves (ISF 10.2) -------------------------

#: a Scout on b2 with column b free from b1 to b10; the opponent walks its Colonel
#: round :data:`ROUND`, far from column b
LINE_MINE = {**HOME0, "b2": "scout"}
LINE_THEIRS = {**HOME1, "h8": "colonel"}


def scout_line(variant: str | None, mine: Mapping[str, str] = LINE_MINE) -> StrategoState:
    return position(mine, LINE_THEIRS, variant)


def scout_series(state: StrategoState, *squares: str) -> None:
    """Seat 0's Scout goes from square to square (each move listed as legal), seat 1's
    Colonel stepping round :data:`ROUND` in between."""
    for a, b in pairwise(squares):
        play(state, a, b)
        idle(state)


def refused_within(state: StrategoState, here: str, *squares: str) -> None:
    """Each move of the Scout on ``here`` to ``squares`` is refused by ISF 10.2 (left out of
    the legal moves, refused with the rule's name and the series' squares)."""
    for there in squares:
        assert there not in targets(state, here), f"{here}-{there} is listed"
        refused(state, 0, move(here, there), "two-squares rule")


def along_b(state: StrategoState, here: str) -> set[str]:
    """Where the Scout on ``here`` may go on its own line, column b."""
    return {t for t in targets(state, here) if t[0] == "b"}


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_isf_10_2_a_scout_shuttling_over_several_squares_is_refused_the_fourth_time(
    variant: str,
) -> None:
    state = scout_line(variant)
    scout_series(state, "b2", "b6", "b2", "b6")  # three moves between b2 and b6
    # the fourth move between the same two squares, as for any piece
    refused(state, 0, move("b6", "b2"), "two-squares rule", "3 times", "b2", "b6")
    # and every square the first move covered, b2 to b6: the Scout's "two squares"
    refused_within(state, "b6", "b3", "b4", "b5")
    message = refused(state, 0, move("b6", "b4"), "ISF 10.2", "3 times", "b2-b6")
    assert "first move" in message
    # squares beyond those of the first move (even past them), or off its line, stay open
    assert along_b(state, "b6") == {"b1", "b7", "b8", "b9", "b10"}
    assert "a6" in targets(state, "b6")
    play(state, "b6", "b9")  # past b6 and beyond: a new series starts
    idle(state)
    play(state, "b9", "b3")  # to b3, outside b6-b9: a new series again
    assert state.shuttle[0][2:] == (1, sq("b9"), sq("b3"))


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_isf_10_2_moves_within_the_first_moves_squares_count_as_the_same_two_squares(
    variant: str,
) -> None:
    state = scout_line(variant)
    # b2-b6 covers b2 to b6; b6-b4 and b4-b5 stay within those squares: each counts
    scout_series(state, "b2", "b6", "b4", "b5")
    assert state.shuttle[0][2] == 3
    refused_within(state, "b5", "b2", "b3", "b4", "b6")
    # leaving the squares of the first move is allowed, even over them
    assert along_b(state, "b5") == {"b1", "b7", "b8", "b9", "b10"}
    assert "a5" in targets(state, "b5")
    play(state, "b5", "b7")


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_isf_10_2_the_first_move_of_the_series_fixes_its_squares(variant: str) -> None:
    state = scout_line(variant)
    # a one-square first move: its two squares are b2 and b3 only
    scout_series(state, "b2", "b3", "b2")
    assert state.shuttle[0][2:] == (2, sq("b2"), sq("b3"))
    scout_series(state, "b2", "b6")  # b6 is not one of them: a new series, b2 to b6
    assert state.shuttle[0][2:] == (1, sq("b2"), sq("b6"))
    # a series that went beyond its first squares is counted from its new first move
    scout_series(state, "b6", "b3", "b8")  # b3-b8 leaves b2-b6: series b3 to b8
    assert state.shuttle[0][2:] == (1, sq("b3"), sq("b8"))
    scout_series(state, "b8", "b4", "b7")  # within b3-b8: the second and third moves
    refused_within(state, "b7", "b3", "b4", "b5", "b6", "b8")
    assert along_b(state, "b7") == {"b1", "b2", "b9", "b10"}


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_isf_10_2_another_piece_moving_breaks_the_scouts_series(variant: str) -> None:
    state = scout_line(variant, {**LINE_MINE, "e2": "miner"})
    scout_series(state, "b2", "b6", "b3")  # two moves within b2-b6
    play(state, "e2", "e3")  # seat 0 moves another piece: the Scout's series is over
    idle(state)
    # unbroken, b3-b5 and b5-b4 would be the third and the refused fourth within b2-b6
    scout_series(state, "b3", "b5", "b4")
    assert state.shuttle[0][2:] == (2, sq("b3"), sq("b5"))
    play(state, "b4", "b3")


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_isf_10_2_counts_strikes_and_refuses_a_strike_within_the_squares(variant: str) -> None:
    state = position(
        LINE_MINE, {**HOME1, "h8": "colonel", "a4": "sergeant", "b9": "miner"}, variant
    )
    scout_series(state, "b2", "b6", "b3")
    play(state, "b3", "b5")
    play(state, "a4", "b4")  # an enemy steps onto the Scout's line, inside b2-b6
    assert "b4" not in targets(state, "b5")
    refused(state, 0, move("b5", "b4"), "two-squares rule (ISF 10.2)")
    # a strike beyond the first move's squares is allowed (the Scout moves and strikes)
    assert along_b(state, "b5") == {"b7", "b8", "b9"}
    play(state, "b5", "b9")
    assert state.history[-1]["defender"] == "miner"


def test_classic_two_squares_rule_counts_a_scouts_exact_squares_only() -> None:
    """The classic rules have no ISF 10.2: a Scout's moves count between the same two
    squares only, as any piece's."""
    state = scout_line(None)
    scout_series(state, "b2", "b6", "b4")  # b6-b4 is not b6-b2: a new series
    assert state.shuttle[0][2] == 1
    play(state, "b4", "b6")
    idle(state)
    refused(state, 0, move("b6", "b4"), "two-squares rule", "2 times")
    assert {"b2", "b3", "b5"} <= targets(state, "b6")  # ISF 10.2 would refuse them


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_isf_10_2_a_player_whose_only_moves_the_rule_forbids_loses(variant: str) -> None:
    # the Scout alone can move, boxed in on b1-b4 by its own bombs and flag
    state = position(
        {
            "a1": "flag",
            "a2": "bomb",
            "a3": "bomb",
            "a4": "bomb",
            "c1": "bomb",
            "c2": "bomb",
            "c3": "bomb",
            "c4": "bomb",
            "b5": "bomb",
            "b1": "scout",
        },
        {**HOME1, "h8": "colonel"},
        variant,
    )
    scout_series(state, "b1", "b4", "b2")
    play(state, "b2", "b3")  # the third move within b1-b4: b1, b2 and b4 are refused
    here = next(ref for ref in ROUND if state.owner[sq(ref)] == 1)
    events = play(state, here, ROUND[(ROUND.index(here) + 1) % len(ROUND)])
    assert state.terminal and state.result().reason == EndReason.NO_MOVES
    assert events[-1]["places"] == [2, 1]


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_isf_10_2_the_referees_decision_request_offers_no_move_the_rule_forbids(
    variant: str,
) -> None:
    """What a bot receives: the DecisionRequest, serialized and read back as a bot reads
    it, lists the moves the rule allows and none it forbids."""
    state = scout_line(variant)
    scout_series(state, "b2", "b6", "b4", "b5")
    decision = state.decision()
    match = LiveMatch(
        referee=None,  # type: ignore[arg-type]  # decision_message needs no referee
        match_id="m" * 32,
        game=GAME,
        variants=REGISTRY.resolve_variants("stratego", [variant]),
        options={},
        seats=[Seat(label=f"b{i}", bot_id=f"b{i}") for i in range(2)],
        seed=5,
        decision_ms=250,
        time_bank_ms=4000,
    )
    message, _ = match.decision_message(
        0, decision, state.observation(0), to_json_text(decision.options), 1
    )
    wire = pb.RefereeMessage.FromString(message.SerializeToString()).decision
    assert wire.kind == "move"
    offered = {tuple(m) for m in json.loads(wire.options_json)["moves"]}
    scout = {square_name(t) for s, t in offered if s == sq("b5")}
    assert scout == {"a5", "b1", "b7", "b8", "b9", "b10"}
    assert offered == {tuple(m) for m in state.legal_moves(0)}
    # the bots' own rebuilt state (from the observation alone) knows the rule too
    template = build_template(observation_from_proto(wire.observation))
    assert {tuple(m) for m in template.legal_moves(0)} == offered


# --- the more-squares rule (ISF) ------------------------------------------------------


def created_by(state: StrategoState, a: str, b: str) -> int:
    """The position (in the mover's view) the move ``a``-``b`` would create, with the
    repetition rules set aside."""
    trial = state.clone()
    trial.rules = replace(state.rules, more_squares=False, shuttle_limit=SQUARES)
    trial.apply(state.player, move(a, b))
    return trial.zview[state.player]


def refused_chasing_move(state: StrategoState, a: str, b: str, repeated: int) -> None:
    """The chaser's ``a``-``b`` would recreate the position ``repeated``; it is not listed
    and is refused by the more-squares rule."""
    assert created_by(state, a, b) == repeated
    assert b not in targets(state, a)
    refused(state, state.player, move(a, b), "more-squares rule", "repeats a position")


def chase_position(variant: str | None) -> StrategoState:
    """The chaser (seat 0's Marshal) has just moved e2-e3, next to the chased (seat 1's
    Captain on f3): a threat, which starts a chase if the Captain evades it. Seat 1 is
    to move. Both sides have other pieces, far away."""
    state = position(
        {**HOME0, "e2": "marshal", "b1": "scout"},
        {**HOME1, "f3": "captain", "j8": "scout"},
        variant,
    )
    play(state, "e2", "e3")
    return state


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_more_squares_rule_refuses_a_chasing_move_that_repeats_a_position_of_the_chase(
    variant: str,
) -> None:
    # the Captain flees round the square e3-f3-f4-e4 and the Marshal follows one step
    # behind; after a full round the Marshal's move would recreate the first position
    state = chase_position(variant)
    start = state.zview[0]
    play(state, "f3", "f4")
    play(state, "e3", "f3")
    play(state, "f4", "e4")
    play(state, "f3", "f4")
    play(state, "e4", "e3")
    play(state, "f4", "e4")
    play(state, "e3", "f3")  # the Captain is back where it started
    refused_chasing_move(state, "e4", "e3", start)
    # any other move is allowed
    assert targets(state, "e4") == {"d4", "f4", "e5"}
    play(state, "e4", "d4")
    assert state.chase[0] is None


def test_classic_has_no_more_squares_rule() -> None:
    state = chase_position(None)
    for a, b in (("f3", "f4"), ("e3", "f3"), ("f4", "e4"), ("f3", "f4")):
        play(state, a, b)
    for a, b in (("e4", "e3"), ("f4", "e4"), ("e3", "f3")):
        play(state, a, b)
    play(state, "e4", "e3")  # the same position again: fine under classic
    assert state.owner[sq("e3")] == 0 and state.owner[sq("f3")] == 1


def test_more_squares_rule_the_chased_piece_may_keep_fleeing() -> None:
    state = chase_position("isf")
    play(state, "f3", "f4")  # flees
    fled = state.clone()
    play(state, "e3", "e4")  # follows alongside: a chasing move
    play(state, "f4", "f3")  # flees back
    play(state, "e4", "e3")  # follows back (allowed: straight back)
    # fleeing f3-f4 again recreates a position of the chase: the chased piece's moves
    # are not restricted by the rule (and the chase compares only the positions its
    # chaser created)
    assert fled.zview[0] not in state.chase[0]
    assert targets(state, "f3") == {"f2", "g3", "f4", "e3"}
    play(state, "f3", "f4")
    assert state.zview[0] == fled.zview[0]
    # the chase goes on: the Marshal may follow straight back once more
    play(state, "e3", "e4")
    assert state.chase[0] is not None
    # and the Captain keeps every square it can reach (even a strike on its chaser)
    # but the one the two-squares rule now forbids: its fourth move between f3 and f4
    assert targets(state, "f4") == {"f5", "g4", "e4"}
    play(state, "f4", "g4")


def test_more_squares_rule_allows_the_chasing_piece_straight_back() -> None:
    state = chase_position("isf")
    start = state.zview[0]
    play(state, "f3", "f4")
    play(state, "e3", "e4")
    play(state, "f4", "f3")
    # straight back to e3, where the Marshal came from: it repeats the first position,
    # which the chase remembers, yet it is allowed
    assert start in state.chase[0]
    assert "e3" in targets(state, "e4")
    play(state, "e4", "e3")
    assert state.zview[0] == start
    assert state.chase[0] is not None and start in state.chase[0]
    play(state, "f3", "f4")
    play(state, "e3", "e4")  # straight back again: the 3rd move e3-e4, still allowed
    # the fourth move between e3 and e4 is refused by the two-squares rule
    play(state, "f4", "g4")
    refused(state, 0, move("e4", "e3"), "two-squares rule")


#: seat 0 chases two of seat 1's pieces in turn with two pieces of its own: the Marshal
#: goes e2-e3-e2 against the Captain (f3-f2-f3), the General b2-b3-b2 against the Major
#: (c3-c2-c3). Each side moves its two pieces in turn, so the two-squares rule never
#: applies, and no chaser ever follows the piece that has just fled.
TWO_PIECE_CHASE = (
    ("e2", "e3"),  # the Marshal threatens the Captain
    ("f3", "f2"),  # the Captain evades: the chase begins
    ("b2", "b3"),  # the General threatens the Major
    ("c3", "c2"),  # the Major evades
    ("e3", "e2"),  # the Marshal threatens the Captain again: a chasing move
    ("f2", "f3"),
    ("b3", "b2"),  # the General threatens the Major again
    ("c2", "c3"),
)


def two_piece_chase(variant: str | None, moves: int, chasers: str = "marshal") -> StrategoState:
    """The first ``moves`` moves of TWO_PIECE_CHASE, each listed as legal; ``chasers``
    names the rank of the piece on e2 (the General on b2 is the other chaser)."""
    state = position(
        {**HOME0, "e2": chasers, "b2": "general"},
        {**HOME1, "f3": "captain", "c3": "major"},
        variant,
    )
    for a, b in TWO_PIECE_CHASE[:moves]:
        play(state, a, b)
    return state


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_more_squares_rule_stops_a_chase_that_alternates_between_two_fleeing_pieces(
    variant: str,
) -> None:
    state = two_piece_chase(variant, 1)
    first = state.zview[0]  # the position the first threat created
    for a, b in TWO_PIECE_CHASE[1:]:
        play(state, a, b)
    # the chase remembers the four positions seat 0 created, and both fleeing pieces
    assert first in state.chase[0] and len(state.chase[0]) == 4
    assert state.evaders[0] == {sq("f3"), sq("c3")}
    # e2-e3 threatens the Captain again and would recreate the first position: refused,
    # although the Marshal did not move last (so it is not a move straight back)
    refused_chasing_move(state, "e2", "e3", first)
    # the other chasing moves create new positions and stay allowed
    assert targets(state, "e2") == {"d2", "e1", "f2"}
    assert targets(state, "b2") == {"a2", "b1", "b3", "c2"}
    play(state, "e2", "f2")
    assert state.chase[0] is not None


def test_classic_does_not_stop_a_two_piece_chase() -> None:
    state = two_piece_chase(None, len(TWO_PIECE_CHASE))
    play(state, "e2", "e3")
    assert state.chase == [None, None]


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_more_squares_rule_covers_scouts_long_moves(variant: str) -> None:
    # the same two-piece chase, but a Scout chases a Scout along columns e and f,
    # three squares at a time: a long move threatens, evades and chases like a step
    state = position(
        {**HOME0, "e1": "scout", "b2": "general"},
        {**HOME1, "f3": "scout", "c3": "major"},
        variant,
    )
    play(state, "e1", "e3")
    first = state.zview[0]
    for a, b in (("f3", "f1"), ("b2", "b3"), ("c3", "c2")):
        play(state, a, b)
    assert state.evaders[0] == {sq("f1"), sq("c2")}
    for a, b in (("e3", "e1"), ("f1", "f3"), ("b3", "b2"), ("c2", "c3")):
        play(state, a, b)
    refused_chasing_move(state, "e1", "e3", first)
    play(state, "e1", "e2")  # a new position: allowed


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_more_squares_rule_allows_straight_back_in_a_two_piece_chase(variant: str) -> None:
    state = two_piece_chase(variant, 4)
    play(state, "b3", "b2")  # the General threatens the Major again
    play(state, "c2", "c3")
    # straight back to b3, where the General came from: it recreates a position of the
    # chase (the General's first threat), and it is allowed
    assert created_by(state, "b2", "b3") in state.chase[0]
    play(state, "b2", "b3")
    play(state, "c3", "c2")
    # straight back once more would be the General's fourth move in a row between b2
    # and b3: the two-squares rule refuses it
    assert created_by(state, "b3", "b2") in state.chase[0]
    assert "b2" not in targets(state, "b3")
    refused(state, 0, move("b3", "b2"), "two-squares rule")


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_more_squares_rule_chase_ends_when_the_chased_side_does_not_flee(variant: str) -> None:
    state = two_piece_chase(variant, 7)
    # the Major, threatened by b3-b2, stays; seat 1 moves a piece nobody threatens
    play(state, "j9", "j8")
    assert state.chase[0] is None and state.evaders[0] == set()
    for a, b in (("j2", "j3"), ("j8", "j9"), ("j3", "j2"), ("c2", "c3")):
        play(state, a, b)
    # the position of the last, stopped example comes back: no chase is going on now,
    # so e2-e3 may recreate the position of the old chase's first threat
    first = two_piece_chase(variant, 1).zview[0]
    assert created_by(state, "e2", "e3") == first
    play(state, "e2", "e3")
    assert state.zview[0] == first


# --- the rescue rule (classic option) ------------------------------------------------


def rescue_position(rescue: str = "on", scout: str = "c9") -> StrategoState:
    """Seat 0 has lost a Captain, a Bomb and a Scout; its Major, Scout, Colonel and
    Lieutenant stand next to seat 1's back row (row 10)."""
    state = position(
        {
            "j1": "flag",
            "a9": "major",
            scout: "scout",
            "e9": "colonel",
            "h9": "lieutenant",
            "b1": "sergeant",
        },
        {"j8": "flag", "h10": "spy", "g10": "general", "f6": "miner"},
        rescue=rescue,
    )
    state.captured[0] = [RANK_OF["captain"], BOMB, RANK_OF["scout"]]
    return state


def test_rescue_after_a_piece_moves_onto_the_opponents_back_row() -> None:
    state = rescue_position()
    assert state.observation(0)["rescues_left"] == [2, 2]
    play(state, "a9", "a10")
    decision = state.decision()
    assert (decision.player, decision.kind) == (0, "rescue")
    assert decision.options["pieces"] == ["captain", "scout"]
    empty_own_half = [
        s
        for s in range(SQUARES)
        if s // SIZE in HALF_ROWS[0] and s not in LAKES and state.owner[s] < 0
    ]
    assert decision.options["squares"] == empty_own_half
    refused(state, 0, move("b1", "b2"), "'move' is not allowed in the rescue phase")
    refused(state, 1, {"type": "no_rescue"}, "not your turn")
    events = state.apply(0, {"type": "rescue", "piece": "captain", "square": "e2"})
    assert events == [{"e": "rescue", "p": 0, "rescue": "captain", "square": sq("e2")}]
    assert (state.owner[sq("e2")], NAMES[state.rank[sq("e2")]]) == (0, "captain")
    assert board_entry(state, 1, "e2")["rank"] == "captain"  # the rescue is public
    assert sorted(state.captured[0]) == sorted([BOMB, RANK_OF["scout"]])
    assert state.observation(1)["rescues_left"] == [1, 2]
    assert state.observation(1)["history"][-1] == {"p": 0, "rescue": "captain", "square": sq("e2")}
    # the turn has ended
    assert (state.player, state.decision().kind) == (1, "move")


def test_rescue_after_winning_a_strike_on_the_back_row() -> None:
    state = rescue_position()
    play(state, "h9", "h10")  # the Lieutenant strikes the Spy and wins
    assert state.history[-1]["result"] == "attacker"
    assert (state.player, state.decision().kind) == (0, "rescue")
    # a strike lost on the back row gives no rescue
    state = rescue_position()
    play(state, "h9", "g9")
    play(state, "f6", "f5")
    play(state, "g9", "g10")  # the Lieutenant strikes the General and loses
    assert state.history[-1]["result"] == "defender"
    assert (state.player, state.decision().kind) == (1, "move")


def test_rescue_not_by_a_scout() -> None:
    state = rescue_position()
    play(state, "c9", "c10")
    assert (state.player, state.decision().kind) == (1, "move")
    assert state.observation(0)["rescues_left"] == [2, 2]
    # a Scout landing there from afar is no rescuer either
    state = rescue_position(scout="c6")
    play(state, "c6", "c10")
    assert (state.player, state.decision().kind) == (1, "move")


def test_rescue_never_a_bomb_nor_a_piece_not_captured() -> None:
    state = rescue_position()
    play(state, "a9", "a10")
    assert "bomb" not in state.decision().options["pieces"]
    refused(state, 0, {"type": "rescue", "piece": "bomb", "square": "e2"}, "cannot rescue 'bomb'")
    refused(state, 0, {"type": "rescue", "piece": "flag", "square": "e2"}, "cannot rescue 'flag'")
    refused(state, 0, {"type": "rescue", "piece": "marshal", "square": "e2"}, "cannot rescue")
    refused(state, 0, {"type": "rescue", "square": "e2"}, "cannot rescue None")
    # a side that has lost only Bombs has nothing to rescue: no rescue decision at all
    state = rescue_position()
    state.captured[0] = [BOMB, BOMB]
    play(state, "a9", "a10")
    assert (state.player, state.decision().kind) == (1, "move")


def test_rescue_only_onto_an_empty_square_of_the_own_half() -> None:
    state = rescue_position()
    play(state, "a9", "a10")
    for square in ("b1", "f6", "e6", "a10", "c5", "h5"):
        refused(
            state,
            0,
            {"type": "rescue", "piece": "captain", "square": square},
            f"{square} is not an empty square of your half",
        )
    refused(state, 0, {"type": "rescue", "piece": "captain", "square": "k1"}, "unknown square")
    state.apply(0, {"type": "rescue", "piece": "captain", "square": "j5"})  # row 5: own half
    assert state.owner[sq("j5")] == 0
    # seat 1's half is rows 6-10
    state = position(
        {"j1": "flag", "b1": "sergeant", "a9": "major"},
        {"j8": "flag", "a3": "major", "f6": "miner"},
        player=1,
        rescue="on",
    )
    state.captured[1] = [RANK_OF["general"]]
    play(state, "a3", "a2")
    play(state, "a9", "a8")
    play(state, "a2", "a1")  # onto seat 0's back row
    assert (state.player, state.decision().kind) == (1, "rescue")
    assert {s // SIZE for s in state.decision().options["squares"]} == {5, 6, 7, 8, 9}
    refused(state, 1, {"type": "rescue", "piece": "general", "square": "a5"}, "a5 is not")
    state.apply(1, {"type": "rescue", "piece": "general", "square": "a6"})
    assert (state.owner[sq("a6")], state.rank[sq("a6")]) == (1, RANK_OF["general"])
    assert state.player == 0


def test_rescue_at_most_two_per_player() -> None:
    state = rescue_position()
    state.captured[0] = [RANK_OF["captain"], RANK_OF["major"], RANK_OF["miner"]]
    play(state, "a9", "a10")
    state.apply(0, {"type": "rescue", "piece": "captain", "square": "a3"})
    play(state, "f6", "f5")
    play(state, "e9", "e10")
    state.apply(0, {"type": "rescue", "piece": "major", "square": "b3"})
    assert state.observation(0)["rescues_left"] == [0, 2]
    play(state, "f5", "f4")
    play(state, "h9", "h10")  # a third piece reaches the back row: no more rescues
    assert (state.player, state.decision().kind) == (1, "move")
    assert state.captured[0] == [RANK_OF["miner"]]


def test_rescue_not_twice_by_the_same_piece() -> None:
    state = rescue_position()
    play(state, "a9", "a10")
    state.apply(0, {"type": "rescue", "piece": "captain", "square": "a3"})
    play(state, "f6", "f5")
    play(state, "a10", "b10")  # the same Major, onto another back-row square
    assert (state.player, state.decision().kind) == (1, "move")
    play(state, "f5", "f4")
    play(state, "b10", "c10")
    assert (state.player, state.decision().kind) == (1, "move")
    play(state, "f4", "f3")
    play(state, "e9", "e10")  # another piece may
    assert (state.player, state.decision().kind) == (0, "rescue")


def test_rescue_is_optional_no_rescue_ends_the_turn() -> None:
    state = rescue_position()
    play(state, "a9", "a10")
    before = [list(c) for c in state.captured]
    events = state.apply(0, {"type": "no_rescue"})
    assert events == []
    assert (state.player, state.decision().kind) == (1, "move")
    assert state.captured == before
    assert state.observation(0)["rescues_left"] == [2, 2]
    assert len(state.pieces[0]) == 6


def test_rescue_is_off_by_default() -> None:
    state = rescue_position(rescue="off")
    play(state, "a9", "a10")
    assert (state.player, state.decision().kind) == (1, "move")
    assert state.observation(0)["rescues_left"] == [0, 0]
    assert new_game().rules.rescue is False
    assert new_game(rescue="on").rules.rescue is True


@pytest.mark.parametrize("variant", ["isf", "barrage"])
def test_rescue_is_refused_with_isf_rules(variant: str) -> None:
    with pytest.raises(ValueError, match="rescue rule is an option of the classic rules"):
        new_game(variant, rescue="on")
    assert new_game(variant, rescue="off").rules.rescue is False


# --- illegal actions in general -------------------------------------------------------


def test_every_illegal_action_is_refused_with_a_reason_and_changes_nothing() -> None:
    state = position({**HOME0, "e4": "major"}, {**HOME1, "e5": "captain"})
    refused(state, 0, "e4-e5", "an action must be a mapping", "str")
    refused(state, 0, {"from": "e4", "to": "e5"}, "action None is not allowed in the move phase")
    refused(state, 0, {"type": "jump", "from": "e4", "to": "e5"}, "'jump' is not allowed")
    refused(state, 0, {"type": "move", "from": True, "to": "e5"}, "unknown square True")
    refused(state, 0, {"type": "move", "from": "e4", "to": 100}, "unknown square 100")
    refused(state, 0, {"type": "move", "from": "e4", "to": 3.0}, "'to'")
    refused(state, 1, move("e5", "e4"), "not your turn: seat 1 acted but seat 0 is to move")
    refused(state, 0, {"type": "no_rescue"}, "not allowed in the move phase")
    refused(state, 0, {"type": "rescue", "piece": "captain", "square": "a2"}, "'rescue'")
