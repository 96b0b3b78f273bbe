"""What the web says in words rather than codes: the ways matches end, how many players
a game takes, the event log's owners and places by name, an aborted match's page, a
house bot's games, the leaderboard's legend; and the favicon, an unknown game's 404."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import orjson
import pytest
from fastapi.testclient import TestClient

from arena.cli import main
from arena.games.risk.map import load_map
from arena.store import Outcome, Store
from arena.web import create_app

from .conftest import Filled, Tables

#: the codes of the ways a match ends (arena.engine.core.EndReason) and of statuses
CODES = re.compile(r"\b(turn_limit|no_moves|aborted, aborted)\b")


@pytest.fixture(scope="module")
def client(filled: Filled):
    with TestClient(create_app(filled.url)) as c:
        yield c


def text_of(html: str) -> str:
    """A page's text, as a reader sees it (no markup, one space between words)."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def finished_match(client: TestClient, tournament_id: str, reason: str | None = None) -> dict:
    matches = client.get(f"/api/tournaments/{tournament_id}").json()["match_list"]
    for m in matches:
        match = client.get(f"/api/matches/{m['match_id']}").json()
        if reason is None or match["result"]["reason"] == reason:
            return match
    raise AssertionError(f"no match ended by {reason}")


def test_the_way_a_match_ended_is_said_in_words(copy: Path):
    # a Risk game limited to one round ends by the limit, whatever its seeds
    from arena.tournament.executor import LocalExecutor
    from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament

    store = Store(str(copy))
    try:
        spec = TournamentSpec(
            game="risk", bots=["random", "aggressive", "defensive"], seats=3,
            games_per_pairing=1, options={"turn-limit": "1"},
        )  # fmt: skip
        limited = create_tournament(store, spec).id
        assert run_tournament(store, limited, LocalExecutor(workers=0)).status == "finished"
    finally:
        store.close()
    with TestClient(create_app(f"sqlite:///{copy}")) as client:
        _said_in_words(client, finished_match(client, limited, "turn_limit"))


def _said_in_words(client: TestClient, match: dict) -> None:
    page = text_of(client.get(f"/matches/{match['match_id']}").text)
    assert "Result turn limit reached" in page
    assert not CODES.search(page)
    assert client.get(f"/api/matches/{match['match_id']}").json()["result"]["reason"] == (
        "turn_limit"  # the API keeps the code: it is for programs
    )
    # the viewer's script says the end in the same words: the page gives them
    viewer = client.get(f"/matches/{match['match_id']}").text
    endings = re.search(r"data-endings='([^']*)'", viewer)
    assert endings and orjson.loads(endings.group(1))["no_moves"] == "no legal move left"


def test_how_many_players_a_game_takes_is_said_in_words(client: TestClient, capsys):
    home = text_of(client.get("/").text)
    assert "stratego 2 players" in home and "risk 2 to 6 players" in home
    assert "2-2 players" not in home and "2-6 players" not in home
    # and where the engine refuses a count: "takes 2 players", not "takes 2 to 2"
    assert main(["play", "stratego", "--players", "random,random,random"]) != 0
    err = capsys.readouterr().err
    assert "stratego takes 2 players, not 3" in err and "2 to 2" not in err


def test_the_event_log_names_owners_and_places_as_the_viewer_does(
    client: TestClient, filled: Filled
):
    risk = finished_match(client, filled.risk_id)
    territories = load_map("classic").territories
    players = [p["label"] for p in sorted(risk["players"], key=lambda p: p["seat"])]
    log = client.get(f"/api/matches/{risk['match_id']}/events").json()
    events = [e for row in log["rows"] for e in row["events"]]
    battles = [e for e in events if e.startswith("battle ")]
    assert battles, "the page's steps fought no battle"
    for line in battles:
        fields = dict(re.findall(r"(\w+)=(\S+)", line))
        assert fields["p"] in players
        assert fields["from"] in territories and fields["to"] in territories
    page = client.get(f"/matches/{risk['match_id']}").text
    assert re.search(r"battle p=\d", page) is None and "battle p=" in page

    stratego = finished_match(client, filled.stratego_ids[0])
    log = client.get(f"/api/matches/{stratego['match_id']}/events").json()
    moves = [e for row in log["rows"] for e in row["events"] if e.startswith("move ")]
    assert moves
    for line in moves:
        fields = dict(re.findall(r"(\w+)=(\S+)", line))
        assert re.fullmatch(r"[a-j]([1-9]|10)", fields["from"]), line
        assert re.fullmatch(r"[a-j]([1-9]|10)", fields["to"]), line
    actions = [row["action"] for row in log["rows"] if row["action"].startswith("move ")]
    assert actions and all(re.search(r"from=[a-j]\d+ to=[a-j]\d+", a) for a in actions)


