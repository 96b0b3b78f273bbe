"""Maximum-likelihood Elo over all games at once (Bradley-Terry), with confidence intervals.

Model. ``a`` scores ``1 / (1 + 10**(-(Ra - Rb) / 400))`` against ``b`` on average, the
curve of :mod:`arena.ratings.elo`. A draw counts as half a win and half a loss (the
Bradley-Terry likelihood with fractional wins, as Elo itself scores a draw). We chose this
over Davidson's draw model because it keeps one meaning of a rating difference across the
package (the expected score, as in online Elo and in the logistic SPRT of
:mod:`arena.ratings.compare`), needs no draw parameter, and is the model Hunter's (2004) MM
algorithm fits, so the benchmark's reference solves the very same problem. The cost: the
intervals ignore that draws make a result less noisy, so with many draws they are somewhat
wider than they need be (conservative), never narrower.

The fit is order independent: results are first summed per pair of players, and the
log-likelihood is maximised by Newton's method with the analytic gradient and Hessian.

Anchor. Only rating differences are identified; ratings are fixed so their mean is
``anchor`` (1500 by default). The interval of a player is for its distance to that mean:
the covariance is the inverse of the observed information restricted to sum-zero ratings.

Prior. Each player gets ``prior_draws`` virtual draws against the average player (a weak
prior in the spirit of BayesElo's virtual draws), so a bot that lost every game gets a
finite rating with a wide interval instead of minus infinity. ``prior_draws=0`` gives the
plain maximum-likelihood estimate, which exists only if no group of players lost every game
against everybody else (a ``ValueError`` says so).

Scale. Everything is dense in the number of players ``n`` (an ``n x n`` Hessian, an
``O(n^3)`` factorisation per iteration), comfortable up to a few thousand players; the
number of games only costs one pass to aggregate them.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real

import numpy as np
import scipy.linalg
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import expit, ndtri
from threadpoolctl import ThreadpoolController

from arena.ratings.elo import ELO_PER_NAT
from arena.ratings.results import PairResult, Player

#: Newton stops once no rating moves by more than this many Elo points.
TOLERANCE_ELO = 1e-6
MAX_ITERATIONS = 100


@dataclass(frozen=True, eq=False)
class PairTable:
    """Results summed per pair of players: the form :func:`fit` works on.

    Pair ``k`` is ``players[first[k]]`` against ``players[second[k]]`` (``first < second``):
    ``games[k]`` games in which ``first`` scored ``points[k]`` points.
    """

    players: tuple[Player, ...]
    first: np.ndarray
    second: np.ndarray
    games: np.ndarray
    points: np.ndarray
    #: per player, in ``players`` order
    wins: np.ndarray
    draws: np.ndarray
    losses: np.ndarray

    @property
    def played(self) -> np.ndarray:
        return self.wins + self.draws + self.losses


@dataclass(frozen=True)
class Row:
    """One line of the leaderboard; ``low``-``high`` is the confidence interval."""

    player: Player
    rating: float
    low: float
    high: float
    games: int
    wins: int
    draws: int
    losses: int
    #: points per game, (wins + draws / 2) / games
    score: float


@dataclass(frozen=True, eq=False)
class Leaderboard:
    """The fitted ratings, best first. Iterate for rows; ``board[player]`` for one row."""

    rows: tuple[Row, ...]
    anchor: float
    confidence: float
    prior_draws: float
    #: Newton iterations the fit took
    iterations: int
    #: the players in the order of ``covariance``'s rows and columns
    players: tuple[Player, ...] = field(repr=False)
    #: covariance of the ratings (Elo squared); read-only
    covariance: np.ndarray = field(repr=False)
    _by_player: dict[Player, Row] = field(init=False, repr=False)
    _position: dict[Player, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_player", {row.player: row for row in self.rows})
        object.__setattr__(self, "_position", {p: k for k, p in enumerate(self.players)})

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, player: Player) -> Row:
        try:
            return self._by_player[player]
        except KeyError:
            raise KeyError(f"{player!r} is not on the leaderboard") from None

    def ratings(self) -> dict[Player, float]:
        return {row.player: row.rating for row in self.rows}

    def difference(self, a: Player, b: Player) -> tuple[float, float, float]:
        """``Ra - Rb`` and its interval. Use this rather than two rows' intervals, which
        ignore that the two ratings were estimated together (and share the anchor)."""
        diff = self[a].rating - self[b].rating
        i, j = self._position[a], self._position[b]
        cov = self.covariance
        sd = math.sqrt(max(cov[i, i] + cov[j, j] - 2 * cov[i, j], 0.0))
        z = _z(self.confidence)
        return diff, diff - z * sd, diff + z * sd


def tabulate(results: Iterable[PairResult]) -> PairTable:
    """Sum ``(a, b, score_a)`` results per pair; scores must be 1, 0.5 or 0."""
    rows = results if isinstance(results, Sequence) else list(results)
    if not rows:
        raise ValueError("no results to rate")
    try:
        a, b, score = zip(*rows, strict=True)
    except (TypeError, ValueError):
        _raise_bad_row(rows)
        raise
    index: dict[Player, int] = {}
    try:
        first = np.fromiter((index.setdefault(p, len(index)) for p in a), np.int64, len(a))
        second = np.fromiter((index.setdefault(p, len(index)) for p in b), np.int64, len(b))
    except TypeError:
        _raise_bad_row(rows)
        raise
    scores = np.asarray(score)
    if scores.dtype.kind not in "iuf":
        _raise_bad_row(rows)
    scores = scores.astype(float)
    valid = (scores == 1.0) | (scores == 0.5) | (scores == 0.0)
    if not valid.all():
        k = int(np.flatnonzero(~valid)[0])
        raise ValueError(f"result {k} {rows[k]!r}: score_a must be 1 (win), 0.5 (draw) or 0 (loss)")
    if (first == second).any():
        k = int(np.flatnonzero(first == second)[0])
        raise ValueError(f"result {k} {rows[k]!r}: a player cannot play itself")
    return tabulate_arrays(first, second, scores, players=tuple(index))


def tabulate_arrays(
    first: np.ndarray,
    second: np.ndarray,
    score: np.ndarray,
    players: Sequence[Player] | None = None,
) -> PairTable:
    """Sum results given as arrays: ``players[first[k]]`` scored ``score[k]`` (1, 0.5, 0)
    against ``players[second[k]]``. ``players`` defaults to ``0 .. max index``."""
    a, b = np.asarray(first), np.asarray(second)
    s = np.asarray(score, dtype=float)
    if a.ndim != 1 or a.shape != b.shape or a.shape != s.shape:
        raise ValueError(
            f"first, second and score must be 1-D and of one length, got shapes "
            f"{a.shape}, {b.shape} and {s.shape}"
        )
    if len(a) == 0:
        raise ValueError("no results to rate")
    for name, values in (("first", a), ("second", b)):
        if values.dtype.kind not in "iu":
            raise ValueError(f"{name} must hold integer player indices, got dtype {values.dtype}")
        if values.min() < 0:
            k = int(np.flatnonzero(values < 0)[0])
            raise ValueError(f"{name}[{k}] must be a player index >= 0, got {values[k]}")
    a, b = a.astype(np.int64), b.astype(np.int64)
    n = int(max(a.max(), b.max())) + 1
    if players is None:
        players = tuple(range(n))
    else:
        players = tuple(players)
        if n > len(players):
            raise ValueError(f"player index {n - 1} is out of range for {len(players)} players")
        _check_distinct(players)
        n = len(players)
    valid = (s == 1.0) | (s == 0.5) | (s == 0.0)
    if not valid.all():
        k = int(np.flatnonzero(~valid)[0])
        raise ValueError(f"score[{k}] must be 1 (win), 0.5 (draw) or 0 (loss), got {s[k]!r}")
    same = a == b
    if same.any():
        k = int(np.flatnonzero(same)[0])
        raise ValueError(f"first[{k}]: {players[a[k]]!r} cannot play itself")

    wins = np.bincount(a[s == 1.0], minlength=n) + np.bincount(b[s == 0.0], minlength=n)
    losses = np.bincount(a[s == 0.0], minlength=n) + np.bincount(b[s == 1.0], minlength=n)
    draws = np.bincount(a[s == 0.5], minlength=n) + np.bincount(b[s == 0.5], minlength=n)
    idle = np.flatnonzero(wins + draws + losses == 0)
    if idle.size:
        raise ValueError(f"player {players[idle[0]]!r} has no games; leave it out")
    if n < 2:
        raise ValueError("ratings need at least 2 players")

    # Order each pair as (lower index, higher index) so a-b and b-a games sum together.
    swap = a > b
    low, high = np.where(swap, b, a), np.where(swap, a, b)
    pair_keys, pair = np.unique(low * n + high, return_inverse=True)
    return PairTable(
        players=players,
        first=_read_only(pair_keys // n),
        second=_read_only(pair_keys % n),
        games=_read_only(np.bincount(pair, minlength=len(pair_keys)).astype(float)),
        points=_read_only(
            np.bincount(pair, weights=np.where(swap, 1.0 - s, s), minlength=len(pair_keys))
        ),
        wins=_read_only(wins),
        draws=_read_only(draws),
        losses=_read_only(losses),
    )


def tabulate_counts(
    counts: Mapping[tuple[Player, Player], Sequence[int]], players: Sequence[Player]
) -> PairTable:
    """Results already counted per pair: ``counts[a, b] = (wins of a, draws, wins of b)``,
    one key per pair, for ``players`` in that order (each must have a game). The table is
    the one :func:`tabulate` makes of the same results with the players in that order, to
    the last bit (sums of wins and halves are exact), so a tally kept as results arrive
    fits as the results themselves would."""
    players = tuple(players)
    index = {p: k for k, p in enumerate(players)}
    first = np.empty(len(counts), np.int64)
    second = np.empty(len(counts), np.int64)
    tally = np.empty((len(counts), 3), np.int64)
    for k, ((a, b), row) in enumerate(counts.items()):
        for player in (a, b):
            if player not in index:
                raise ValueError(f"pair {(a, b)!r}: {player!r} is not in players")
        first[k], second[k] = index[a], index[b]
        tally[k] = row
    return tabulate_tallies(first, second, tally, players)


def tabulate_tallies(
    first: np.ndarray, second: np.ndarray, tally: np.ndarray, players: Sequence[Player]
) -> PairTable:
    """:func:`tabulate_counts` of arrays: pair ``k`` is ``players[first[k]]`` against
    ``players[second[k]]``, ``tally[k]`` = (wins of the first, draws, wins of the second);
    one row per pair (rows of no games are left out)."""
    players = tuple(players)
    _check_distinct(players)
    n = len(players)
    first, second = np.asarray(first, np.int64), np.asarray(second, np.int64)
    tally = np.asarray(tally, np.int64).reshape(-1, 3)
    if (tally < 0).any():
        raise ValueError("counts of wins and draws must be >= 0")
    if (first == second).any():
        k = int(np.flatnonzero(first == second)[0])
        raise ValueError(f"pair {k}: {players[first[k]]!r} cannot play itself")
    games = tally.sum(axis=1)
    played = games > 0
    first, second, tally, games = first[played], second[played], tally[played], games[played]
    # each pair as (lower index, higher index), in the order tabulate_arrays gives them
    swap = first > second
    low, high = np.where(swap, second, first), np.where(swap, first, second)
    keys = low * n + high
    order = np.argsort(keys, kind="stable")
    if (np.diff(keys[order]) == 0).any():
        raise ValueError("each pair of players must have one row, not two")
    wins_low = np.where(swap, tally[:, 2], tally[:, 0])[order]
    wins_high = np.where(swap, tally[:, 0], tally[:, 2])[order]
    draws = tally[:, 1][order]
    low, high, games = low[order], high[order], games[order]
    wins = np.bincount(low, wins_low, n) + np.bincount(high, wins_high, n)
    losses = np.bincount(low, wins_high, n) + np.bincount(high, wins_low, n)
    drawn = np.bincount(low, draws, n) + np.bincount(high, draws, n)
    idle = np.flatnonzero(wins + drawn + losses == 0)
    if idle.size:
        raise ValueError(f"player {players[idle[0]]!r} has no games; leave it out")
    if n < 2:
        raise ValueError("ratings need at least 2 players")
    return PairTable(
        players=players,
        first=_read_only(low),
        second=_read_only(high),
        games=_read_only(games.astype(float)),
        points=_read_only(wins_low + draws / 2),
        wins=_read_only(wins.astype(np.int64)),
        draws=_read_only(drawn.astype(np.int64)),
        losses=_read_only(losses.astype(np.int64)),
    )


@functools.cache
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


def one_blas_thread() -> contextlib.AbstractContextManager[object]:
    """Run fits in one BLAS thread. A few hundred players fit fastest so, and on a busy
    machine by far: OpenBLAS's threads wait on each other (a 500-player fit took 18x as
    long with two threads as with one, on two cores shared with other work). A fit's
    last bits depend on the thread count (its sums are split differently), so callers
    that compare fits bit for bit (a leaderboard and its cache) fit in the same way."""
    return _blas().limit(limits=1, user_api="blas")


def fit(
    results: Iterable[PairResult] | PairTable,
    *,
    anchor: float = 1500.0,
    prior_draws: float = 2.0,
    confidence: float = 0.95,
    start: Mapping[Player, float] | None = None,
) -> Leaderboard:
    """Fit maximum-likelihood Elo ratings with ``confidence`` intervals.

    ``results`` are ``(a, b, score_a)`` triples (see :func:`arena.ratings.results.pairwise`)
    or a :class:`PairTable` from :func:`tabulate` / :func:`tabulate_arrays`.

    ``start``: ratings to start Newton's method from (a player missing starts at the
    anchor), e.g. a fit of nearly the same results: it then takes fewer steps to the
    same optimum (to the tolerance, ``TOLERANCE_ELO``; not the same last bits).
    """
    _check_real("anchor", anchor)
    _check_real("prior_draws", prior_draws)
    _check_real("confidence", confidence)
    if prior_draws < 0:
        raise ValueError(f"prior_draws must be >= 0 (0 = no prior), got {prior_draws!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), e.g. 0.95, got {confidence!r}")
    table = results if isinstance(results, PairTable) else tabulate(results)
    if prior_draws == 0:
        _check_estimable(table)

    initial = None
    if start is not None:
        initial = np.array([(start.get(p, anchor) - anchor) / ELO_PER_NAT for p in table.players])
        if not np.isfinite(initial).all():
            raise ValueError("start ratings must be finite")
        initial = _centred(initial)
    theta, information, iterations = _newton(table, float(prior_draws), initial)
    covariance = _constrained_inverse(information) * ELO_PER_NAT**2
    ratings = anchor + theta * ELO_PER_NAT
    half_width = _z(confidence) * np.sqrt(np.clip(np.diag(covariance), 0.0, None))

    played = table.played
    rows = [
        Row(
            player=player,
            rating=float(ratings[k]),
            low=float(ratings[k] - half_width[k]),
            high=float(ratings[k] + half_width[k]),
            games=int(played[k]),
            wins=int(table.wins[k]),
            draws=int(table.draws[k]),
            losses=int(table.losses[k]),
            score=float((table.wins[k] + table.draws[k] / 2) / played[k]),
        )
        for k, player in enumerate(table.players)
    ]
    # a total order: by rating (to 1e-9 Elo: the last bits of a fit depend on the order
    # the store returned the games in), then by player id, so tied rows come out alike
    # from every store
    names = np.array([str(player) for player in table.players])
    order = np.lexsort((names, -np.round(ratings, 9)))
    return Leaderboard(
        rows=tuple(rows[k] for k in order),
        anchor=float(anchor),
        confidence=float(confidence),
        prior_draws=float(prior_draws),
        iterations=iterations,
        players=table.players,
        covariance=_read_only(covariance),
    )


def _newton(
    table: PairTable, prior: float, start: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, int]:
    """Minimise the negative log-likelihood over sum-zero log-odds ratings ``theta``,
    from ``start`` (sum-zero) or all zeros.

    Returns ``theta``, the observed information (Hessian) at it, and the iteration count.
    Damped Newton: the objective is convex, so backtracking makes every step a descent.
    """
    n = len(table.players)
    theta = np.zeros(n) if start is None else start
    value: float | None = None  # the objective at theta, when the line search needs it
    for iteration in range(1, MAX_ITERATIONS + 1):
        gradient, hessian = _derivatives(theta, table, prior)
        step = _constrained_solve(hessian, -gradient)
        if np.max(np.abs(step)) * ELO_PER_NAT < TOLERANCE_ELO:
            # Quadratic convergence: this last step is far below the tolerance, and the
            # Hessian it came with is the information at the optimum to that precision.
            return theta + step, hessian, iteration
        decrement = -(gradient @ step)  # the Newton decrement squared, ~2 (f - f_min)
        if decrement < 1e-6:
            # So close to the optimum the full step is right, and comparing objective
            # values would only compare their rounding errors.
            theta, value = _centred(theta + step), None
            continue
        if value is None:
            value = _objective(theta, table, prior)
        t = 1.0
        while True:
            candidate = _centred(theta + t * step)
            new_value = _objective(candidate, table, prior)
            if new_value <= value - 1e-4 * t * decrement or t < 1e-10:
                break
            t /= 2
        theta, value = candidate, new_value
    raise RuntimeError(f"the rating fit did not converge in {MAX_ITERATIONS} iterations")


def _centred(theta: np.ndarray) -> np.ndarray:
    return theta - theta.mean()  # steps sum to zero; this removes their rounding drift


def _objective(theta: np.ndarray, table: PairTable, prior: float) -> float:
    d = theta[table.first] - theta[table.second]
    # -log P = points log(1 + e^-d) + (games - points) log(1 + e^d), and
    # log(1 + e^d) = log(1 + e^-d) + d: one logarithm per pair instead of two.
    value = table.games @ np.logaddexp(0.0, -d) + (table.games - table.points) @ d
    if prior:
        value += prior * 0.5 * np.sum(np.logaddexp(0.0, -theta) + np.logaddexp(0.0, theta))
    return float(value)


def _derivatives(
    theta: np.ndarray, table: PairTable, prior: float
) -> tuple[np.ndarray, np.ndarray]:
    n = len(theta)
    i, j = table.first, table.second
    p = expit(theta[i] - theta[j])
    excess = table.games * p - table.points  # expected minus actual points of i
    gradient = np.bincount(i, excess, n) - np.bincount(j, excess, n)
    weight = table.games * p * (1.0 - p)
    off_diagonal = coo_matrix((weight, (i, j)), shape=(n, n)).toarray()
    hessian = -(off_diagonal + off_diagonal.T)
    diagonal = np.bincount(i, weight, n) + np.bincount(j, weight, n)
    if prior:
        q = expit(theta)  # virtual draws against an average (rating 0) player
        gradient += prior * (q - 0.5)
        diagonal += prior * q * (1.0 - q)
    hessian[np.diag_indices(n)] = diagonal
    return gradient, hessian


def _constrained_solve(hessian: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve ``H x = rhs - mu 1`` with ``sum(x) = 0`` (the sum-zero Newton step).

    ``M = H + c 11'`` equals ``H`` on sum-zero vectors and is positive definite, so a
    Cholesky factorisation of ``M`` and one scalar ``mu`` solve the bordered system.
    """
    factor = scipy.linalg.cho_factor(_shifted(hessian), check_finite=False)
    x = scipy.linalg.cho_solve(factor, rhs, check_finite=False)
    u = scipy.linalg.cho_solve(factor, np.ones(len(rhs)), check_finite=False)
    return x - u * (x.sum() / u.sum())


