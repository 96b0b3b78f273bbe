"""A tournament's page as it is played: /api/tournaments/ID/events (server-sent events)
and the page in Chromium, which moves with it without a reload; nothing of a running
tournament's secrets in the events."""

from __future__ import annotations

import threading
import urllib.request
from pathlib import Path

import orjson
from fastapi.testclient import TestClient
from playwright.sync_api import expect
from sqlalchemy import select

from arena.store import BotRow, MatchRow, Store
from arena.tournament.executor import LocalExecutor
from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament
from arena.web import create_app
from arena.web.browser import chromium, new_page, serve

from .conftest import Filled

SPEC = TournamentSpec(game="stratego", bots=["random", "heuristic"], seats=2, games_per_pairing=3)


def events(text: str) -> list[tuple[str, dict]]:
    """The (event, data) pairs of an event stream's text."""
    out = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            out.append((lines["event"], orjson.loads(lines["data"])))
    return out


def test_a_finished_tournament_streams_its_page_once_and_ends(filled: Filled):
    with TestClient(create_app(filled.url)) as web:
        answer = web.get(f"/api/tournaments/{filled.risk_id[:6]}/events")  # a prefix will do
        assert answer.headers["content-type"].startswith("text/event-stream")
        t = web.get(f"/api/tournaments/{filled.risk_id}").json()
        page = web.get(f"/tournaments/{filled.risk_id}").text
    [(kind, data), (last, _)] = events(answer.text)
    assert (kind, last) == ("tournament", "end")
    assert data["status"] == "finished" and data["progress"] == {"finished": 12}
    assert data["finished_matches"] == data["matches"] == 12
    assert data["html"].strip() in page  # the live part of the page, as the page has it
    assert t["live"] is False and "data-events" not in page  # nothing left to follow


def test_the_events_escape_stored_text_as_the_page_does(tmp_path: Path):
    markup = "<img src=x onerror=alert(1)>"  # no slash: a tournament takes it as a name
    db = tmp_path / "arena.db"
    store = Store(str(db))
    try:
        with store.session() as s, s.begin():  # registration refuses such names: directly
            s.add(BotRow(id="markup", name=markup, version=1, kind="remote", games=[]))
        spec = TournamentSpec(game="stratego", bots=[markup, "house:random"], seats=2)
        tournament = create_tournament(store, spec)
        store.set_tournament_status(tournament.id, "stopped")  # its stream: one event
    finally:
        store.close()
    with TestClient(create_app(str(db))) as web:
        text = web.get(f"/api/tournaments/{tournament.id}/events").text
    [(_, data), _] = events(text)
    assert markup not in data["html"]  # in the standings' bots, crosstable, matches...
    assert "&lt;img src=x onerror=alert(1)&gt;@1" in data["html"]  # ...as text


def test_an_unknown_tournament_has_no_events(filled: Filled):
    with TestClient(create_app(filled.url)) as web:
        answer = web.get("/api/tournaments/nope/events")
    assert answer.status_code == 404 and answer.json() == {"detail": "no tournament 'nope'"}


def test_a_running_tournament_s_page_moves_as_it_is_played(tmp_path: Path):
    db = tmp_path / "arena.db"
    store = Store(str(db))
    tournament = create_tournament(store, SPEC)
    with store.session() as s:
        seeds = s.scalars(select(MatchRow.seed).where(MatchRow.tournament_id == tournament.id))
        secrets = [str(tournament.seed), *(str(seed) for seed in seeds)]
    try:
        with serve(db) as base, chromium() as browser:
            page = new_page(browser)
            page.goto(f"{base}/tournaments/{tournament.id}")
            bar = page.get_by_role("img", name="matches finished")
            expect(bar).to_have_attribute("aria-label", "0 of 3 matches finished")
            page.evaluate("window.stayed = true")  # gone if the page were loaded again

            stream: list[bytes] = []  # what a browser's EventSource is sent, as bytes
            url = f"{base}/api/tournaments/{tournament.id}/events"
            reader = threading.Thread(
                target=lambda: stream.append(urllib.request.urlopen(url).read())
            )
            reader.start()
            shown: list[str] = []

            def after_each(progress) -> None:
                # the page, pushed by the server, shows this match finished
                label = f"{progress.finished} of 3 matches finished"
                expect(bar).to_have_attribute("aria-label", label, timeout=15_000)
                shown.append(page.content())

            run_tournament(store, tournament.id, LocalExecutor(workers=0), progress=after_each)
            expect(page.locator(".status").first).to_have_text("finished", timeout=15_000)
            assert page.evaluate("window.stayed") is True  # moved without a reload
            reader.join(timeout=30)
    finally:
        store.close()
    assert len(shown) == 3
    for html in shown[:-1]:  # while it ran: neither the tournament's seed nor a match's
        assert not any(secret in html for secret in secrets)
    pushed = events(stream[0].decode())
    assert [kind for kind, _ in pushed][-1] == "end"
    statuses = [data["status"] for kind, data in pushed if kind == "tournament"]
    assert statuses[0] in ("created", "running") and statuses[-1] == "finished"
    for kind, data in pushed:
        if kind == "tournament" and data["status"] != "finished":
            raw = orjson.dumps(data).decode()
            assert not any(secret in raw for secret in secrets), data["progress"]
    assert str(tournament.seed) in pushed[-2][1]["html"]  # shown once it has finished
