"""Sandbox benchmark: what running a bot under bubblewrap costs, all in the same run.

(a) a connected bot's decision round trip: one 3-player Risk match through a referee,
    every seat the same SDK bot file as a plain process connected over TCP loopback;
(b) the same match, every seat that file in a sandbox, connected over gRPC on the
    referee's Unix socket bound into it (``arena.sandbox.ConnectedBot``): the ratio
    b/a (target at most 1.5);
(c) the same match, every seat that file in a sandbox over the stdio protocol
    (``arena.sandbox.stdio_player``, refereed in process): the ratio c/b (target at
    most 1.5);
(d) a sandbox's start, from spawning bwrap to the bot's Hello (Python, Arena's SDK and
    the bot loaded): the median of ``--starts`` (target under 300 ms); and bwrap alone
    (``/bin/true`` in the same sandbox) beside it.

Each round measures (a), (b), (c) one after the other, so that the machine's drift hits
them alike; each figure is its best round's, each ratio the median of the rounds' own
ratios. (c) plays in a process of its own, as the referee does for (a) and (b).

    .venv/bin/python benchmarks/sandbox.py            # the figures in docs/benchmarks.md
    .venv/bin/python benchmarks/sandbox.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.engine.match import play_match  # noqa: E402
from arena.plugins import load_registry  # noqa: E402
from arena.sandbox import (  # noqa: E402
    ConnectedBot,
    Limits,
    python_bot_program,
    sandbox_problem,
    stdio_player,
)
from arena.sandbox.bwrap import UidSlot, sandbox_command  # noqa: E402
from arena.sdk import MatchContext  # noqa: E402
from arena.v1 import arena_pb2 as pb  # noqa: E402
from arena.v1 import arena_pb2_grpc as pb_grpc  # noqa: E402

#: a bot of the SDK, quick to decide: the transport is what is measured
BOT = """
from arena.bots.random_bot import RandomRiskBot
from arena.sdk import Bot


class Quick(Bot):
    def __init__(self, match):
        super().__init__(match)
        self.inner = RandomRiskBot(match.seat, 7)

    def decide_risk(self, observation, decision):
        return self.inner.decide(observation, decision)
