"""The live view in Debian's Chromium: a match played by real bot processes through a
real referee, watched on `arena web --referee`. The page changes while the match is
played; every frame the browser received (the server-sent events, as Chromium's
network layer got them) is the engine's spectator view at that step, and holds no
hidden fact; an app without a referee says why it cannot show the match live."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import grpc
import orjson
import pytest

from arena.engine.replay import from_json
from arena.plugins import load_registry
from arena.store import Store
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from arena.web import frames

from .conftest import web_app

REGISTRY = load_registry()
#: a bot that thinks a little before each move, so a match lasts long enough to watch,
#: and makes no move while the file $SLOW_BOT_GATE is missing (the test opens the gate
#: once the page watches: a match must not end before the page sees it)
SLOW_BOT = """
import os
import random
import time

from arena.sdk import Bot, main
from arena.bots.aggressive import AggressiveRiskBot

GATE = os.environ["SLOW_BOT_GATE"]


def wait_for_the_gate():
    deadline = time.monotonic() + 100
    while not os.path.exists(GATE) and time.monotonic() < deadline:
        time.sleep(0.05)


class Slow(Bot):
    def decide_stratego(self, observation, decision):
        wait_for_the_gate()
        time.sleep(0.02)
        if decision.kind == "setup":
            return self.default_setup(decision)
        if decision.kind == "move":
            src, dst = random.choice(decision.options["moves"])
            return {"type": "move", "from": src, "to": dst}
        return {"type": "no_rescue"}

    def decide_risk(self, observation, decision):
        wait_for_the_gate()
        time.sleep(0.01)
        seat = observation["seat"]
        if not hasattr(self, "bots"):
            self.bots = {}
        bot = self.bots.setdefault(seat, AggressiveRiskBot(seat, random.getrandbits(32)))
        return bot.decide(observation, decision)


if __name__ == "__main__":
    main(Slow)
