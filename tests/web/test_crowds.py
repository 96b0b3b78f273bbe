"""The web under attackers (issue 27), each finding against a real `arena web` process
over real sockets: headers, hostile ids, HEAD and redirects; made-up URLs that must
cache nothing; local paths and confusable names never shown; the pages under their
CSP in Chromium. The crowds (a live match's, a tournament's, half-open connections):
test_crowd_streams.py."""

from __future__ import annotations

import http.client
import re
import shutil
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from arena.store import Store
from arena.web import browser, crowd, safety, viewers
from arena.web.data import OLD_NAME

from .conftest import Filled, long_replay

#: ids a match may have in a store written by another tool
HOSTILE_ID = 'q"; filename=evil.html; x="'
CRLF_ID = "crlf\r\nSet-Cookie: evil=1"
#: a map option an older Arena stored: a path of the machine that played
LEGACY_MAP = "/home/alice/secret-maps/world.json"
CONFUSABLE = "spy\u0410"  # a Cyrillic capital A


@dataclass(frozen=True)
class Hostile:
    path: Path
    long_id: str
    legacy_id: str
    risk_match: str


@pytest.fixture(scope="module")
def hostile(filled: Filled, tmp_path_factory: pytest.TempPathFactory) -> Hostile:
    """The filled store, and: a match by each hostile id (a Stratego replay), a Risk
    match whose map option is a local path (an older Arena's), a long Risk replay, a
    bot with a confusable name from before the rule (written directly, as an older
    Arena did)."""
    path = tmp_path_factory.mktemp("hostile") / "arena.db"
    shutil.copyfile(filled.path, path)
    store = Store(str(path))
    try:
        stratego = store.tournament_matches(filled.stratego_ids[0], ["finished"])[0].id
        risk = store.tournament_matches(filled.risk_id, ["finished"])[0].id
        stratego_text, risk_text = store.replay(stratego), store.replay(risk)
        from arena.store import BotRow

        with store.session() as s, s.begin():
            s.add(BotRow(id="old-name", name=CONFUSABLE, version=1, kind="remote", games=[]))
    finally:
        store.close()
    assert stratego_text and risk_text
    for match_id in (HOSTILE_ID, CRLF_ID):
        browser.store_replay(path, stratego_text, match_id)
    legacy = orjson.loads(risk_text)
    legacy["options"] = {**legacy["options"], "map": LEGACY_MAP}
    legacy_id = browser.store_replay(path, orjson.dumps(legacy).decode(), "legacy-map")
    long_id = browser.store_replay(path, long_replay())
    return Hostile(path, long_id, legacy_id, risk)


@pytest.fixture(scope="module")
def web(hostile: Hostile, tmp_path_factory: pytest.TempPathFactory) -> Iterator[crowd.Web]:
    log = tmp_path_factory.mktemp("web-log") / "web.log"
    with crowd.web_process(hostile.path, "--no-prebuild", log=log) as running:
        yield running


def ask(
    web: crowd.Web, path: str, method: str = "GET", headers: dict[str, str] | None = None
) -> tuple[int, http.client.HTTPMessage, bytes]:
    """One request on a connection of its own: (status, headers, body)."""
    connection = http.client.HTTPConnection(web.host, web.port, timeout=60)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in {"Host": f"{web.host}:{web.port}", **(headers or {})}.items():
            connection.putheader(name, value)
        connection.endheaders()
        answer = connection.getresponse()
        return answer.status, answer.headers, answer.read()
    finally:
        connection.close()


def quoted(match_id: str) -> str:
    return urllib.parse.quote(match_id, safe="")


class Markup:
    """What CSP would block in a page: inline scripts, style attributes, handlers."""

    INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
    STYLE = re.compile(r"<[a-z][^>]*\sstyle\s*=", re.I)
    HANDLER = re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.I)

    @classmethod
    def blocked(cls, html: str) -> list[str]:
        return [
            m.group(0)
            for p in (cls.INLINE_SCRIPT, cls.STYLE, cls.HANDLER)
            for m in p.finditer(html)
        ]


