"""Web viewer benchmark: the replay viewer in headless Chromium, and live viewers.

(1) The longest replay that benchmarks/engine.py makes (6 players, progressive cards,
    uniform random bots: seeds 0-11 of its "random 6 progressive" row) stored as a
    finished match and opened in Debian's Chromium through Playwright: the time from
    asking for the match page to a viewer ready to step (the end shown, from the
    replay's tail when cold) and to every frame in (complete), cold (the web started
    after the match ended: it re-simulates the replay and builds the frames) and warm
    (the frames are kept), against fetching and parsing the raw replay JSON in the same
    page; then the same replay stored again as a match that ends while the web runs
    (its frames built ahead by the web's worker), opened in a fresh browser context;
    then jumps to 300 random steps (the time until the next frame is painted), against
    single steps forward.
(2) One 3-player Risk match between remote random bots (`arena bot run random`
    processes) on a referee, with `arena web --referee` watching it: its decisions per
    second with 50 live viewers (real server-sent-event clients in another process, on
    `/api/matches/ID/live`, accepting a deflated stream and inflating it as browsers
    do; ``--plain-viewers``: clients that do not) against none, the conditions
    interleaved, best of ``--rounds`` each, and the ratio within each round.

    .venv/bin/python benchmarks/web_viewer.py            # the figures in docs/benchmarks.md
    .venv/bin/python benchmarks/web_viewer.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# imports of Arena are made where they are used: the viewers' process (--viewers) starts
# with asyncio alone, so that it is ready before the match starts


VIEWERS = 50


# --- (1) the replay viewer ---------------------------------------------------------------


def longest_replay(games: int) -> str:
    """The largest replay of engine.py's random 6-player progressive games."""
    from arena.engine import play_match
    from arena.engine.replay import dumps
    from arena.plugins import load_registry

    registry = load_registry()
    risk = registry.game("risk")
    longest = ""
    for seed in range(games):
        bots = [registry.bot("risk", "random").factory(s, seed * 100 + s) for s in range(6)]
        text = dumps(play_match(risk, bots, seed, {"cards": "progressive"}))
        longest = max(longest, text, key=len)
    return longest


JUMP = """async (steps) => {
  const times = [];
  for (const step of steps) {
    const start = performance.now();
    window.ArenaViewer.show(step);
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    times.push(performance.now() - start);
  }
  return times;
}"""
RAW = """async (url) => {
  const start = performance.now();
  const replay = await (await fetch(url)).json();
  return [performance.now() - start, replay.steps.length];
}"""


