"""The legal moves the state keeps from its stuck check for the decision's options:
always those of the position and the player now, never a list a bot already holds."""

from __future__ import annotations

import random

import pytest

from arena.bots._stratego_common import random_setup
from arena.engine import IllegalAction
from arena.games.stratego.board import SQUARES
from arena.games.stratego.pieces import RANK_OF
from arena.plugins import load_registry

REGISTRY = load_registry()


@pytest.mark.parametrize("variants", [[], ["isf"], ["barrage"]])
def test_the_options_are_the_legal_moves_of_the_position(variants: list[str]) -> None:
    game = REGISTRY.game("stratego")
    state = game.new_state(2, 9, variants=REGISTRY.resolve_variants("stratego", variants))
    rng = random.Random(9)
    for seat in (0, 1):
        state.apply(seat, random_setup(rng, state.decision().options))
    plies = 0
    while not state.terminal and plies < 400:
        p = state.player
        offered = state.decision().options["moves"]
        assert offered == state.legal_moves(p), f"ply {plies}"
        offered.append([0, 0])  # the bot's list is its own
        again = state.legal_options()["moves"]
        assert again == state.legal_moves(p) and again is not offered
        s, t = rng.choice(again)
        with pytest.raises(IllegalAction):  # a refused move changes nothing offered
            state.apply(p, {"type": "move", "from": s, "to": s})
        assert state.decision().options["moves"] == again
        state.apply(p, {"type": "move", "from": s, "to": t})
        plies += 1


def test_a_board_changed_square_by_square_is_seen() -> None:
    """Tests and tools build positions with ``_clear`` and ``_put``: the moves kept for
    the earlier board are forgotten."""
    state = REGISTRY.game("stratego").new_state(2, 3)
    rng = random.Random(3)
    for seat in (0, 1):
        state.apply(seat, random_setup(rng, state.decision().options))
    assert state.legal_options()["moves"]
    state._check_stuck([])  # keeps seat 0's moves for this board
    for s in range(SQUARES):
        if state.owner[s] >= 0:
            state._clear(s)
    state.pieces = [set(), set()]
    state._put(0, 0, RANK_OF["marshal"], 0)
    state._put(99, 1, RANK_OF["marshal"], 100)
    state._put(90, 1, RANK_OF["flag"], 101)
    assert state.legal_options()["moves"] == [[0, 10], [0, 1]] == state.legal_moves(0)
    state._check_stuck([])  # seat 0's moves kept again ...
    state.player = 1  # ... and never offered to the other seat
    assert state.legal_options()["moves"] == state.legal_moves(1) == [[99, 89], [99, 98]]