def test_every_answer_carries_safe_headers_and_hostile_ids_break_nothing(
    web: crowd.Web, hostile: Hostile, filled: Filled
) -> None:
    """Every page and API answer: a strict CSP, nosniff, no framing, no referrer; a
    Cache-Control by its secrecy (public pages asked again, secrets and live streams
    never kept); no markup CSP would block. HEAD answers where GET does, with the same
    head and no body. Hostile ids: a replay's download name cannot be set by its id, a
    CR/LF in an id is a safe answer (not an empty reply and a traceback), the Host
    header is never reflected in a redirect, and none of it leaves a traceback in the
    log."""
    paths = ["/", "/leaderboards", "/bots", "/tournaments", "/docs", "/openapi.json"]
    paths += ["/api/home", "/api/leaderboards", "/api/bots", "/api/tournaments"]
    paths += ["/leaderboards/risk/classic", "/api/leaderboards/risk/classic.csv"]
    paths += [f"/bots/{quoted(CONFUSABLE)}", "/bots/house:random", "/static/viewer.js"]
    paths += [f"/tournaments/{filled.risk_id}", f"/api/tournaments/{filled.risk_id}"]
    paths += [f"/matches/{hostile.risk_match}", f"/api/matches/{hostile.risk_match}/frames"]
    paths += [f"/matches/{hostile.long_id}", f"/matches/{quoted(HOSTILE_ID)}"]
    for path in paths:
        status, headers, body = ask(web, path)
        assert status == 200, (path, body[:200])
        assert headers["content-security-policy"] == safety.CSP, path
        assert "frame-ancestors 'none'" in safety.CSP and "script-src 'self'" in safety.CSP
        assert headers["x-content-type-options"] == "nosniff", path
        assert headers["referrer-policy"] == "no-referrer", path
        assert headers["x-frame-options"] == "DENY", path
        expected = safety.STATIC if path.startswith("/static/") else safety.PUBLIC
        if path == "/openapi.json":
            expected = safety.SECRET  # FastAPI's own route: the default
        assert headers["cache-control"] == expected, path
        if headers["content-type"].startswith("text/html"):
            assert Markup.blocked(body.decode()) == [], path
        # HEAD: the same head, no body
        head_status, head_headers, head_body = ask(web, path, "HEAD")
        assert (head_status, head_body) == (200, b""), path
        assert head_headers["content-type"] == headers["content-type"], path
        assert head_headers.get("content-length") == headers.get("content-length"), path

    # a running tournament's events, a secret's 403, a 404: never kept; a stream's HEAD
    # is its head and ends
    status, headers, _ = ask(web, f"/api/tournaments/{filled.risk_id}/events", "HEAD")
    assert status == 200 and headers["cache-control"] == safety.SECRET
    assert headers["content-type"].startswith("text/event-stream")
    for path, code in [("/api/matches/nope", 404), ("/matches/nope", 404)]:
        status, headers, _ = ask(web, path)
        assert status == code and headers["cache-control"] == safety.SECRET, path
        assert headers["content-security-policy"] == safety.CSP, path

    # the download's name: RFC 6266, whatever the id holds
    for match_id in (HOSTILE_ID, CRLF_ID):
        status, headers, body = ask(web, f"/api/matches/{quoted(match_id)}/replay")
        assert status == 200 and orjson.loads(body)["game"] == "stratego"
        disposition = headers["content-disposition"]
        assert "\r" not in disposition and "\n" not in disposition
        found = re.fullmatch(
            r'attachment; filename="([^"]*)"; filename\*=UTF-8\'\'(\S+)', disposition
        )
        assert found, disposition
        assert re.fullmatch(r"[A-Za-z0-9._-]+\.json", found.group(1)), disposition
        assert urllib.parse.unquote(found.group(2)) == f"{match_id}.json"
        status, headers, _ = ask(web, f"/matches/{quoted(match_id)}")
        assert status == 200 and "set-cookie" not in headers

    # redirects are relative: the Host header is not reflected, nor a //host path
    for path in ("/static", "/tournaments/x%0D%0Ay/", "//evil.example/leaderboards/"):
        status, headers, _ = ask(web, path, headers={"Host": "evil.example"})
        location = headers.get("location")
        if status in (301, 302, 307, 308):
            assert location.startswith("/") and not location.startswith("//"), location
            assert "evil.example" not in location.split("?")[0].split("/")[1], location
            assert "\r" not in location and "\n" not in location
        else:
            assert status == 404 and location is None, (path, status)
    status, headers, _ = ask(web, "/static", headers={"Host": "evil.example"})
    assert status == 307 and headers["location"] == "/static/"

    # internal failures say a fixed line; the log has the details, and no traceback
    # came from any of the above
    assert "Traceback" not in web.log_text(), web.log_text()[-3000:]


