"""Exact battle odds: a Markov chain over the dice, as in Osborne (2003).

``attack_probability(A, D)``: the probability that ``A`` attacking armies (armies able
to attack: the army that must stay behind is not counted) capture a territory held
by ``D`` armies, both sides rolling the most dice allowed in every roll until one
side runs out.
"""

from __future__ import annotations

import functools
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
    which makes every addition slow (minutes); floats keep each cell one operation
    (:func:`win_array`).
    """
    if attackers < 0 or defenders < 1:
        raise ValueError(
            f"attackers must be >= 0 and defenders >= 1, got {attackers} and {defenders}"
        )
    if attackers * defenders > MOST_CELLS:
        raise ValueError(
            f"{attackers} against {defenders}: at most {MOST_CELLS:,} attackers x defenders"
        )
    return float(win_array(attackers, defenders)[attackers, defenders])


def win_array(attackers: int, defenders: int, dice: int = 3) -> np.ndarray:
    """``win[a, d]``: the chance that ``a`` attacking armies (those able to attack),
    rolling at most ``dice`` dice, take a territory held by ``d``, for every ``a`` up to
    ``attackers`` and ``d`` up to ``defenders``, both sides rolling the most dice
    allowed until one side runs out.

    Inside the table (at least ``dice`` attackers, two defenders) every roll moves the
    battle from the diagonal ``a + d`` to ``a + d - 2`` (``a + d - 1`` with one die),
    so the inside fills one diagonal at a time as array work; its edges (fewer
    attackers, one defender) fill first, in plain loops.
    """
    tables = {
        (a, d): [(losses, float(p)) for losses, p in outcome_table(a, d).items()]
        for a in (1, 2, 3)
        for d in (1, 2)
    }
    win = np.zeros((attackers + 1, defenders + 1))
    win[:, 0] = 1.0

    def edge(a: int, d: int) -> None:
        win[a, d] = sum(p * win[a - al, d - dl] for (al, dl), p in tables[min(dice, a), min(2, d)])

    for a in range(1, attackers + 1):
        edge(a, 1)
    for a in range(1, min(dice - 1, attackers) + 1):
        for d in range(2, defenders + 1):
            edge(a, d)
    # Along a diagonal (a up by one, d down by one) a cell's index in the flat table steps
    # by ``defenders``: each diagonal, and those it reads, are strided slices.
    flat, row = win.reshape(-1), defenders + 1
    inside = tables[dice, 2]
    lowest = max(dice, 1)
    for total in range(lowest + 2, attackers + defenders + 1):
        first, last = max(lowest, total - defenders), min(attackers, total - 2)
        if first > last:
            continue
        start = first * row + total - first
        cells = slice(start, start + (last - first) * defenders + 1, defenders)
        flat[cells] = sum(p * flat[_shifted(cells, -al * row - dl)] for (al, dl), p in inside)
    return win


def chance_table(attackers: int, defenders: int) -> np.ndarray:
    """``table[a, d]``: :func:`attack_chance` of every battle up to ``attackers`` against
    ``defenders`` at once (row 0 and column 0 included), for bots that look many up."""
    if attackers < 0 or defenders < 0:
        raise ValueError(f"attackers and defenders must be >= 0, got {attackers} and {defenders}")
    if attackers * defenders > MOST_CELLS:
        raise ValueError(
            f"{attackers} against {defenders}: at most {MOST_CELLS:,} attackers x defenders"
        )
    if defenders == 0:  # taken already
        return np.ones((attackers + 1, 1))
    return win_array(attackers, defenders)


def _shifted(cells: slice, by: int) -> slice:
    return slice(cells.start + by, cells.stop + by, cells.step)


#: the largest table :func:`attack_odds` keeps for attacks pressed to the end, per number
#: of dice (8 bytes a cell), and the largest it fills for an attack that stops earlier
MOST_TABLE_CELLS = 4_000_000
MOST_ODDS_CELLS = 250_000
_all_out: dict[int, np.ndarray] = {}


def attack_odds(armies: int, defenders: int, dice: int = 3, stop: int = 1) -> float:
    """The chance that an attack as the rules play it captures the territory: ``armies``
    on the attacking territory, ``defenders`` on the other, rolling at most ``dice``
    dice (and one fewer than the armies there), the defender the most dice allowed,
    rolling again until the territory falls or the attacker is down to ``stop`` armies
    (an attack with ``until``), at least once (``stop == armies``: one roll).

    An attack pressed to the end (``stop`` 1) reads a table of every battle up to its
    size (:func:`win_array`, kept per number of dice and grown by doubling, at most
    :data:`MOST_TABLE_CELLS` cells); one that stops earlier fills its own (at most
    :data:`MOST_ODDS_CELLS` cells). Larger battles are a ValueError.
    """
    if not (armies >= 2 and defenders >= 1 and 1 <= dice <= 3 and 1 <= stop <= armies):
        raise ValueError(
            f"an attack needs 2+ armies, 1+ defenders, 1-3 dice and a stop from 1 to the "
            f"armies; got {armies}, {defenders}, {dice}, {stop}"
        )
    if stop == armies:  # one roll: it takes the territory if the defender loses all
        return _one_roll(min(dice, armies - 1), min(defenders, 3))
    if stop == 1:
        return float(_all_out_table(armies, defenders + 1, dice)[armies - 1, defenders])
    if armies * defenders > MOST_ODDS_CELLS:
        raise ValueError(f"{armies} against {defenders}: at most {MOST_ODDS_CELLS:,} cells")
    return _stopping(armies, defenders, dice, stop)


def _all_out_table(rows: int, columns: int, dice: int) -> np.ndarray:
    """The kept :func:`win_array` of ``dice``, grown to at least ``rows`` x ``columns``:
    a dimension that must grow doubles, and neither shrinks while the table fits."""
    table = _all_out.get(dice)
    have = table.shape if table is not None else (0, 0)
    if rows <= have[0] and columns <= have[1]:
        return table  # type: ignore[return-value]
    grown = [
        max(have[i], need if need <= have[i] else max(need, 2 * have[i], 64))
        for i, need in enumerate((rows, columns))
    ]
    if grown[0] * grown[1] > MOST_TABLE_CELLS:
        grown = [max(rows, have[0]), max(columns, have[1])]
    if grown[0] * grown[1] > MOST_TABLE_CELLS:
        raise ValueError(
            f"{rows} against {columns - 1}: too large a battle to tabulate "
            f"(at most {MOST_TABLE_CELLS:,} cells)"
        )
    table = _all_out[dice] = win_array(grown[0] - 1, grown[1] - 1, dice)
    return table


@cache
def _float_tables() -> dict[tuple[int, int], list[tuple[int, int, float]]]:
    """Each roll's outcomes: (attacker losses, defender losses, chance) by dice."""
    return {
        (a, d): [(al, dl, float(p)) for (al, dl), p in outcome_table(a, d).items()]
        for a in (1, 2, 3)
        for d in (1, 2)
    }


@cache
def _one_roll(dice: int, defenders: int) -> float:
    """The chance that one roll of ``dice`` dice takes a territory of ``defenders``
    armies (3 stands for more: one roll never takes those)."""
    return sum(p for _, dl, p in _float_tables()[dice, min(2, defenders)] if dl == defenders)


@functools.lru_cache(maxsize=4096)
def _stopping(armies: int, defenders: int, dice: int, stop: int) -> float:
    """:func:`attack_odds` of an attack that stops at ``stop`` armies (1 < stop < armies):
    every position it can pass through, filled from the end."""
    tables = _float_tables()
    # win[a][d]: the chance from a position the attack rolls on from (a > stop)
    win = [[1.0] + [0.0] * defenders for _ in range(armies + 1)]
    for a in range(max(stop + 1, 2), armies + 1):
        row = win[a]
        for d in range(1, defenders + 1):
            total = 0.0
            for al, dl, p in tables[min(dice, a - 1), min(2, d)]:
                na, nd = a - al, d - dl
                if nd == 0:
                    total += p
                elif na > stop:  # stop >= 1, so na >= 2: the attack rolls on
                    total += p * win[na][nd]
            row[d] = total
    return win[armies][defenders]