"""
SEATS = 3
LIMITS = Limits(cpu_s=600)


class Referee:
    """``arena referee`` as a process, on TCP loopback and a Unix socket."""

    def __init__(self, work: Path) -> None:
        self.socket = str(work / "referee.sock")
        self.log = work / "referee.log"
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [
                    *(sys.executable, "-m", "arena.cli", "referee", "--port", "0"),
                    *("--db", str(work / "bench.db"), "--decision-ms", "20000"),
                    *("--unix", self.socket),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.time() + 60
        while not (found := re.search(r"listening on ([\d.]+:\d+)", self.log.read_text())):
            if time.time() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"the referee did not start: {self.log.read_text()}")
            time.sleep(0.05)
        self.address = found.group(1)
        self.channel = grpc.insecure_channel(self.address)
        self.stub = pb_grpc.ArenaServiceStub(self.channel)

    def register(self, name: str) -> str:
        request = pb.RegisterBotRequest(name=name, games=["risk"])
        return self.stub.RegisterBot(request, timeout=10).token

    def wait_connected(self, names: list[str]) -> None:
        deadline = time.time() + 120
        while time.time() < deadline:
            bots = self.stub.ListBots(pb.ListBotsRequest(), timeout=10).bots
            if all(any(b.name == n and b.connected for b in bots) for n in names):
                return
            time.sleep(0.1)
        raise RuntimeError(f"bots did not connect: {names}")

    def match(self, names: list[str], seed: int, turn_limit: int) -> tuple[int, float]:
        """(decisions, seconds) of one match between ``names``."""
        request = pb.RunMatchRequest(
            game="risk",
            players=names,
            seed=seed,
            wait=True,
            options={"turn-limit": str(turn_limit)},
        )
        start = time.perf_counter()
        info = self.stub.RunMatch(request, timeout=1800).match
        elapsed = time.perf_counter() - start
        if info.status != "finished" or info.result.forfeits:
            raise RuntimeError(f"match {info.match_id}: {info.status} {info.result}")
        return len(json.loads(info.replay_json)["steps"]), elapsed

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)
        self.channel.close()


def stdio_match(path: Path, seed: int, turn_limit: int) -> tuple[int, float]:
    """(decisions, seconds) of one match between sandboxed stdio bots (started first:
    their start is (d)'s, not this)."""
    registry = load_registry()
    names = [f"stdio-{seat}" for seat in range(SEATS)]
    options = {"turn-limit": str(turn_limit)}
    program = python_bot_program(path)
    players = [
        stdio_player(
            program,
            MatchContext(f"m-{seed}", "risk", seat, names, [], options),
            limits=LIMITS,
            decision_ms=20000,
        )
        for seat in range(SEATS)
    ]
    try:
        start = time.perf_counter()
        record = play_match(registry.game("risk"), players, seed, options, names=names)
        elapsed = time.perf_counter() - start
    finally:
        for player in players:
            player.close()
    if any(c.strikes or c.forfeit for c in record.conduct):
        raise RuntimeError(f"stdio match {seed}: {record.conduct}")
    return len(record.steps), elapsed


def stdio_match_process(path: Path, seed: int, turn_limit: int) -> tuple[int, float]:
    """:func:`stdio_match` in a process of its own, as the referee is for (a) and (b):
    not sharing this one's interpreter (and its gRPC channel's threads)."""
    done = subprocess.run(
        [sys.executable, __file__, "--stdio-match", f"{path},{seed},{turn_limit}"],
        capture_output=True,
        text=True,
        check=True,
    )
    decisions, seconds = done.stdout.split()
    return int(decisions), float(seconds)


def starts(path: Path, count: int) -> tuple[float, float]:
    """Median ms of a sandbox's start to the bot's Hello, and of bwrap alone."""
    program = python_bot_program(path)
    context = MatchContext("m-start", "risk", 0, ["a", "b", "c"])
    bot_ms, bare_ms = [], []
    for _ in range(count):
        player = stdio_player(program, context, limits=LIMITS)
        bot_ms.append(1000 * player.start_s)
        player.close()
        slot = UidSlot()
        try:
            argv = sandbox_command(["/bin/true"], program.code_dir, LIMITS, slot.uid)
            began = time.perf_counter()
            subprocess.run(argv, check=True)
            bare_ms.append(1000 * (time.perf_counter() - began))
        finally:
            slot.release()
    return statistics.median(bot_ms), statistics.median(bare_ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turn-limit", type=int, default=40)
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="one short round")
    parser.add_argument("--stdio-match", help=argparse.SUPPRESS)  # PATH,SEED,TURN_LIMIT
    args = parser.parse_args()
    if args.stdio_match:
        file, seed, turn_limit = args.stdio_match.split(",")
        decisions, seconds = stdio_match(Path(file), int(seed), int(turn_limit))
        print(decisions, seconds)
        return
    if args.quick:
        args.rounds, args.turn_limit, args.starts = 1, 8, 5
    problem = sandbox_problem()
    if problem is not None:
        sys.exit(f"benchmarks/sandbox.py: {problem}")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        path = work / "quick.py"
        path.write_text(BOT)
        referee = Referee(work)
        processes: list[subprocess.Popen[bytes]] = []
        sandboxed: list[ConnectedBot] = []
        try:
            plain = [f"plain-{seat}" for seat in range(SEATS)]
            boxed = [f"boxed-{seat}" for seat in range(SEATS)]
            for name in plain:
                processes.append(
                    subprocess.Popen(
                        [
                            *(sys.executable, "-m", "arena.sandbox.connect", str(path)),
                            *("--referee", referee.address, "--token", referee.register(name)),
                        ],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
            for name in boxed:
                sandboxed.append(
                    ConnectedBot(path, referee.socket, referee.register(name), limits=LIMITS)
                )
            referee.wait_connected(plain + boxed)
            rows = []
            for number in range(args.rounds):
                seed = 1000 + number
                a = referee.match(plain, seed, args.turn_limit)
                b = referee.match(boxed, seed, args.turn_limit)
                c = stdio_match_process(path, seed, args.turn_limit)
                ms = [1000 * seconds / decisions for decisions, seconds in (a, b, c)]
                rows.append((*ms, ms[1] / ms[0], ms[2] / ms[1]))
                print(
                    f"round {number + 1}: connected {ms[0]:.3f} ms, sandboxed gRPC "
                    f"{ms[1]:.3f} ms, stdio {ms[2]:.3f} ms a decision ({a[0]} decisions)",
                    flush=True,
                )
        finally:
            for process in processes:
                process.kill()
                process.wait(timeout=10)
            for bot in sandboxed:
                bot.close()
            referee.close()
        bot_ms, bare_ms = starts(path, args.starts)
    # each figure its best round; each ratio the median of the rounds' own ratios (a
    # loaded machine's drift makes a ratio of two rounds' bests say little)
    a, b, c = (min(row[i] for row in rows) for i in range(3))
    b_a, c_b = (statistics.median(row[i] for row in rows) for i in (3, 4))
    print(f"(a) connected bot (TCP loopback), decision round trip: {a:.3f} ms")
    print(f"(b) sandboxed gRPC bot (Unix socket): {b:.3f} ms, {b_a:.2f}x (a) (target <= 1.5x)")
    print(f"(c) sandboxed stdio bot: {c:.3f} ms, {c_b:.2f}x (b) (target <= 1.5x)")
    print(
        f"(d) sandbox start to the bot's Hello, median of {args.starts}: {bot_ms:.0f} ms "
        f"(target < 300 ms); bwrap alone: {bare_ms:.0f} ms"
    )


if __name__ == "__main__":
    main()
