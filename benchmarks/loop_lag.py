"""The referee's event loop under 150 concurrent matches: how late it runs, and how much
of that is garbage collection.

One referee in this process (``start_server``, as ``arena referee`` runs it, then
``gc.freeze()`` as ``serve()`` does), and ``--matches`` 3-player Risk matches at once:
one seat of each a remote random bot (``--bots`` ``arena bot run random`` processes,
batches on, each in its share of the matches), the other two house random bots (they
decide on the loop itself). The loop's lateness is ``clock.LoopLag``'s own sample every
10 ms; garbage collection is timed by ``gc.callbacks``. The same matches are played with
Python's default collection thresholds and with the referee's (``GC_THRESHOLDS`` in
arena/referee/clock.py), in the same run. Target: the 99th percentile of the loop's
lateness under 100 ms.

    .venv/bin/python benchmarks/loop_lag.py              # the figures in docs/benchmarks.md
    .venv/bin/python benchmarks/loop_lag.py --quick      # 40 matches, a smoke run
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from arena.referee.clock import GC_THRESHOLDS  # noqa: E402
from arena.referee.server import Referee, RefereeConfig, start_server  # noqa: E402
from arena.store import Store  # noqa: E402
from arena.v1 import arena_pb2 as pb  # noqa: E402
from arena.v1 import arena_pb2_grpc as pb_grpc  # noqa: E402


class GcTimer:
    """Time spent in each collection, by generation (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.pauses.append((info["generation"], time.perf_counter() - self._start))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


async def play_round(
    referee: Referee, names: list[str], matches: int, turns: int, tag: str
) -> tuple[int, float]:
    """``matches`` matches at once, each with one remote bot; (decisions, seconds)."""
    started = time.perf_counter()
    live = []
    for i in range(matches):
        request = pb.RunMatchRequest(
            game="risk",
            players=[names[i % len(names)], "house:random", "house:random"],
            options={"turn-limit": str(turns)},
            match_id=f"{tag}-{i}",
        )
        live.append(referee.create_match(request))
    tasks = [t for t in referee._tasks if t.get_name().startswith(f"match-{tag}-")]
    await asyncio.gather(*tasks)
    seconds = time.perf_counter() - started
    decisions = sum(m.steps_played() for m in live)
    for match in live:
        if match.status != "finished":
            raise RuntimeError(f"{match.match_id}: {match.status}")
    return decisions, seconds


async def main_async(args: argparse.Namespace, work: Path) -> None:
    store = Store(f"sqlite:///{work / 'lag.db'}")
    referee = Referee(store, RefereeConfig(decision_ms=10_000, time_bank_ms=60_000))
    server, port = await start_server(referee, "127.0.0.1:0")
    address = f"127.0.0.1:{port}"
    channel = grpc.aio.insecure_channel(address)
    stub = pb_grpc.ArenaServiceStub(channel)
    names, bots = [], []
    for i in range(args.bots):
        token = (await stub.RegisterBot(pb.RegisterBotRequest(name=f"lag{i}"))).token
        names.append(f"lag{i}")
        bots.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "arena.cli",
                    "bot",
                    "run",
                    "random",
                    "--referee",
                    address,
                    "--token",
                    token,
                    "--max-matches",
                    "100000",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    try:
        while not all(referee.connection(store.latest_bot(n).id) for n in names):
            await asyncio.sleep(0.1)
        await play_round(referee, names, 4, 5, "warm")
        gc.collect()
        gc.freeze()  # as serve() does after start-up
        timer = GcTimer()
        gc.callbacks.append(timer)
        default = gc.get_threshold()
        print(
            f"{args.matches} concurrent 3-player Risk matches (turn limit {args.turns}), one "
            f"remote random bot a match over {args.bots} processes, two house random bots; "
            "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())
        )
        for label, thresholds in (("default", default), ("referee", GC_THRESHOLDS)):
            for repeat in range(args.repeats):
                gc.set_threshold(*thresholds)
                timer.pauses.clear()
                referee.lag.samples = []
                cpu = time.process_time()
                decisions, seconds = await play_round(
                    referee, names, args.matches, args.turns, f"{label}{repeat}"
                )
                cpu = time.process_time() - cpu
                samples, referee.lag.samples = referee.lag.samples, None
                gc_s = sum(p for _, p in timer.pauses)
                full = [p for g, p in timer.pauses if g == 2]
                print(
                    f"gc {label:7s} {thresholds!s:16s} {decisions / seconds:6.0f} decisions/s "
                    f"over {seconds:5.1f} s; loop lateness p50 "
                    f"{1e3 * percentile(samples, 0.5):4.0f} ms, p99 "
                    f"{1e3 * percentile(samples, 0.99):4.0f} ms, longest "
                    f"{1e3 * max(samples, default=0):5.0f} ms; gc {gc_s:5.2f} s "
                    f"({100 * gc_s / seconds:.1f}% of the time, {len(timer.pauses)} "
                    f"collections, {len(full)} full, longest "
                    f"{1e3 * max((p for _, p in timer.pauses), default=0):4.0f} ms); "
                    f"process CPU {cpu:5.1f} s",
                    flush=True,
                )
        gc.callbacks.remove(timer)
    finally:
        for bot in bots:
            bot.kill()
            bot.wait(timeout=10)
        await channel.close()
        await referee.shutdown(grace_s=1.0)
        await server.stop(grace=1.0)
        print("load average at the end " + " ".join(f"{x:.1f}" for x in os.getloadavg()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--matches", type=int, default=None)
    parser.add_argument("--turns", type=int, default=None)
    parser.add_argument("--bots", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args()
    args.matches = args.matches or (40 if args.quick else 150)
    args.turns = args.turns or (20 if args.quick else 60)
    args.repeats = args.repeats or (1 if args.quick else 2)
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main_async(args, Path(tmp)))


if __name__ == "__main__":
    main()
