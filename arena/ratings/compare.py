"""Head to head: is bot A better than bot B, by how much, and can we stop testing?

From A's wins, draws and losses against B:

- :func:`los`, the likelihood of superiority ``Phi((W - L) / sqrt(W + L))``: the chance
  that A is the stronger, from the decisive games (normal approximation; draws carry no
  information about *which* bot is better). No decisive game gives 0.5.
- :func:`elo_difference`, A's rating minus B's on the logistic Elo scale of
  :mod:`arena.ratings.elo`, from the score ``s = (W + D/2) / N``: ``-400 log10(1/s - 1)``.
  Its interval is the Wilson-type interval of the score with the observed draw rate
  ``d = D / N`` held fixed: all ``p`` with ``(s - p)^2 <= z^2 (p (1 - p) - d / 4) / N``,
  where ``p (1 - p) - d / 4`` is the variance of one game's score when its mean is ``p``.
  It stays sensible at the edges: 10 wins in 10 games give ``[+166, +inf]``, not a
  zero-width interval at infinity. (When every game is drawn it is the single point 0.)
- :func:`sprt`, the sequential probability ratio test of ``H0: elo = elo0`` against
  ``H1: elo = elo1`` used by fishtest and cutechess-cli/fastchess ("logistic" Elo,
  trinomial results). Its log-likelihood ratio is the *generalised* (GSPRT) one of
  M. Van den Bergh: with ``pdf`` the observed frequencies of the scores ``a = 0, 1/2, 1``
  (a zero count replaced by 1e-3) and ``s_i = 1 / (1 + 10**(-elo_i / 400))``,

      LLR = N * sum_a pdf(a) * log(p1(a) / p0(a)),   p_i(a) = pdf(a) / (1 + x_i (a - s_i)),

  where ``x_i`` solves ``sum_a pdf(a) (a - s_i) / (1 + x_i (a - s_i)) = 0``. That makes
  ``p_i`` the maximum-likelihood distribution of the outcomes among those whose expected
  score is ``s_i`` (M. Van den Bergh, Proposition 1.1 of
  https://www.cantate.be/Fishtest/support_MLE_multinomial.pdf). This is fishtest's
  ``LLR_logistic`` for 3 outcomes (official-stockfish/fishtest,
  ``server/fishtest/stats/LLRcalc.py``), also fastchess's "logistic" model. The test stops
  with H0 once ``LLR <= log(beta / (1 - alpha))`` and with H1 once
  ``LLR >= log((1 - beta) / alpha)`` (Wald's bounds). Reference values: Disservin/fastchess
  ``app/tests/sprt_test.cpp``, the "logistic trinomial" cases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real
from statistics import NormalDist
from typing import Literal

from arena.ratings.elo import ELO_PER_NAT, logistic

Verdict = Literal["H0 accepted", "H1 accepted", "continue"]

#: fishtest's regularisation: an outcome never seen counts as 1e-3 of a game.
_UNSEEN = 1e-3
_OUTCOMES = (0.0, 0.5, 1.0)
_NORMAL = NormalDist()


@dataclass(frozen=True)
class Sprt:
    """The state of a sequential test: continue while ``lower < llr < upper``."""

    llr: float
    lower: float
    upper: float
    verdict: Verdict
    elo0: float
    elo1: float
    alpha: float
    beta: float


@dataclass(frozen=True)
class HeadToHead:
    """Everything :func:`head_to_head` measures about A against B."""

    wins: int
    draws: int
    losses: int
    los: float
    elo: float
    elo_low: float
    elo_high: float
    sprt: Sprt


def los(wins: int, losses: int) -> float:
    """Likelihood that A is stronger than B: ``Phi((W - L) / sqrt(W + L))``; 0.5 if
    no game was decisive."""
    _check_count("wins", wins)
    _check_count("losses", losses)
    if wins + losses == 0:
        return 0.5
    return _NORMAL.cdf((wins - losses) / math.sqrt(wins + losses))


def elo_difference(
    wins: int, draws: int, losses: int, confidence: float = 0.95
) -> tuple[float, float, float]:
    """A's Elo minus B's with its ``confidence`` interval: ``(elo, low, high)``.

    A perfect score gives ``+inf`` (the estimate does not exist) with a finite low end; no
    games at all give ``(0.0, -inf, inf)``.
    """
    n = _check_counts(wins, draws, losses)
    _check_probability("confidence", confidence)
    if n == 0:
        return 0.0, -math.inf, math.inf
    score = (wins + draws / 2) / n
    k = _NORMAL.inv_cdf(0.5 + confidence / 2) ** 2 / n
    # (1 + k) p^2 - (2s + k) p + s^2 + k d / 4 = 0; both roots lie in [0, 1] around s.
    a, b, c = 1 + k, -(2 * score + k), score**2 + k * (draws / n) / 4
    root = math.sqrt(max(b * b - 4 * a * c, 0.0))
    low, high = (-b - root) / (2 * a), (-b + root) / (2 * a)
    return _score_to_elo(score), _score_to_elo(min(low, score)), _score_to_elo(max(high, score))


def sprt(
    wins: int,
    draws: int,
    losses: int,
    elo0: float = 0.0,
    elo1: float = 10.0,
    alpha: float = 0.05,
    beta: float = 0.05,
) -> Sprt:
    """The GSPRT of ``H0: elo = elo0`` against ``H1: elo = elo1`` (logistic Elo).

    ``alpha`` is the chance of accepting H1 when H0 holds, ``beta`` of accepting H0 when
    H1 holds.
    """
    _check_probability("alpha", alpha)
    _check_probability("beta", beta)
    if alpha + beta >= 1:
        raise ValueError(f"alpha + beta must be below 1, got {alpha!r} + {beta!r}")
    lower, upper = math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)
    llr = llr_trinomial(wins, draws, losses, elo0, elo1)
    verdict: Verdict
    if llr >= upper:
        verdict = "H1 accepted"
    elif llr <= lower:
        verdict = "H0 accepted"
    else:
        verdict = "continue"
    return Sprt(llr, lower, upper, verdict, float(elo0), float(elo1), alpha, beta)


def llr_trinomial(wins: int, draws: int, losses: int, elo0: float, elo1: float) -> float:
    """The generalised log-likelihood ratio of ``elo1`` over ``elo0`` (see module doc);
    0 before the first game."""
    n = _check_counts(wins, draws, losses)
    for name, value in (("elo0", elo0), ("elo1", elo1)):
        _check_real(name, value)
    if not elo0 < elo1:
        raise ValueError(f"elo0 must be below elo1, got elo0={elo0!r} and elo1={elo1!r}")
    if n == 0:
        return 0.0
    counts = [c if c else _UNSEEN for c in (losses, draws, wins)]
    total = sum(counts)
    pdf = [c / total for c in counts]
    p0 = _closest_with_mean(pdf, logistic(elo0 / ELO_PER_NAT))
    p1 = _closest_with_mean(pdf, logistic(elo1 / ELO_PER_NAT))
    return total * sum(p * math.log(q1 / q0) for p, q0, q1 in zip(pdf, p0, p1, strict=True))


def head_to_head(
    wins: int,
    draws: int,
    losses: int,
    *,
    confidence: float = 0.95,
    elo0: float = 0.0,
    elo1: float = 10.0,
    alpha: float = 0.05,
    beta: float = 0.05,
) -> HeadToHead:
    """LOS, the Elo difference with its interval, and the SPRT, for A's W/D/L against B."""
    elo, low, high = elo_difference(wins, draws, losses, confidence)
    return HeadToHead(
        wins=wins,
        draws=draws,
        losses=losses,
        los=los(wins, losses),
        elo=elo,
        elo_low=low,
        elo_high=high,
        sprt=sprt(wins, draws, losses, elo0, elo1, alpha, beta),
    )


