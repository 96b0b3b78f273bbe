"""Attacks on the referee beside honest matches: the honest decisions/s under each
attack, as a ratio to the undisturbed rate measured in the same run, just before and
just after (their mean). Target: at least 0.8 for every attack.

The honest workload: ``--matches`` concurrent 3-player Risk matches between remote
random bots (three ``arena bot run random`` processes), played to their turn limit;
decisions/s is their steps over the time they took. Each attack runs in a process of
its own (tests/referee/hostile_clients.py: raw HTTP/2 frames made once, so that the
attacker's own CPU is small), all over loopback:

  rapid-reset   streams opened and reset at once, 8,300 a second (the audit's), on
                one connection after another
  ping-flood    bursts of 10,000 HTTP/2 PINGs, one connection after another
  spectators    300 WatchMatch streams on every honest match, none of them reading
  silent        1,100 TCP connections that never speak, the referee's open-files
                limit 1,024 (its own referee: `prlimit`); also how long a new bot then
                waits for its Welcome
  organiser     RunMatch with 10,000 players, CreateTournament of 2^32-1 games a
                pairing, GetMatch of a 1 MB id, each 10 times a second
  flood         a registered bot sending pings as fast as it can, reconnecting when cut
  non-reading   20 registered bots that ping and never read what comes back

    .venv/bin/python benchmarks/hostile.py            # the figures in docs/benchmarks.md
    .venv/bin/python benchmarks/hostile.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
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

from arena.v1 import arena_pb2 as pb  # noqa: E402
from arena.v1 import arena_pb2_grpc as pb_grpc  # noqa: E402
from benchmarks.protocol import RefereeProcess  # noqa: E402

ATTACKS = ("rapid-reset", "ping-flood", "spectators", "silent", "organiser", "flood", "non-reading")
CONNECT = "/arena.v1.BotService/Connect"
#: where the rapid reset comes from (the PING floods from 127.0.0.3): not the honest bots'
#: address, nor each other's (the referee bans an address that resets streams in bulk or
#: floods PINGs, for a minute); gRPC clients cannot choose theirs, so the other attacks
#: come from 127.0.0.1 like the honest bots
ATTACKER = "127.0.0.2"


def hostile_clients() -> Any:
    path = ROOT / "tests" / "referee" / "hostile_clients.py"
    spec = importlib.util.spec_from_file_location("hostile_clients", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["hostile_clients"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


# --- the honest workload ----------------------------------------------------------------


def honest_round(
    ref: RefereeProcess, names: list[str], count: int, turns: int, tag: str
) -> tuple[float, list[str]]:
    """Start ``count`` matches at once (ids known beforehand, for the spectators'
    attack); decisions/s once all are over."""
    ids = [f"{tag}-{i}-{time.monotonic_ns()}" for i in range(count)]
    Path(ref.log.parent / "ids").write_text("\n".join(ids))
    replies: list[Any] = [None] * count

    def run(i: int) -> None:
        request = pb.RunMatchRequest(
            game="risk",
            players=names,
            options={"turn-limit": str(turns)},
            match_id=ids[i],
            wait=True,
        )
        replies[i] = ref.stub.RunMatch(request, timeout=600)

    start = time.perf_counter()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    decisions = 0
    for reply in replies:
        info = reply.match
        if info.status != "finished":
            raise RuntimeError(f"match {info.match_id}: {info.status} {info.result}")
        decisions += len(json.loads(info.replay_json)["steps"])
    return decisions / elapsed, ids


# --- the attacks, each in its own process --------------------------------------------------


STOP = threading.Event()


def attack(name: str, address: str, seconds: float, workdir: str) -> dict[str, Any]:
    """Attack ``name`` until STOP (or ``seconds``); what it did."""
    if name.startswith("burn:"):
        return burn(float(name.split(":", 1)[1]))
    hc = hostile_clients()
    deadline = time.monotonic() + seconds

    def going() -> bool:
        return time.monotonic() < deadline and not STOP.is_set()

    if name == "rapid-reset":
        report = hc.rapid_reset(address, seconds, stop=STOP, source=ATTACKER)
        return {
            "streams": report.sent,
            "connections": report.connections,
            "goaways": report.goaways[:3],
        }
    if name == "ping-flood":
        report = hc.ping_flood_for(address, seconds, stop=STOP, source="127.0.0.3")
        cut = sorted(report.closed_after_s)
        return {
            "pings": report.sent,
            "acks": report.acks,
            "connections": report.connections,
            "median cut after s": round(cut[len(cut) // 2], 3) if cut else None,
            "goaways": sorted(set(report.goaways)),
        }
    if name == "silent":
        sockets = hc.silent_connections(address, 1100)
        time.sleep(1.0)
        welcome = _welcome_wait(address, workdir)
        STOP.wait(max(0.0, deadline - time.monotonic()))
        return {
            "opened": len(sockets),
            "still open": hc.still_open(sockets),
            "new bot's Welcome s": welcome,
        }
    channel = grpc.insecure_channel(address)
    stub = pb_grpc.ArenaServiceStub(channel)
    if name == "spectators":
        return _spectators(address, Path(workdir) / "ids", going)
    if name == "organiser":
        counts: dict[str, int] = {}
        calls = [
            lambda: stub.RunMatch(
                pb.RunMatchRequest(game="risk", players=["x"] * 10_000), timeout=10
            ),
            lambda: stub.CreateTournament(
                pb.CreateTournamentRequest(
                    game="risk", bots=["a", "b"], seats=2, games_per_pairing=(1 << 32) - 1
                ),
                timeout=10,
            ),
            lambda: stub.GetMatch(pb.GetMatchRequest(match_id="x" * 1_000_000), timeout=10),
        ]
        while going():  # each call 10 times a second: what each costs, not a flood
            time.sleep(0.1)
            for call in calls:
                try:
                    call()
                    counts["OK"] = counts.get("OK", 0) + 1
                except grpc.RpcError as exc:
                    counts[exc.code().name] = counts.get(exc.code().name, 0) + 1
        return counts
    token = (Path(workdir) / "attacker.token").read_text()
    if name == "flood":
        cut = 0
        while going():
            status = _flood_once(channel, token, going)
            cut += status == "RESOURCE_EXHAUSTED"
        return {"cut": cut}
    if name == "non-reading":
        calls = []
        for i in range(20):
            name = f"nonreader{os.getpid()}-{i}"  # each round's attack registers its own
            tokens = stub.RegisterBot(pb.RegisterBotRequest(name=name), timeout=10).token
            calls.append(_non_reader(address, tokens))
        STOP.wait(seconds)
        return {"bots": len(calls)}
    raise ValueError(name)


def _welcome_wait(address: str, workdir: str) -> float:
    """Seconds a newly connecting bot waits for its Welcome."""
    token = (Path(workdir) / "attacker.token").read_text()
    start = time.monotonic()
    with grpc.insecure_channel(address) as channel:
        call = channel.stream_stream(CONNECT, request_serializer=bytes, response_deserializer=None)(
            iter([pb.BotMessage(hello=pb.Hello(token=token)).SerializeToString()]), timeout=30
        )
        try:
            next(iter(call))
        except grpc.RpcError:
            return -1.0
        waited = time.monotonic() - start
        call.cancel()
    return round(waited, 3)


def _spectators(address: str, ids_file: Path, going: Any) -> dict[str, int]:
    """300 non-reading WatchMatch streams on every honest match, over 12 channels."""
    channels = [grpc.insecure_channel(address) for _ in range(12)]
    calls = []
    counts: dict[str, int] = {}
    watched: set[str] = set()
    while going():
        ids = (
            [i for i in ids_file.read_text().split() if i not in watched]
            if ids_file.exists()
            else []
        )
        for match_id in ids:
            watched.add(match_id)
            for n in range(300):
                stub = pb_grpc.ArenaServiceStub(channels[n % len(channels)])
                calls.append(stub.WatchMatch(pb.WatchMatchRequest(match_id=match_id), timeout=60))
        time.sleep(0.05)
    for call in calls:
        code = call.code() if call.done() else None
        key = code.name if code is not None else "open"
        counts[key] = counts.get(key, 0) + 1
        call.cancel()
    return counts


def _flood_once(channel: grpc.Channel, token: str, going: Any) -> str:
    def messages() -> Any:
        yield pb.BotMessage(hello=pb.Hello(token=token))
        nonce = 0
        while going():
            nonce += 1
            yield pb.BotMessage(ping=pb.Ping(nonce=nonce))

    call = channel.stream_stream(
        CONNECT, request_serializer=pb.BotMessage.SerializeToString, response_deserializer=None
    )(messages(), timeout=600)
    try:
        for _ in call:
            pass
        return "OK"
    except grpc.RpcError as exc:
        return exc.code().name


def _non_reader(address: str, token: str) -> Any:
    channel = grpc.insecure_channel(
        address, options=[("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 1024)]
    )

    def messages() -> Any:
        yield pb.BotMessage(hello=pb.Hello(token=token))
        for nonce in range(1_000_000):
            time.sleep(1 / 150)
            yield pb.BotMessage(ping=pb.Ping(nonce=nonce))

    call = channel.stream_stream(CONNECT, request_serializer=pb.BotMessage.SerializeToString)(
        messages(), timeout=120
    )
    return call, channel


# --- the run -----------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of process ``pid`` so far (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_attack(name: str, ref: RefereeProcess, work: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--attack",
            name,
            "--address",
            ref.address,
            "--seconds",
            "600",
            "--work",
            str(work),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )


def stop_attack(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(2)  # SIGINT: the attack reports what it did
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out.strip()


def measured_round(
    ref: RefereeProcess, names: list[str], args: argparse.Namespace, tag: str
) -> tuple[float, float, float]:
    """(honest decisions/s, the referee's CPU ms a thousand decisions, wall seconds)."""
    cpu, start = cpu_seconds(ref.proc.pid), time.perf_counter()
    rate, _ = honest_round(ref, names, args.matches, args.turns, tag)
    wall = time.perf_counter() - start
    return rate, (cpu_seconds(ref.proc.pid) - cpu) * 1e6 / (rate * wall), wall


def attacked_rounds(
    name: str, ref: RefereeProcess, names: list[str], args: argparse.Namespace, work: Path
) -> dict[str, Any]:
    """``args.repeats`` pairs of rounds, undisturbed then under attack ``name``, and one
    undisturbed round to close: each attacked round's ratio is to the mean of the
    undisturbed rounds just before and just after it."""
    quiet = [measured_round(ref, names, args, f"{name}-quiet0")]
    loud: list[tuple[float, float, float]] = []
    attacker_cpu = attacker_wall = 0.0
    said = ""
    for i in range(args.repeats):
        proc = start_attack(name, ref, work)
        time.sleep(1.5 if name == "silent" else 0.5)  # the attack is under way
        began = time.perf_counter()
        loud.append(measured_round(ref, names, args, f"{name}-loud{i}"))
        attacker_cpu += cpu_seconds(proc.pid)
        attacker_wall += time.perf_counter() - began + (1.5 if name == "silent" else 0.5)
        said = stop_attack(proc)
        quiet.append(measured_round(ref, names, args, f"{name}-quiet{i + 1}"))
    ratios = [loud[i][0] / ((quiet[i][0] + quiet[i + 1][0]) / 2) for i in range(len(loud))]
    cpu = [loud[i][1] / ((quiet[i][1] + quiet[i + 1][1]) / 2) for i in range(len(loud))]
    return {
        "ratios": ratios,
        "cpu": cpu,
        "quiet": [q[0] for q in quiet],
        "loud": [x[0] for x in loud],
        "quiet_cpu": [q[1] for q in quiet],
        "attacker": attacker_cpu / attacker_wall,
        "said": said,
    }


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def measure(
    name: str, ref: RefereeProcess, names: list[str], args: argparse.Namespace, work: Path
) -> str:
    """The attack's line: the median ratio of its rounds (and their spread), the
    referee's CPU for each honest decision under attack as a ratio to undisturbed, the
    attacker's own CPU (a share of one core); with ``--control``, the same rounds beside
    a process that only burns that much CPU: what the attacker's CPU alone costs."""
    got = attacked_rounds(name, ref, names, args, work)
    ratios = got["ratios"]
    line = (
        f"{name:12s} ratio {_median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}; "
        f"target 0.8)  undisturbed {_median(got['quiet']):5.0f}/s, under attack "
        f"{_median(got['loud']):5.0f}/s; referee CPU a decision x{_median(got['cpu']):.2f} "
        f"({_median(got['quiet_cpu']):.0f} us undisturbed); attacker CPU "
        f"{100 * got['attacker']:.0f}% of a core"
    )
    if args.control:
        burn = attacked_rounds(f"burn:{got['attacker']:.3f}", ref, names, args, work)
        line += f"; the burner alone: ratio {_median(burn['ratios']):.2f}"
    return f"{line}\n             attacker: {got['said']}"


def burn(fraction: float) -> dict[str, Any]:
    """Burn ``fraction`` of one core until STOP: busy for that share of every 10 ms."""
    busy = 0.01 * min(max(fraction, 0.0), 1.0)
    while not STOP.is_set():
        start = time.perf_counter()
        while time.perf_counter() - start < busy:
            pass
        time.sleep(max(0.0, 0.01 - busy))
    return {"burned": fraction}


def run_attack(args: argparse.Namespace) -> None:
    """The attack process: until SIGINT (or ``--seconds``), then one line of JSON."""
    import signal

    signal.signal(signal.SIGINT, lambda *_: STOP.set())
    result: dict[str, Any] = {}

    def go() -> None:
        result.update(attack(args.attack, args.address, args.seconds, args.work))

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    while thread.is_alive() and not STOP.wait(0.1):
        pass
    thread.join(timeout=10)  # each attack stops at STOP and reports
    print(json.dumps(result) if result else json.dumps({"stopped": True}), flush=True)
    os._exit(0)


def limited_referee(work: Path) -> RefereeProcess:
    """A referee whose open-files limit is 1,024 (soft and hard)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    original = subprocess.Popen

    def popen(*a: Any, **k: Any) -> Any:
        k.setdefault("preexec_fn", limit)
        return original(*a, **k)

    subprocess.Popen = popen  # type: ignore[misc]
    try:
        return RefereeProcess(work, "limited.db")
    finally:
        subprocess.Popen = original  # type: ignore[misc]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", help="comma-separated attacks (default: all)")
    parser.add_argument("--matches", type=int, default=4)
    parser.add_argument("--turns", type=int, default=None)
    parser.add_argument(
        "--repeats", type=int, default=None, help="attacked rounds an attack (default 3)"
    )
    parser.add_argument(
        "--control",
        action="store_true",
        help="also run each attack's rounds beside a process that only burns its CPU",
    )
    parser.add_argument("--attack", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=30.0, help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attack:
        run_attack(args)
        return
    args.turns = args.turns or (30 if args.quick else 60)
    args.repeats = args.repeats or (1 if args.quick else 3)
    chosen = args.only.split(",") if args.only else list(ATTACKS)
    print(
        f"{args.matches} concurrent 3-player Risk matches, random bots, turn limit {args.turns}; "
        f"{args.repeats} attacked rounds an attack; load average "
        + " ".join(f"{x:.1f}" for x in os.getloadavg())
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for group in (["silent"], [a for a in chosen if a != "silent"]):
            group = [a for a in group if a in chosen]
            if not group:
                continue
            ref = limited_referee(work) if group == ["silent"] else RefereeProcess(work)
            try:
                names = [ref.bot(f"h{i}") for i in range(3)]
                (work / "attacker.token").write_text(
                    ref.stub.RegisterBot(pb.RegisterBotRequest(name="attacker"), timeout=10).token
                )
                ref.wait_connected(names)
                honest_round(ref, names, 1, 10, "warm-up")
                for name in group:
                    print(measure(name, ref, names, args, work), flush=True)
            finally:
                ref.close()
    print("load average at the end " + " ".join(f"{x:.1f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
