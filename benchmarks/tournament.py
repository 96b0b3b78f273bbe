"""Tournament benchmark: matches per minute of a round robin of in-process bots.

The same round robin (classic Risk, four house bots, three seats) is played, each time
into a fresh SQLite store, by

* the runner with no pool (``workers=0``: every match in this process): the reference
  for what the executor, the store and the ratings cost;
* the local executor with 1 worker process, then with 2;
* with ``--executor celery``, also Celery with 1 worker process, then 2 (each
  ``celery worker --concurrency 1``, on a private ``redis-server`` this script starts),
  and the queue's overhead per match against the local executor with as many workers.

It prints matches per minute and the ratios: 2 workers against 1 (the scaling, at most
2 on this 2-core machine) and 1 worker against no pool. Wall-clock time, best of
``--repeat`` runs (the VM drifts 10-20%); worker start-up is outside the clock.

    .venv/bin/python benchmarks/tournament.py                     # local executor
    .venv/bin/python benchmarks/tournament.py --executor celery   # local and Celery
    .venv/bin/python benchmarks/tournament.py --quick             # a smoke run
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.store import Store  # noqa: E402
from arena.tournament.distributed import CeleryExecutor, Settings  # noqa: E402
from arena.tournament.executor import Executor, LocalExecutor  # noqa: E402
from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament  # noqa: E402

GROUPS = 4  # four house bots, three seats


def spec(games: int) -> TournamentSpec:
    return TournamentSpec(
        game="risk",
        bots=["house:aggressive", "house:defensive", "house:blitz", "house:random"],
        seats=3,
        games_per_pairing=games,
        options={"turn-limit": "150"},
        seed=1,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """A private redis-server for the benchmark (never the machine's shared one)."""
    if shutil.which("redis-server") is None:
        raise SystemExit("--executor celery needs redis-server on the PATH")
    port = free_port()
    child = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}"
    finally:
        child.terminate()
        child.wait(10)


@contextlib.contextmanager
def celery_workers(count: int, env: dict[str, str], logs: Path) -> Iterator[None]:
    """``count`` Celery worker processes (one pool process each), ready to take tasks."""
    children = []
    for index in range(count):
        log = logs / f"worker-{index}.log"
        command = [
            sys.executable, "-m", "celery", "-A", "arena.workers.app", "worker",
            "--concurrency", "1", "--loglevel", "INFO", "-n", f"bench{index}@%h",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip
        with open(log, "wb") as out:
            children.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out))
    try:
        deadline = time.monotonic() + 60
        for index in range(count):
            log = logs / f"worker-{index}.log"
            while b" ready." not in log.read_bytes():
                if time.monotonic() > deadline:
                    raise SystemExit(f"a Celery worker did not start:\n{log.read_text()}")
                time.sleep(0.1)
        yield
    finally:
        for child in children:
            child.terminate()
        for child in children:
            child.wait(30)


def measure(make_executor, games: int, db: str) -> tuple[float, int]:
    """Seconds to play the whole round robin into ``db``, and its number of matches."""
    store = Store(db)
    tournament = create_tournament(store, spec(games))
    executor: Executor = make_executor()
    if isinstance(executor, LocalExecutor):
        executor.start()  # the pool's start-up is paid once a tournament, not a match
    started = time.perf_counter()
    summary = run_tournament(store, tournament.id, executor)
    elapsed = time.perf_counter() - started
    executor.close()
    store.close()
    if summary.status != "finished":
        raise SystemExit(f"the tournament did not finish: {summary}")
    return elapsed, summary.total


def report(label: str, matches: int, seconds: float) -> float:
    rate = matches / seconds * 60
    print(f"{label:<30} {matches} matches in {seconds:6.2f} s: {rate:8.1f} matches/min")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--executor", choices=("local", "celery"), default="local")
    parser.add_argument("--games", type=int, default=30, help="games per pairing")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    games, repeat = (3, 1) if args.quick else (args.games, args.repeat)
    matches = GROUPS * games
    local: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (0, 1, 2):
            best = min(
                measure(
                    lambda w=workers: LocalExecutor(workers=w), games, f"{tmp}/l{workers}-{r}.db"
                )[0]
                for r in range(repeat)
            )
            label = "local, no pool (in-process)" if workers == 0 else f"local, {workers} worker(s)"
            local[workers] = best
            report(label, matches, best)
        print(f"local 2 workers / 1 worker:    {local[1] / local[2]:.2f}")
        print(f"local 1 worker / no pool:      {local[0] / local[1]:.2f}")
        if args.executor != "celery":
            return
        workdir = Path(tmp)
        celery: dict[int, float] = {}
        with redis_server(workdir) as redis_url:
            for workers in (1, 2):
                times = []
                for r in range(repeat):
                    db = f"{tmp}/c{workers}-{r}.db"
                    env = dict(
                        os.environ,
                        ARENA_DB=db,
                        ARENA_BROKER_URL=f"{redis_url}/0",
                        ARENA_RESULT_BACKEND=f"{redis_url}/1",
                    )
                    settings = Settings.from_env(env)
                    Store(db).close()  # migrated before the workers open it
                    with celery_workers(workers, env, workdir):
                        times.append(measure(lambda s=settings: CeleryExecutor(s), games, db)[0])
                celery[workers] = min(times)
                report(f"celery, {workers} worker(s)", matches, celery[workers])
        print(f"celery 2 workers / 1 worker:   {celery[1] / celery[2]:.2f} (target 1.7)")
        for workers in (1, 2):
            overhead = (celery[workers] - local[workers]) / matches * 1000
            print(
                f"queue overhead, {workers} worker(s): {overhead:+.1f} ms a match "
                f"(celery {celery[workers] / matches * 1000:.1f} ms, "
                f"local {local[workers] / matches * 1000:.1f} ms)"
            )


if __name__ == "__main__":
    main()
