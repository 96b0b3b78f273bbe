"""Exact battle odds: a Markov chain over the dice, as in Osborne (2003).

``attack_probability(A, D)``: the probability that ``A`` attacking armies (armies able
to attack: the army that must stay behind is not counted) capture a territory held
by ``D`` armies, both sides rolling the most dice allowed in every roll until one
side runs out.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import numpy as np

from arena.games.risk.dice import outcome_table


def attack_probability(attackers: int, defenders: int) -> Fraction:
    """Exact probability that ``attackers`` take a territory held by ``defenders``."""
    if attackers < 0 or defenders < 1:
        raise ValueError(
            f"attackers must be >= 0 and defenders >= 1, got {attackers} and {defenders}"
        )
    if attackers + defenders > 300:  # fill bottom-up so the recursion stays shallow
        for a in range(1, attackers + 1):
            for d in range(1, defenders + 1):
                _win(a, d)
    return _win(attackers, defenders)


@cache
def _win(a: int, d: int) -> Fraction:
    if d == 0:
        return Fraction(1)
    if a == 0:
        return Fraction(0)
    total = Fraction(0)
    for (al, dl), p in outcome_table(min(3, a), min(2, d)).items():
        total += p * _win(a - al, d - dl)
    return total


def win_table(max_attackers: int, max_defenders: int) -> list[list[float]]:
    """Rows of P(win) for 1..max_attackers against 1..max_defenders (floats)."""
    if max_attackers * max_defenders > 250_000:
        raise ValueError("table too large: at most 250,000 cells")
    # Fill bottom-up so the recursion never runs deep.
    for a in range(1, max_attackers + 1):
        for d in range(1, max_defenders + 1):
            _win(a, d)
    return [
        [float(_win(a, d)) for d in range(1, max_defenders + 1)]
        for a in range(1, max_attackers + 1)
    ]


#: the largest battle :func:`attack_chance` takes (attackers x defenders cells, 8 bytes each)
MOST_CELLS = 25_000_000


def attack_chance(attackers: int, defenders: int) -> float:
    """:func:`attack_probability` in floating point, for large armies.

    The exact fractions grow a denominator of thousands of digits at 1000 against 1000,
    which makes every addition slow (minutes); floats keep each cell one operation (see
    :func:`chance_table`).
    """
    if attackers < 0 or defenders < 1:
        raise ValueError(
            f"attackers must be >= 0 and defenders >= 1, got {attackers} and {defenders}"
        )
    return float(chance_table(attackers, defenders)[attackers, defenders])


def chance_table(attackers: int, defenders: int) -> np.ndarray:
    """``table[a, d]``: :func:`attack_chance` of every battle up to ``attackers`` against
    ``defenders`` at once (row 0 and column 0 included), for bots that look many up.

    Every roll of three dice against two moves the battle from the diagonal ``a + d`` to
    ``a + d - 2``, so the inside of the table fills one diagonal at a time as array work;
    its edges (one or two attacking armies, one defender) take one comparison a roll and
    fill first, in plain loops.
    """
    if attackers < 0 or defenders < 0:
        raise ValueError(f"attackers and defenders must be >= 0, got {attackers} and {defenders}")
    if attackers * defenders > MOST_CELLS:
        raise ValueError(
            f"{attackers} against {defenders}: at most {MOST_CELLS:,} attackers x defenders"
        )
    tables = {
        (a, d): [(losses, float(p)) for losses, p in outcome_table(a, d).items()]
        for a in (1, 2, 3)
        for d in (1, 2)
    }
    win = np.zeros((attackers + 1, defenders + 1))
    win[:, 0] = 1.0
    if defenders == 0:
        return win

    def edge(a: int, d: int) -> None:
        win[a, d] = sum(p * win[a - al, d - dl] for (al, dl), p in tables[min(3, a), min(2, d)])

    for a in range(1, attackers + 1):
        edge(a, 1)
    for a in range(1, min(2, attackers) + 1):
        for d in range(2, defenders + 1):
            edge(a, d)
    # Along a diagonal (a up by one, d down by one) a cell's index in the flat table steps
    # by ``defenders``: each diagonal, and the three it reads, are strided slices.
    flat, row = win.reshape(-1), defenders + 1
    both = dict(tables[3, 2])
    for total in range(5, attackers + defenders + 1):
        first, last = max(3, total - defenders), min(attackers, total - 2)
        if first > last:
            continue
        start = first * row + total - first
        cells = slice(start, start + (last - first) * defenders + 1, defenders)
        flat[cells] = (
            both[0, 2] * flat[_shifted(cells, -2)]
            + both[1, 1] * flat[_shifted(cells, -row - 1)]
            + both[2, 0] * flat[_shifted(cells, -2 * row)]
        )
    return win


def _shifted(cells: slice, by: int) -> slice:
    return slice(cells.start + by, cells.stop + by, cells.step)
