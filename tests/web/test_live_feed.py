"""The web's live feed (arena.web.live.Feed) on a real referee's WatchMatch stream of a
fast match (house bots: many steps a batch): a frame per position the referee gave,
each the engine's spectator view at its step; every step in the log, with whose step it
was; a Risk battle's odds only where the web knew the armies it began with, and then
right. And one Ctrl-C stops `arena web` while a live stream is open."""

from __future__ import annotations

import asyncio
import http.client
import re
import signal
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
import pytest
from starlette.exceptions import HTTPException as StarletteHTTPException

from arena.engine.replay import from_json
from arena.games.risk.odds import attack_odds
from arena.store import Store
from arena.v1 import arena_pb2 as pb
from arena.web import frames
from arena.web.live import (
    DEFLATE_END,
    ZLIB_HEADER,
    Feed,
    LiveHub,
    accepts_deflate,
    deflate,
)

from .conftest import web_app
from .test_live_browser import REGISTRY, referee_process, wait_until


def merged(events: list[bytes]) -> dict[str, Any]:
    """A browser's start and frames events, as one frames document."""
    doc: dict[str, Any] = {}
    for event in events:
        kind, data = event.split(b"\n", 1)
        if kind not in (b"event: start", b"event: frames"):
            continue
        part = orjson.loads(data.removeprefix(b"data: "))
        if not doc:
            doc = part
        else:
            for key in ("keyframes", "deltas", "steps", "log"):
                doc[key] += part[key]
    return doc


def start_doc(feed: Feed) -> dict[str, Any]:
    """What a browser coming now gets first (the prepared start), as one document."""
    pieces = feed.start_pieces()
    assert pieces and pieces[0].plain.startswith(b"event: start\n")
    assert all(p.plain.startswith(b"event: frames\n") for p in pieces[1:])
    return merged([p.plain for p in pieces])


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[tuple[str, Path, Any]]:
    """An `arena referee` process on its own store (its matches: house bots)."""
    with ExitStack() as stack:
        yield referee_process(stack, tmp_path)


def test_a_fast_match_makes_a_frame_a_batch_and_logs_every_step(
    referee: tuple[str, Path, Any],
) -> None:
    address, db, stub = referee
    request = pb.RunMatchRequest(
        game="risk", players=["house:random"] * 3, options={"turn-limit": "150"}, wait=False
    )
    match_id = stub.RunMatch(request, timeout=30).match_id
    feed = Feed(match_id, address, {"game": "risk", "players": [], "board": {}})
    asyncio.run(feed.run())
    assert feed.ended is not None and feed.problem is None, feed.problem
    store = Store(str(db), create=False)
    try:
        # the stream's end comes as the match ends; the referee stores it just after
        text = wait_until(lambda: store.replay(match_id), 30, "the referee to store the match")
        record = from_json(orjson.loads(text))
    finally:
        store.close()

    doc = start_doc(feed)
    steps, deltas, log = doc["steps"], doc["deltas"], doc["log"]
    assert steps[0] == doc["base"] and steps[-1] == len(record.steps)
    assert all(a < b for a, b in pairwise(steps))
    assert len(steps) < len(record.steps) / 5  # a fast match: many steps a frame
    # every step's log entry from where watching began, whose step it was
    entries = [entry for frame in log for entry in frame]
    assert len(log[0]) == 1 and len(entries) == len(record.steps) - steps[0] + 1
    assert [seat for seat, _ in entries[1:]] == [s for s, *_ in record.steps[steps[0] :]]
    game = REGISTRY.game("risk")
    public = [frames.public_events(game, events) for *_, events in record.steps]
    assert [
        [{k: v for k, v in e.items() if k != "odds"} for e in events] for _, events in entries[1:]
    ] == orjson.loads(orjson.dumps(public[steps[0] :]))

    # each frame is the engine's spectator view at its step; the views before each step
    state = game.new_state(record.num_players, record.seed, record.options, [])
    before: list[dict[str, Any]] = []
    for seat, action, _events in record.steps:
        before.append(orjson.loads(orjson.dumps(state.spectator_view())))
        state.apply(seat, action)
    before.append(orjson.loads(orjson.dumps(state.spectator_view())))
    view: dict[str, Any] = {}
    for index, change in enumerate(deltas):
        if index % doc["keyframe_every"] == 0:
            view = doc["keyframes"][index // doc["keyframe_every"]]
        else:
            view = frames.apply_delta(view, change)
        assert view == before[steps[index]], index

    # odds: for a battle in the first step after a frame, from that frame's armies
    with_odds = without = 0
    for index, frame in enumerate(log[1:], start=1):
        for offset, (_seat, events) in enumerate(frame):
            step = steps[index - 1] + offset + 1
            for event in (e for e in events if e["e"] == "battle"):
                if "odds" not in event:
                    without += 1
                    continue
                assert offset == 0, step  # the armies are known only after a frame
                armies = before[step - 1]["armies"]
                odds = event["odds"]
                assert (odds["armies"], odds["defenders"], odds["stop"]) == (
                    armies[event["from"]],
                    armies[event["to"]],
                    None,
                )
                chance = attack_odds(odds["armies"], odds["defenders"], event["dice"], 1)
                assert odds["capture"] == chance
                with_odds += 1
    assert with_odds > 0 and without > 0


def test_one_ctrl_c_stops_the_web_while_a_live_stream_is_open(tmp_path: Path) -> None:
    """`arena web --referee` with a browser's live stream of a match that goes on (a seat
    whose bot never connects: the referee waits for it): one SIGINT ends the stream and
    the process, quietly, with the status of an interrupted command."""
    with ExitStack() as stack:
        address, db, stub = referee_process(stack, tmp_path, "--grace", "300")
        stub.RegisterBot(pb.RegisterBotRequest(name="absent"), timeout=30)
        request = pb.RunMatchRequest(
            game="risk", players=["house:random", "house:random", "absent"], wait=False
        )
        match_id = stub.RunMatch(request, timeout=30).match_id
        more = ["--referee", address]
        web = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "web", "--db", str(db), "--port", "0", *more],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        stack.callback(web.kill)
        assert web.stdout is not None
        found = re.search(r"http://([\d.]+):(\d+)/", web.stdout.readline())
        assert found, "arena web did not say where it serves"
        connection = http.client.HTTPConnection(found.group(1), int(found.group(2)), timeout=60)
        stack.callback(connection.close)
        connection.request("GET", f"/api/matches/{match_id}/live")
        answer = connection.getresponse()
        assert answer.status == 200
        received = b""
        while b"event: start" not in received:  # the match is being watched
            received += answer.read1(65536)
        web.send_signal(signal.SIGINT)
        out, err = web.communicate(timeout=15)  # a bound, not a speed: it hung before
        while chunk := answer.read1(65536):
            received += chunk
    assert web.returncode == 130, err  # interrupted, as every arena command
    assert "Traceback" not in err and out == "", err
    assert b"event: problem" in received and b"the web app is stopping" in received


