"""Maximum-likelihood Elo: worked references, recovery of known strengths, and refusals."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy.stats import spearmanr

from arena.ratings.mle import fit, tabulate, tabulate_arrays, tabulate_counts

ELO_PER_NAT = 400 / math.log(10)
Z95 = 1.959963984540054


def simulate(
    true_elo: np.ndarray, games_per_pair: int, draw_rate: float, seed: int
) -> list[tuple[int, int, float]]:
    """A round robin where bot i scores 1 / (1 + 10^((Rj - Ri)/400)) on average.

    Draws take ``draw_rate * 4 p (1 - p)`` of the games (most between equals), wins and
    losses the rest, so the expected score is exactly the Elo curve.
    """
    rng = np.random.default_rng(seed)
    results = []
    for i in range(len(true_elo)):
        for j in range(i + 1, len(true_elo)):
            p = 1 / (1 + 10 ** ((true_elo[j] - true_elo[i]) / 400))
            draw = draw_rate * 4 * p * (1 - p)
            for u in rng.random(games_per_pair):
                score = 1.0 if u < p - draw / 2 else 0.5 if u < p + draw / 2 else 0.0
                results.append((i, j, score))
    return results


def hunter_mm(results: list[tuple[int, int, float]], n: int) -> np.ndarray:
    """Hunter (2004) MM for Bradley-Terry, draws as half wins: an independent reference."""
    games = np.zeros((n, n))
    points = np.zeros(n)
    for a, b, s in results:
        games[a, b] += 1
        games[b, a] += 1
        points[a] += s
        points[b] += 1 - s
    gamma = np.ones(n)
    for _ in range(100_000):
        new = points / (games / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(np.log(new / gamma))) < 1e-13:
            break
        gamma = new
    return 1500 + ELO_PER_NAT * np.log(new)


def test_two_players_worked_by_hand():
    # A beat B 3 times in 4: the odds 3:1 give A - B = 400 log10(3) = 190.85 around the mean
    # 1500. Information about theta_A - theta_B is n p (1 - p) = 4 * 3/4 * 1/4 = 0.75, so the
    # difference has sd 400 / ln 10 / sqrt(0.75) = 200.6 Elo, and each rating (half of it,
    # relative to the mean) sd 100.3.
    board = fit([("A", "B", 1.0)] * 3 + [("A", "B", 0.0)], prior_draws=0)
    half = 200 * math.log10(3)
    sd = ELO_PER_NAT / math.sqrt(0.75) / 2
    a, b = board["A"], board["B"]
    assert a.rating == pytest.approx(1500 + half, abs=1e-6)
    assert b.rating == pytest.approx(1500 - half, abs=1e-6)
    assert (a.low, a.high) == pytest.approx((a.rating - Z95 * sd, a.rating + Z95 * sd), abs=1e-6)
    assert (b.low, b.high) == pytest.approx((b.rating - Z95 * sd, b.rating + Z95 * sd), abs=1e-6)
    assert board.players == ("A", "B")
    # the two ratings sum to a constant: perfectly anti-correlated
    assert board.covariance.ravel().tolist() == pytest.approx([sd**2, -(sd**2), -(sd**2), sd**2])
    diff, low, high = board.difference("A", "B")
    assert diff == pytest.approx(2 * half)
    assert (low, high) == pytest.approx((2 * half - Z95 * 2 * sd, 2 * half + Z95 * 2 * sd))


def test_a_draw_counts_as_half_a_win():
    board = fit([("A", "B", 0.5)] * 2 + [("A", "B", 1.0)], prior_draws=0)
    assert board["A"].rating - board["B"].rating == pytest.approx(400 * math.log10(2))


def test_without_prior_it_matches_hunters_mm_algorithm():
    true = np.random.default_rng(7).normal(0, 200, 12)
    results = simulate(true, games_per_pair=6, draw_rate=0.3, seed=7)
    board = fit(results, prior_draws=0)
    reference = hunter_mm(results, 12)
    assert [board[k].rating for k in range(12)] == pytest.approx(reference, abs=1e-6)


@pytest.mark.parametrize("draw_rate", [0.0, 0.3])
def test_recovers_known_strengths_with_calibrated_intervals(draw_rate):
    covered = total = 0
    for seed in range(10):
        true = np.random.default_rng(seed).normal(0, 200, 20)
        truth = true - true.mean() + 1500  # the fit is anchored at mean 1500
        board = fit(simulate(true, games_per_pair=10, draw_rate=draw_rate, seed=100 + seed))
        rows = [board[k] for k in range(20)]
        covered += sum(row.low <= t <= row.high for row, t in zip(rows, truth, strict=True))
        total += 20
        assert spearmanr([row.rating for row in rows], truth).statistic > 0.9
    # ~95% expected (more with draws: the intervals are conservative then)
    assert covered / total >= 0.85


def test_a_bot_that_only_loses_ends_last_with_a_finite_wide_interval():
    true = np.random.default_rng(3).normal(0, 200, 20)
    results = simulate(true, games_per_pair=10, draw_rate=0.2, seed=3)
    results += [(opponent, "hopeless", 1.0) for opponent in range(20) for _ in range(5)]
    board = fit(results)
    last = board.rows[-1]
    assert last.player == "hopeless"
    assert (last.wins, last.draws, last.losses, last.score) == (0, 0, 100, 0.0)
    assert math.isfinite(last.rating) and math.isfinite(last.low)
    widths = [row.high - row.low for row in board.rows[:-1]]
    assert last.high - last.low > 1.5 * np.mean(widths)
    assert last.high < min(row.rating for row in board.rows[:-1])


def test_an_undefeated_bot_gets_a_finite_rating_too():
    board = fit([("champion", "x", 1.0)] * 30 + [("x", "y", 0.5)] * 30)
    assert board.rows[0].player == "champion"
    assert math.isfinite(board["champion"].high)


def test_order_and_orientation_do_not_matter():
    true = np.random.default_rng(11).normal(0, 200, 15)
    results = simulate(true, games_per_pair=8, draw_rate=0.3, seed=11)
    shuffled = [(b, a, 1 - s) if k % 2 else (a, b, s) for k, (a, b, s) in enumerate(results)]
    random.Random(11).shuffle(shuffled)
    one, other = fit(results), fit(shuffled)
    for k in range(15):
        assert (one[k].rating, one[k].low, one[k].high) == pytest.approx(
            (other[k].rating, other[k].low, other[k].high), abs=1e-6
        )


def test_rows_count_the_games_and_come_best_first():
    results = [("a", "b", 1.0), ("a", "b", 0.5), ("c", "a", 1.0), ("b", "c", 0.0)]
    board = fit(results)
    a = board["a"]
    assert (a.games, a.wins, a.draws, a.losses, a.score) == (3, 1, 1, 1, 0.5)
    assert board["c"].wins == 2 and board["c"].score == 1.0
    assert [row.rating for row in board] == sorted((row.rating for row in board), reverse=True)
    assert len(board) == 3
    assert board.ratings() == {row.player: row.rating for row in board.rows}
    assert np.mean([row.rating for row in board]) == pytest.approx(1500)
    with pytest.raises(KeyError, match="'nobody' is not on the leaderboard"):
        board["nobody"]


def test_anchor_shifts_every_rating_and_keeps_the_intervals():
    results = simulate(np.array([0.0, 100.0, 300.0]), games_per_pair=20, draw_rate=0.2, seed=1)
    base, shifted = fit(results), fit(results, anchor=0.0)
    for k in range(3):
        assert shifted[k].rating == pytest.approx(base[k].rating - 1500)
        assert shifted[k].high - shifted[k].low == pytest.approx(base[k].high - base[k].low)


def test_a_stronger_prior_pulls_toward_the_mean_and_confidence_widens():
    results = simulate(np.array([-300.0, 0.0, 300.0]), games_per_pair=10, draw_rate=0, seed=2)
    spreads = [fit(results, prior_draws=d)[2].rating - 1500 for d in (0, 2, 20, 200)]
    assert spreads == sorted(spreads, reverse=True) and spreads[-1] > 0
    narrow, wide = fit(results, confidence=0.5)[2], fit(results, confidence=0.99)[2]
    assert wide.high - wide.low > narrow.high - narrow.low


def test_tabulate_arrays_is_the_same_as_tabulating_triples():
    results = simulate(np.array([0.0, 50.0, 80.0, 200.0]), 5, 0.3, seed=4)
    a, b, s = (np.array(column) for column in zip(*results, strict=True))
    from_arrays = fit(tabulate_arrays(a, b, s, players=["w", "x", "y", "z"]))
    from_triples = fit([("wxyz"[a], "wxyz"[b], s) for a, b, s in results])
    for player in "wxyz":
        assert from_arrays[player].rating == pytest.approx(from_triples[player].rating)
        assert from_arrays[player].games == from_triples[player].games == 15


def test_tabulate_sums_both_orientations_of_a_pair():
    table = tabulate([("x", "y", 1.0), ("y", "x", 1.0), ("y", "x", 0.5)])
    assert table.players == ("x", "y")
    assert table.games.tolist() == [3.0] and table.points.tolist() == [1.5]
    assert table.wins.tolist() == [1, 1] and table.draws.tolist() == [1, 1]
    with pytest.raises(ValueError, match="read-only"):
        table.games[0] = 0  # a table is a value: fit it, never edit it


def test_tabulate_counts_is_tabulate_of_the_same_results_to_the_last_bit():
    rng = random.Random(12)
    players = [f"p{k}" for k in range(9)]
    results = []
    for _ in range(400):
        a, b = rng.sample(players, 2)
        results.append((a, b, rng.choice([1.0, 0.5, 0.0])))
    counts: dict[tuple[str, str], list[int]] = {}
    for a, b, score in results:  # one key per pair, whichever seat order they met in
        if b < a:
            a, b, score = b, a, 1.0 - score
        counts.setdefault((a, b), [0, 0, 0])[{1.0: 0, 0.5: 1, 0.0: 2}[score]] += 1
    order = sorted(players, reverse=True)  # any order: the table follows it
    index = {p: k for k, p in enumerate(order)}
    a, b, s = zip(*results, strict=True)
    expected = tabulate_arrays(
        np.array([index[p] for p in a]), np.array([index[p] for p in b]), np.array(s), order
    )
    table = tabulate_counts(counts, order)
    for name in ("first", "second", "games", "points", "wins", "draws", "losses"):
        got, want = getattr(table, name), getattr(expected, name)
        assert got.dtype == want.dtype and np.array_equal(got, want), name
    assert [(r.player, r.rating, r.low, r.high) for r in fit(table)] == [
        (r.player, r.rating, r.low, r.high) for r in fit(expected)
    ]


def test_tabulate_counts_refuses_what_it_cannot_count():
    with pytest.raises(ValueError, match=r"'c' is not in players"):
        tabulate_counts({("a", "c"): (1, 0, 0)}, ["a", "b"])
    with pytest.raises(ValueError, match="one row, not two"):
        tabulate_counts({("a", "b"): (1, 0, 0), ("b", "a"): (0, 1, 0)}, ["a", "b"])
    with pytest.raises(ValueError, match="'a' cannot play itself"):
        tabulate_counts({("a", "a"): (1, 0, 0)}, ["a", "b"])
    with pytest.raises(ValueError, match="player 'b' has no games"):
        tabulate_counts({("a", "c"): (1, 0, 0)}, ["a", "b", "c"])
    with pytest.raises(ValueError, match=">= 0"):
        tabulate_counts({("a", "b"): (-1, 0, 0)}, ["a", "b"])


def test_without_prior_an_undefeated_bot_is_refused():
    with pytest.raises(ValueError, match=r"'champion' won every game.*prior_draws > 0"):
        fit([("champion", "x", 1.0), ("x", "y", 0.5)], prior_draws=0)
    with pytest.raises(ValueError, match=r"'y' lost every game"):
        fit([("x", "y", 1.0), ("x", "z", 0.5)], prior_draws=0)


@pytest.mark.parametrize(
    ("results", "kwargs", "error", "message"),
    [
        ([("a", "b", 0.3)], {}, ValueError, r"result 0 \('a', 'b', 0.3\): score_a must be 1"),
        ([("a", "b", 1), ("a", "a", 1)], {}, ValueError, r"result 1 .*cannot play itself"),
        ([], {}, ValueError, "no results to rate"),
        ([("a", "b")], {}, TypeError, r"result 0 must be an \(a, b, score_a\) triple"),
        ([("a", "b", "1")], {}, TypeError, r"result 0: score_a must be 1, 0.5 or 0, got '1'"),
        ([(["a"], "b", 1)], {}, TypeError, r"result 0: player \['a'\] must be hashable"),
        ([("a", "b", 1)], {"prior_draws": -1}, ValueError, "prior_draws must be >= 0"),
        ([("a", "b", 1)], {"confidence": 1.0}, ValueError, r"confidence must be in \(0, 1\)"),
        ([("a", "b", 1)], {"anchor": math.nan}, ValueError, "anchor must be finite"),
        ([("a", "b", 1)], {"anchor": "1500"}, TypeError, "anchor must be a number"),
    ],
)
def test_bad_input_is_refused_with_the_bad_value(results, kwargs, error, message):
    with pytest.raises(error, match=message):
        fit(results, **kwargs)


def test_bad_arrays_are_refused_with_the_bad_value():
    with pytest.raises(ValueError, match=r"one length, got shapes \(2,\), \(1,\) and \(2,\)"):
        tabulate_arrays(np.array([0, 1]), np.array([1]), np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match=r"score\[1\] must be 1 \(win\), 0.5 \(draw\) or 0"):
        tabulate_arrays(np.array([0, 1]), np.array([1, 0]), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"first\[0\] must be a player index >= 0, got -1"):
        tabulate_arrays(np.array([-1]), np.array([1]), np.array([1.0]))
    with pytest.raises(ValueError, match="player index 2 is out of range for 2 players"):
        tabulate_arrays(np.array([0]), np.array([2]), np.array([1.0]), players=["a", "b"])
    with pytest.raises(ValueError, match="player 'c' has no games"):
        tabulate_arrays(np.array([0]), np.array([1]), np.array([1.0]), players=["a", "b", "c"])
    with pytest.raises(ValueError, match="player 'a' is listed twice"):
        tabulate_arrays(np.array([0]), np.array([1]), np.array([1.0]), players=["a", "a"])
    with pytest.raises(ValueError, match="integer player indices"):
        tabulate_arrays(np.array([0.0]), np.array([1]), np.array([1.0]))


def test_a_start_near_the_optimum_reaches_it_in_fewer_steps():
    results = simulate(np.array([-200.0, -50.0, 0.0, 120.0, 300.0]), 20, 0.2, seed=6)
    cold = fit(results)
    more = fit(results[:-10])  # nearly the same results: the fit a cache kept
    warm = fit(results, start=more.ratings())
    assert warm.iterations < cold.iterations
    for row in cold:
        assert warm[row.player].rating == pytest.approx(row.rating, abs=1e-6)
        assert warm[row.player].low == pytest.approx(row.low, abs=1e-6)
    partial = fit(results, start={0: 1400.0})  # the others start at the anchor
    assert partial[4].rating == pytest.approx(cold[4].rating, abs=1e-6)
    with pytest.raises(ValueError, match="start ratings must be finite"):
        fit(results, start={0: math.inf})
