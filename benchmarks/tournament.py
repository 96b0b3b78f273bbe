"""Tournament benchmark: matches per minute of a local round robin of in-process bots.

The same round robin (classic Risk, house bots, three seats) is played, each time into
a fresh SQLite store, by

* the runner with no pool (``workers=0``: every match in this process), the reference
  for what the executor, the store and the ratings cost;
* the local executor with 1 worker process, then with 2.

It prints matches per minute and the ratios: 2 workers against 1 (the scaling, at most
2 on this 2-core machine) and 1 worker against no pool (the executor's overhead).
Wall-clock time, best of ``--repeat`` runs (the VM drifts 10-20%).

    .venv/bin/python benchmarks/tournament.py            # the figures in docs/benchmarks.md
    .venv/bin/python benchmarks/tournament.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.store import Store  # noqa: E402
from arena.tournament.executor import LocalExecutor  # noqa: E402
from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament  # noqa: E402


def spec(games: int) -> TournamentSpec:
    # four house bots: 4 groups of 3; the games per pairing set the size
    return TournamentSpec(
        game="risk",
        bots=["house:aggressive", "house:defensive", "house:blitz", "house:random"],
        seats=3,
        games_per_pairing=games,
        options={"turn-limit": "150"},
        seed=1,
    )


def measure(workers: int, games: int) -> tuple[float, int]:
    """Seconds to play the whole round robin, and its number of matches."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"{tmp}/bench.db")
        tournament = create_tournament(store, spec(games))
        executor = LocalExecutor(workers=workers)
        executor.start()  # the pool's start-up is paid once a tournament, not a match
        started = time.perf_counter()
        summary = run_tournament(store, tournament.id, executor)
        elapsed = time.perf_counter() - started
        executor.close()
        store.close()
        if summary.status != "finished":
            raise SystemExit(f"the tournament did not finish: {summary}")
        return elapsed, summary.total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--games", type=int, default=30, help="games per pairing")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    games, repeat = (3, 1) if args.quick else (args.games, args.repeat)
    rates = {}
    for workers in (0, 1, 2):
        best = min(measure(workers, games)[0] for _ in range(repeat))
        matches = 4 * games
        rates[workers] = matches / best * 60
        label = "no pool (in-process)" if workers == 0 else f"{workers} worker process(es)"
        print(f"{label:<26} {matches} matches in {best:6.2f} s: {rates[workers]:8.1f} matches/min")
    print(f"2 workers / 1 worker:     {rates[2] / rates[1]:.2f}")
    print(f"1 worker / no pool:       {rates[1] / rates[0]:.2f}")


if __name__ == "__main__":
    main()
