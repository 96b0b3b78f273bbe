"""Risk battle odds: ``arena odds A D`` for large armies.

Timed, wall clock, best of ``--repeats``:

- ``attack_chance(A, D)``, the floating-point table (one diagonal of the battle at a time,
  as numpy slices), which ``arena odds`` uses;
- the reference in the same run: the exact ``attack_probability`` (fractions), which the
  command used before, on smaller battles (its time grows much faster than A x D: every
  fraction's denominator grows with the battle), and on 1000 v 1000 up to ``--patience``
  seconds (in a child process, stopped when the patience runs out);
- the whole command, ``arena odds 1000 1000``, as a process (start-up included).

    .venv/bin/python benchmarks/odds.py
"""

from __future__ import annotations

import argparse
import multiprocessing
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from arena.games.risk.odds import attack_chance, attack_probability


def best_of(repeats: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def exact_within(size: int, patience: float) -> str:
    """The exact odds of size v size, timed in a child, or how long it ran unfinished."""
    child = multiprocessing.Process(target=attack_probability, args=(size, size))
    start = time.perf_counter()
    child.start()
    child.join(patience)
    if child.is_alive():
        child.terminate()
        child.join()
        return f"unfinished after {patience:.0f} s"
    return f"{time.perf_counter() - start:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    parser.add_argument("--patience", type=float, default=120.0, help="seconds for 1000 v 1000")
    args = parser.parse_args()
    print(f"{'battle':>12}  {'attack_chance':>13}  {'exact (fractions)':>20}")
    for size in (100, 200, 400):
        fast = best_of(args.repeats, lambda s=size: attack_chance(s, s))
        exact = best_of(1, lambda s=size: attack_probability(s, s))
        print(f"{size:>5} v {size:<4}  {fast:>11.3f} s  {exact:>18.2f} s")
    fast = best_of(args.repeats, lambda: attack_chance(1000, 1000))
    print(f"{'1000 v 1000':>12}  {fast:>11.3f} s  {exact_within(1000, args.patience):>20}")
    arena = Path(sys.executable).with_name("arena")
    command = best_of(
        args.repeats,
        lambda: subprocess.run([arena, "odds", "1000", "1000"], check=True, capture_output=True),
    )
    print(f"`arena odds 1000 1000`, the whole process: {command:.2f} s")


if __name__ == "__main__":
    main()