def test_json_spaced_over_lines_still_makes_one_line_an_event() -> None:
    """The web passes the referee's event JSON on as it came, but an event's data is one
    line: JSON spaced over lines (valid, from some other referee) is made compact."""
    feed = Feed("m", "r", {"game": "stratego", "players": [], "board": {}})
    feed._add(pb.MatchEvents(view_json='{\n"a": 1}', steps=3))
    feed._add(pb.MatchEvents(events_json=['{"e":\n"x"}'], steps=4, seat=1))
    feed._add(pb.MatchEvents(events_json=['{"e": "y"}'], view_json='{"a":\r\n2}', steps=5, seat=0))
    (piece,) = feed.start_pieces()
    kind, data, end = piece.plain.decode().split("\n", 2)
    assert kind == "event: start" and end == "\n"  # one line of data
    doc = orjson.loads(data.removeprefix("data: "))
    assert (doc["steps"], doc["keyframes"], doc["deltas"]) == ([3, 5], [{"a": 1}], [{}, {"a": 2}])
    assert doc["log"] == [[[None, []]], [[1, [{"e": "x"}]], [0, [{"e": "y"}]]]]


def test_browsers_asking_at_once_look_the_match_up_once() -> None:
    """A crowd opening a live match at once (before its feed has a head) waits on one
    look-up in the store; its answer, or its error (a match that is not running), goes
    to each of them; one that leaves does not cancel the others' look-up."""
    hub = LiveHub("127.0.0.1:1")
    asked: list[str] = []

    async def look_up(answer: Any) -> dict[str, Any]:
        asked.append("asked")
        await asyncio.sleep(0.05)
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def crowd() -> None:
        head = {"game": "risk", "players": ["a", "b"], "board": {}}
        many = [hub.head("m1", lambda: look_up(head)) for _ in range(10)]
        leaving = asyncio.ensure_future(hub.head("m1", lambda: look_up(head)))
        await asyncio.sleep(0.01)
        leaving.cancel()
        assert all(got is head for got in await asyncio.gather(*many))
        assert asked == ["asked"] and leaving.cancelled()
        # done: the next browser asks again (no feed was made: nobody watches it)
        assert await hub.head("m1", lambda: look_up(head)) is head and len(asked) == 2
        refused = StarletteHTTPException(409, "match m2 is finished, not running")
        answers = await asyncio.gather(
            *(hub.head("m2", lambda: look_up(refused)) for _ in range(5)), return_exceptions=True
        )
        assert answers == [refused] * 5 and len(asked) == 3

    asyncio.run(crowd())


def sse_events(raw: bytes) -> list[bytes]:
    """A server-sent-event stream's events (comments dropped), as sent."""
    return [e + b"\n\n" for e in raw.split(b"\n\n") if e and not e.startswith(b":")]


