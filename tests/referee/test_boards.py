"""A leaderboard is a game, a variant set and the options that change play: Risk without
cards is another game, so its results go on a board of their own; options that change
only what is recorded (Risk's dice) do not split a board. Seen through the store, the
real `arena leaderboard` command, the web's API and the referee's GetLeaderboard."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fastapi.testclient import TestClient

from arena.store import Store
from arena.store.models import board_parts, variant_key
from arena.tournament.executor import LocalExecutor
from arena.tournament.leaderboard import board_title
from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament
from arena.v1 import arena_pb2 as pb

from .conftest import ROOT, RPC_TIMEOUT

BOTS = ["random", "aggressive", "defensive"]


def test_the_key_holds_the_options_that_change_play_and_nothing_else() -> None:
    assert variant_key([]) == "" and variant_key(["neutral", "capital"]) == "capital+neutral"
    assert variant_key([], {"cards": "none"}, "risk") == ";cards=none"
    assert variant_key([], {"fixed-cards": None}, "risk") == ";cards=fixed"  # a flag
    # at their defaults, or changing only what is recorded: no board of their own
    assert variant_key([], {"cards": "progressive", "dice": "faces"}, "risk") == ""
    # a bound on the game's length: the same rules, the same board
    assert variant_key([], {"turn-limit": "40"}, "stratego") == ""
    assert variant_key([], {"rescue": "on", "turn-limit": "40"}, "stratego") == ";rescue=on"
    key = variant_key(["missions"], {"mission-deck": "1998", "cards": "none"}, "risk")
    assert key == "missions;cards=none;mission-deck=1998"
    assert board_parts(key) == (["missions"], {"cards": "none", "mission-deck": "1998"})
    assert board_title("risk", key) == "risk (missions; cards=none; mission-deck=1998)"
    assert board_title("risk", ";cards=none") == "risk (classic; cards=none)"
    # a map given by its content: its name and digest, never the content
    content = json.dumps({"name": "tiny world", "territories": []})
    (_, options) = board_parts(variant_key([], {"map": content}, "risk"))
    assert options["map"].startswith("tiny-world-") and len(options["map"]) == 23


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A store with three small tournaments: with cards, with cards and every die
    recorded (the same game), and without cards (another game)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('boards') / 'arena.db'}"
    store = Store(url)
    try:
        for options in ({}, {"dice": "faces"}, {"cards": "none"}):
            spec = TournamentSpec(
                game="risk",
                bots=BOTS,
                seats=3,
                games_per_pairing=2,
                options={"turn-limit": "30", **options},
                seed=7,
            )
            tournament = create_tournament(store, spec)
            assert run_tournament(store, tournament.id, LocalExecutor(workers=0)).status == (
                "finished"
            )
        assert sorted(store.boards()) == [("risk", ""), ("risk", ";cards=none")]
    finally:
        store.close()
    return url


def _arena(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "arena.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_the_command_line_shows_each_board_and_filters_them(played: str) -> None:
    every = _arena("leaderboard", "--db", played)
    assert every.returncode == 0, every.stderr
    assert "risk (classic; cards=none)" in every.stdout
    assert "risk (classic)" in every.stdout
    without = _arena("leaderboard", "--db", played, "--game", "risk", "--option", "cards=none",
                     "--option", "turn-limit=30")  # fmt: skip
    assert "cards=none" in without.stdout and without.stdout.count("risk (") == 1
    # the dice change nothing of play: the same board as the default
    faces = _arena("leaderboard", "--db", played, "--game", "risk", "--option", "dice=faces",
                   "--option", "turn-limit=30")  # fmt: skip
    assert "risk (classic)" in faces.stdout and "cards=none" not in faces.stdout
    games = {line.split()[1]: int(line.split()[2]) for line in faces.stdout.splitlines()[3:]}
    assert set(games) == {f"house:{b}@1" for b in BOTS} and set(games.values()) == {4}
    both = _arena("leaderboard", "--db", played, "--game", "risk", "--all-variants", "--json")
    boards = json.loads(both.stdout)["boards"]
    assert sorted(b["variants"] for b in boards) == ["", ";cards=none"]
    wrong = _arena("leaderboard", "--db", played, "--option", "cards=none")
    assert wrong.returncode == 2 and "give --game too" in wrong.stderr
    # a filter that could only find nothing: refused in one line, saying why
    for option, why in [("cards=bogus", "expected one of progressive, fixed, none"),
                        ("nosuch=1", "unknown option 'nosuch' for risk")]:  # fmt: skip
        refused = _arena("leaderboard", "--db", played, "--game", "risk", "--option", option)
        assert refused.returncode == 2 and refused.stdout == "", refused
        (line,) = refused.stderr.strip().splitlines()
        assert line.startswith("arena: error: ") and why in line, line


def test_the_web_lists_each_board_and_filters_them(played: str) -> None:
    from arena.web.app import create_app

    with TestClient(create_app(played)) as client:
        every = client.get("/api/leaderboards").json()
        assert len(every) == 2
        only = client.get("/api/leaderboards", params={"game": "risk", "option": "cards=none"})
        (board,) = only.json()
        assert board["title"] == "risk (classic; cards=none)"
        page = client.get(f"/leaderboards/risk/{board['segment']}")
        assert page.status_code == 200 and "cards=none" in page.text
        assert client.get("/leaderboards", params={"option": "cards"}).status_code == 400
        for bad in ("cards=bogus", "nosuch=1"):
            answer = client.get("/api/leaderboards", params={"game": "risk", "option": bad})
            assert answer.status_code == 400, answer.text
        listing = client.get("/leaderboards", params={"game": "risk", "option": "cards=none"})
        assert listing.status_code == 200
        assert listing.text.count('href="/leaderboards/risk/') == 1


def test_get_leaderboard_takes_the_options(played: str, referee_factory) -> None:
    ref = referee_factory(db=played)
    without = ref.arena.GetLeaderboard(
        pb.GetLeaderboardRequest(game="risk", options={"cards": "none", "turn-limit": "30"}),
        timeout=RPC_TIMEOUT,
    )
    assert without.board == ";cards=none"
    assert dict(without.options) == {"cards": "none"}  # the board's, not the request's
    assert {r.games for r in without.rows} == {2}
    default = ref.arena.GetLeaderboard(
        pb.GetLeaderboardRequest(game="risk", options={"turn-limit": "30", "dice": "faces"}),
        timeout=RPC_TIMEOUT,
    )
    assert default.board == "" and {r.games for r in default.rows} == {4}
