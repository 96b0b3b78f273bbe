"""Protocol benchmark: the referee against bare gRPC, all over loopback, across processes.

(a) bare gRPC ping-pong over one bidirectional stream, messages the size of a Risk
    decision request, between two processes: round trips/s (the reference);
(b) decisions/s through the referee for one 3-player Risk match between remote random
    bots, each a separate process;
(c) the aggregate decisions/s of 16 concurrent such matches, against the bare
    ping-pong's own aggregate over 16 streams;
(d) the referee's resident memory while it holds 200 concurrent Risk matches, the bots
    multiplexed over a few connections.

Every figure is the best of ``--rounds`` rounds (the VM drifts by 10-20%); a round
measures (a), (b) and (c) one after the other, so that the drift hits them alike, and
the ratios of (b) and (c) to their references are also given within each round. Each
line also gives the CPU time per round trip or decision of every process taking part
(user + system, all threads, from /proc), and floors say what the transport alone
costs in the referee's own topology: a zero-work relay (a server that sends a message
to one of three client processes at a time, each of which echoes it back on its one
stream), with one message in flight as in (b) and 16 as in (c), and 16 again batching
what queues during a write, as the referee does for bots that ask. Two last lines say what
the targets leave on this machine, from the same run: the most (b) could reach (a relay
round trip plus the work a decision must do, measured in process by ``on_path_work``),
and the CPU a decision may use for (c) to reach 0.7 on these cores.

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
import threading
import time
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.referee.codec import observation_to_proto, to_json_text  # noqa: E402
from arena.v1 import arena_pb2 as pb  # noqa: E402
from arena.v1 import arena_pb2_grpc as pb_grpc  # noqa: E402

ECHO_METHOD = "/bench.Echo/Stream"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system, every thread) used so far by process ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class CpuMeter:
    """CPU µs per unit of work of a few processes over one measurement."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.start = [cpu_s(p) for p in pids]

    def per(self, units: float) -> list[float]:
        return [1e6 * (cpu_s(p) - s) / units for p, s in zip(self.pids, self.start, strict=True)]


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


# --- the work a decision puts on the latency path, without the transport -----------------


def on_path_work(games: int, turn_limit: int) -> tuple[float, float]:
    """µs a decision of the work (b) cannot overlap with waiting, measured in this process
    without gRPC or asyncio, over ``games`` 3-player Risk games between random bots.

    The referee: the observation and options, the DecisionRequest (the referee's own
    ``decision_message``) and its bytes; then parsing the reply, reading the action and
    applying it. The bot: the SDK's own ``_Session._decide`` (parsing, deciding, the
    reply) and the reply's bytes. Left out, so that this is a floor: telling the other
    seats the events (it could wait until the next request is on its way), recording
    the step, the deadline timer, and every hand-off between tasks and threads."""
    from arena.plugins import load_registry
    from arena.referee.codec import action_from_proto, to_json_text
    from arena.referee.live import LiveMatch, Seat
    from arena.sdk import _Session
    from arena.sdk.house import house_factory

    game = load_registry().game("risk")
    referee_s = bot_s = 0.0
    decisions = 0
    clock = time.perf_counter
    for seed in range(1, games + 1):
        options = {"turn-limit": str(turn_limit)}
        match = LiveMatch(
            referee=None,  # type: ignore[arg-type]  # only decision_message is used
            match_id=f"{seed:032x}",
            game=game,
            variants=[],
            options=options,
            seats=[Seat(label=f"r{i}", bot_id=f"r{i}") for i in range(3)],
            seed=seed,
            decision_ms=10000,
            time_bank_ms=0,
        )
        state = game.new_state(3, seed, options, [])
        session = _Session(house_factory("random"), "", 1, 0)
        for seat in range(3):
            session._start(
                pb.MatchStarted(match_id=match.match_id, game="risk", seat=seat, players=["r"] * 3)
            )
        while not state.terminal:
            decision = state.decision()
            seat = decision.player
            t0 = clock()
            observation = state.observation(seat)
            message, _ = match.decision_message(
                seat, decision, observation, to_json_text(decision.options), 1
            )
            sent = message.SerializeToString()
            t1 = clock()
            reply = session._decide(pb.RefereeMessage.FromString(sent).decision)
            assert reply is not None
            answer = reply.SerializeToString()
            t2 = clock()
            action = action_from_proto("risk", pb.BotMessage.FromString(answer).action.action)
            state.apply(seat, action)
            t3 = clock()
            referee_s += (t1 - t0) + (t3 - t2)
            bot_s += t2 - t1
            decisions += 1
    return 1e6 * referee_s / decisions, 1e6 * bot_s / decisions


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


