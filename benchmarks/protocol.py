"""Protocol benchmark: the referee against bare gRPC, all over loopback, across processes.

(a) bare gRPC ping-pong over one bidirectional stream, messages the size of a Risk
    decision request, between two processes: round trips/s (the reference);
(b) decisions/s through the referee for one 3-player Risk match between remote random
    bots, each a separate process;
(c) the aggregate decisions/s of 16 concurrent such matches, against the bare
    ping-pong's own aggregate over 16 streams;
(d) the referee's resident memory while it holds 200 concurrent Risk matches, the bots
    multiplexed over a few connections.

    .venv/bin/python benchmarks/protocol.py            # the figures in docs/benchmarks.md
    .venv/bin/python benchmarks/protocol.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.referee.codec import observation_to_proto, to_json_text  # noqa: E402
from arena.v1 import arena_pb2 as pb  # noqa: E402
from arena.v1 import arena_pb2_grpc as pb_grpc  # noqa: E402

ECHO_METHOD = "/bench.Echo/Stream"


def decision_size() -> int:
    """Bytes of a typical Risk DecisionRequest (an attack decision mid-game)."""
    from arena.plugins import load_registry

    registry = load_registry()
    state = registry.game("risk").new_state(3, 1)
    bots = [registry.bot("risk", "random").factory(s, s) for s in range(3)]
    while state.decision().kind != "attack" or state.turn < 6:
        d = state.decision()
        state.apply(d.player, bots[d.player].decide(state.observation(d.player), d))
    d = state.decision()
    request = pb.DecisionRequest(
        match_id="x" * 32,
        request_id=1,
        seat=d.player,
        kind=d.kind,
        observation=observation_to_proto("risk", state.observation(d.player)),
        options_json=to_json_text(d.options),
    )
    return request.ByteSize()


# --- (a) the bare ping-pong ----------------------------------------------------------


async def echo_server(port_file: str) -> None:
    async def stream(request_iterator, context):
        async for message in request_iterator:
            yield message

    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler(
        "bench.Echo",
        {
            "Stream": grpc.stream_stream_rpc_method_handler(stream),
        },
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    Path(port_file).write_text(str(port))
    await server.wait_for_termination()


async def ping_pong(address: str, size: int, streams: int, seconds: float) -> float:
    """Round trips/s over ``streams`` concurrent streams (one message in flight each)."""
    payload = os.urandom(size)
    async with grpc.aio.insecure_channel(address) as channel:
        call_factory = channel.stream_stream(ECHO_METHOD)
        counts = [0] * streams

        async def one(i: int) -> None:
            queue: asyncio.Queue[bytes | None] = asyncio.Queue()

            async def requests():
                while (item := await queue.get()) is not None:
                    yield item

            call = call_factory(requests())
            deadline = time.perf_counter() + seconds
            queue.put_nowait(payload)
            async for _ in call:
                counts[i] += 1
                if time.perf_counter() >= deadline:
                    queue.put_nowait(None)
                    break
                queue.put_nowait(payload)
            call.cancel()

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(streams)))
        return sum(counts) / (time.perf_counter() - start)


def start_echo() -> tuple[subprocess.Popen[bytes], str]:
    port_file = tempfile.mktemp()
    proc = subprocess.Popen([sys.executable, __file__, "--echo-server", port_file])
    for _ in range(200):
        if Path(port_file).exists() and Path(port_file).read_text():
            return proc, f"127.0.0.1:{Path(port_file).read_text()}"
        time.sleep(0.05)
    raise RuntimeError("the echo server did not start")


# --- (b), (c), (d) through the referee -------------------------------------------------


class RefereeProcess:
    def __init__(self, work: Path) -> None:
        self.log = work / "referee.log"
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "arena.cli",
                    "referee",
                    "--port",
                    "0",
                    "--db",
                    str(work / "bench.db"),
                    "--decision-ms",
                    "10000",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.time() + 20
        while time.time() < deadline:
            found = re.search(r"listening on ([\d.]+:\d+)", self.log.read_text())
            if found:
                self.address = found.group(1)
                break
            time.sleep(0.05)
        else:
            raise RuntimeError(f"referee did not start: {self.log.read_text()}")
        self.channel = grpc.insecure_channel(self.address)
        self.stub = pb_grpc.ArenaServiceStub(self.channel)
        self.bots: list[subprocess.Popen[bytes]] = []

    def bot(self, name: str, kind: str = "random") -> str:
        token = self.stub.RegisterBot(pb.RegisterBotRequest(name=name), timeout=10).token
        self.bots.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "arena.cli",
                    "bot",
                    "run",
                    kind,
                    "--referee",
                    self.address,
                    "--token",
                    token,
                    "--max-matches",
                    "1000",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        return name

    def wait_connected(self, names: list[str]) -> None:
        deadline = time.time() + 30
        while time.time() < deadline:
            bots = self.stub.ListBots(pb.ListBotsRequest(), timeout=10).bots
            if all(any(b.name == n and b.connected for b in bots) for n in names):
                return
            time.sleep(0.1)
        raise RuntimeError(f"bots did not connect: {names}")

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        for proc in [*self.bots, self.proc]:
            proc.kill()
            proc.wait(timeout=10)
        self.channel.close()


def run_matches(
    ref: RefereeProcess, players: list[str], count: int, seed0: int, turn_limit: int
) -> tuple[int, float]:
    """Start ``count`` matches at once; returns (decisions, seconds) once all are over."""
    import concurrent.futures
    import json

    request = dict(game="risk", players=players, options={"turn-limit": str(turn_limit)})
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(count, 64)) as pool:
        replies = list(
            pool.map(
                lambda i: ref.stub.RunMatch(
                    pb.RunMatchRequest(seed=seed0 + i, wait=True, **request), timeout=1800
                ),
                range(count),
            )
        )
    elapsed = time.perf_counter() - start
    decisions = 0
    for reply in replies:
        info = reply.match
        if info.status != "finished" or info.result.forfeits:
            raise RuntimeError(f"match {info.match_id}: {info.status} {info.result}")
        decisions += len(json.loads(info.replay_json)["steps"])
    return decisions, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--echo-server", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        asyncio.run(echo_server(args.echo_server))
        return
    seconds = 1.0 if args.quick else 5.0
    size = decision_size()
    echo, address = start_echo()
    try:
        one = asyncio.run(ping_pong(address, size, 1, seconds))
        sixteen = asyncio.run(ping_pong(address, size, 16, seconds))
    finally:
        echo.kill()
    print(f"decision request size: {size} bytes")
    print(f"(a) bare ping-pong, 1 stream:   {one:8.0f} round trips/s ({1e6 / one:.0f} µs each)")
    print(f"    bare ping-pong, 16 streams: {sixteen:8.0f} round trips/s")

    with tempfile.TemporaryDirectory() as tmp:
        ref = RefereeProcess(Path(tmp))
        try:
            names = [ref.bot(f"r{i}") for i in range(3)]
            ref.wait_connected(names)
            run_matches(ref, names, 1, 999, 20)  # warm-up
            decisions, elapsed = run_matches(ref, names, 1, 1, 60 if args.quick else 200)
            b = decisions / elapsed
            print(
                f"(b) one 3-player match, remote random bots: {b:8.0f} decisions/s "
                f"= {b / one:.2f} of (a) (target 0.7)"
            )
            decisions, elapsed = run_matches(ref, names, 16, 100, 30 if args.quick else 100)
            c = decisions / elapsed
            print(
                f"(c) 16 concurrent matches:                  {c:8.0f} decisions/s "
                f"= {c / sixteen:.2f} of bare 16 streams (target 0.7)"
            )
            count = 20 if args.quick else 200
            import threading

            peak = [0.0]
            done = threading.Event()

            def watch() -> None:
                while not done.is_set():
                    peak[0] = max(peak[0], ref.rss_mb())
                    time.sleep(0.05)

            watcher = threading.Thread(target=watch)
            watcher.start()
            idle = ref.rss_mb()
            run_matches(ref, names, count, 5000, 8)
            done.set()
            watcher.join()
            print(
                f"(d) referee resident memory with {count} concurrent matches: "
                f"{peak[0]:.0f} MB peak (idle {idle:.0f} MB; target under 300 MB)"
            )
        finally:
            ref.close()


if __name__ == "__main__":
    main()