def test_a_crowd_of_browsers_gets_the_same_frames_from_one_look_up(
    referee: tuple[str, Path, Any],
) -> None:
    """Eight browsers open a fast match's live stream at once on `arena web --referee`,
    half of them accepting deflate (as browsers do): each gets a start, frames and the
    end, and from where each started the same events as the others; a deflated stream
    is a whole zlib stream (its checksum checked) that inflates to just what a plain one
    gets, and holds each frames event as the very bytes of the other deflated streams
    (deflated once for all). A ninth, coming once the match is being played, gets every
    frame so far as the prepared start (made once, shared) and then follows in step."""
    address, db, stub = referee
    with web_app(db, "--referee", address) as base:
        host, port = base.removeprefix("http://").split(":")
        request = pb.RunMatchRequest(
            game="risk", players=["house:random"] * 3, options={"turn-limit": "1000"}
        )
        match_id = stub.RunMatch(request, timeout=30).match_id
        framed = threading.Event()  # a browser of the crowd has had frames

        def watch(packed: bool) -> tuple[bytes, list[bytes]]:
            """(the body as sent, its events)"""
            connection = http.client.HTTPConnection(host, int(port), timeout=120)
            try:
                accept = "gzip, deflate, br" if packed else "identity"
                path = f"/api/matches/{match_id}/live"
                connection.request("GET", path, headers={"accept-encoding": accept})
                answer = connection.getresponse()
                assert answer.status == 200, answer.read()
                assert answer.getheader("content-encoding") == ("deflate" if packed else None)
                raw = body = b""
                inflater = zlib.decompressobj()  # HTTP's deflate: zlib (RFC 1950)
                while chunk := answer.read1(65536):
                    raw += chunk
                    body += inflater.decompress(chunk) if packed else chunk
                    if b"event: frames" in body:
                        framed.set()
                assert inflater.eof == packed and not inflater.unused_data
                return raw, sse_events(body)
            finally:
                connection.close()

        with ThreadPoolExecutor(9) as pool:
            crowd = [pool.submit(watch, number % 2 == 0) for number in range(8)]
            framed.wait(60)
            late = pool.submit(watch, True)
            raws, streams = zip(*(f.result(timeout=300) for f in [*crowd, late]), strict=True)
    for events in streams:
        assert events[0].startswith(b"event: start\n") and events[-1].startswith(b"event: end\n")
        assert all(e.startswith(b"event: frames\n") for e in events[1:-1])
    # every browser has every frame from where the web began watching: the late one's
    # start (sealed segments and the frames since, made once) is what the others got
    docs = [merged(events) for events in streams]
    assert all(doc == docs[0] for doc in docs) and len(docs[0]["steps"]) > 3
    # the events every browser got alike at the end (after the late one joined) ...
    common = 0
    while all(
        len(events) > common and events[-1 - common] == streams[0][-1 - common]
        for events in streams
    ):
        common += 1
    assert 3 < common < len(streams[0])  # the late one missed the crowd's first events
    tail = streams[0][-common:]
    # ... are, for each deflated browser, the very same deflated bytes
    shared = b"".join(deflate(event) for event in tail) + DEFLATE_END
    assert len(shared) < len(b"".join(tail)) / 3
    assert all(raws[number][:-4].endswith(shared) for number in (0, 2, 4, 6, 8))
    assert all(raws[number].startswith(ZLIB_HEADER) for number in (0, 2, 4, 6, 8))


def test_which_clients_get_deflate() -> None:
    """Deflate for an Accept-Encoding that takes it (or any coding), not for one that
    refuses it with q=0 or does not name it."""
    takes = ["gzip, deflate, br, zstd", "deflate", "DEFLATE;q=0.5", "*", "gzip, *;q=0.1"]
    refuses = ["", "identity", "gzip, br", "deflate;q=0", "deflate;q=0.0, gzip", "*;q=0"]
    assert all(accepts_deflate(header) for header in takes)
    assert not any(accepts_deflate(header) for header in refuses)


def test_a_long_match_s_start_keeps_its_latest_frames_from_a_keyframe(monkeypatch) -> None:
    """The prepared start of a long match holds its latest frames (live.START_BYTES),
    from a segment that begins with a keyframe; `base` says the step it begins at, and
    its frames are exactly the feed's from there (the rest was let go)."""
    from arena.web import live

    monkeypatch.setattr(live, "SEGMENT_BYTES", 2_000)
    monkeypatch.setattr(live, "START_BYTES", 20_000)
    feed = Feed("m", "r", {"game": "stratego", "players": [], "board": {}})
    views = []
    for step in range(3_000):
        view = {"ply": step, "board": [step % 7] * 20}
        views.append(view)
        feed._add(pb.MatchEvents(view_json=orjson.dumps(view).decode(), steps=step, seat=0))
        if step % 40 == 0:
            feed.flush()
    feed.flush()
    doc = start_doc(feed)
    first = doc["base"]
    assert first > 0 and first % frames.KEYFRAME_EVERY == 0  # a keyframe, not step 0
    assert doc["steps"] == list(range(first, 3_000))
    assert doc["keyframes"][0] == views[first]
    view = {}
    for index, change in enumerate(doc["deltas"]):
        if index % doc["keyframe_every"] == 0:
            view = doc["keyframes"][index // doc["keyframe_every"]]
        else:
            view = frames.apply_delta(view, change)
        assert view == views[first + index]
    assert len(feed.parts) < 3_000 / 2  # the frames before the start were let go