async def ping_pong(address: str, size: int, streams: int, seconds: float) -> tuple[int, float]:
    """(round trips, seconds) over ``streams`` concurrent streams (one message in flight
    each)."""
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
        return sum(counts), time.perf_counter() - start


def start_echo() -> tuple[subprocess.Popen[bytes], str]:
    port_file = tempfile.mktemp()
    proc = subprocess.Popen([sys.executable, __file__, "--echo-server", port_file])
    for _ in range(200):
        if Path(port_file).exists() and Path(port_file).read_text():
            return proc, f"127.0.0.1:{Path(port_file).read_text()}"
        time.sleep(0.05)
    raise RuntimeError("the echo server did not start")


# --- the transport floor of the referee's topology ----------------------------------------


async def relay_client(address: str) -> None:
    """Echo every message back on the one stream (what a bot does, minus its work)."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(ECHO_METHOD)()
        await call.write(b"hello")
        try:
            while (message := await call.read()) is not grpc.aio.EOF:
                await call.write(message)
        except grpc.aio.AioRpcError:
            pass  # the relay is gone


async def relay_server(clients: int, size: int, batch: bool) -> None:
    """A zero-work referee: a server whose clients are separate processes, one stream
    each, every message going to one client, which echoes it back. Reads
    ``IN_FLIGHT SECONDS`` lines on stdin; for each, circulates IN_FLIGHT messages for
    SECONDS (the n-th round trip of message i goes to client (i + n) % clients; one write
    in flight per stream, through a writer task per stream as in the referee) and prints
    ``round-trips/s server-CPU-µs clients-CPU-µs`` (CPU per round trip). With ``batch``,
    a writer sends what queued while its last write was in flight as one gRPC message,
    as the referee does for a bot that reads batches (the client echoes it whole)."""
    loop = asyncio.get_running_loop()
    streams: list[Any] = []
    waiting: dict[bytes, asyncio.Future[bytes]] = {}
    connected = asyncio.Event()

    async def stream(request_iterator, context):
        streams.append(context)
        if len(streams) == clients:
            connected.set()
        async for message in request_iterator:
            for item in unframe(message) if batch else (message,):
                future = waiting.pop(item[:4], None)
                if future is not None:
                    future.set_result(item)

    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Stream": grpc.stream_stream_rpc_method_handler(stream)}
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    procs = [
        subprocess.Popen([sys.executable, __file__, "--relay-client", f"127.0.0.1:{port}"])
        for _ in range(clients)
    ]
    outboxes: list[asyncio.Queue[bytes]] = [asyncio.Queue() for _ in range(clients)]

    async def write(i: int) -> None:
        outbox = outboxes[i]
        while True:
            message = await outbox.get()
            if batch:
                queued = [message]
                while not outbox.empty():
                    queued.append(outbox.get_nowait())
                message = b"".join(len(m).to_bytes(4, "big") + m for m in queued)
            await streams[i].write(message)

    async def run(in_flight: int, duration: float) -> tuple[int, float]:
        counts = [0] * in_flight

        async def circulate(i: int) -> None:
            payload = i.to_bytes(4, "big") + os.urandom(size - 4)
            n = 0
            deadline = time.perf_counter() + duration
            while time.perf_counter() < deadline:
                future = waiting[payload[:4]] = loop.create_future()
                outboxes[(i + n) % clients].put_nowait(payload)
                await future
                n += 1
            counts[i] = n

        start = time.perf_counter()
        await asyncio.gather(*(circulate(i) for i in range(in_flight)))
        return sum(counts), time.perf_counter() - start

    try:
        await asyncio.wait_for(connected.wait(), 30)
        writers = [asyncio.create_task(write(i)) for i in range(clients)]
        await run(clients, 0.3)  # warm-up
        print("ready", flush=True)
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            in_flight, seconds = line.split()
            meter = CpuMeter([os.getpid(), *(p.pid for p in procs)])
            n, elapsed = await run(int(in_flight), float(seconds))
            cpu = meter.per(n)
            print(f"{n / elapsed} {cpu[0]} {sum(cpu[1:])}", flush=True)
        for writer in writers:
            writer.cancel()
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def unframe(message: bytes) -> list[bytes]:
    """The messages of a relay batch (each as a 4-byte length, then its bytes)."""
    items, at = [], 0
    while at < len(message):
        length = int.from_bytes(message[at : at + 4], "big")
        items.append(message[at + 4 : at + 4 + length])
        at += 4 + length
    return items


class RelayProcess:
    """The zero-work relay (``relay_server``) in its own process, measured on demand."""

    def __init__(self, size: int, clients: int = 3, batch: bool = False) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--relay-server", f"{clients},{size},{int(batch)}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None and self.proc.stdin is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the relay did not start")

    def measure(self, in_flight: int, seconds: float) -> tuple[float, float, float]:
        """(round trips/s, server CPU µs per round trip, clients' CPU µs per round trip)"""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{in_flight} {seconds}\n")
        self.proc.stdin.flush()
        rate, server, clients = map(float, self.proc.stdout.readline().split())
        return rate, server, clients

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # the relay stops its clients, then itself
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


# --- (b), (c), (d) through the referee -------------------------------------------------


class RefereeProcess:
    def __init__(self, work: Path, db: str = "bench.db") -> None:
        self.log = work / f"{db}.log"
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
                    str(work / db),
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


def best(rows: list[tuple[float, ...]]) -> tuple[float, ...]:
    """The row with the highest rate (the first element)."""
    return max(rows, key=lambda row: row[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=None, help="best of (default 3; quick 1)")
    parser.add_argument("--echo-server", help=argparse.SUPPRESS)
    parser.add_argument("--relay-server", help=argparse.SUPPRESS)
    parser.add_argument("--relay-client", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        asyncio.run(echo_server(args.echo_server))
        return
    if args.relay_server:
        clients, size, batch = map(int, args.relay_server.split(","))
        asyncio.run(relay_server(clients, size, bool(batch)))
        return
    if args.relay_client:
        asyncio.run(relay_client(args.relay_client))
        return
    seconds = 1.0 if args.quick else 5.0
    rounds = args.rounds or (1 if args.quick else 3)
    b_turns, c_turns = (60, 30) if args.quick else (200, 100)
    size = decision_size()
    keys = ("a", "a16", "r", "r16", "r16b", "b", "c")
    rows: dict[str, list[tuple[float, ...]]] = {k: [] for k in keys}
    work: list[tuple[float, float]] = []

    def echo_round(streams: int) -> tuple[float, ...]:
        meter = CpuMeter([os.getpid(), echo.pid])
        n, elapsed = asyncio.run(ping_pong(address, size, streams, seconds))
        client, server = meter.per(n)
        return (n / elapsed, client, server)

    def match_round(count: int, seed0: int, turns: int) -> tuple[float, ...]:
        meter = CpuMeter([ref.proc.pid, *(p.pid for p in ref.bots)])
        decisions, elapsed = run_matches(ref, names, count, seed0, turns)
        referee, *bots = meter.per(decisions)
        return (decisions / elapsed, referee, sum(bots))

    echo, address = start_echo()
    relay = RelayProcess(size)
    batching = RelayProcess(size, batch=True)
    with tempfile.TemporaryDirectory() as tmp:
        ref = RefereeProcess(Path(tmp))
        try:
            names = [ref.bot(f"r{i}") for i in range(3)]
            ref.wait_connected(names)
            run_matches(ref, names, 1, 999, 20)  # warm-up
            for i in range(rounds):  # interleaved, so that a drift of the VM hits all alike
                rows["a"].append(echo_round(1))
                rows["a16"].append(echo_round(16))
                rows["r"].append(relay.measure(1, seconds))
                rows["r16"].append(relay.measure(16, seconds))
                rows["r16b"].append(batching.measure(16, seconds))
                rows["b"].append(match_round(1, 1 + i, b_turns))
                rows["c"].append(match_round(16, 100 + 16 * i, c_turns))
                work.append(on_path_work(1 if args.quick else 3, b_turns))
            echo.kill()
            relay.close()
            batching.close()
            a, a16, r, r16, r16b, b, c = (best(rows[k]) for k in keys)
            print(f"decision request size: {size} bytes; best of {rounds} rounds; CPU µs per")
            print("round trip or decision: client/server, or referee/bots (3 processes)")
            print(
                f"(a) bare ping-pong, 1 stream:   {a[0]:8.0f} round trips/s "
                f"({1e6 / a[0]:.0f} µs each; CPU {a[1]:.0f}/{a[2]:.0f})"
            )
            print(
                f"    bare ping-pong, 16 streams: {a16[0]:8.0f} round trips/s "
                f"(CPU {a16[1]:.0f}/{a16[2]:.0f})"
            )
            print(
                f"    zero-work relay, 3 clients, 1 in flight:  {r[0]:8.0f} round trips/s "
                f"= {r[0] / a[0]:.2f} of (a) (CPU {r[1]:.0f}/{r[2]:.0f})"
            )
            print(
                f"    zero-work relay, 3 clients, 16 in flight: {r16[0]:8.0f} round trips/s "
                f"= {r16[0] / a16[0]:.2f} of bare 16 streams (CPU {r16[1]:.0f}/{r16[2]:.0f})"
            )
            print(
                f"      the same, batching as the referee: {r16b[0]:8.0f} round trips/s "
                f"= {r16b[0] / a16[0]:.2f} of bare 16 streams (CPU {r16b[1]:.0f}/{r16b[2]:.0f})"
            )
            print(
                f"(b) one 3-player match, remote random bots: {b[0]:8.0f} decisions/s "
                f"= {b[0] / a[0]:.2f} of (a) (target 0.7; CPU {b[1]:.0f}/{b[2]:.0f})"
            )
            print(
                f"(c) 16 concurrent matches:                  {c[0]:8.0f} decisions/s "
                f"= {c[0] / a16[0]:.2f} of bare 16 streams (target 0.7; CPU {c[1]:.0f}/{c[2]:.0f})"
            )
            referee_us, bot_us = min(work, key=sum)
            ceiling = 1e6 / (1e6 / r[0] + referee_us + bot_us)
            cores = len(os.sched_getaffinity(0))
            budget = cores * 1e6 / (0.7 * a16[0])
            print("What the targets leave, from this run:")
            print(
                f"    (b) can reach at most {ceiling:.0f} decisions/s = {ceiling / a[0]:.2f} "
                f"of (a): a zero-work relay round trip ({1e6 / r[0]:.0f} µs) plus the work on "
                f"the path measured in process (referee {referee_us:.0f} µs, bot {bot_us:.0f} µs)"
            )
            print(
                f"    (c) at 0.7 of bare 16 streams is {0.7 * a16[0]:.0f} decisions/s: "
                f"{cores} cores allow {budget:.0f} µs of CPU a decision, all processes "
                f"together; the zero-work relay batching as the referee takes "
                f"{r16b[1] + r16b[2]:.0f}, with the work measured in process at least "
                f"{r16b[1] + r16b[2] + referee_us + bot_us:.0f}; a decision takes "
                f"{c[1] + c[2]:.0f}"
            )
            for key, label in (("a", "(a)"), ("a16", "a16"), ("b", "(b)"), ("c", "(c)")):
                print(
                    f"    {label} every round: " + ", ".join(f"{row[0]:.0f}" for row in rows[key])
                )
            # the machine's speed drifts between rounds: the same ratios within each round
            for num, den, label in (("b", "a", "(b)/(a)"), ("c", "a16", "(c)/a16")):
                ratios = [n[0] / d[0] for n, d in zip(rows[num], rows[den], strict=True)]
                print(f"    {label} within each round: " + ", ".join(f"{x:.2f}" for x in ratios))
        finally:
            echo.kill()
            relay.close()
            batching.close()
            ref.close()
        # (d) on a referee of its own: the matches of (c) stay in memory for 30 s after
        # they end (finished_linger_s), and must not count
        count = 20 if args.quick else 200
        ref = RefereeProcess(Path(tmp), "memory.db")
        try:
            names = [ref.bot(f"m{i}") for i in range(3)]
            ref.wait_connected(names)
            run_matches(ref, names, 1, 999, 8)  # warm-up
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
