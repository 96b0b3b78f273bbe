"""``attack_odds``: the chance of an attack as the rules play it (its dice, one roll or
on until ``until`` armies are left), against an exact recursion in fractions, and
against the engine's own attacks."""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import pytest

from arena.games.risk.dice import outcome_table
from arena.games.risk.odds import attack_odds, attack_probability


def exact(armies: int, defenders: int, dice: int, stop: int) -> Fraction:
    """The rules' attack step by step: roll min(dice, armies - 1) against min(2, d)
    dice; go on while the territory holds, the attacker has more than ``stop`` armies
    and at least 2; the first roll always happens."""

    @cache
    def win(a: int, d: int, first: bool) -> Fraction:
        if d == 0:
            return Fraction(1)
        if not first and (a <= stop or a < 2):
            return Fraction(0)
        return sum(
            (
                p * win(a - al, d - dl, False)
                for (al, dl), p in outcome_table(min(dice, a - 1), min(2, d)).items()
            ),
            Fraction(0),
        )

    return win(armies, defenders, True)


@pytest.mark.parametrize("dice", [1, 2, 3])
def test_every_small_attack_against_the_exact_recursion(dice):
    for armies in range(2, 12):
        for defenders in range(1, 10):
            for stop in range(1, armies + 1):
                expected = float(exact(armies, defenders, dice, stop))
                assert attack_odds(armies, defenders, dice, stop) == pytest.approx(
                    expected, abs=1e-12
                ), (armies, defenders, dice, stop)


def test_pressing_on_to_the_end_with_three_dice_is_attack_probability():
    for armies, defenders in ((2, 1), (7, 4), (31, 30), (60, 75)):
        assert attack_odds(armies, defenders) == pytest.approx(
            float(attack_probability(armies - 1, defenders)), abs=1e-12
        )


def test_large_battles_grow_the_kept_table_and_agree_with_small_ones():
    big = attack_odds(400, 350, 2)  # grows the two-dice table past every cell below
    assert 0 < big < 1
    for armies, defenders in ((5, 3), (9, 9)):
        assert attack_odds(armies, defenders, 2) == pytest.approx(
            float(exact(armies, defenders, 2, 1)), abs=1e-12
        )


def test_a_bad_attack_is_refused_in_one_line():
    for args in ((1, 3), (5, 0), (5, 3, 4), (5, 3, 3, 6)):
        with pytest.raises(ValueError, match="an attack needs"):
            attack_odds(*args)


def test_the_engine_captures_as_often_as_the_odds_say():
    """20,000 attacks of 6 armies on 4, until 3 are left, by the engine's own dice: the
    same position each time, the dice drawn from a different seed."""
    from arena.games.risk.state import ATTACK
    from arena.plugins import load_registry

    state = load_registry().game("risk").new_state(3, 7, {"setup": "deal"})
    while state.phase != ATTACK:  # the setup and the first reinforcement, quickly
        state.apply(state.player, state.default_action())
    p = state.player
    src, dst = next(
        (a, b) for a in state.owned(p) for b in state.map.neighbours[a] if state.owner[b] != p
    )
    state.armies[src], state.armies[dst] = 6, 4
    trials = 20_000
    captured = 0
    for seed in range(trials):
        attack = state.clone()
        attack.rng.seed(seed)
        attack.apply(p, {"type": "attack", "from": src, "to": dst, "dice": 3, "until": 3})
        captured += attack.owner[dst] == p
    expected = attack_odds(6, 4, 3, 3)
    sigma = (expected * (1 - expected) / trials) ** 0.5
    assert abs(captured / trials - expected) < 4 * sigma
