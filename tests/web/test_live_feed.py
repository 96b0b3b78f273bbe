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
from collections.abc import Iterator
from contextlib import ExitStack
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
import pytest

from arena.engine.replay import from_json
from arena.games.risk.odds import attack_odds
from arena.store import Store
from arena.v1 import arena_pb2 as pb
from arena.web import frames
from arena.web.live import Feed

from .test_live_browser import REGISTRY, referee_process, wait_until


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

    doc = orjson.loads(feed.start_event().split(b"data: ", 1)[1])
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
    kind, data, end = feed.start_event().decode().split("\n", 2)
    assert kind == "event: start" and end == "\n"  # one line of data
    doc = orjson.loads(data.removeprefix("data: "))
    assert (doc["steps"], doc["keyframes"], doc["deltas"]) == ([3, 5], [{"a": 1}], [{}, {"a": 2}])
    assert doc["log"] == [[[None, []]], [[1, [{"e": "x"}]], [0, [{"e": "y"}]]]]
