"""Risk dice: the exact one-roll table, the engine's rolls in both dice modes, the odds."""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from fractions import Fraction

import pytest

from arena.cli import main
from arena.games.risk.dice import compare, decode_outcome, outcome_table
from arena.games.risk.odds import MOST_CELLS, attack_chance, attack_probability
from arena.games.risk.state import RiskState
from arena.plugins import load_registry

GAME = load_registry().game("risk")

# The published one-roll table (RULES.md), as (attacker losses, defender losses).
PUBLISHED = {
    (3, 2): {
        (0, 2): Fraction(2890, 7776),
        (1, 1): Fraction(2611, 7776),
        (2, 0): Fraction(2275, 7776),
    },
    (2, 2): {(0, 2): Fraction(295, 1296), (1, 1): Fraction(420, 1296), (2, 0): Fraction(581, 1296)},
    (3, 1): {(0, 1): Fraction(855, 1296), (1, 0): Fraction(441, 1296)},
    (2, 1): {(0, 1): Fraction(125, 216), (1, 0): Fraction(91, 216)},
    (1, 2): {(0, 1): Fraction(55, 216), (1, 0): Fraction(161, 216)},
    (1, 1): {(0, 1): Fraction(15, 36), (1, 0): Fraction(21, 36)},
}

#: chi-square critical values at p = 0.001, by degrees of freedom
CHI2_CRITICAL_001 = {1: 10.828, 2: 13.816, 3: 16.266, 4: 18.467, 5: 20.515}


@pytest.mark.parametrize(("att", "dfn"), sorted(PUBLISHED))
def test_outcome_table_is_the_published_one(att, dfn):
    table = outcome_table(att, dfn)
    assert table == PUBLISHED[(att, dfn)]
    assert sum(table.values()) == 1


def test_outcome_table_refuses_impossible_dice():
    for att, dfn in ((0, 1), (4, 2), (3, 3), (1, 0)):
        with pytest.raises(ValueError, match="attacker rolls 1-3, defender 1-2"):
            outcome_table(att, dfn)


def test_compare_ties_go_to_the_defender_and_pairs_are_sorted():
    assert compare([6, 6, 6], [6, 6]) == (2, 0)
    assert compare([1, 6, 2], [5, 1]) == (0, 2)  # 6>5, 2>1
    assert compare([3, 3], [3]) == (1, 0)
    assert compare([4], [3, 6]) == (1, 0)  # only the highest pair counts
    assert compare([5, 4], [4, 4]) == (1, 1)


# --- chi-square of the engine's rolls ----------------------------------------------------


def chi_square(observed: Counter, probabilities: dict, n: int) -> float:
    assert set(observed) <= set(probabilities), f"impossible outcomes {set(observed)}"
    return sum((observed[k] - n * float(p)) ** 2 / (n * float(p)) for k, p in probabilities.items())


def attack_position(dice_mode: str, seed: int) -> tuple[RiskState, int, int]:
    """A game in its first attack phase, and an (own, enemy) bordering pair."""
    state = GAME.new_state(3, seed, {"setup": "deal", "dice": dice_mode})
    rng = random.Random(seed)
    while state.decision().kind != "attack":
        decision = state.decision()
        opts = decision.options
        if decision.kind == "setup_place":
            action = {"type": "place", "territory": rng.choice(opts["territories"])}
        elif decision.kind == "trade":
            action = {"type": "no_trade"}
        else:
            assert decision.kind == "reinforce"
            action = {"type": "reinforce", "armies": {opts["territories"][0]: opts["armies"]}}
        state.apply(decision.player, action)
    attack = state.decision().options["attacks"][0]
    return state, attack["from"], attack["to"]


ATTACKING_ARMIES = 10


def engine_rolls(dice_mode: str, att: int, dfn: int, n: int, seed: int):
    """``n`` single-roll attacks with ``att`` dice against a ``dfn``-dice defence.

    Each roll starts from the same position (a clone) but all of them draw, one after
    the other, from the game's own seeded generator.
    """
    base, src, dst = attack_position(dice_mode, seed)
    p = base.current_player
    defenders = 1 if dfn == 1 else 5
    outcomes: Counter = Counter()
    faces: Counter = Counter()
    for _ in range(n):
        s = base.clone()
        s.rng = base.rng  # every roll advances the one game generator
        s.armies[src] = ATTACKING_ARMIES  # enough for any number of dice
        s.armies[dst] = defenders
        (battle, *rest) = s.apply(p, {"type": "attack", "from": src, "to": dst, "dice": att})
        assert battle["e"] == "battle" and battle["dice"] == att
        assert len(battle["rolls"]) == 1, "a roll without 'until' is exactly one roll"
        al, dl = decode_outcome(battle["rolls"])
        assert (battle["att_loss"], battle["def_loss"]) == (al, dl)
        assert s.armies[src] == ATTACKING_ARMIES - al
        if dl < defenders:
            assert s.armies[dst] == defenders - dl and not rest
        else:
            assert rest and rest[0]["e"] == "conquer"
        if dice_mode == "faces":
            a_faces, d_faces = battle["faces"].split("-")
            assert len(a_faces) == att and len(d_faces) == dfn, battle["faces"]
            a_list, d_list = [int(x) for x in a_faces], [int(x) for x in d_faces]
            assert compare(a_list, d_list) == (al, dl), battle
            faces.update(a_list + d_list)
        else:
            assert "faces" not in battle
        outcomes[(al, dl)] += 1
    return outcomes, faces