def _closest_with_mean(pdf: list[float], mean: float) -> list[float]:
    """The outcome distribution with expected score ``mean`` that is most likely to have
    produced the observed ``pdf``: ``pdf(a) / (1 + x (a - mean))``, ``x`` from the secular
    equation (Van den Bergh, support_MLE_multinomial.pdf, Proposition 1.1)."""
    shifted = [a - mean for a in _OUTCOMES]

    def secular(x: float) -> float:
        return sum(p * v / (1 + x * v) for p, v in zip(pdf, shifted, strict=True))

    # secular() falls from +inf to -inf on the interval where every 1 + x v > 0: bisect
    # it down to adjacent floating-point numbers.
    low, high = -1 / max(shifted), -1 / min(shifted)
    x = (low + high) / 2
    for _ in range(200):  # until adjacent doubles (or 2^-200 of the start); x stays inside
        if secular(x) > 0:
            low = x
        else:
            high = x
        middle = (low + high) / 2
        if middle in (low, high):
            break
        x = middle
    return [p / (1 + x * v) for p, v in zip(pdf, shifted, strict=True)]


def _score_to_elo(score: float) -> float:
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return ELO_PER_NAT * math.log(score / (1 - score))


def _check_counts(wins: int, draws: int, losses: int) -> int:
    for name, value in (("wins", wins), ("draws", draws), ("losses", losses)):
        _check_count(name, value)
    return wins + draws + losses


def _check_count(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be a whole number of games, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")


def _check_real(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")


def _check_probability(name: str, value: float) -> None:
    _check_real(name, value)
    if not 0 < value < 1:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {value!r}")
