"""Online Elo: the classic update after every game, in the order the games were played.

A rating difference ``d`` means an expected score of ``1 / (1 + 10**(-d / 400))`` (the
logistic curve of the FIDE/USCF Elo system): +400 is 10-to-1 odds. The same scale is used
by :mod:`arena.ratings.mle` and :mod:`arena.ratings.compare`, so their numbers compare.

Online Elo depends on the order of the games and keeps drifting with ``k``; it is the
live rating shown during a tournament. For a final table use :func:`arena.ratings.mle.fit`,
which sees all games at once and gives intervals.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from numbers import Real

from arena.ratings.results import PairResult, Player

#: Elo points per unit of natural log-odds: a rating difference d gives odds 10**(d/400).
ELO_PER_NAT = 400 / math.log(10)


def expected_score(ra: float, rb: float) -> float:
    """The score ``a`` expects against ``b``: ``1 / (1 + 10**((rb - ra) / 400))``."""
    _check_rating("ra", ra)
    _check_rating("rb", rb)
    return logistic((ra - rb) / ELO_PER_NAT)


def update(ra: float, rb: float, score_a: float, k: float = 16) -> tuple[float, float]:
    """New ratings after one game: each moves by ``k * (actual - expected)``.

    ``score_a`` is 1 (a won), 0.5 (draw), 0 (a lost) or any fraction in between (a share
    of the points, e.g. a match score). Points are conserved: what a gains, b loses.
    """
    _check_score(score_a)
    _check_k(k)
    change = k * (score_a - expected_score(ra, rb))
    return ra + change, rb - change


def online(
    results: Iterable[PairResult],
    k: float = 16,
    initial: float = 1500.0,
    start: Mapping[Player, float] | None = None,
) -> dict[Player, float]:
    """Ratings after replaying ``(a, b, score_a)`` results in order; newcomers start at
    ``initial``. ``start``: ratings to go on from (left as they are: the answer is a new
    dict), so that ``online(more, start=online(some))`` is ``online(some + more)``."""
    _check_k(k)
    _check_rating("initial", initial)
    ratings: dict[Player, float] = dict(start or {})
    for number, result in enumerate(results):
        a, b, score = _unpack(result, number)
        ra, rb = ratings.get(a, initial), ratings.get(b, initial)
        # update()'s arithmetic, without checking again the ratings this loop made
        change = k * (score - logistic((ra - rb) / ELO_PER_NAT))
        ratings[a], ratings[b] = ra + change, rb - change
    return ratings


def logistic(x: float) -> float:
    """``1 / (1 + exp(-x))`` without overflow for large ``|x|``."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def _unpack(result: object, number: int) -> tuple[Player, Player, float]:
    try:
        a, b, score = result  # type: ignore[misc]
    except (TypeError, ValueError):
        raise TypeError(
            f"result {number} must be an (a, b, score_a) triple, got {result!r}"
        ) from None
    if a == b:
        raise ValueError(f"result {number}: {a!r} cannot play itself")
    try:
        _check_score(score)
    except (TypeError, ValueError) as error:
        raise type(error)(f"result {number} {result!r}: {error}") from None
    return a, b, float(score)


def _check_rating(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite rating, got {value!r}")


def _check_score(score: float) -> None:
    if isinstance(score, bool) or not isinstance(score, Real):
        raise TypeError(f"score_a must be a number in [0, 1], got {score!r}")
    if not 0 <= score <= 1:  # also refuses NaN
        raise ValueError(f"score_a must be in [0, 1] (1 win, 0.5 draw, 0 loss), got {score!r}")


def _check_k(k: float) -> None:
    if isinstance(k, bool) or not isinstance(k, Real):
        raise TypeError(f"k must be a number, got {k!r}")
    if not (math.isfinite(k) and k > 0):
        raise ValueError(f"k must be a finite number > 0, got {k!r}")