ROLLS_PER_CASE = 25000


@pytest.mark.parametrize("dice_mode", ["distribution", "faces"])
@pytest.mark.parametrize(("att", "dfn"), [(3, 2), (2, 2), (3, 1), (2, 1), (1, 2), (1, 1)])
def test_engine_roll_frequencies_fit_the_table(dice_mode, att, dfn):
    outcomes, faces = engine_rolls(dice_mode, att, dfn, ROLLS_PER_CASE, seed=20240 + 10 * att + dfn)
    table = PUBLISHED[(att, dfn)]
    assert sum(outcomes.values()) == ROLLS_PER_CASE
    stat = chi_square(outcomes, table, ROLLS_PER_CASE)
    critical = CHI2_CRITICAL_001[len(table) - 1]
    assert stat < critical, f"{att}v{dfn} {dice_mode}: chi2={stat:.2f} >= {critical}: {outcomes}"
    if dice_mode == "faces":
        total = sum(faces.values())
        assert total == ROLLS_PER_CASE * (att + dfn)
        uniform = {f: Fraction(1, 6) for f in range(1, 7)}
        face_stat = chi_square(faces, uniform, total)
        assert face_stat < CHI2_CRITICAL_001[5], f"faces not uniform: {faces}"


def test_the_chi_square_check_has_power():
    """The same sample size tells a wrong law apart: 2v2 rolls do not fit the 3v2 table."""
    outcomes, _ = engine_rolls("distribution", 2, 2, ROLLS_PER_CASE, seed=5)
    assert chi_square(outcomes, PUBLISHED[(3, 2)], ROLLS_PER_CASE) > CHI2_CRITICAL_001[2]
    outcomes, _ = engine_rolls("faces", 2, 1, ROLLS_PER_CASE, seed=6)
    assert chi_square(outcomes, PUBLISHED[(1, 1)], ROLLS_PER_CASE) > CHI2_CRITICAL_001[1]


def test_the_dice_modes_are_reproducible_from_the_seed():
    a, _ = engine_rolls("distribution", 3, 2, 300, seed=11)
    b, _ = engine_rolls("distribution", 3, 2, 300, seed=11)
    c, fa = engine_rolls("faces", 3, 2, 300, seed=11)
    d, fb = engine_rolls("faces", 3, 2, 300, seed=11)
    assert a == b and c == d and fa == fb


def test_whole_battles_in_the_engine_match_attack_probability():
    """Attacks with ``until=1`` (fight to the end) capture as often as the exact odds say."""
    base, src, dst = attack_position("distribution", 99)
    p = base.current_player
    n, attackers, defenders = 4000, 5, 5
    wins = 0
    for _ in range(n):
        s = base.clone()
        s.rng = base.rng
        s.armies[src] = attackers + 1  # one must stay behind
        s.armies[dst] = defenders
        events = s.apply(p, {"type": "attack", "from": src, "to": dst, "dice": 3, "until": 1})
        wins += any(e["e"] == "conquer" for e in events)
    prob = float(attack_probability(attackers, defenders))
    z = (wins - n * prob) / math.sqrt(n * prob * (1 - prob))
    assert abs(z) < 3.29, f"{wins}/{n} captures, expected {prob:.3f} (z={z:.2f})"


# --- exact odds ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("att", "dfn", "published"),
    [(3, 2, 0.656), (5, 5, 0.506), (10, 10, 0.568), (20, 20, 0.633)],
)
def test_attack_probability_matches_the_published_odds(att, dfn, published):
    assert round(float(attack_probability(att, dfn)), 3) == published