def _constrained_inverse(hessian: np.ndarray) -> np.ndarray:
    """Covariance of sum-zero ratings: ``Z (Z' H Z)^-1 Z'`` for a basis ``Z`` of sum-zero
    vectors, computed as ``M^-1 - M^-1 11' M^-1 / (1' M^-1 1)`` with ``M = H + c 11'``."""
    inverse = scipy.linalg.inv(_shifted(hessian), check_finite=False)
    u = inverse.sum(axis=1)
    covariance = inverse - np.outer(u, u) / u.sum()
    return (covariance + covariance.T) / 2


def _shifted(hessian: np.ndarray) -> np.ndarray:
    # Any c > 0 works; one of the order of the diagonal keeps the factorisation well scaled.
    return hessian + np.mean(np.diag(hessian))


def _check_estimable(table: PairTable) -> None:
    """Without a prior the estimate is finite only if every player both scored against
    and conceded to the rest along some chain: the 'scored against' graph must be strongly
    connected (Hunter 2004, assumption 1)."""
    n = len(table.players)
    i, j, games, points = table.first, table.second, table.games, table.points
    edges_from = np.concatenate([i[points > 0], j[points < games]])
    edges_to = np.concatenate([j[points > 0], i[points < games]])
    graph = coo_matrix((np.ones(len(edges_from)), (edges_from, edges_to)), shape=(n, n))
    groups, _ = connected_components(graph, directed=True, connection="strong")
    if groups == 1:
        return
    scores = (table.wins + table.draws / 2) / table.played
    extreme = np.flatnonzero((scores == 0) | (scores == 1))
    example = (
        f"{table.players[extreme[0]]!r} {'won' if scores[extreme[0]] else 'lost'} every game"
        if extreme.size
        else "a group of players never scored against the rest"
    )
    raise ValueError(
        f"the maximum-likelihood ratings are infinite ({example}); "
        "use prior_draws > 0 for finite estimates with wide intervals"
    )


def _raise_bad_row(rows: Sequence[object]) -> None:
    for number, row in enumerate(rows):
        if not isinstance(row, tuple | list) or len(row) != 3:
            raise TypeError(f"result {number} must be an (a, b, score_a) triple, got {row!r}")
        a, b, score = row
        for player in (a, b):
            if not isinstance(player, Hashable):
                raise TypeError(f"result {number}: player {player!r} must be hashable")
        if isinstance(score, bool) or not isinstance(score, Real):
            raise TypeError(f"result {number}: score_a must be 1, 0.5 or 0, got {score!r}")


def _check_distinct(players: tuple[Player, ...]) -> None:
    if len(set(players)) != len(players):
        seen: set[Player] = set()
        for player in players:
            if player in seen:
                raise ValueError(f"player {player!r} is listed twice in players")
            seen.add(player)


def _check_real(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)  # results are values: nobody edits a table after the fact
    return array


def _z(confidence: float) -> float:
    return float(ndtri(0.5 + confidence / 2))