def bench_viewer(quick: bool) -> None:
    import random

    from arena.web.browser import chromium, serve, store_replay
    from benchmarks.protocol import cpu_s

    start = time.perf_counter()
    text = longest_replay(2 if quick else 12)
    made = time.perf_counter() - start
    print(
        f"(1) the longest replay of engine.py's random 6-player progressive games: "
        f"{len(text) / 1e6:.2f} MB (made in {made:.0f} s)"
    )
    with tempfile.TemporaryDirectory() as work:
        db = Path(work) / "viewer.db"
        match_id = store_replay(db, text)
        with serve(db) as base, chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            url = f"{base}/matches/{match_id}"
            ready, complete, server_cpu, firsts = [], [], [], []
            web = listening_pid(base)
            for _ in range(2 if quick else 6):
                before = cpu_s(web)
                page.goto(url)
                page.wait_for_function("() => window.ArenaViewer && window.ArenaViewer.completeAt")
                firsts.append(int(page.locator("#viewer").get_attribute("data-first") or 0))
                ready.append(page.evaluate("window.ArenaViewer.readyAt"))
                complete.append(page.evaluate("window.ArenaViewer.completeAt"))
                server_cpu.append(1000 * (cpu_s(web) - before))
            ahead = built_ahead(browser, base, db, text, web, 1 if quick else 3)
            frames = int(page.locator("[data-slider]").get_attribute("max")) + 1
            raw = [page.evaluate(RAW, f"/api/matches/{match_id}/replay") for _ in range(3)]
            raw_ms = min(r[0] for r in raw)
            rng = random.Random(1)
            count = 50 if quick else 300
            # every frame is in (the last load completed): jumps anywhere
            jumps = page.evaluate(JUMP, [rng.randrange(frames) for _ in range(count)])
            begin = rng.randrange(frames - count - 1)
            nexts = page.evaluate(JUMP, list(range(begin, begin + count)))
    warm = f"median of {len(ready) - 1}"
    print(
        f"    {frames - 1} steps, {frames} frames (a keyframe every 50); the page and the "
        f"viewer's first frames, cold: the tail from step {firsts[0]}; warm: from step "
        f"{firsts[-1]} (the whole frames are kept)"
    )
    print(
        f"    page asked for -> viewer ready (the end shown): cold {ready[0]:.0f} "
        f"ms, warm {statistics.median(ready[1:]):.0f} ms ({warm}; target under 1000 ms)"
    )
    print(
        f"    page asked for -> complete (every frame in): cold {complete[0]:.0f} ms (the "
        f"server re-simulates and builds the frames), warm "
        f"{statistics.median(complete[1:]):.0f} ms ({warm})"
    )
    print(
        f"    the web process's CPU for it (to complete): cold {server_cpu[0]:.0f} ms, warm "
        f"{statistics.median(server_cpu[1:]):.0f} ms"
    )
    print(
        f"    reference: fetch + parse the raw replay JSON in the page: {raw_ms:.0f} ms; "
        f"ready is {ready[0] / raw_ms:.1f}x that cold, complete {complete[0] / raw_ms:.1f}x"
    )
    ready_a, complete_a, cpu_a, built_in = (statistics.median(x) for x in zip(*ahead, strict=True))
    print(
        f"    a match that ends while the web runs (its frames built ahead, in the web's "
        f"worker): built {built_in:.1f} s after it was stored; then, in a fresh browser "
        f"context (nothing cached in it), page asked for -> ready {ready_a:.0f} ms, "
        f"complete {complete_a:.0f} ms, the web process's CPU {cpu_a:.0f} ms "
        f"(median of {len(ahead)}; target under 1000 ms)"
    )
    median = statistics.median(jumps)
    p95 = sorted(jumps)[int(0.95 * len(jumps))]
    step = statistics.median(nexts)
    print(
        f"    jump to a random step, until painted: median {median:.1f} ms, 95th "
        f"percentile {p95:.1f} ms, worst {max(jumps):.1f} ms over {len(jumps)} jumps "
        f"(target: median under 50 ms)"
    )
    print(
        f"    reference: one step forward, until painted: median {step:.1f} ms; a jump is "
        f"{median / step:.2f}x a step"
    )


def descendants(pid: int) -> list[int]:
    """The processes started by ``pid`` and by them (the web's fork server and worker)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    out, todo = [], [pid]
    while todo:
        parent = todo.pop()
        children = [child for child, p in parents.items() if p == parent]
        out += children
        todo += children
    return out


def children_cpu_s(pid: int) -> float:
    from benchmarks.protocol import cpu_s

    total = 0.0
    for child in descendants(pid):
        with contextlib.suppress(OSError):  # it ended meanwhile
            total += cpu_s(child)
    return total


def built_ahead(
    browser: Any, base: str, db: Path, text: str, web: int, times: int
) -> list[tuple[float, float, float, float]]:
    """Stores ``text`` as a new finished match while the web runs, waits until the web's
    worker has built its frames (its processes' CPU went up, then stayed still for half
    a second), then opens it in a fresh browser context: (ready ms, complete ms, the web
    process's CPU ms, seconds from stored to built), ``times`` times."""
    from arena.web.browser import store_replay
    from benchmarks.protocol import cpu_s

    out = []
    for _ in range(times):
        before = children_cpu_s(web)
        stored = time.perf_counter()
        match_id = store_replay(db, text)
        changed, last = stored, before
        while True:
            time.sleep(0.05)
            now = children_cpu_s(web)
            if now != last:
                changed, last = time.perf_counter(), now
            elif now - before > 0.2 and time.perf_counter() - changed > 0.5:
                break
            if time.perf_counter() - stored > 120:
                raise RuntimeError("the web built no frames ahead in 2 minutes")
        context = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = context.new_page()
        cpu = cpu_s(web)
        page.goto(f"{base}/matches/{match_id}")
        page.wait_for_function("() => window.ArenaViewer && window.ArenaViewer.completeAt")
        ready = page.evaluate("window.ArenaViewer.readyAt")
        complete = page.evaluate("window.ArenaViewer.completeAt")
        out.append((ready, complete, 1000 * (cpu_s(web) - cpu), changed - stored))
        context.close()
    return out


# --- (2) live viewers ------------------------------------------------------------------


async def _viewer(
    host: str, port: int, path: str, deadline: float, plain: bool
) -> tuple[float, int]:
    """One server-sent-event client: asks until the match is live, then reads to the
    end, inflating the stream as a browser does (it accepts deflate, unless ``plain``).
    (seconds until its stream started, bytes received)."""
    import zlib

    started = time.perf_counter()
    codings = "identity" if plain else "gzip, deflate, br"
    while True:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n"
            f"Accept-Encoding: {codings}\r\n\r\n".encode()
        )
        await writer.drain()
        status = await reader.readline()
        if b" 200 " in status:
            break
        writer.close()
        if time.perf_counter() > deadline:
            raise RuntimeError(f"the live stream never opened: {status!r}")
        await asyncio.sleep(0.02)
    opened = time.perf_counter() - started
    headers = (await reader.readuntil(b"\r\n\r\n")).lower()
    deflated = b"content-encoding: deflate" in headers
    inflater = zlib.decompressobj() if deflated else None
    received = len(status) + len(headers)
    tail = b""
    while b"event: end" not in tail and b"event: problem" not in tail:
        size = await reader.readline()  # the body is chunked: size, data, CRLF
        if not size or int(size, 16) == 0:
            break
        chunk = await reader.readexactly(int(size, 16) + 2)
        received += len(size) + len(chunk)
        data = chunk[:-2] if inflater is None else inflater.decompress(chunk[:-2])
        tail = tail[-256:] + data[-256:]
    writer.close()
    if b"event: end" not in tail:
        raise RuntimeError(f"a viewer's stream ended without the match's end: {tail!r}")
    return opened, received


