"""Ratings benchmark: maximum-likelihood Elo with 95% intervals on a large synthetic pool.

1,000 bots with true Elo drawn from N(0, 200), 1,000,000 pairwise results between random
pairs (expected score on the Elo curve, some draws), all generated in numpy from a fixed
seed. Timed, wall clock, best of ``--repeats``:

- ``fit`` from arrays: ``tabulate_arrays`` (aggregation per pair) + ``fit`` (Newton, then
  the covariance for the intervals): the figure held to the 10 s target;
- the same from a list of ``(str, str, float)`` tuples, the form most callers have;
- the reference, measured in the same run: the textbook minorization-maximization (MM)
  iteration for Bradley-Terry of Hunter (2004) on the same arrays, draws as half wins (the
  same model), no intervals, iterated until no rating moves by ``--mm-tolerance`` Elo.

Also printed: the correlation of each fit with the true ratings, how far the two fits are
apart, and the share of bots whose 95% interval covers its true rating.

    .venv/bin/python benchmarks/ratings.py            # the figures
    .venv/bin/python benchmarks/ratings.py --quick    # a smoke run

The fit's dense linear algebra runs in OpenBLAS, threaded by default. On a busy machine
(other processes on the cores) its threads wait on each other: OPENBLAS_NUM_THREADS=1 was
faster and steadier here for 1,000 bots.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.ratings.mle import fit, tabulate_arrays

ELO_PER_NAT = 400 / math.log(10)
TARGET_SECONDS = 10.0


def synthetic(
    players: int, results: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """True ratings and ``results`` games ``(first, second, score)`` between random pairs."""
    rng = np.random.default_rng(seed)
    true = rng.normal(0.0, 200.0, players)
    first = rng.integers(0, players, results)
    second = rng.integers(0, players - 1, results)
    second += second >= first  # uniform over the other players
    p = 1.0 / (1.0 + 10.0 ** ((true[second] - true[first]) / 400.0))
    draw = 0.3 * 4 * p * (1 - p)  # draws mostly between equals; mean score stays p
    u = rng.random(results)
    score = np.where(u < p - draw / 2, 1.0, np.where(u < p + draw / 2, 0.5, 0.0))
    return true, first, second, score


def hunter_mm(
    first: np.ndarray, second: np.ndarray, score: np.ndarray, players: int, tolerance: float
) -> tuple[np.ndarray, int]:
    """Hunter (2004), eq. (3): gamma_i <- W_i / sum_j n_ij / (gamma_i + gamma_j)."""
    games = np.bincount(first * players + second, minlength=players * players).astype(float)
    games = games.reshape(players, players)
    games += games.T
    points = np.bincount(first, score, players) + np.bincount(second, 1.0 - score, players)
    gamma = np.ones(players)
    for iteration in range(1, 100_001):
        new = points / (games / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        new /= np.exp(np.log(new).mean())  # fix the scale: geometric mean 1
        change = np.max(np.abs(np.log(new / gamma))) * ELO_PER_NAT
        gamma = new
        if change < tolerance:
            return 1500.0 + ELO_PER_NAT * np.log(gamma), iteration
    raise RuntimeError("MM did not converge")


def best_of(repeats: int, run: Callable[[], Any]) -> tuple[float, Any]:
    best, value = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        value = run()
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mm-tolerance", type=float, default=1e-3, help="Elo")
    parser.add_argument("--quick", action="store_true", help="100 bots, 50,000 results, once")
    args = parser.parse_args()
    if args.quick:
        args.players, args.results, args.repeats = 100, 50_000, 1

    n = args.players
    true, first, second, score = synthetic(n, args.results, args.seed)
    truth = true - true.mean() + 1500.0
    names = [f"bot{k:04d}" for k in range(n)]
    triples = list(
        zip(
            [names[k] for k in first.tolist()],
            [names[k] for k in second.tolist()],
            score.tolist(),
            strict=True,
        )
    )
    print(
        f"{n:,} bots, {args.results:,} pairwise results "
        f"({np.mean(score == 0.5):.1%} draws), seed {args.seed}, best of {args.repeats}"
    )

    seconds, board = best_of(args.repeats, lambda: fit(tabulate_arrays(first, second, score)))
    fitted = np.array([board[k].rating for k in range(n)])
    low = np.array([board[k].low for k in range(n)])
    high = np.array([board[k].high for k in range(n)])
    seconds_triples, _ = best_of(args.repeats, lambda: fit(triples))
    seconds_mm, (mm, iterations) = best_of(
        args.repeats, lambda: hunter_mm(first, second, score, n, args.mm_tolerance)
    )

    rows = [
        ("MLE Elo + 95% intervals, from arrays", f"{seconds:.2f} s", f"{board.iterations} it"),
        ("MLE Elo + 95% intervals, from tuples", f"{seconds_triples:.2f} s", ""),
        ("reference: Hunter MM, no intervals", f"{seconds_mm:.2f} s", f"{iterations} it"),
        ("ratio MLE + intervals / MM", f"{seconds / seconds_mm:.2f}", ""),
        ("correlation with true ratings, MLE", f"{np.corrcoef(fitted, truth)[0, 1]:.5f}", ""),
        ("correlation with true ratings, MM", f"{np.corrcoef(mm, truth)[0, 1]:.5f}", ""),
        ("mean |MLE - true|", f"{np.mean(np.abs(fitted - truth)):.2f} Elo", ""),
        ("max |MLE - MM| (MLE has 2 virtual draws)", f"{np.max(np.abs(fitted - mm)):.2f} Elo", ""),
        ("mean width of the 95% intervals", f"{np.mean(high - low):.1f} Elo", ""),
        (
            "bots whose interval covers the truth",
            f"{np.mean((low <= truth) & (truth <= high)):.1%}",
            "",
        ),
    ]
    for label, value, note in rows:
        print(f"  {label:<42} {value:>11}  {note}".rstrip())
    print(f"  (MM stops when no rating moves by {args.mm_tolerance:g} Elo; target < 10 s)")
    if seconds > TARGET_SECONDS:
        print(f"  SLOWER THAN THE {TARGET_SECONDS:g} s TARGET")


if __name__ == "__main__":
    main()
