"""Risk dice: the exact one-roll outcome table and the two ways to roll.

A roll with ``a`` attacking and ``d`` defending dice ends in one of a few outcomes
(attacker losses, defender losses). ``faces`` mode rolls every die; ``distribution``
mode draws the outcome directly from its exact probability (one random number per
roll instead of up to five, same law). Both use the match's seeded generator.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction
from functools import cache


def compare(attack: Sequence[int], defend: Sequence[int]) -> tuple[int, int]:
    """(attacker losses, defender losses) for the given faces. Ties go to the defender."""
    a = sorted(attack, reverse=True)
    d = sorted(defend, reverse=True)
    att_loss = def_loss = 0
    for x, y in zip(a, d, strict=False):
        if x > y:
            def_loss += 1
        else:
            att_loss += 1
    return att_loss, def_loss


@cache
def outcome_table(att_dice: int, def_dice: int) -> dict[tuple[int, int], Fraction]:
    """Exact probability of each (attacker losses, defender losses) for one roll."""
    if not (1 <= att_dice <= 3 and 1 <= def_dice <= 2):
        raise ValueError(f"dice {att_dice}v{def_dice}: attacker rolls 1-3, defender 1-2")
    counts: dict[tuple[int, int], int] = {}
    total = 0
    for faces in itertools.product(range(1, 7), repeat=att_dice + def_dice):
        key = compare(faces[:att_dice], faces[att_dice:])
        counts[key] = counts.get(key, 0) + 1
        total += 1
    return {key: Fraction(n, total) for key, n in sorted(counts.items())}


#: A roll's outcome packed as one character: str(3 * attacker losses + defender losses).
def outcome_code(att_loss: int, def_loss: int) -> str:
    return str(3 * att_loss + def_loss)


def decode_outcome(code: str) -> tuple[int, int]:
    value = int(code)
    return value // 3, value % 3


def _cumulative(att_dice: int, def_dice: int) -> tuple[tuple[float, int, int, str], ...]:
    rows = []
    acc = Fraction(0)
    items = list(outcome_table(att_dice, def_dice).items())
    for i, ((al, dl), p) in enumerate(items):
        acc += p
        threshold = 2.0 if i == len(items) - 1 else float(acc)  # last row catches all
        rows.append((threshold, al, dl, outcome_code(al, dl)))
    return tuple(rows)


#: CUMULATIVE[a][d]: rows (upper threshold, attacker losses, defender losses, code)
CUMULATIVE: tuple[tuple[tuple[tuple[float, int, int, str], ...], ...], ...] = tuple(
    tuple(_cumulative(a, d) if a and d else () for d in range(3)) for a in range(4)
)
