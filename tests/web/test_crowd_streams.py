"""The web under crowds (issue 27), against a real `arena web` process over real
sockets: a live match's late crowd, its caps and a reader that stops; many streams of a
running tournament sharing one render; half-open connections under a small open-files
limit beside a normal client."""

from __future__ import annotations

import itertools
import json
import re
import shutil
import time
from contextlib import ExitStack
from pathlib import Path

import orjson
import pytest

from arena.store import Store
from arena.v1 import arena_pb2 as pb
from arena.web import crowd
from arena.web.live import SEND_EVERY
from arena.web.progress import POLL_S

from .conftest import RISK, Filled
from .test_crowds import ask
from .test_live_browser import referee_process, wait_until
from .test_live_feed import merged

# --- a live match: a late crowd, caps, a reader that stops ---------------------------


def test_a_live_crowd_shares_one_start_and_a_stalled_reader_is_dropped(tmp_path: Path) -> None:
    """A long fast Risk match on a referee, watched through `arena web --referee` with
    a cap of 12 watchers a match: one browser first, then 10 late ones (half deflated),
    then one that stops reading. The 13th is refused with a 503 and Retry-After. Every
    late browser gets the same prepared start (every frame from where the web began
    watching) and follows in step; the stalled one is dropped, and once it reads again
    it finds the event that says why, while the others went on receiving all along."""
    with ExitStack() as stack:
        address, db, stub = referee_process(stack, tmp_path)
        log = tmp_path / "web.log"
        web = stack.enter_context(
            crowd.web_process(
                db,
                *("--referee", address, "--live-watchers-per-match", "12", "--no-prebuild"),
                log=log,
            )
        )
        # no turn limit: random bots take long to end it (the test does not wait for it)
        request = pb.RunMatchRequest(
            game="risk", players=["house:random"] * 6, options={"turn-limit": "0"}, wait=False
        )
        match_id = stub.RunMatch(request, timeout=30).match_id
        path = f"/api/matches/{match_id}/live"
        readers = crowd.Readers(web.host, web.port)
        stack.callback(readers.close)
        first = readers.add(crowd.Reader(path, deflate=True))

        def frames_of(reader: crowd.Reader) -> int:
            return len(reader.events())

        wait_until(lambda: frames_of(first) >= 5 or None, 60, "frames")
        late = [readers.add(crowd.Reader(path, deflate=n % 2 == 0)) for n in range(10)]
        wait_until(lambda: all(b"event: start" in r.body for r in late) or None, 60, "starts")
        stalled = readers.add(crowd.Reader(path, stall_after=1))
        wait_until(lambda: stalled.status or None, 30, "the stalled reader's head")
        # the 13th: refused, saying why and when to come back
        status, headers, body = ask(web, path)
        assert status == 503 and headers["retry-after"] == "30"
        assert "as many watchers" in orjson.loads(body)["detail"]
        # the stalled reader falls behind (its queue, 20 events, and the buffers on the
        # way fill up) and is dropped; the others go on meanwhile
        stalled_at, seen = time.monotonic(), frames_of(first)
        # resumed before the web gives up on a write that waits (streams.STALL_S, 30 s)
        sends = int(20 / SEND_EVERY)  # 20 s of the others' frames: the queue is full by then
        wait_until(lambda: frames_of(first) >= seen + sends or first.done or None, 180, "frames")
        stalled.resume.set()
        wait_until(lambda: stalled.done or None, 60, "the stalled reader to be dropped")
        still = [r for r in [first, *late] if not r.done]
    assert all(r.error is None for r in readers.readers), [r.error for r in readers.readers]
    assert len(still) == 11, "the others were dropped too"
    docs = [merged(r.events()) for r in [first, *late]]
    for doc in docs[1:]:  # the same frames from the same base, however late it came
        assert doc["base"] == docs[0]["base"]
        for key in ("keyframes", "deltas", "steps", "log"):
            shorter = min(len(doc[key]), len(docs[0][key]))
            assert doc[key][:shorter] == docs[0][key][:shorter], key
    # the first browser's arrivals after the stall began: it never waited for the other
    after = [t for t, _ in first.arrivals if t > stalled_at]
    assert len(after) > 10
    dropped = stalled.events()
    assert dropped[-1].startswith(b"event: problem\n"), dropped[-1][:200]
    assert orjson.loads(dropped[-1].split(b"data: ", 1)[1])["dropped"] is True
    assert "Traceback" not in log.read_text()


# --- a running tournament's page, followed by many --------------------------------------