@pytest.fixture(scope="module")
def with_aborted(filled: Filled, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A copy of the filled store with an aborted match (a referee that stopped)."""
    path = tmp_path_factory.mktemp("aborted") / "arena.db"
    shutil.copyfile(filled.path, path)
    store = Store(str(path))
    try:
        house = store.house_bot("random")
        store.start_match(
            "aborted-1", "stratego", [house.label] * 2, bot_ids=[house.id] * 2, seed=7
        )
        store.record_result(
            Outcome("aborted-1", "aborted", reason="aborted", detail="the referee stopped")
        )
    finally:
        store.close()
    return f"sqlite:///{path}", "aborted-1"


def test_an_aborted_match_s_page_says_it_was_aborted_and_is_played_again(with_aborted):
    url, match_id = with_aborted
    with TestClient(create_app(url)) as web:
        page = text_of(web.get(f"/matches/{match_id}").text)
        api = web.get(f"/api/matches/{match_id}").json()
    assert "was aborted" in page and "played again from the start" in page
    assert "once it has finished" not in page
    assert not CODES.search(page)
    assert api["status"] == "aborted" and "aborted" in api["replay_hidden"]


def test_a_house_bot_s_page_says_which_games_it_plays(client: TestClient):
    page = client.get("/bots/house:heuristic").text
    plays = [row[3] for row in Tables(page).tables[0]]  # version, kind, code, plays
    assert plays == ["stratego"]  # house:heuristic is a Stratego bot only
    api = client.get("/api/bots/house:random").json()
    assert api["versions"][0]["games"] == ["risk", "stratego"]
    assert "every game" not in text_of(client.get("/bots/house:random").text)


def test_the_leaderboard_says_what_house_and_process_labels_mean(client: TestClient):
    page = text_of(client.get("/leaderboards/risk/classic").text)
    assert "house:random built into Arena, played inside the referee" in page
    legend = client.get("/api/leaderboards/risk/classic").json()["legend"]
    assert {
        "label": "house:aggressive",
        "means": "built into Arena, played inside the referee",
        "bot": True,
    } in legend
    assert "@N (an old name)" not in page  # a note, not a bot's name
    # the same bot as a process of its own, beside its house twin
    from arena.web.data import legend as legend_of

    both = legend_of(["house:random@1", "random@2", "mybot@1"])
    assert [item["label"] for item in both] == ["house:random", "random", "the others", "@N"]
    assert both[1]["means"] == "the same bot, run as its own process and connected over gRPC"


def test_the_favicon_is_served(client: TestClient):
    answer = client.get("/favicon.ico")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "image/x-icon"
    assert answer.content[:4] == b"\x00\x00\x01\x00"  # an ICO file
    assert '<link rel="icon" href="/favicon.ico">' in client.get("/").text


def test_an_unknown_game_s_leaderboard_is_a_404_saying_so(client: TestClient):
    for path in ("/leaderboards/chess/classic", "/api/leaderboards/chess/classic"):
        answer = client.get(path)
        assert answer.status_code == 404
        assert "no game 'chess': the games are risk, stratego" in html.unescape(answer.text)
    # a game there is, with no match of that variant set yet: said so
    answer = client.get("/api/leaderboards/risk/missions")
    assert answer.json()["detail"] == "no finished match of risk (missions) yet"


def test_no_page_shows_a_raw_code(with_aborted):
    from .conftest import pages

    url, match_id = with_aborted  # the filled store, and an aborted match
    with TestClient(create_app(url)) as web:
        paths = [*pages(web), f"/matches/{match_id}"]
        for path in paths:
            if path.startswith("/api/") or path == "/openapi.json":
                continue  # the API keeps the codes: it is for programs
            assert not CODES.search(text_of(web.get(path).text)), path