def test_attack_probability_small_cases_by_hand():
    one_v_one = Fraction(15, 36)
    assert attack_probability(1, 1) == one_v_one
    # 2 v 1: win the 2v1 roll, or lose an army and then win 1v1.
    assert attack_probability(2, 1) == Fraction(125, 216) + Fraction(91, 216) * one_v_one
    # 1 v 2: win the 1v2 roll (down to 1v1), then win 1v1.
    assert attack_probability(1, 2) == Fraction(55, 216) * one_v_one
    # 2 v 2: both in one roll, or trade one each and win 1v1; losing two ends it.
    assert attack_probability(2, 2) == Fraction(295, 1296) + Fraction(420, 1296) * one_v_one
    # 3 v 1: win the 3v1 roll, or lose one and win 2v1.
    assert attack_probability(3, 1) == Fraction(855, 1296) + Fraction(441, 1296) * (
        Fraction(125, 216) + Fraction(91, 216) * one_v_one
    )
    assert attack_probability(0, 3) == 0
    with pytest.raises(ValueError):
        attack_probability(3, 0)


def test_attack_probability_for_large_armies_by_closed_form():
    """Long one-sided battles have closed forms; the module promises deep inputs work.

    One defender: the attacker loses only if every roll fails, with 3 dice while it
    has 3 or more armies, then with 2, then with 1. One attacker against D: it must win
    D - 1 rolls of 1v2 and then the 1v1.
    """
    for attackers in (3, 4, 10):
        assert attack_probability(attackers, 1) == 1 - Fraction(441, 1296) ** (
            attackers - 2
        ) * Fraction(91, 216) * Fraction(21, 36)
    for defenders in (2, 3, 10):
        assert attack_probability(1, defenders) == Fraction(55, 216) ** (defenders - 1) * Fraction(
            15, 36
        )
    # "fill bottom-up so the recursion stays shallow" (odds.py): large inputs must work
    big = 3000
    assert attack_probability(big, 1) == 1 - Fraction(441, 1296) ** (big - 2) * Fraction(
        91, 216
    ) * Fraction(21, 36)
    assert attack_probability(1, big) == Fraction(55, 216) ** (big - 1) * Fraction(15, 36)


def test_cli_odds_with_a_large_army(capsys):
    assert main(["odds", "3000", "1"]) == 0
    out = capsys.readouterr().out
    assert "P(capture) = 1.0000" in out


def test_attack_probability_is_monotone():
    for a in range(1, 12):
        for d in range(1, 12):
            p = attack_probability(a, d)
            assert 0 < p < 1
            assert attack_probability(a + 1, d) > p
            assert attack_probability(a, d + 1) < p


def test_cli_odds_10_v_10(capsys):
    assert main(["odds", "10", "10"]) == 0
    out = capsys.readouterr().out
    match = re.search(r"P\(capture\) = ([0-9.]+)", out)
    assert match, out
    assert round(float(match.group(1)), 3) == 0.568
    assert "2890/7776" in out
    assert "15/36" in out and "55/216" in out and "855/1296" in out


def test_attack_chance_is_attack_probability_in_floats():
    for attackers in range(0, 40):
        for defenders in range(1, 40):
            exact = float(attack_probability(attackers, defenders))
            assert attack_chance(attackers, defenders) == pytest.approx(exact, rel=1e-12, abs=1e-15)


def test_attack_chance_for_large_armies_by_closed_form():
    """One defender, or one attacker: one die against one or two, a closed form (as above)."""
    big = 1000
    one_v_one = 15 / 36
    assert attack_chance(big, 1) == pytest.approx(
        1 - (441 / 1296) ** (big - 2) * (91 / 216) * (1 - one_v_one)
    )
    assert attack_chance(1, big) == pytest.approx((55 / 216) ** (big - 1) * one_v_one, rel=1e-9)


def _by_rows(attackers: int, defenders: int) -> float:
    """The plain recursion, in floats, one row of attackers at a time: slow, but simple
    enough to check attack_chance's diagonals against where the fractions take minutes."""
    tables = {
        (a, d): [(al, dl, float(p)) for (al, dl), p in outcome_table(a, d).items()]
        for a in (1, 2, 3)
        for d in (1, 2)
    }
    rows = [[1.0] + [0.0] * defenders]
    for a in range(1, attackers + 1):
        row = [1.0]
        for d in range(1, defenders + 1):
            table = tables[min(3, a), min(2, d)]
            row.append(sum(p * (row if al == 0 else rows[a - al])[d - dl] for al, dl, p in table))
        rows.append(row)
    return rows[attackers][defenders]


def test_cli_odds_1000_v_1000(capsys):
    """The command answers at once (docs/benchmarks.md); its answer is the recursion's."""
    assert main(["odds", "1000", "1000"]) == 0
    found = re.search(r"P\(capture\) = ([0-9.]+)", capsys.readouterr().out)
    assert found and found.group(1) == f"{_by_rows(1000, 1000):.4f}" == "0.9989"


def test_attack_chance_refuses_a_table_too_large_to_hold():
    with pytest.raises(ValueError, match="at most 25,000,000 attackers x defenders"):
        attack_chance(MOST_CELLS, 2)
