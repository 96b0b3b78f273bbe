"""Web benchmark: the server time of the leaderboard, bot and home pages on a big store.

The store: 500 bot versions and 200,000 finished matches (160,000 of classic Risk in
tournaments of 3 to 6 seats, 40,000 of Stratego), places drawn from hidden strengths,
written with bulk SQL (not the match runner, which would take hours) into an SQLite file
kept under the temporary directory and reused by later runs (``--rebuild`` to redo it).
One more tournament is running, with a few matches still to play.

The app is the real one (:func:`arena.web.create_app`), called in-process through
Starlette's TestClient (a real ASGI app, requests without a socket): the time of a
request is the server's own, from the request in to the last byte of the answer. Each
route is asked ``--requests`` times after one warm-up request (the first request fills
the bot page's rating-history fits: its time is printed apart; the leaderboards are read
as the app starts, and the first request waits for that); the median is printed, and its
ratio to the reference measured in the same run:

- ``/static/arena.css``: a trivial route, what any request costs;
- the uncached leaderboard: :func:`arena.tournament.leaderboard.compute` on the same
  board, what each request cost before the cache.

    .venv/bin/python benchmarks/web.py            # the figures (first run builds the store)
    .venv/bin/python benchmarks/web.py --quick    # 50 bots, 2,000 matches
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import insert  # noqa: E402

from arena.store import BotRow, EntryRow, MatchRow, SeatRow, Store, TournamentRow  # noqa: E402

#: bump when the store's contents change, so an old cached file is not reused
LAYOUT = 2
RISK_SHARE = 0.8
TOURNAMENT_MATCHES = 100
TOURNAMENT_BOTS = 10
START = datetime(2026, 1, 1, tzinfo=UTC)


def store_path(bots: int, matches: int) -> Path:
    folder = Path(os.environ.get("ARENA_BENCH_DIR") or Path(tempfile.gettempdir()) / "arena-bench")
    return folder / f"web-{LAYOUT}-{bots}x{matches}.db"


def build(path: Path, bots: int, matches: int, seed: int = 7) -> None:
    """Write the store at ``path`` (a new file, renamed into place once whole)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    store = Store(f"sqlite:///{partial}")
    rng = random.Random(seed)
    try:
        rows = _bots(bots)
        strength = {row["id"]: rng.gauss(0.0, 1.0) for row in rows}
        label = {row["id"]: f"{row['name']}@{row['version']}" for row in rows}
        ids = [row["id"] for row in rows]
        tournaments, entries, match_rows, seats = [], [], [], []
        clock = START
        made = 0
        number = 0
        while made < matches:
            game = "risk" if made < matches * RISK_SHARE else "stratego"
            size = rng.choice((3, 4, 5, 6)) if game == "risk" else 2
            pool = rng.sample(ids, TOURNAMENT_BOTS)
            tid = f"t{number:05d}"
            count = min(TOURNAMENT_MATCHES, matches - made)
            tournaments.append(_tournament(tid, game, size, rng, clock, "finished"))
            entries += [
                {"tournament_id": tid, "bot_id": b, "label": label[b], "challenger": False}
                for b in pool
            ]
            for k in range(count):
                clock += timedelta(seconds=1)
                seated = rng.sample(pool, size)
                places = _places([strength[b] for b in seated], rng)
                match_rows.append(
                    _match(f"{tid}-{k:03d}", tid, k, game, seated, label, rng, clock, places)
                )
                seats += [
                    {"match_id": f"{tid}-{k:03d}", "seat": i, "bot_id": b, "place": p}
                    for i, (b, p) in enumerate(zip(seated, places, strict=True))
                ]
            made += count
            number += 1
        # one tournament still running: two matches finished, three to play
        tid = f"t{number:05d}"
        pool = rng.sample(ids, 4)
        tournaments.append(_tournament(tid, "risk", 3, rng, clock, "running"))
        entries += [
            {"tournament_id": tid, "bot_id": b, "label": label[b], "challenger": False}
            for b in pool
        ]
        for k in range(5):
            seated = pool[:3] if k % 2 else pool[1:]
            match_rows.append(_match(f"{tid}-{k:03d}", tid, k, "risk", seated, label, rng))
            seats += [
                {"match_id": f"{tid}-{k:03d}", "seat": i, "bot_id": b, "place": None}
                for i, b in enumerate(seated)
            ]
        with store.session() as s, s.begin():
            for table, values in (
                (BotRow, rows),
                (TournamentRow, tournaments),
                (EntryRow, entries),
                (MatchRow, match_rows),
                (SeatRow, seats),
            ):
                for start in range(0, len(values), 20_000):
                    s.execute(insert(table), values[start : start + 20_000])
    finally:
        store.close()
    partial.rename(path)
    Path(f"{partial}.migrate.lock").unlink(missing_ok=True)  # the store's, beside the file


def _bots(count: int) -> list[dict]:
    """``count`` bot versions: a fifth of the names have a second version."""
    names = count - count // 5
    rows = [
        {"id": f"bot-{k:04d}-1", "name": f"bot{k:04d}", "version": 1, "kind": "remote"}
        for k in range(names)
    ]
    rows += [
        {"id": f"bot-{k:04d}-2", "name": f"bot{k:04d}", "version": 2, "kind": "remote"}
        for k in range(count - names)
    ]
    for row in rows:
        row.update(revoked=False, games=[], created=START, token_hash=None)
    return rows


