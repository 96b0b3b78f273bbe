"""Exact battle odds: a Markov chain over the dice, as in Osborne (2003).

``attack_probability(A, D)``: the probability that ``A`` attacking armies (armies able
to attack: the army that must stay behind is not counted) capture a territory held
by ``D`` armies, both sides rolling the most dice allowed in every roll until one
side runs out.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

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
