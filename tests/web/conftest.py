"""A store filled by real tournaments (house bots on the LocalExecutor), shared by the
web tests; plus a bot whose name is markup, with a finished match, to test escaping."""

from __future__ import annotations

import io
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from arena.store import BotRow, Outcome, Store
from arena.tournament.executor import LocalExecutor
from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament
from arena.web import browser

XSS = "<script>alert(1)</script>"

RISK = TournamentSpec(
    game="risk",
    bots=["random", "aggressive", "defensive", "blitz"],
    seats=3,
    games_per_pairing=3,
    options={"turn-limit": "30"},
)
STRATEGO = TournamentSpec(
    game="stratego", bots=["random", "heuristic"], seats=2, games_per_pairing=2
)


@dataclass(frozen=True)
class Filled:
    path: Path
    url: str
    risk_id: str
    stratego_ids: tuple[str, str]
    xss_match: str


def fill(path: Path) -> Filled:
    store = Store(str(path))
    try:
        risk = create_tournament(store, RISK)
        run_tournament(store, risk.id, LocalExecutor(workers=0))
        stratego = []
        for name in ("first", XSS):  # a tournament's name is free text: markup too
            t = create_tournament(store, TournamentSpec(**{**STRATEGO.__dict__, "name": name}))
            run_tournament(store, t.id, LocalExecutor(workers=0))
            stratego.append(t.id)
        xss_match = add_markup_bot(store)
    finally:
        store.close()
    return Filled(path, f"sqlite:///{path}", risk.id, (stratego[0], stratego[1]), xss_match)


def add_markup_bot(store: Store) -> str:
    """A bot named like a script, beaten once by house:random in a match of its own.
    Registration refuses such names today; the web must not rely on that (a store
    written by another tool, or an older Arena), so the row goes in directly."""
    bot = BotRow(id=str(uuid.uuid4()), name=XSS, version=1, kind="remote", revoked=False, games=[])
    with store.session() as s, s.begin():
        s.add(bot)
    house = store.house_bot("random")
    match_id = "xss-" + uuid.uuid4().hex[:8]
    store.start_match(
        match_id,
        "stratego",
        [f"{XSS}@1", house.label],
        bot_ids=[bot.id, house.id],
        seed=123,
    )
    store.record_result(
        Outcome(match_id, "finished", reason="forfeit", places=(2, 1), detail=f"{XSS} left")
    )
    return match_id


@pytest.fixture(scope="session")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Filled:
    """The shared store (read only by the tests: each test that writes copies it)."""
    return fill(tmp_path_factory.mktemp("web") / "arena.db")


@pytest.fixture
def copy(filled: Filled, tmp_path: Path) -> Path:
    """A private copy of the filled store's file."""
    target = tmp_path / "copy.db"
    shutil.copyfile(filled.path, target)
    return target


def cli_leaderboard(db: Path, game: str) -> list[tuple[str, ...]]:
    """The rows `arena leaderboard` prints for one game: (rank, bot, games, W, D, L,
    score, Elo, interval) as the text shows them. Run on a copy: it stores its ratings."""
    from arena.cli import main

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["leaderboard", "--db", str(db), "--game", game]) == 0
    rows = []
    for line in out.getvalue().splitlines():
        if re.match(r"^\s*\d+\s", line):
            parts = line.split()
            rows.append(tuple(parts[:9]))
    assert rows, out.getvalue()
    return rows


def as_cli(row: dict) -> tuple[str, ...]:
    """A row of the web's JSON formatted as `arena leaderboard` prints it."""
    return (
        str(row["rank"]),
        row["label"],
        str(row["games"]),
        str(row["wins"]),
        str(row["draws"]),
        str(row["losses"]),
        f"{row['score']:.3f}",
        f"{row['elo']:.0f}",
        f"{row['elo_low']:.0f}..{row['elo_high']:.0f}",
    )


