"""A sensible random Stratego setup: the referee's fallback and the SDK's helper.

The flag goes on a random square of the back row, bombs on the squares next to it
(the one in front first, then the sides in random order, as many as there are bombs),
and every other piece on a random free square of the setup rows. Random, so that a
bot cannot count on where a fallback army stands; never the flag on the front row, so
that a timeout at setup does not hand the opponent a flag it strikes on its first moves.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from arena.games.stratego.board import NEIGHBOURS, SIZE

_MIDDLE = (SIZE - 1) / 2


def back_row(squares: Sequence[int]) -> int:
    """The setup row farthest from the middle of the board."""
    return max({s // SIZE for s in squares}, key=lambda row: abs(row - _MIDDLE))


def guarded_setup(
    squares: Sequence[int], army: Mapping[str, int], rng: random.Random
) -> dict[str, Any]:
    """A legal setup action for the setup ``squares`` (the decision's options) that
    places ``army`` (name to count), drawn from ``rng``."""
    free = list(squares)
    pieces = [name for name, n in army.items() for _ in range(n)]
    if len(pieces) > len(free):
        raise ValueError(f"{len(pieces)} pieces do not fit on {len(free)} setup squares")
    placement: dict[int, str] = {}
    if "flag" in pieces:
        back = back_row(free)
        flag = rng.choice([s for s in free if s // SIZE == back])
        placement[flag] = "flag"
        pieces.remove("flag")
        # the square in front first: with one bomb (barrage) a Scout that may move and
        # strike would otherwise fly down the flag's column on its first move
        front = flag + SIZE if back < _MIDDLE else flag - SIZE
        sides = [s for s in NEIGHBOURS[flag] if s in free and s != front]
        rng.shuffle(sides)
        guards = [front, *sides] if front in free else sides
        for guard in guards[: pieces.count("bomb")]:
            placement[guard] = "bomb"
            pieces.remove("bomb")
    free = [s for s in free if s not in placement]
    rng.shuffle(free)  # the first len(pieces) of a shuffle: a random subset, in random order
    placement.update(zip(free, pieces, strict=False))
    return {"type": "setup", "placement": {str(s): name for s, name in sorted(placement.items())}}