async def viewers(url: str, count: int, plain: bool) -> None:
    """``count`` live viewers of ``url`` (http://HOST:PORT/api/matches/ID/live)."""
    host_port, path = url.removeprefix("http://").split("/", 1)
    host, port = host_port.split(":")
    print("ready", flush=True)
    sys.stdin.readline()  # the match has started
    # its CPU from here: starting Python and its imports (~85 ms, before the match)
    # is no cost of watching
    begun = time.process_time()
    deadline = time.perf_counter() + 60
    results = await asyncio.gather(
        *(_viewer(host, int(port), "/" + path, deadline, plain) for _ in range(count))
    )
    opened = max(r[0] for r in results)
    used = time.process_time() - begun
    print(f"{opened:.3f} {sum(r[1] for r in results)} {used:.3f}", flush=True)


def listening_pid(base: str) -> int:
    """The process listening at ``base`` (http://HOST:PORT)."""
    port = base.rsplit(":", 1)[1]
    out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True)
    found = re.search(r"pid=(\d+)", out.stdout)
    if found is None:
        raise RuntimeError(f"nothing listens at {base}: {out.stdout or out.stderr}")
    return int(found.group(1))


def run_match(
    ref: Any, players: list[str], turns: int, web: str, watched: bool, plain: bool = False
) -> tuple[float, list[float], str]:
    """One match, with ``VIEWERS`` live viewers on the web app ``web`` if ``watched``:
    (decisions per second; CPU µs a decision of the referee, the bots, the web app and
    the viewers' process; what the viewers said)."""
    import json

    from arena.v1 import arena_pb2 as pb
    from benchmarks.protocol import CpuMeter

    match_id = "watched-" + uuid.uuid4().hex[:10]
    crowd = None
    pids = [ref.proc.pid, *(p.pid for p in ref.bots), listening_pid(web)]
    if watched:
        crowd = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--viewers",
                f"{web}/api/matches/{match_id}/live",
                *(["--plain-viewers"] if plain else []),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert crowd.stdout is not None and crowd.stdin is not None
        if crowd.stdout.readline().strip() != "ready":
            raise RuntimeError("the viewers' process did not start")
    meter = CpuMeter(pids)
    request = pb.RunMatchRequest(
        game="risk",
        players=players,
        options={"turn-limit": str(turns)},
        match_id=match_id,
    )
    start = time.perf_counter()
    ref.stub.RunMatch(request, timeout=60)  # started; the viewers come now
    if crowd is not None:
        crowd.stdin.write("go\n")
        crowd.stdin.flush()
    request.wait = True  # the same match (its id): the answer comes once it has ended
    reply = ref.stub.RunMatch(request, timeout=1800)
    elapsed = time.perf_counter() - start
    info = reply.match
    if info.status != "finished" or info.result.forfeits:
        raise RuntimeError(f"match {match_id}: {info.status} {info.result}")
    decisions = len(json.loads(info.replay_json)["steps"])
    said = ""
    if crowd is not None:
        said = crowd.communicate(timeout=120)[0].strip()  # closes its stdin too
        if crowd.returncode != 0:
            raise RuntimeError(f"the viewers failed: {said}")
    referee, *rest = meter.per(decisions)
    bots, web_us = sum(rest[: len(ref.bots)]), rest[len(ref.bots)]
    crowd_us = 1e6 * float(said.split()[2]) / decisions if said else 0.0  # its own count
    return decisions / elapsed, [referee, bots, web_us, crowd_us], said


