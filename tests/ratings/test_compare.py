"""Head to head: LOS, the Elo difference and the SPRT against published numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from arena.ratings.compare import elo_difference, head_to_head, llr_trinomial, los, sprt

Z95 = norm.ppf(0.975)


def elo(score: float) -> float:
    return -400 * math.log10(1 / score - 1)


def test_los_reference_values():
    assert los(7, 7) == 0.5
    assert los(10, 0) == pytest.approx(norm.cdf(math.sqrt(10)))
    assert los(10, 0) == pytest.approx(0.99922, abs=1e-5)
    assert los(0, 10) == pytest.approx(1 - 0.99922, abs=1e-5)
    # 60 wins, 40 losses: Phi(20 / 10) = Phi(2)
    assert los(60, 40) == pytest.approx(0.97725, abs=1e-5)


def test_los_without_decisive_games_is_a_coin_toss():
    assert los(0, 0) == 0.5


def test_elo_difference_reference_values():
    assert elo_difference(5, 10, 5)[0] == 0.0
    assert elo_difference(3, 0, 1)[0] == pytest.approx(400 * math.log10(3))  # 190.85
    assert elo_difference(2, 2, 0)[0] == pytest.approx(400 * math.log10(3))  # score 3/4 too


def test_elo_interval_matches_the_normal_approximation_for_many_games():
    # 600 W, 200 D, 200 L: s = 0.7, per-game variance (600*0.09 + 200*0.04 + 200*0.49)/1000
    # = 0.16, so s = 0.7 +- 1.96 * sqrt(0.16 / 1000).
    estimate, low, high = elo_difference(600, 200, 200)
    half = Z95 * math.sqrt(0.16 / 1000)
    assert estimate == pytest.approx(elo(0.7))
    assert low == pytest.approx(elo(0.7 - half), abs=1.0)
    assert high == pytest.approx(elo(0.7 + half), abs=1.0)
    assert low < estimate < high


def test_elo_interval_of_a_perfect_score_has_a_finite_low_end():
    # Every p with (1 - p)^2 <= z^2 p (1 - p) / 10, i.e. p >= 10 / (10 + z^2): Elo >= 166.2.
    estimate, low, high = elo_difference(10, 0, 0)
    assert estimate == math.inf and high == math.inf
    assert low == pytest.approx(400 * math.log10(10 / Z95**2))
    assert low == pytest.approx(166.2, abs=0.05)
    assert elo_difference(0, 0, 10) == pytest.approx((-math.inf, -math.inf, -low))


def test_elo_interval_narrows_with_more_games_and_draws():
    width = [elo_difference(*c)[2] - elo_difference(*c)[1] for c in [(30, 0, 20), (60, 0, 40)]]
    assert width[1] < width[0]
    decisive, drawish = elo_difference(50, 0, 50), elo_difference(25, 50, 25)
    assert drawish[2] - drawish[1] < decisive[2] - decisive[1]


def test_no_games_means_no_information():
    assert elo_difference(0, 0, 0) == (0.0, -math.inf, math.inf)
    result = sprt(0, 0, 0)
    assert (result.llr, result.verdict) == (0.0, "continue")


def test_sprt_bounds_are_walds():
    result = sprt(10, 10, 10)
    assert result.lower == pytest.approx(math.log(0.05 / 0.95))  # -2.944
    assert result.upper == pytest.approx(math.log(0.95 / 0.05))  # +2.944
    assert result.lower == pytest.approx(-2.944439, abs=1e-6)
    other = sprt(10, 10, 10, alpha=0.1, beta=0.2)
    assert (other.lower, other.upper) == pytest.approx((math.log(0.2 / 0.9), math.log(8)))


@pytest.mark.parametrize(
    ("wins", "losses", "draws", "elo0", "elo1", "expected"),
    [
        # Disservin/fastchess app/tests/sprt_test.cpp, "logistic trinomial 1" and "2"
        (21404, 21184, 40708, 0.5, 2.5, -1.57),
        (57433, 57030, 106593, 0.0, 2.0, -2.59),
    ],
)
def test_llr_matches_fastchess_reference_values(wins, losses, draws, elo0, elo1, expected):
    assert llr_trinomial(wins, draws, losses, elo0, elo1) == pytest.approx(expected, rel=0.01)
    assert sprt(wins, draws, losses, elo0, elo1).llr == pytest.approx(expected, rel=0.01)


def test_llr_agrees_with_the_normal_approximation():
    # fishtest LLR_alt2: N (s1 - s0) (2 s - s0 - s1) / (2 var), accurate for small elo1 - elo0.
    w, d, l_ = 5200, 3000, 4800
    n = w + d + l_
    s = (w + d / 2) / n
    var = (w * (1 - s) ** 2 + d * (0.5 - s) ** 2 + l_ * s**2) / n
    s0, s1 = 0.5, 1 / (1 + 10 ** (-5 / 400))
    approximation = n * (s1 - s0) * (2 * s - s0 - s1) / (2 * var)
    assert llr_trinomial(w, d, l_, 0, 5) == pytest.approx(approximation, rel=0.01)


def _run_sprt(true_elo: float, seed: int, draw_rate: float = 0.3) -> tuple[str, int]:
    """Play games between bots ``true_elo`` apart until the SPRT (0 vs 10) stops."""
    rng = np.random.default_rng(seed)
    p = 1 / (1 + 10 ** (-true_elo / 400))
    u = rng.random(100_000)
    win = u < p - draw_rate / 2
    draw = (u >= p - draw_rate / 2) & (u < p + draw_rate / 2)
    wins, draws = np.cumsum(win), np.cumsum(draw)
    for games in range(20, len(u) + 1, 20):
        w, d = int(wins[games - 1]), int(draws[games - 1])
        result = sprt(w, d, games - w - d)
        if result.verdict != "continue":
            return result.verdict, games
    return "continue", len(u)


def test_sprt_accepts_h1_for_a_clearly_better_bot():
    verdicts = [_run_sprt(40.0, seed)[0] for seed in range(10)]
    assert verdicts == ["H1 accepted"] * 10


def test_sprt_accepts_h0_for_an_equal_bot():
    # alpha = 0.05: an equal bot is wrongly promoted about once in twenty runs.
    verdicts = [_run_sprt(0.0, seed)[0] for seed in range(10)]
    assert verdicts.count("H0 accepted") >= 8
    assert "continue" not in verdicts


def test_head_to_head_collects_everything():
    summary = head_to_head(60, 20, 40)
    assert summary.los == los(60, 40)
    assert (summary.elo, summary.elo_low, summary.elo_high) == elo_difference(60, 20, 40)
    assert summary.sprt == sprt(60, 20, 40)
    assert (summary.wins, summary.draws, summary.losses) == (60, 20, 40)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: los(-1, 3), ValueError, "wins must be >= 0, got -1"),
        (lambda: los(1.5, 3), TypeError, "wins must be a whole number of games, got 1.5"),
        (lambda: elo_difference(1, -2, 3), ValueError, "draws must be >= 0, got -2"),
        (lambda: elo_difference(1, 2, 3, confidence=1.5), ValueError, "confidence must be"),
        (lambda: sprt(1, 2, 3, elo0=5, elo1=5), ValueError, "elo0 must be below elo1"),
        (lambda: sprt(0, 0, 0, elo0=5, elo1=1), ValueError, "elo0=5 and elo1=1"),
        (lambda: llr_trinomial(1, -1, 0, 0, 5), ValueError, "draws must be >= 0, got -1"),
        (lambda: sprt(1, 2, 3, alpha=0), ValueError, "alpha must be strictly between 0 and 1"),
        (lambda: sprt(1, 2, 3, beta=1.2), ValueError, "beta must be strictly between 0 and 1"),
        (lambda: sprt(1, 2, 3, alpha=0.6, beta=0.5), ValueError, "alpha \\+ beta must be below 1"),
        (lambda: sprt(1, 2, 3, elo1=math.inf), ValueError, "elo1 must be finite"),
    ],
)
def test_bad_input_is_refused_with_the_bad_value(call, error, message):
    with pytest.raises(error, match=message):
        call()