def _tournament(tid: str, game: str, seats: int, rng: random.Random, clock, status: str) -> dict:
    return {
        "id": tid,
        "name": f"{game} round-robin {tid}",
        "game": game,
        "variants": [],
        "options": {},
        "format": "round-robin",
        "seats": seats,
        "games_per_pairing": 1,
        "seed": rng.getrandbits(62),
        "status": status,
        "created": clock,
        "started": clock,
        "finished": clock + timedelta(seconds=TOURNAMENT_MATCHES) if status == "finished" else None,
    }


def _match(mid, tid, k, game, seated, label, rng, clock=None, places=None) -> dict:
    return {
        "id": mid,
        "tournament_id": tid,
        "match_key": f"{k:03d}",
        "round": k,
        "group": 0,
        "game": game,
        "variants": [],
        "variant_key": "",
        "options": {},
        "seed": rng.getrandbits(62),
        "status": "finished" if places else "pending",
        "players": [label[b] for b in seated],
        "result": {"reason": "win", "places": places, "detail": "", "forfeits": []}
        if places
        else None,
        "attempts": 1 if places else 0,
        "referee": "",
        "created": clock or START,
        "started": clock,
        "finished": clock,
        "retries": 0,
    }


def _places(strengths: list[float], rng: random.Random) -> list[int]:
    """Places by a noisy performance: the winner alone first, the rest by performance
    (a Risk game ranks the eliminated by when they fell); one game in ten is a shared
    first place (a turn limit)."""
    performance = [s + rng.gauss(0.0, 1.5) for s in strengths]
    order = sorted(range(len(strengths)), key=lambda k: -performance[k])
    places = [0] * len(strengths)
    for place, seat in enumerate(order, start=1):
        places[seat] = place
    if rng.random() < 0.1:
        places[order[1]] = 1
    return places


def median_ms(run: Callable[[], object], requests: int) -> tuple[float, float]:
    """The first call's time and the median of ``requests`` more, in ms."""
    start = time.perf_counter()
    run()
    first = (time.perf_counter() - start) * 1000
    times = []
    for _ in range(requests):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return first, statistics.median(times)


ROUTES = [
    ("leaderboard page", "/leaderboards/risk/classic"),
    ("leaderboard API", "/api/leaderboards/risk/classic"),
    ("leaderboard CSV", "/api/leaderboards/risk/classic.csv"),
    ("stratego leaderboard API", "/api/leaderboards/stratego/classic"),
    ("bot page", "/bots/bot0001"),
    ("bot API", "/api/bots/bot0001"),
    ("home page", "/"),
    ("home API", "/api/home"),
    ("tournaments API", "/api/tournaments"),
    ("bots API", "/api/bots"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=500)
    parser.add_argument("--matches", type=int, default=200_000)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--rebuild", action="store_true", help="build the store again")
    parser.add_argument(
        "--no-uncached", action="store_true", help="skip timing the uncached compute (slow)"
    )
    parser.add_argument("--quick", action="store_true", help="50 bots, 2,000 matches")
    args = parser.parse_args()
    if args.quick:
        args.bots, args.matches, args.requests = 50, 2_000, 5
    path = store_path(args.bots, args.matches)
    if args.rebuild or not path.exists():
        start = time.perf_counter()
        build(path, args.bots, args.matches)
        print(f"built {path} in {time.perf_counter() - start:.1f} s")
    else:
        Store(f"sqlite:///{path}").close()  # brings an older file to this schema
        print(f"reusing {path}")
    print(
        f"{args.bots} bots, {args.matches:,} finished matches; TestClient (in-process "
        f"ASGI); median of {args.requests} requests after a first one"
    )

    from fastapi.testclient import TestClient

    from arena.tournament.leaderboard import compute
    from arena.web import create_app

    with TestClient(create_app(f"sqlite:///{path}")) as web:

        def get(route: str) -> Callable[[], object]:
            def run() -> object:
                answer = web.get(route)
                assert answer.status_code == 200, (route, answer.status_code)
                return answer.content

            return run

        # the app reads every board as it starts: the first requests wait for that
        start = time.perf_counter()
        get("/api/leaderboards/risk/classic")()
        get("/api/leaderboards/stratego/classic")()
        print(
            "  the app reading every board as it starts (the first requests wait): "
            f"{time.perf_counter() - start:.1f} s"
        )
        _, reference = median_ms(get("/static/arena.css"), args.requests)
        print(f"  {'reference: /static/arena.css':<52} {reference:9.2f} ms")
        print(f"  {'route':<52} {'first':>9}    {'median':>9}  {'x ref':>7}")
        medians = {}
        for label, route in ROUTES:
            first, median = median_ms(get(route), args.requests)
            medians[label] = median
            print(
                f"  {label + ' ' + route:<52} {first:9.1f} ms {median:9.2f} ms "
                f"{median / reference:7.1f}"
            )
        if not args.no_uncached:
            store = web.app.state.store
            start = time.perf_counter()
            compute(store, "risk", "")
            uncached = (time.perf_counter() - start) * 1000
            print(
                f"  uncached compute() of the risk board, once: {uncached:,.0f} ms, "
                f"{uncached / medians['leaderboard API']:,.0f}x the cached API's median"
            )
    target = max(medians["leaderboard page"], medians["leaderboard API"])
    print(f"  leaderboard page and API: {target:.1f} ms at most (target < 100 ms)")


if __name__ == "__main__":
    main()