def test_many_streams_of_a_running_tournament_share_one_render_per_change(
    tmp_path: Path,
) -> None:
    """A tournament being played (house bots, on the local executor) while 8 browsers
    follow its page: every event is one render (its id: the render's number), the
    same bytes for every stream, and the numbers go up one render per change seen,
    however many watch; a 9th stream beyond the cap (8) is refused with a 503; one that
    connects again with the id it has (after the tournament ended: the page is
    rendered anew) is not sent what it shows already, only the end."""
    import threading

    from arena.tournament.executor import LocalExecutor
    from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament

    db = tmp_path / "arena.db"
    store = Store(str(db))
    try:
        more = {"games_per_pairing": 1, "options": {"turn-limit": "150"}}
        spec = TournamentSpec(**{**RISK.__dict__, **more})
        tournament_id = create_tournament(store, spec).id
        with ExitStack() as stack:
            web = stack.enter_context(
                crowd.web_process(
                    db, "--tournament-streams", "8", "--no-prebuild", log=tmp_path / "web.log"
                )
            )
            path = f"/api/tournaments/{tournament_id}/events"
            readers = crowd.Readers(web.host, web.port)
            stack.callback(readers.close)
            streams = [readers.add(crowd.Reader(path)) for _ in range(8)]
            wait_until(
                lambda: all(b"event: tournament" in r.body for r in streams) or None, 60, "events"
            )
            status, headers, _ = ask(web, path)
            assert status == 503 and headers["retry-after"] == "30"
            # each match's end is seen by the page's poll (every 1 s) before the next
            # one's: a fast machine would otherwise finish between two polls
            player = threading.Thread(
                target=run_tournament,
                args=(store, tournament_id, LocalExecutor(workers=0)),
                kwargs={"progress": lambda _: time.sleep(2 * POLL_S)},
            )
            player.start()
            player.join(timeout=300)
            assert not player.is_alive()
            assert readers.wait(120), "the streams did not end with the tournament"
            # one that comes again with the last id it has: nothing to send but the end
            last = re.findall(rb"id: (\d+\.[0-9a-f]+)\n", bytes(streams[0].body))[-1].decode()
            again = readers.add(crowd.Reader(path), {"Last-Event-ID": last})
            assert readers.wait(30)
    finally:
        store.close()
    by_stream = [_tournament_events(r.body) for r in streams]
    ids = [[number for number, _ in events] for events in by_stream]
    # the same renders, in the same order, the same bytes, for every stream
    assert all(got == ids[0] for got in ids[1:]), ids
    assert all(got == by_stream[0] for got in by_stream[1:])
    assert ids[0] == sorted(ids[0]) and len(set(ids[0])) == len(ids[0]) >= 3
    # one render per change: consecutive renders (ids 1 apart) show a different status or
    # progress (the tournament's own status changes too: pending, then running)
    shown = [(d["status"], d["progress"]) for d in (json.loads(t) for _, t in by_stream[0])]
    assert all(a != b for a, b in itertools.pairwise(shown)), shown
    assert ids[0][-1] - ids[0][0] == len(ids[0]) - 1  # no render that no stream saw
    assert json.loads(by_stream[0][-1][1])["status"] == "finished"
    assert all(r.body.rstrip().endswith(b"event: end\ndata: {}") for r in streams)
    assert b"event: tournament" not in again.body and b"event: end" in again.body


def _tournament_events(body: bytearray) -> list[tuple[int, bytes]]:
    found = re.findall(rb"id: (\d+)\.[0-9a-f]+\nevent: tournament\ndata: (.*)\n\n", bytes(body))
    return [(int(number), data) for number, data in found]


# --- half-open connections ------------------------------------------------------------


def test_half_open_connections_do_not_stop_a_normal_client(
    web_store_small: Path, tmp_path: Path
) -> None:
    """`arena web` with a limit of 256 open files and 300 connections that each send a
    request's head a header at a time, never its end, opened again as soon as they are
    closed: a normal client is answered all along (a head timeout, and the oldest slow
    heads closed to make room), and the log stays a few lines (repeats rate-limited)."""
    crowd.more_open_files(4096)
    log = tmp_path / "web.log"
    with crowd.web_process(
        web_store_small, "--head-timeout", "3", "--no-prebuild", log=log, open_files=256
    ) as web:
        with crowd.Slowloris(web.host, web.port, 300, every_s=0.5) as attack:
            wait_until(lambda: attack.opened >= 300 or None, 60, "the half-open connections")
            with crowd.Timer(
                web.host, web.port, "/leaderboards", every_s=0.25, timeout_s=20
            ) as timer:
                time.sleep(12)
            closed = attack.closed
        summary = timer.summary()
        status, _, _ = ask(web, "/leaderboards")
    assert status == 200
    assert summary["answers"] >= 10 and summary["failed"] == 0, (summary, timer.failures[:5])
    assert closed > 300  # the slow ones were closed, again and again
    text = log.read_text()
    assert len(text.splitlines()) < 40, text[-3000:]


@pytest.fixture(scope="module")
def web_store_small(filled: Filled, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("small") / "arena.db"
    shutil.copyfile(filled.path, path)
    return path
