"""Web crowds benchmark (issue 27): `arena web` as a process, over real sockets, under
three crowds in one run, each beside a client that times a normal page:

1. **Late live watchers**: a fast 6-seat Risk match (house bots on a referee) watched
   by one browser for ``--first-s`` seconds, then ``--watchers`` more at once (taking
   deflate, as browsers do; ``--plain`` of them not), for ``--crowd-s`` seconds;
2. **Tournament streams**: ``--streams`` event streams of a tournament of
   ``--matches`` matches being played (house bots, `arena tournament resume` in a
   process of its own), after as long with the tournament played and no stream (the
   store changing all the time changes the timed page too: its own reference);
3. **Half-open connections**: ``--half-open`` connections that each send a request's
   head a header at a time and never end it (opened again when closed), on a web
   started with a limit of ``--open-files`` open files (`ulimit -n`).

Every web serves a copy of one store (20 bots, 400 finished matches, written as
``benchmarks/web.py`` writes its store), so the page timed is the same. The timing
client (a process of its own, so that the crowd's client work does not slow it) asks
for ``/leaderboards`` on a new connection every 0.1 s; its median and
95th percentile are printed against the reference: the same client on the same web
with no crowd, measured first in the same run. The web's RSS is sampled meanwhile
(its peak), and again ``--settle-s`` seconds after the crowd has gone. Targets: the
normal page within 200 ms at the 95th percentile, RSS under 500 MB, and falling back
once the crowd leaves.

    .venv/bin/python benchmarks/web_crowds.py            # the figures (about 4 minutes)
    .venv/bin/python benchmarks/web_crowds.py --quick    # smaller crowds, shorter
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.web import crowd  # noqa: E402

PAGE = "/leaderboards"
ARENA = [sys.executable, "-m", "arena.cli"]
TARGET_P95_MS = 200.0
TARGET_RSS_MB = 500.0


def timer_main(host: str, port: int, seconds: float) -> None:
    """The timing client (``--timer``): prints its summary as JSON."""
    with crowd.Timer(host, port, PAGE, every_s=0.1, timeout_s=10.0) as timer:
        time.sleep(seconds)
    print(json.dumps({**timer.summary(), "failures": timer.failures[:5]}), flush=True)


@contextlib.contextmanager
def timed(web: crowd.Web, seconds: float) -> Iterator[dict[str, Any]]:
    """The timing client on ``web`` for ``seconds`` (a process of its own) meanwhile;
    its summary, and the web's peak RSS, fill the dict yielded, once it has ended."""
    out: dict[str, Any] = {}
    timer = subprocess.Popen(
        [sys.executable, __file__, "--timer", web.host, str(web.port), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    with crowd.sampled_rss(web.process.pid) as samples:
        try:
            yield out
        finally:
            said, _ = timer.communicate(timeout=seconds + 60)
    out.update(json.loads(said))
    out["rss_peak_mb"] = max(samples, default=0.0)


def settle(web: crowd.Web, seconds: float) -> float:
    time.sleep(seconds)
    return crowd.rss_mb(web.process.pid)


def line(label: str, got: dict[str, Any], reference: dict[str, Any]) -> str:
    return (
        f"    {label}: page median {got['median_ms']:.1f} ms "
        f"({got['median_ms'] / reference['median_ms']:.1f}x the reference), p95 "
        f"{got['p95_ms']:.1f} ms (target <= {TARGET_P95_MS:.0f}: "
        f"{'met' if got['p95_ms'] <= TARGET_P95_MS else 'MISSED'}), longest "
        f"{got['max_ms']:.0f} ms, {got['answers']} answers, {got['failed']} failed; web RSS "
        f"peak {got['rss_peak_mb']:.0f} MB (target < {TARGET_RSS_MB:.0f}: "
        f"{'met' if got['rss_peak_mb'] < TARGET_RSS_MB else 'MISSED'})"
    )


def load() -> str:
    """The machine's load: its load averages and the processes using the CPU most."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def bench_live(args: argparse.Namespace, work: Path, reference: dict[str, Any]) -> None:
    from arena.v1 import arena_pb2 as pb
    from benchmarks.protocol import RefereeProcess

    print(
        f"(1) a fast 6-seat Risk match: 1 watcher for {args.first_s:.0f} s, then "
        f"{args.watchers} more at once ({args.plain} of them refusing deflate), for "
        f"{args.crowd_s:.0f} s"
    )
    shutil.copyfile(work / "reference.db", work / "live.db")  # the same pages to time
    ref = RefereeProcess(work, "live.db")
    try:
        with crowd.web_process(
            work / "live.db", "--referee", ref.address, "--no-prebuild", log=work / "web-live.log"
        ) as web:
            before = crowd.rss_mb(web.process.pid)
            request = pb.RunMatchRequest(
                game="risk", players=["house:random"] * 6, options={"turn-limit": "0"}
            )
            match_id = ref.stub.RunMatch(request, timeout=30).match_id
            path = f"/api/matches/{match_id}/live"
            readers = crowd.Readers(web.host, web.port)
            try:
                first = readers.add(crowd.Reader(path, deflate=True, keep=False))
                time.sleep(args.first_s)
                joined = time.monotonic()
                with timed(web, args.crowd_s) as got:
                    crowd_readers = [
                        readers.add(crowd.Reader(path, deflate=n >= args.plain, keep=False))
                        for n in range(args.watchers)
                    ]
                    time.sleep(args.crowd_s)
                statuses = [r.status for r in crowd_readers]
                started = [r.arrivals[1][0] - joined for r in crowd_readers if len(r.arrivals) > 1]
                received = sum(r.received for r in crowd_readers)
                ended = sum(r.done for r in crowd_readers)
            finally:
                readers.close()
            after = settle(web, args.settle_s)
            print(line("with the crowd", got, reference))
            ok = statuses.count(200)
            print(
                f"    {ok} of {args.watchers} watchers answered 200, {len(started)} had their "
                f"start {max(started, default=0):.2f} s (at the latest) after they asked; "
                f"{received / 2**20:.0f} MB sent to them in all; {ended} streams ended early; "
                f"the first watcher got {first.received / 2**20:.1f} MB"
            )
            print(
                f"    web RSS {before:.0f} MB before, {after:.0f} MB {args.settle_s:.0f} s "
                f"after the crowd left"
            )
    finally:
        ref.close()


def bench_tournament(args: argparse.Namespace, work: Path, reference: dict[str, Any]) -> Path:
    from arena.store import Store
    from arena.tournament.runner import TournamentSpec, create_tournament

    db = work / "tournament.db"
    shutil.copyfile(work / "reference.db", db)  # the same pages to time
    store = Store(str(db))
    try:
        bots = ["random", "aggressive", "defensive", "blitz"]
        tables = len(bots)  # every 3 of 4 bots
        spec = TournamentSpec(
            game="risk",
            bots=bots,
            seats=3,
            games_per_pairing=max(1, args.matches // tables),
            options={"turn-limit": "4"},
        )
        t = create_tournament(store, spec)
        matches = len(store.tournament_matches(t.id))
    finally:
        store.close()
    print(
        f"(2) {args.streams} event streams of a running tournament of {matches} Risk "
        f"matches (house bots, one worker process), for {args.crowd_s:.0f} s"
    )
    player = subprocess.Popen(
        [*ARENA, "tournament", "resume", t.id, "--db", str(db), "--workers", "1", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        process_group=0,  # its worker processes too are ended with it
    )
    try:
        with crowd.web_process(db, "--no-prebuild", log=work / "web-tournament.log") as web:
            before = crowd.rss_mb(web.process.pid)
            # the same page while the tournament is played and nobody follows it: the
            # store changes all the time, and the leaderboard with it
            with timed(web, args.crowd_s) as alone:
                time.sleep(args.crowd_s)
            readers = crowd.Readers(web.host, web.port)
            path = f"/api/tournaments/{t.id}/events"
            try:
                with timed(web, args.crowd_s) as got:
                    streams = [
                        readers.add(crowd.Reader(path, keep=True)) for _ in range(args.streams)
                    ]
                    time.sleep(args.crowd_s)
                bodies = [bytes(r.body) for r in streams]
            finally:
                readers.close()
            after = settle(web, args.settle_s)
        events = [b.count(b"event: tournament") for b in bodies]
        ids = {tuple(_ids(b)) for b in bodies}
        print(line("the tournament played, no stream", alone, reference))
        print(line("the tournament played, with the streams", got, reference))
        print(
            f"    the streams' own cost: page median {got['median_ms'] / alone['median_ms']:.2f}x, "
            f"p95 {got['p95_ms'] / alone['p95_ms']:.2f}x those with the tournament alone"
        )
        print(
            f"    each stream got {min(events)}-{max(events)} page events; the streams saw "
            f"{len(ids)} distinct sequences of renders (those that joined together: one)"
        )
        print(f"    web RSS {before:.0f} MB before, {after:.0f} MB {args.settle_s:.0f} s after")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(player.pid, signal.SIGKILL)
        player.wait()
    return db


def _ids(body: bytes) -> list[str]:
    import re

    return re.findall(r"id: (\d+)\.", body.decode(errors="replace"))


def bench_half_open(
    args: argparse.Namespace, work: Path, db: Path, reference: dict[str, Any]
) -> None:
    print(
        f"(3) {args.half_open} half-open connections (a header every second, never the "
        f"end; opened again when closed) on a web limited to {args.open_files} open files, "
        f"for {args.crowd_s:.0f} s"
    )
    crowd.more_open_files(args.half_open + 512)
    log = work / "web-half-open.log"
    with crowd.web_process(db, "--no-prebuild", log=log, open_files=args.open_files) as web:
        before = crowd.rss_mb(web.process.pid)
        with crowd.Slowloris(web.host, web.port, args.half_open, every_s=1.0) as attack:
            with timed(web, args.crowd_s) as got:
                time.sleep(args.crowd_s)
            opened, closed, refused = attack.opened, attack.closed, attack.refused
        after = settle(web, args.settle_s)
    text = log.read_text(errors="replace")
    print(line("under the half-open connections", got, reference))
    print(
        f"    the attacker opened {opened} connections, the web closed {closed} of them, "
        f"{refused} could not connect; the web's log: {len(text.splitlines())} lines, "
        f"{len(text)} bytes, {text.count('Too many open files')} 'Too many open files'"
    )
    print(f"    web RSS {before:.0f} MB before, {after:.0f} MB {args.settle_s:.0f} s after")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller crowds, shorter")
    parser.add_argument(
        "--plain", type=int, default=0, help="live watchers that refuse deflate (default 0)"
    )
    parser.add_argument("--timer", nargs=3, metavar=("HOST", "PORT", "SECONDS"))
    args = parser.parse_args()
    if args.timer:
        timer_main(args.timer[0], int(args.timer[1]), float(args.timer[2]))
        return
    quick = args.quick
    args.watchers = 100 if quick else 500
    args.first_s = 10.0 if quick else 25.0
    args.crowd_s = 10.0 if quick else 20.0
    args.settle_s = 5.0 if quick else 10.0
    args.streams = 20
    args.matches = 400 if quick else 2_000
    args.half_open = 1_100
    args.open_files = 1_024
    print(f"web crowds ({'quick' if quick else 'full'}); {load()}")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        # the reference: the same page on a web with no crowd
        from benchmarks.web import build

        db = work / "reference.db"
        build(db, 20, 400)
        log = work / "web-reference.log"
        with crowd.web_process(db, "--no-prebuild", log=log) as web, timed(web, 20) as reference:
            time.sleep(20)
        print(
            f"(0) reference, no crowd: page median {reference['median_ms']:.1f} ms, p95 "
            f"{reference['p95_ms']:.1f} ms, {reference['answers']} answers; web RSS "
            f"{reference['rss_peak_mb']:.0f} MB"
        )
        bench_live(args, work, reference)
        print(f"    {load()}")
        tournament_db = bench_tournament(args, work, reference)
        print(f"    {load()}")
        bench_half_open(args, work, tournament_db, reference)
        print(f"    {load()}")


if __name__ == "__main__":
    main()