def bench_live(quick: bool, rounds: int, plain: bool, turns: int | None = None) -> None:
    from arena.web.browser import serve
    from benchmarks.protocol import RefereeProcess

    turns = turns or (60 if quick else 200)
    print(
        f"(2) one 3-player Risk match, remote random bots, turn limit {turns}: decisions/s "
        f"with {VIEWERS} live viewers against none (best of {rounds}, interleaved; the "
        f"viewers {'refuse' if plain else 'accept, as browsers do,'} a deflated stream)"
    )
    runs: dict[bool, list[tuple[float, list[float], str]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as work:
        ref = RefereeProcess(Path(work))
        try:
            names = [ref.bot(f"random-{i}") for i in range(3)]
            ref.wait_connected(names)
            with serve(Path(work) / "bench.db", "--referee", ref.address) as base:
                for _ in range(rounds):
                    for watched in (False, True):
                        runs[watched].append(run_match(ref, names, turns, base, watched, plain))
        finally:
            ref.close()
    alone = [r[0] for r in runs[False]]
    watched_rates = [r[0] for r in runs[True]]
    best0, best1 = max(alone), max(watched_rates)
    print(f"    no viewer:            {best0:7.0f} decisions/s")
    print(
        f"    {VIEWERS} live viewers:      {best1:7.0f} decisions/s = {best1 / best0:.3f} of "
        f"none (target: a fall of less than 10%, at least 0.900)"
    )
    for watched, label in ((False, "no viewer"), (True, f"{VIEWERS} viewers")):
        ref_us, bots_us, web_us, crowd_us = (min(r[1][i] for r in runs[watched]) for i in range(4))
        print(
            f"    CPU µs a decision, {label}: referee {ref_us:.0f}, bots {bots_us:.0f}, "
            f"web {web_us:.0f}, viewers' process {crowd_us:.0f}"
        )
    print(f"    every round, none: {', '.join(f'{r:.0f}' for r in alone)}")
    print(f"    every round, {VIEWERS}: {', '.join(f'{r:.0f}' for r in watched_rates)}")
    ratios = [b / a for a, b in zip(alone, watched_rates, strict=True)]
    print(
        f"    ratio within each round: {', '.join(f'{r:.3f}' for r in ratios)} "
        f"(median {statistics.median(ratios):.3f})"
    )
    for _rate, _cpu, said in runs[True]:
        seconds, received, _cpu = said.split()
        print(
            f"    viewers: all {VIEWERS} streaming {float(seconds):.2f} s after they first "
            f"asked; {int(received) / 1e6:.1f} MB received in all"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=None, help="best of (default 3; quick 1)")
    parser.add_argument("--viewers", help=argparse.SUPPRESS)
    parser.add_argument(
        "--plain-viewers",
        action="store_true",
        help="live viewers that do not accept a deflated stream (browsers do)",
    )
    parser.add_argument("--only", choices=("viewer", "live"), help="one part only")
    parser.add_argument(
        "--turns",
        type=int,
        help="the live match's turn limit (default 200; longer: steadier figures)",
    )
    args = parser.parse_args()
    if args.viewers:
        asyncio.run(viewers(args.viewers, VIEWERS, args.plain_viewers))
        return
    if args.only != "live":
        bench_viewer(args.quick)
    if args.only != "viewer":
        bench_live(
            args.quick, args.rounds or (1 if args.quick else 3), args.plain_viewers, args.turns
        )


if __name__ == "__main__":
    main()