def test_local_paths_and_confusable_names_are_never_shown(web: crowd.Web, hostile: Hostile) -> None:
    """A Risk match whose map option is a path (an older Arena stored it): the web never
    opens it and never shows it, on the page, in the API, in the replay download, in the
    viewer's answer; the viewer says it cannot draw the board, in a fixed line. A bot
    name from before the rule shows its confusable letter as a code point, marked."""
    match_id = hostile.legacy_id
    for path in (
        f"/matches/{match_id}",
        f"/api/matches/{match_id}",
        f"/api/matches/{match_id}/replay",
    ):
        status, _, body = ask(web, path)
        assert status == 200, path
        assert b"alice" not in body and b"secret-maps" not in body, path
    options = orjson.loads(ask(web, f"/api/matches/{match_id}")[2])["options"]
    assert options["map"] == "a map file (its path is not shown)"
    page = ask(web, f"/matches/{match_id}")[2].decode()
    assert "The viewer cannot show this match: this replay does not re-simulate" in page
    status, _, body = ask(web, f"/api/matches/{match_id}/frames")
    assert status == 400 and orjson.loads(body)["detail"].startswith("this replay does not")
    assert b"alice" not in body
    assert "secret-maps" in web.log_text()  # the details are in the log, for its owner
    # an old confusable name: a code point, marked, on every page; as it is in the API
    page = ask(web, "/bots")[2].decode()
    assert f"spy[U+0410]{OLD_NAME}" in page and CONFUSABLE not in page
    bots = orjson.loads(ask(web, "/api/bots")[2])
    assert CONFUSABLE in {b["name"] for b in bots}


def test_made_up_urls_and_since_values_keep_nothing(web: crowd.Web, hostile: Hostile) -> None:
    """3,000 requests for made-up leaderboards: every one a 404, and the web's memory
    does not grow with them (a board was kept for each pair asked before). Every
    `since=` of a long replay is answered from one of the two builds the web makes (the
    whole, and the tail of the page): `first` is 0 or the tail's start, the bytes
    those of that build."""
    pid = web.process.pid
    connection = http.client.HTTPConnection(web.host, web.port, timeout=60)
    try:

        def get(path: str) -> tuple[int, bytes]:
            connection.request("GET", path)
            answer = connection.getresponse()
            return answer.status, answer.read()

        for number in range(200):  # warm: the allocator's own growth comes first
            get(f"/api/leaderboards/warm{number}/x{number}")
        before = crowd.rss_mb(pid)
        statuses = {get(f"/api/leaderboards/g{n:05d}/v{n * 7919:07d}")[0] for n in range(3000)}
        grown = crowd.rss_mb(pid) - before
        assert statuses == {404}
        assert grown < 15, f"RSS grew {grown:.1f} MB for 3,000 made-up boards"
        boards = orjson.loads(get("/api/leaderboards")[1])
        assert {b["game"] for b in boards} == {"risk", "stratego"}

        steps = len(orjson.loads(get(f"/api/matches/{hostile.long_id}/replay")[1])["steps"])
        tail = viewers.tail_start(steps)
        assert steps > viewers.TAIL_STEPS and tail > 0
        answers: dict[int, bytes] = {}
        for since in range(0, steps + 1, 97):
            status, body = get(f"/api/matches/{hostile.long_id}/frames?since={since}")
            assert status == 200, since
            first = orjson.loads(body)["first"]
            assert first == (tail if since >= tail else 0), since
            assert answers.setdefault(first, body) == body, since
        assert set(answers) == {0, tail}
    finally:
        connection.close()


