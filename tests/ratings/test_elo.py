"""Online Elo against the textbook numbers, and its refusals."""

from __future__ import annotations

import math

import pytest

from arena.ratings.elo import expected_score, online, update


def test_equal_ratings_expect_half_a_point():
    assert expected_score(1500, 1500) == 0.5
    assert expected_score(-3000.5, -3000.5) == 0.5


def test_four_hundred_points_are_ten_to_one_odds():
    assert expected_score(1900, 1500) == pytest.approx(10 / 11, rel=1e-15)
    assert expected_score(1500, 1900) == pytest.approx(1 / 11, rel=1e-14)
    assert expected_score(2300, 1500) == pytest.approx(100 / 101, rel=1e-15)


def test_expected_scores_of_a_game_add_up_to_one():
    assert expected_score(1613, 1720) + expected_score(1720, 1613) == pytest.approx(1.0)


def test_huge_differences_do_not_overflow():
    assert expected_score(1e6, 0) == 1.0
    assert expected_score(0, 1e6) == 0.0


def test_k32_update_worked_by_hand():
    # E = 1 / (1 + 10^(200/400)) = 1 / (1 + 3.16228) = 0.240253; the underdog wins:
    # 1500 + 32 * (1 - 0.240253) = 1524.312 and 1700 - 32 * 0.759747 = 1675.688.
    ra, rb = update(1500, 1700, 1.0, k=32)
    assert ra == pytest.approx(1524.312, abs=1e-3)
    assert rb == pytest.approx(1675.688, abs=1e-3)


def test_a_draw_between_equals_changes_nothing_and_a_win_moves_k_over_two():
    assert update(1500, 1500, 0.5) == (1500, 1500)
    assert update(1500, 1500, 1.0, k=16) == (1508, 1492)
    assert update(1500, 1500, 0.0, k=16) == (1492, 1508)


def test_k32_tournament_worked_by_hand():
    # A 1613 player scores 2.5 from five games (loss to 1609, draw 1477, win 1388, win 1586,
    # loss 1720), rated once at the end from the pre-tournament ratings. Expected scores:
    # 0.5058 + 0.6863 + 0.7850 + 0.5388 + 0.3507 = 2.8666, so 1613 + 32 (2.5 - 2.8666) = 1601.27.
    games = [(1609, 0.0), (1477, 0.5), (1388, 1.0), (1586, 1.0), (1720, 0.0)]
    expected = [expected_score(1613, rb) for rb, _ in games]
    assert expected == pytest.approx([0.5058, 0.6863, 0.7850, 0.5388, 0.3507], abs=1e-4)
    new = 1613 + sum(update(1613, rb, s, k=32)[0] - 1613 for rb, s in games)
    assert new == pytest.approx(1601.27, abs=0.01)


def test_online_replays_in_order_from_the_initial_rating():
    ratings = online([("a", "b", 1.0), ("b", "c", 0.5)], k=16)
    assert ratings["a"] == 1508
    assert ratings["b"] == pytest.approx(1492 + 16 * (0.5 - expected_score(1492, 1500)))
    assert sum(ratings.values()) == pytest.approx(3 * 1500)  # points are conserved


def test_online_depends_on_the_order():
    forward = online([("a", "b", 1.0), ("a", "b", 0.0)])
    backward = online([("a", "b", 0.0), ("a", "b", 1.0)])
    assert forward["a"] < 1500 < backward["a"]


def test_online_goes_on_from_ratings_it_gave_to_the_last_bit():
    results = [("a", "b", 1.0), ("b", "c", 0.5), ("c", "a", 0.0), ("a", "d", 0.5)] * 5
    start = online(results[:7])
    kept = dict(start)
    assert online(results[7:], start=start) == online(results)
    assert start == kept  # the ratings it went on from are left as they were


def test_online_initial_rating_is_configurable():
    assert online([("a", "b", 0.5)], initial=1000.0) == {"a": 1000.0, "b": 1000.0}


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: update(1500, 1500, 1.5), ValueError, r"score_a must be in \[0, 1\].*got 1.5"),
        (lambda: update(1500, 1500, -0.5), ValueError, "got -0.5"),
        (lambda: update(1500, 1500, math.nan), ValueError, "got nan"),
        (lambda: update(1500, 1500, "1"), TypeError, "score_a must be a number"),
        (lambda: update(1500, 1500, 1.0, k=0), ValueError, "k must be a finite number > 0, got 0"),
        (lambda: update(1500, 1500, 1.0, k=-16), ValueError, "got -16"),
        (lambda: expected_score(math.nan, 1500), ValueError, "ra must be a finite rating"),
        (lambda: expected_score(1500, math.inf), ValueError, "rb must be a finite rating, got inf"),
        (lambda: expected_score(None, 1500), TypeError, "ra must be a number, got None"),
        (lambda: online([("a", "b", 1.0)], initial=math.inf), ValueError, "initial"),
        (lambda: online([("a", "b", 1), ("a", "a", 1)]), ValueError, "result 1: 'a' cannot play"),
        (lambda: online([("a", "b", 2)]), ValueError, r"result 0 \('a', 'b', 2\).*got 2"),
        (lambda: online([("a", "b")]), TypeError, r"result 0 must be an \(a, b, score_a\) triple"),
    ],
)
def test_bad_input_is_refused_with_the_bad_value(call, error, message):
    with pytest.raises(error, match=message):
        call()