class Tables(HTMLParser):
    """The text of every table cell of a page, as rows of the tables' bodies."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_body = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "tbody":
            self._in_body = True
            self.tables.append([])
        elif tag == "tr" and self._in_body:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "tbody":
            self._in_body = False
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def page_board_rows(html: str) -> list[tuple[str, ...]]:
    """A leaderboard page's rows as `arena leaderboard` prints them (a name from before
    the rule of names, such as the markup bot's, is marked on the page: the mark is
    left out)."""
    from arena.web.data import OLD_NAME

    rows = []
    for cells in Tables(html).tables[0]:
        rank, label, elo, interval, games, w, d, losses, score, _skill = cells
        label = label.removesuffix(OLD_NAME.strip()).strip()
        rows.append((rank, label, games, w, d, losses, score, elo, interval.replace(" ", "")))
    return rows


def pages(client: Any) -> list[str]:
    """Every kind of page and API answer, for the store's tournaments and matches."""
    paths = ["/", "/leaderboards", "/bots", "/tournaments", "/docs", "/openapi.json"]
    paths += ["/api/home", "/api/leaderboards", "/api/bots", "/api/tournaments"]
    for board in client.get("/api/leaderboards").json():
        where = f"{board['game']}/{board['segment']}"
        paths += [f"/leaderboards/{where}", f"/api/leaderboards/{where}"]
        paths.append(f"/api/leaderboards/{where}.csv")
    for bot in client.get("/api/bots").json():
        paths += [f"/bots/{bot['name']}", f"/api/bots/{bot['name']}"]
    for t in client.get("/api/tournaments").json():
        paths += [f"/tournaments/{t['tournament_id']}", f"/api/tournaments/{t['tournament_id']}"]
        for m in client.get(f"/api/tournaments/{t['tournament_id']}").json()["match_list"]:
            paths += [f"/matches/{m['match_id']}", f"/api/matches/{m['match_id']}"]
    return paths


# --- the viewers: a store of every kind of replay, `arena web` as a process, Chromium ---

#: one small tournament of each kind of match a viewer draws
VIEWER_SPECS = {
    "risk-cards": TournamentSpec(
        game="risk",
        bots=["aggressive", "defensive", "blitz"],
        seats=3,
        options={"turn-limit": "30"},
    ),
    "risk-missions": TournamentSpec(
        game="risk",
        bots=["aggressive", "defensive", "blitz"],
        seats=3,
        variants=["missions"],
        options={"turn-limit": "30"},
    ),
    "risk-capital": TournamentSpec(
        game="risk",
        bots=["aggressive", "defensive", "blitz", "random"],
        seats=4,
        variants=["capital"],
        options={"turn-limit": "30"},
    ),
    "risk-neutral": TournamentSpec(
        game="risk", bots=["aggressive", "blitz"], seats=2, variants=["neutral"]
    ),
    "stratego": TournamentSpec(game="stratego", bots=["heuristic", "random"], seats=2),
}


@dataclass(frozen=True)
class ViewerStore:
    path: Path
    #: a finished match of each kind in VIEWER_SPECS, by kind; "risk-long": long_replay()
    matches: dict[str, str]


def long_replay() -> str:
    """A Risk replay longer than viewers.TAIL_STEPS (its page starts from its tail):
    three random bots, the territories dealt (so that step 0 has owners), 200 rounds:
    some 6,000 steps, played in a fifth of a second."""
    from arena.engine import play_match
    from arena.engine.replay import dumps
    from arena.plugins import load_registry

    registry = load_registry()
    bots = [registry.bot("risk", "random").factory(s, 7_000 + s) for s in range(3)]
    record = play_match(registry.game("risk"), bots, 7, {"setup": "deal", "turn-limit": "200"})
    return dumps(record)


@pytest.fixture(scope="session")
def viewer_store(tmp_path_factory: pytest.TempPathFactory) -> ViewerStore:
    path = tmp_path_factory.mktemp("viewer") / "arena.db"
    store = Store(str(path))
    matches = {}
    try:
        for kind, spec in VIEWER_SPECS.items():
            t = create_tournament(store, TournamentSpec(**{**spec.__dict__, "name": kind}))
            run_tournament(store, t.id, LocalExecutor(workers=0))
            matches[kind] = store.tournament_matches(t.id, ["finished"])[0].id
    finally:
        store.close()
    matches["risk-long"] = browser.store_replay(path, long_replay())
    return ViewerStore(path, matches)


#: `arena web` on a store as a process on a free port; its base URL while it runs
web_app = browser.serve


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Debian's Chromium through Playwright (never a downloaded browser). Per module:
    Playwright's synchronous API keeps an event loop running in the main thread while
    it is open, which later tests' asyncio.run() would trip on."""
    assert os.path.exists(browser.CHROMIUM), "run scripts/ensure_chromium.sh (make test does)"
    with browser.chromium() as opened:
        yield opened


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    """Where a test saves its screenshots: ``$ARENA_SCREENSHOTS``, or its own folder."""
    folder = Path(os.environ.get("ARENA_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def replay_states(record: Any) -> list[Any]:
    """The engine's state after each step of a match record (item i: after i steps), as
    clones."""
    from arena.plugins import load_registry

    registry = load_registry()
    game = registry.game(record.game)
    variants = registry.resolve_variants(record.game, record.variants)
    state = game.start_state(
        record.num_players, record.seed, record.options, variants, record.deal_seed
    )
    out = [state.clone()]
    for seat, action, _events in record.steps:
        state.apply(seat, action)
        out.append(state.clone())
    return out