"""
#: the matches watched: game, seats, options, variants
MATCHES = {
    "stratego": ("stratego", 2, {"turn-limit": "300"}, []),
    "risk-missions": ("risk", 3, {"turn-limit": "40"}, ["missions"]),
}


def wait_until(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
    return value


def process(
    stack: ExitStack, args: list[str], out: Path, env: dict[str, str] | None = None
) -> subprocess.Popen:
    """A child process for the test's length, its output in ``out`` (``env``: more
    environment)."""
    with open(out, "wb") as handle:  # the child keeps its own copy of the file
        child = subprocess.Popen(
            args, stdout=handle, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )

    def stop() -> None:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=10)

    stack.callback(stop)
    return child


def referee_process(stack: ExitStack, tmp_path: Path, *extra: str) -> tuple[str, Path, Any]:
    """An `arena referee` process on its own store (``extra``: more flags), stopped with
    ``stack``: its address, its store and a stub on it."""
    db = tmp_path / "arena.db"
    out = tmp_path / "referee.out"
    args = ["referee", "--host", "127.0.0.1", "--port", "0", "--db", str(db), *extra]
    child = process(stack, [sys.executable, "-m", "arena.cli", *args], out)

    def listening() -> str | None:
        assert child.poll() is None, out.read_text()
        found = re.search(r"referee listening on (\S+:\d+)", out.read_text())
        return found.group(1) if found else None

    address = wait_until(listening, 60, "the referee")
    channel = stack.enter_context(grpc.insecure_channel(address))
    return address, db, pb_grpc.ArenaServiceStub(channel)


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[tuple[str, Path, Any]]:
    """An `arena referee` process on its own store, and three slow bots connected, which
    move once the file ``gate`` beside the store exists."""
    bot = tmp_path / "slow.py"
    bot.write_text(SLOW_BOT)
    gate = {"SLOW_BOT_GATE": str(tmp_path / "gate")}
    with ExitStack() as stack:
        address, db, stub = referee_process(stack, tmp_path)
        arena = [sys.executable, "-m", "arena.cli"]
        names = ["slow-a", "slow-b", "slow-c"]
        for name in names:
            run = ["bot", "run", str(bot), "--referee", address, "--register-as", name]
            process(stack, arena + run, tmp_path / f"{name}.out", gate)

        def connected() -> bool:
            bots = stub.ListBots(pb.ListBotsRequest(), timeout=10).bots
            return {b.name for b in bots if b.connected} >= set(names)

        wait_until(connected, 60, "the bots to connect")
        yield address, db, stub


def received_frames(
    messages: list[tuple[str, str]],
) -> tuple[int, list[tuple[int, dict[str, Any]]], list[list[Any]], str]:
    """What the browser got, from its server-sent events: (the step of the first frame,
    every frame's step and view in order, the log's entry of every step from the first
    frame's on, how it ended)."""
    start = json.loads(next(data for name, data in messages if name == "start"))
    doc = {key: start[key] for key in ("keyframe_every", "keyframes", "deltas", "steps", "log")}
    ending = ""
    for name, data in messages:
        if name == "frames":
            part = json.loads(data)
            for key in ("keyframes", "deltas", "steps", "log"):
                doc[key] += part[key]
        elif name in ("end", "problem"):
            ending = name
    views, view = [], None
    for index, change in enumerate(doc["deltas"]):
        if index % doc["keyframe_every"] == 0:
            view = doc["keyframes"][index // doc["keyframe_every"]]
        else:
            view = frames.apply_delta(view, change)
        views.append((doc["steps"][index], view))
    # a frame's log: its steps since the frame before (the first frame: its own)
    entries = []
    for index, (step, log) in enumerate(zip(doc["steps"], doc["log"], strict=True)):
        assert log and len(log) == (1 if index == 0 else step - doc["steps"][index - 1]), index
        entries += log
    return start["base"], views, entries, ending


@pytest.mark.parametrize("kind", sorted(MATCHES))
def test_a_live_match_changes_on_the_page_and_its_bytes_hold_only_public_facts(
    referee: tuple[str, Path, Any], chromium: Any, screenshots: Path, kind: str
):
    address, db, stub = referee
    game, seats, options, variants = MATCHES[kind]
    players = ["slow-a", "slow-b", "slow-c"][:seats]
    said: list[str] = []  # what `arena web --referee` printed: its own lines only
    with web_app(db, "--referee", address, said=said) as base, web_app(db) as without:
        # the bots hold their moves until the page watches (a long deadline meanwhile)
        request = pb.RunMatchRequest(
            game=game,
            players=players,
            options=options,
            variants=variants,
            wait=False,
            decision_ms=120_000,
        )
        match_id = stub.RunMatch(request, timeout=30).match_id
        page = chromium.new_page(viewport={"width": 1280, "height": 1000})
        messages: list[tuple[str, str]] = []
        cdp = page.context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.on(
            "Network.eventSourceMessageReceived",
            lambda event: messages.append((event["eventName"], event["data"])),
        )
        codings: list[str] = []  # the live stream's content-encoding, as Chromium got it
        cdp.on(
            "Network.responseReceived",
            lambda event: (
                event["response"]["url"].endswith("/live")
                and codings.append(
                    {k.lower(): v for k, v in event["response"]["headers"].items()}.get(
                        "content-encoding", ""
                    )
                )
            ),
        )
        try:
            page.goto(f"{base}/matches/{match_id}")
            # waits, not speeds: on a busy machine pages and timers run late
            page.wait_for_selector("#viewer[data-ready=true]", timeout=90_000)
            first = int(page.locator("#viewer").get_attribute("data-step"))
            (db.parent / "gate").touch()  # the page watches: the bots may move
            with urllib.request.urlopen(f"{without}/matches/{match_id}") as answer:
                plain = answer.read().decode()
            # the page moves on as the match is played (a missions game may end soon
            # after a late page is ready: more than one step on is all it may see)
            page.wait_for_function(
                f"() => Number(document.querySelector('#viewer').dataset.step) > {first}",
                timeout=120_000,
            )
            page.locator("#viewer").screenshot(path=str(screenshots / f"live-{kind}.png"))
            page.wait_for_selector("#viewer[data-ended=true]", timeout=180_000)
            page.wait_for_function(
                "() => document.querySelector('[data-status]').textContent"
                ".includes('See its replay')",
                timeout=90_000,
            )
            last = int(page.locator("#viewer").get_attribute("data-step"))
        except Exception as exc:  # a wait ran out: say where the page and its stream were
            raise AssertionError(
                f"{exc}\nthe page: {page.locator('#viewer').evaluate('v => ({...v.dataset})')}, "
                f"{page.locator('[data-status]').text_content()!r}\n"
                f"its server-sent events: {[name for name, _ in messages][-8:]} "
                f"(last: {messages[-1][1][:300] if messages else None})"
            ) from exc
        finally:
            page.close()
    assert len(said) == 1 and said[0].startswith("arena web: http"), said  # nothing else
    assert "started without a referee" in " ".join(plain.split())
    assert 'data-mode="no_referee"' in plain

    store = Store(str(db), create=False)
    try:
        record = from_json(orjson.loads(store.replay(match_id)))
    finally:
        store.close()
    assert last == len(record.steps)  # the page followed the match to its end
    step0, views, entries, ending = received_frames(messages)
    assert ending == "end"
    assert codings == ["deflate"]  # Chromium asked for it, and read the events through it
    assert [name for name, _ in messages].count("frames") > 0  # pushed while it played
    assert views[0][0] == step0 and views[-1][0] == len(record.steps)  # to the end
    assert step0 + len(entries) - 1 == len(record.steps)  # every step's log from there on
    # whose step each was, as the replay has it
    assert [seat for seat, _ in entries[1:]] == [seat for seat, *_ in record.steps[step0:]]
    shown = dict(views)
    assert len(shown) == len(views)  # each frame a later step

    # every frame received is the engine's spectator view at that step: public facts only
    game_ = REGISTRY.game(record.game)
    state = game_.new_state(
        record.num_players,
        record.seed,
        record.options,
        REGISTRY.resolve_variants(record.game, record.variants),
    )
    for index, (seat, action, _events) in enumerate(record.steps, start=1):
        state.apply(seat, action)
        if index not in shown:
            continue
        view = shown[index]
        assert view == json.loads(json.dumps(state.spectator_view())), index
        if game == "stratego":  # a rank is shown only once both players have seen it
            for square, cell in enumerate(view["board"]):
                assert cell is None or cell[1] is None or state.revealed[square], (index, square)
        elif not state.terminal:
            assert "missions" not in view  # the missions wait for the end
    text = "".join(data for _name, data in messages)
    assert str(record.seed) not in text
    assert '"hands"' not in text and '"mission_changed"' not in text
    for _name, data in messages:
        log = json.loads(data).get("log", [])
        for event in (e for frame in log for _seat, events in frame for e in events):
            assert not (event["e"] == "draw" and "card" in event)  # the card drawn: secret
            assert event["e"] != "setup"  # a Stratego setup reaches its own seat only
