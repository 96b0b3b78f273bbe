"""The web's leaderboard cache (arena.web.cache) on each backend: exact, to the last
bit, after results arrive while the app runs, in order or late; and a request that
finds nothing new does not fit again."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

import arena.tournament.leaderboard as leaderboard_module
from arena.ratings import fit, pairwise
from arena.store import BotRow, MatchRow, Outcome, Store
from arena.tournament.leaderboard import compute, rated
from arena.web import create_app
from arena.web.cache import MARGIN, Board

FIELDS = (
    "rank", "bot_id", "games", "wins", "draws", "losses", "score",
    "elo", "elo_low", "elo_high", "online_elo", "mu", "sigma",
)  # fmt: skip
START = datetime(2026, 3, 1, tzinfo=UTC)


class Writer:
    """Results written as a tournament's workers write them, with the finish time a
    writer stamps: a minute apart, or earlier than others already written (a worker
    that stamped its result before another and committed it after)."""

    def __init__(self, store: Store, rng: random.Random) -> None:
        self.store, self.rng = store, rng
        self.bots = [store.register_bot(name)[0] for name in ("ann", "bob", "cy", "dee", "eve")]
        self.clock = START

    def play(self, matches: int) -> None:
        for _ in range(matches):
            self.clock += timedelta(minutes=1)
            self.record(self.clock)

    def record(self, finished: datetime) -> str:
        seated: list[BotRow] = self.rng.sample(self.bots, 3)
        places = tuple(self.rng.choice([(1, 2, 3), (2, 1, 3), (3, 2, 1), (1, 1, 3)]))
        match_id = uuid.uuid4().hex
        ids = [b.id for b in seated]
        self.store.start_match(match_id, "risk", [b.label for b in seated], ids, seed=1)
        assert self.store.record_result(Outcome(match_id, "finished", "win", places))
        with self.store.session() as s, s.begin():
            s.execute(update(MatchRow).where(MatchRow.id == match_id).values(finished=finished))
        return match_id


def rows(web: TestClient) -> list[tuple]:
    answer = web.get("/api/leaderboards/risk/classic")
    assert answer.status_code == 200, answer.text
    return [tuple(r[f] for f in FIELDS) for r in answer.json()["rows"]]


def computed(store: Store) -> list[tuple]:
    return [tuple(getattr(r, f) for f in FIELDS) for r in compute(store, "risk")]


@pytest.fixture
def resets(monkeypatch) -> list[str]:
    """Every time a board starts again from all matches."""
    seen: list[str] = []
    reset = Board.reset

    def counted(board: Board) -> None:
        seen.append(board.game)
        reset(board)

    monkeypatch.setattr(Board, "reset", counted)
    return seen


def test_the_cached_leaderboard_equals_compute_as_results_arrive(store: Store, resets):
    writer = Writer(store, random.Random(5))
    writer.play(12)  # more than the margin: the board settles the older ones
    assert writer.clock - START > 2 * MARGIN
    with TestClient(create_app(store.url)) as web:
        assert rows(web) == computed(store)
        writer.play(5)  # in order, after those read
        assert rows(web) == computed(store)
        # stamped before the latest, committed after it: inside the tail the board
        # reads again, and the order-dependent figures are replayed
        writer.record(writer.clock - MARGIN / 4)
        assert rows(web) == computed(store)
        assert resets == []
        # stamped before the tail: the count does not add up, the board starts again
        writer.record(START - timedelta(hours=1))
        assert rows(web) == computed(store)
        assert resets == ["risk"]
        writer.play(3)
        assert rows(web) == computed(store)
        assert len(resets) == 1


def test_a_request_with_nothing_new_does_not_fit_again(store: Store, monkeypatch):
    fits: list[int] = []

    def counted(*args, **kwargs):
        fits.append(1)
        return fit(*args, **kwargs)

    monkeypatch.setattr(leaderboard_module, "fit", counted)
    writer = Writer(store, random.Random(8))
    writer.play(6)
    with TestClient(create_app(store.url)) as web:
        first = rows(web)
        assert len(fits) == 1
        for path in ("/leaderboards/risk/classic", "/api/leaderboards/risk/classic.csv", "/"):
            assert web.get(path).status_code == 200
        assert web.get("/api/leaderboards/risk/classic?sort=-elo").status_code == 200
        assert rows(web) == first
        assert len(fits) == 1  # every one of those read the rows kept
        writer.play(1)
        assert rows(web) != first and len(fits) == 2  # a new result: one fit more
        again = rows(web)
        assert len(fits) == 2
        assert again == computed(store)  # (compute fits on its own: a third fit)


def test_the_bot_page_history_and_head_to_head_from_the_cache(store: Store):
    writer = Writer(store, random.Random(11))
    writer.play(9)
    ann = writer.bots[0]
    with TestClient(create_app(store.url)) as web:
        writer.play(4)  # after the app has read the board once
        web.get("/api/leaderboards/risk/classic")
        writer.play(2)
        [board] = web.get("/api/bots/ann").json()["boards"]
    played = rated(store.played("risk", ""))
    # each lone match of ann's is a checkpoint: the board refitted on every match by then
    mine = [k for k, g in enumerate(played) if ann.id in g.bot_ids]
    assert [p["matches"] for p in board["history"]] == [k + 1 for k in mine]
    for point, k in zip(board["history"], mine, strict=True):
        refit = fit(pair for g in played[: k + 1] for pair in pairwise(g.bot_ids, g.places))
        assert point["elo"] == pytest.approx(refit[ann.id].rating, abs=1e-6)
        assert point["elo_high"] == pytest.approx(refit[ann.id].high, abs=1e-6)
        assert point["is_tournament"] is False
    [row] = board["rows"]
    # the same fit as the leaderboard's (started from the point before: to the tolerance)
    assert board["history"][-1]["elo"] == pytest.approx(row["elo"], abs=1e-6)
    # head to head: counted again from the matches
    for h in board["head_to_head"]:
        other = next(b for b in writer.bots if b.label == h["opponent"])
        ahead = level = behind = 0
        for g in played:
            if ann.id in g.bot_ids and other.id in g.bot_ids:
                mine_place = g.places[g.bot_ids.index(ann.id)]
                theirs = g.places[g.bot_ids.index(other.id)]
                ahead += mine_place < theirs
                level += mine_place == theirs
                behind += mine_place > theirs
        assert (h["ahead"], h["level"], h["behind"]) == (ahead, level, behind)