def test_pages_show_under_their_csp_in_chromium(
    web: crowd.Web, hostile: Hostile, filled: Filled, chromium: Any, screenshots: Path
) -> None:
    """The pages in Chromium under the strict CSP: no violation reported, the viewers
    ready, the tournament's progress bar drawn (an SVG now, not a style attribute)."""
    from arena.web.browser import new_page, shoot

    page = new_page(chromium)
    violations: list[str] = []
    page.on(
        "console", lambda m: violations.append(m.text) if "Content Security" in m.text else None
    )
    try:
        for name, path in [
            ("csp-home", "/"),
            ("csp-tournament", f"/tournaments/{filled.risk_id}"),
            ("csp-api-docs", "/docs"),
            ("csp-bot", f"/bots/{quoted(CONFUSABLE)}"),
            ("csp-risk-viewer", f"/matches/{hostile.risk_match}"),
            ("csp-stratego-viewer", f"/matches/{quoted(HOSTILE_ID)}"),
        ]:
            page.goto(web.base + path)
            if "viewer" in name:
                page.wait_for_selector("#viewer[data-ready=true]", timeout=60_000)
            shoot(page, screenshots, name, full_page=False)
        bar = page.goto(web.base + f"/tournaments/{filled.risk_id}")
        assert bar is not None and bar.ok
        width = page.locator("svg.progress rect.done").get_attribute("width")
        assert width == "100.00"  # a finished tournament's bar is full
    finally:
        page.context.close()
    assert violations == []


def test_the_server_s_guard_and_the_log_s_rate_limit() -> None:
    """The pieces the slowloris test relies on, each alone: a repeated log message is
    let through once per interval, with the count of those left out; the cap of
    connections follows the open-files limit."""
    import logging

    from arena.web import server

    limit = server.RateLimit(every_s=3600)
    records = [
        logging.LogRecord("asyncio", logging.ERROR, "x", 1, "accept failed: %s", ("EMFILE",), None)
        for _ in range(1000)
    ]
    passed = [r for r in records if limit.filter(r)]
    assert len(passed) == 1
    limit._last[("asyncio", "accept failed: %s")] = (time.monotonic() - 7200, 999)
    later = logging.LogRecord(
        "asyncio", logging.ERROR, "x", 1, "accept failed: %s", ("EMFILE",), None
    )
    assert limit.filter(later) and later.getMessage().endswith("(999 more like this left out)")
    assert server.connection_cap(10**6) == server.open_files_limit() - server.FD_RESERVE
    assert server.connection_cap(50) == 50
    # the defaults `arena web` shows are the web's own
    from arena.cli.web import BOUNDS
    from arena.web import live, progress

    defaults = {name: default for name, default, _ in BOUNDS}
    assert defaults == {
        "max_connections": server.MAX_CONNECTIONS,
        "head_timeout": server.HEAD_S,
        "keep_alive": server.KEEP_ALIVE_S,
        "live_watchers": live.WATCHERS,
        "live_watchers_per_match": live.WATCHERS_PER_MATCH,
        "tournament_streams": progress.STREAMS,
        "frames_cache_mb": viewers.VIEWED_BYTES // 2**20,
    }


def test_adler32_of_shared_pieces_is_zlib_s(tmp_path: Path) -> None:
    """A browser's checksum is made from the shared pieces' own: the same as zlib's
    over the bytes it was sent."""
    import random
    import zlib

    from arena.web.live import adler32_combine

    rng = random.Random(7)
    pieces = [rng.randbytes(rng.choice([0, 1, 5, 5552, 65521, 70000])) for _ in range(40)]
    running = zlib.adler32(b"")
    for piece in pieces:
        running = adler32_combine(running, zlib.adler32(piece), len(piece))
    assert running == zlib.adler32(b"".join(pieces))
