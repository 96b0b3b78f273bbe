"""The web app through its HTTP interface (FastAPI's TestClient: the real app, requests
in-process), on a store filled by real tournaments."""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path

import orjson
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from arena.store import MatchRow, SeatRow, Store, variant_key
from arena.tournament.executor import LocalExecutor
from arena.tournament.leaderboard import compute
from arena.tournament.runner import create_tournament, run_tournament
from arena.web import create_app
from arena.web.browser import free_port

from .conftest import (
    STRATEGO,
    XSS,
    Filled,
    Tables,
    as_cli,
    cli_leaderboard,
    page_board_rows,
    pages,
)


@pytest.fixture(scope="module")
def client(filled: Filled):
    with TestClient(create_app(filled.url)) as c:
        yield c


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def wal_bytes(path: Path) -> int:
    """What the write-ahead log beside an SQLite file holds (a reader of a WAL database
    creates an empty one, and the shared-memory index, to read it)."""
    wal = path.with_name(path.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0


# --- leaderboards ---------------------------------------------------------------------


@pytest.mark.parametrize("game", ["risk", "stratego"])
def test_leaderboard_page_and_api_show_what_arena_leaderboard_prints(
    client: TestClient, copy: Path, game: str
):
    expected = cli_leaderboard(copy, game)
    api = client.get(f"/api/leaderboards/{game}/classic").json()
    assert [as_cli(r) for r in api["rows"]] == expected
    page = client.get(f"/leaderboards/{game}/classic")
    assert page.status_code == 200
    assert page_board_rows(page.text) == expected


def test_leaderboard_rows_are_the_function_arena_leaderboard_uses(client, filled: Filled):
    store = Store(filled.url)
    try:
        rows = compute(store, "risk", "")
    finally:
        store.close()
    api = client.get("/api/leaderboards/risk/classic").json()["rows"]
    assert [(r["bot_id"], r["elo"], r["mu"], r["online_elo"]) for r in api] == [
        (r.bot_id, r.elo, r.mu, r.online_elo) for r in rows
    ]


def test_a_sort_link_orders_the_table_by_that_column(client: TestClient):
    board = client.get("/api/leaderboards/risk/classic?sort=-wins").json()["rows"]
    assert [r["wins"] for r in board] == sorted((r["wins"] for r in board), reverse=True)
    by_bot = client.get("/api/leaderboards/risk/classic?sort=bot").json()["rows"]
    assert [r["label"] for r in by_bot] == sorted(r["label"] for r in by_bot)
    page = client.get("/leaderboards/risk/classic?sort=-wins").text
    assert [row[5] for row in Tables(page).tables[0]] == [str(r["wins"]) for r in board]
    # the header links to the other direction of the column sorted by
    assert 'href="?sort=wins"' in page and 'href="?sort=-elo"' in page


def test_a_bad_sort_is_a_400_naming_it(client: TestClient):
    answer = client.get("/api/leaderboards/risk/classic?sort=height")
    assert answer.status_code == 400
    assert "sort 'height': expected one of rank, bot" in answer.json()["detail"]
    assert "sort &#39;height&#39;" in client.get("/leaderboards/risk/classic?sort=height").text


def test_the_csv_has_the_rows_of_the_json(client: TestClient):
    answer = client.get("/api/leaderboards/stratego/classic.csv")
    assert answer.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    api = client.get("/api/leaderboards/stratego/classic").json()["rows"]
    assert [(r["rank"], r["bot"], r["games"]) for r in rows] == [
        (str(r["rank"]), r["label"], str(r["games"])) for r in api
    ]
    assert [round(float(r["elo"]), 3) for r in rows] == [round(r["elo"], 3) for r in api]


def test_an_unknown_board_is_a_404(client: TestClient):
    answer = client.get("/api/leaderboards/risk/missions")
    assert answer.status_code == 404
    assert answer.json()["detail"] == "no finished match of risk (missions) yet"


def test_the_home_page_has_the_top_five_of_each_board_and_recent_matches(client, filled):
    home = client.get("/api/home").json()
    assert {g["name"] for g in home["games"]} >= {"risk", "stratego"}
    titles = [b["title"] for b in home["boards"]]
    assert titles == ["risk (classic)", "stratego (classic)"]
    full = client.get("/api/leaderboards/risk/classic").json()["rows"]
    assert home["boards"][0]["rows"] == full[:5]
    assert home["recent"][0]["match_id"] == filled.xss_match  # the last one recorded
    assert home["running"] == [] and home["referee"] is None


def test_each_page_title_names_the_page_and_arena_once(client, filled):
    assert "<title>Arena</title>" in client.get("/").text
    assert "<title>Leaderboards · Arena</title>" in client.get("/leaderboards").text
    page = client.get(f"/tournaments/{filled.stratego_ids[0]}").text
    assert "<title>first · Arena</title>" in page
    assert "2 games per pairing" in page


# --- tournaments, bots, matches --------------------------------------------------------


def test_a_tournament_shows_progress_standings_crosstable_and_matches(client, filled):
    t = client.get(f"/api/tournaments/{filled.risk_id}").json()
    assert t["status"] == "finished" and t["progress"] == {"finished": 12}
    assert t["seed"] is not None  # finished: its seed is shown
    store = Store(filled.url)
    try:
        standings = compute(store, "risk", "", tournament_id=filled.risk_id)
    finally:
        store.close()
    assert [r["label"] for r in t["standings"]["rows"]] == [r.label for r in standings]
    cells = t["crosstable"]["cells"]
    labels = t["crosstable"]["labels"]
    for a in labels:
        for b in labels:
            if a != b:  # every pair met; the two cells share out the points of their games
                assert cells[a][b]["games"] == cells[b][a]["games"] > 0
                assert cells[a][b]["points"] + cells[b][a]["points"] == cells[a][b]["games"]
    assert len(t["match_list"]) == 12
    page = client.get(f"/tournaments/{filled.risk_id}").text
    assert "Crosstable" in page and t["match_list"][0]["match_id"] in page


def test_a_bot_page_has_versions_history_head_to_head_and_matches(client: TestClient):
    bot = client.get("/api/bots/house:random").json()
    assert [v["label"] for v in bot["versions"]] == ["house:random@1"]
    risk = next(b for b in bot["boards"] if b["game"] == "risk")
    # one tournament of Risk: one checkpoint after it, the board as it stands now
    assert [p["is_tournament"] for p in risk["history"]] == [True]
    row = risk["rows"][0]
    assert risk["history"][0]["elo"] == pytest.approx(row["elo"])
    opponents = {h["opponent"]: h for h in risk["head_to_head"]}
    assert set(opponents) == {"house:aggressive@1", "house:blitz@1", "house:defensive@1"}
    assert all(h["ahead"] + h["level"] + h["behind"] == h["games"] for h in opponents.values())
    stratego = next(b for b in bot["boards"] if b["game"] == "stratego")
    # two tournaments and a lone match (against the markup bot): three checkpoints
    assert len(stratego["history"]) == 3
    assert [p["matches"] for p in stratego["history"]] == [2, 4, 5]  # the board by then
    assert stratego["history"][-1]["elo"] == pytest.approx(stratego["rows"][0]["elo"])
    assert bot["recent"] and all(
        any(p["name"] == "house:random" for p in m["players"]) for m in bot["recent"]
    )
    page = client.get("/bots/house:random").text
    assert page.count("<polyline") == 2 and "Head to head" in page


def test_a_finished_match_shows_its_event_log_and_its_replay(client, filled: Filled):
    t = client.get(f"/api/tournaments/{filled.stratego_ids[0]}").json()
    match_id = t["match_list"][0]["match_id"]
    match = client.get(f"/api/matches/{match_id}").json()
    replay = client.get(f"/api/matches/{match_id}/replay")
    assert replay.status_code == 200
    assert "attachment" in replay.headers["content-disposition"]
    data = orjson.loads(replay.content)
    assert match["seed"] == str(data["seed"]) and match["replay_hidden"] is None
    log = client.get(f"/api/matches/{match_id}/events").json()
    assert log["steps"] == len(data["steps"]) + (1 if data["initial_events"] else 0)
    page = client.get(f"/matches/{match_id}").text
    assert f'href="/api/matches/{match_id}/replay"' in page
    assert "Event log" in page and f"{log['steps']} steps" in page
    assert client.get(f"/api/matches/{match_id}/events?page=999").status_code == 400


def test_a_page_number_that_is_not_a_number_is_a_400_naming_it(client, filled: Filled):
    answer = client.get(f"/api/matches/{filled.xss_match}/events?page=two")
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("page 'two': input should be a valid integer")
    page = client.get(f"/matches/{filled.xss_match}?page=two")
    assert page.status_code == 400 and "page &#39;two&#39;" in page.text


def test_frames_since_a_step_of_a_short_replay_are_its_whole_frames(client, filled):
    """`?since=N` answers with one of the builds the web makes of a replay (every frame,
    or a long replay's tail): for a short one, whatever N, its whole frames, the same
    bytes; `frames` counts every frame. A short replay's page asks for no tail."""
    match_id = client.get(f"/api/tournaments/{filled.risk_id}").json()["match_list"][0]["match_id"]
    raw = client.get(f"/api/matches/{match_id}/frames").content
    whole = orjson.loads(raw)
    steps, every = whole["frames"] - 1, whole["keyframe_every"]
    assert whole["first"] == 0 and steps > 2 * every
    for since in (1, every + 1, steps - 1, steps):
        answer = client.get(f"/api/matches/{match_id}/frames?since={since}")
        assert answer.status_code == 200, since
        assert answer.content == raw
    assert "data-first" not in client.get(f"/matches/{match_id}").text


@pytest.mark.parametrize(
    "since, says",
    [
        ("-1", "since '-1': input should be greater than or equal to 0"),
        ("two", "since 'two': input should be a valid integer"),
        ("1.5", "since '1.5': input should be a valid integer"),
        ("STEPS+1", "since STEPS+1: the replay has steps 0 to STEPS"),
        ("99999999", "since 99999999: the replay has steps 0 to STEPS"),
    ],
)
def test_frames_since_a_step_the_replay_does_not_have_is_a_400_saying_why(
    client, filled: Filled, since: str, says: str
):
    match_id = client.get(f"/api/tournaments/{filled.risk_id}").json()["match_list"][1]["match_id"]
    steps = len(orjson.loads(client.get(f"/api/matches/{match_id}/replay").content)["steps"])
    numbers = {"STEPS+1": str(steps + 1), "STEPS": str(steps)}
    for name, number in numbers.items():
        since, says = since.replace(name, number), says.replace(name, number)
    answer = client.get(f"/api/matches/{match_id}/frames?since={since}&reveal=true")
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith(says)
    assert client.get(f"/api/matches/{match_id}/frames?since={steps}").status_code == 200


def test_an_unknown_match_is_a_404_page(client: TestClient):
    answer = client.get("/matches/nope")
    assert answer.status_code == 404 and "no match &#39;nope&#39;" in answer.text


# --- escaping, read-only --------------------------------------------------------------


def test_markup_in_stored_names_shows_as_text(client: TestClient, filled: Filled):
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    for path in (
        "/",
        "/leaderboards/stratego/classic",
        "/bots",
        f"/bots/{XSS}",
        f"/matches/{filled.xss_match}",
        "/tournaments",
        f"/tournaments/{filled.stratego_ids[1]}",
    ):
        page = client.get(path)
        assert page.status_code == 200, path
        assert XSS not in page.text, path
        assert escaped in page.text, path


def test_no_request_changes_the_database_file(filled: Filled, copy: Path):
    before = file_digest(copy)
    with TestClient(create_app(str(copy))) as c:
        for path in pages(c):
            assert c.get(path).status_code == 200, path
        assert c.post("/api/home").status_code == 405  # nothing takes a write
    assert file_digest(copy) == before
    assert wal_bytes(copy) == 0


def test_the_api_docs_page_lists_every_api_path(client: TestClient):
    schema = client.get("/openapi.json").json()
    page = client.get("/docs").text
    api = [p for p in schema["paths"] if p.startswith("/api/")]
    assert len(api) >= 11
    for path in api:
        assert f"GET {path}" in page
    assert "cdn" not in page.lower()


def test_the_home_page_shows_a_referee_that_does_not_answer(filled: Filled):
    address = f"127.0.0.1:{free_port()}"  # nobody listens there
    with TestClient(create_app(filled.url, referee=address)) as c:
        referee = c.get("/api/home").json()["referee"]
        assert referee == {"address": address, "status": "UNAVAILABLE", "serving": False}
        assert "UNAVAILABLE" in c.get("/").text


def test_a_standalone_match_s_variant_key_is_its_board(client, filled: Filled):
    match = client.get(f"/api/matches/{filled.xss_match}").json()
    assert match["variants"] == variant_key([]) and match["tournament_id"] is None
    assert match["players"][1]["place"] == 1


def test_the_app_reads_a_postgresql_store(postgres_url: str):
    writer = Store(postgres_url)
    try:
        t = create_tournament(writer, STRATEGO)
        run_tournament(writer, t.id, LocalExecutor(workers=0))
        expected = compute(writer, "stratego", "")
        with TestClient(create_app(postgres_url)) as web:
            rows = web.get("/api/leaderboards/stratego/classic").json()["rows"]
            assert [(r["label"], r["elo"], r["games"]) for r in rows] == [
                (r.label, r.elo, r.games) for r in expected
            ]
            match_id = web.get(f"/api/tournaments/{t.id}").json()["match_list"][0]["match_id"]
            assert web.get(f"/matches/{match_id}").status_code == 200
            replay = orjson.loads(web.get(f"/api/matches/{match_id}/replay").content)
            assert str(replay["seed"]) == web.get(f"/api/matches/{match_id}").json()["seed"]
    finally:
        writer.close()


def test_bots_count_the_matches_each_finished_and_no_other(copy: Path):
    store = Store(str(copy))
    try:
        random, heuristic = store.house_bot("random"), store.house_bot("heuristic")
        ids = [random.id, heuristic.id]
        store.start_match("unplayed", "stratego", [random.label, heuristic.label], ids, seed=5)
        with store.session() as s:  # the count as a join of every seat with its match
            finished = dict(
                s.execute(
                    select(SeatRow.bot_id, func.count())
                    .join(MatchRow, MatchRow.id == SeatRow.match_id)
                    .where(MatchRow.status == "finished")
                    .group_by(SeatRow.bot_id)
                ).all()
            )
            names = {b.id: b.name for b in store.bots()}
    finally:
        store.close()
    with TestClient(create_app(str(copy))) as web:
        listed = {b["name"]: b["matches"] for b in web.get("/api/bots").json()}
    expected: dict[str, int] = {}
    for bot_id, count in finished.items():
        expected[names[bot_id]] = expected.get(names[bot_id], 0) + count
    assert listed == {name: expected.get(name, 0) for name in listed}
    assert listed["house:random"] > 0 and set(expected) <= set(listed)


def test_the_tournament_list_has_each_tournament_s_own_progress(client: TestClient):
    listed = client.get("/api/tournaments").json()
    assert len(listed) == 3
    for t in listed:  # one query for the list, one a tournament on its page: the same
        own = client.get(f"/api/tournaments/{t['tournament_id']}").json()
        assert (t["progress"], t["matches"]) == (own["progress"], own["matches"])
        assert t["matches"] == len(own["match_list"]) > 0


def test_the_match_page_parses_its_replay_once_and_checks_it_may_be_shown_each_time(
    filled: Filled, monkeypatch: pytest.MonkeyPatch
):
    """Inside data.one_replay_read (the match page: its event log and its viewer) a
    replay is parsed once and the same tree handed out; outside, each read parses. The
    secrets' rule is asked at every read, shared or not: a replay hidden meanwhile is
    refused though its tree is at hand."""
    from arena.web import data

    store = Store(filled.url)
    try:
        match_id = store.tournament_matches(filled.risk_id)[0].id
        checked: list[str] = []
        hidden: list[bool] = [False]
        check = data.check_replay_shown

        def counted(s: Store, m: str) -> None:
            checked.append(m)
            if hidden[0]:
                raise PermissionError(f"the replay of match {m} is hidden for now")
            check(s, m)

        monkeypatch.setattr(data, "check_replay_shown", counted)
        with data.one_replay_read():
            first = data.replay_doc(store, match_id)
            assert data.replay_doc(store, match_id) is first
            hidden[0] = True
            with pytest.raises(PermissionError):
                data.replay_doc(store, match_id)
            hidden[0] = False
        again = data.replay_doc(store, match_id)
        assert again is not first and again == first
        assert checked == [match_id] * 4
    finally:
        store.close()


def test_a_hosted_bots_page_shows_each_versions_code_digest_and_size(copy: Path):
    from arena.web.app import create_app

    store = Store(str(copy))
    versions = []
    for code in (b"# first\n", b"# second, longer\n"):
        digest = hashlib.sha256(code).hexdigest()
        store.put_code(digest, "py", code)
        versions.append((store.hosted_bot("hosty", digest, ["stratego"])[0], digest, len(code)))
    store.close()
    with TestClient(create_app(str(copy))) as client:
        bot = client.get("/api/bots/hosty").json()
        assert [(v["kind"], v["digest"], v["size"]) for v in bot["versions"]] == [
            ("hosted", digest, size) for _, digest, size in versions
        ]
        page = client.get("/bots/hosty").text
        for _, digest, size in versions:
            assert f">{digest[:12]}</code> {size} bytes" in page
