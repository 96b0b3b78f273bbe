"""Leaderboards from stored results: the true order recovered within the intervals,
W/D/L counted as the module documents, one-bot matches left out, and the table."""

from __future__ import annotations

import itertools
import random
import re
import uuid

import pytest

from arena.store import BotRow, Outcome, Store
from arena.tournament.leaderboard import compute, refresh, render


def _record(
    store: Store,
    bots: list[BotRow],
    places: tuple[int, ...],
    game: str = "risk",
    variants: tuple[str, ...] = (),
    status: str = "finished",
) -> str:
    match_id = uuid.uuid4().hex
    assert store.start_match(
        match_id,
        game,
        [b.label for b in bots],
        bot_ids=[b.id for b in bots],
        variants=variants,
        seed=1,
    )
    assert store.record_result(Outcome(match_id, status, reason="victory", places=places))
    return match_id


def _bots(store: Store, *names: str) -> list[BotRow]:
    return [store.register_bot(name)[0] for name in names]


def _play_pairs(
    store: Store, bots: list[BotRow], strength: dict[str, float], games: int, rng: random.Random
) -> None:
    """``games`` two-seat games per pair, seats alternating, won with Elo's probability."""
    for a, b in itertools.combinations(bots, 2):
        for n in range(games):
            first, second = (a, b) if n % 2 == 0 else (b, a)
            p_first = 1 / (1 + 10 ** ((strength[second.name] - strength[first.name]) / 400))
            _record(store, [first, second], (1, 2) if rng.random() < p_first else (2, 1))


def test_the_true_order_of_known_strengths_falls_inside_the_intervals(sqlite_store):
    # true Elo ratings with a mean of 1500, the leaderboard's anchor
    strength = {"ace": 1800.0, "good": 1600.0, "fair": 1400.0, "weak": 1200.0}
    bots = _bots(sqlite_store, *strength)
    _play_pairs(sqlite_store, bots, strength, games=40, rng=random.Random(2024))

    rows = compute(sqlite_store, "risk")
    assert [r.label for r in rows] == ["ace@1", "good@1", "fair@1", "weak@1"]
    assert [r.rank for r in rows] == [1, 2, 3, 4]
    for row in rows:
        true = strength[row.label.removesuffix("@1")]
        assert row.elo_low < true < row.elo_high, (row.label, true, row.elo_low, row.elo_high)
        assert row.elo_low < row.elo < row.elo_high
        assert row.games == 120
        assert row.wins + row.losses == 120 and row.draws == 0
    assert sum(r.elo for r in rows) / 4 == pytest.approx(1500)
    # the online Elo and OpenSkill agree on who is best and worst
    assert max(rows, key=lambda r: r.online_elo).label == "ace@1"
    assert min(rows, key=lambda r: r.mu).label == "weak@1"


def test_a_bot_that_only_loses_ends_last_below_everyone(sqlite_store):
    strength = {"one": 1550.0, "two": 1500.0, "three": 1450.0}
    bots = _bots(sqlite_store, *strength)
    _play_pairs(sqlite_store, bots, strength, games=10, rng=random.Random(7))
    [loser] = _bots(sqlite_store, "doormat")
    for n, other in enumerate(bots * 6):
        seats = [loser, other] if n % 2 else [other, loser]
        _record(sqlite_store, seats, (2, 1) if n % 2 else (1, 2))

    rows = compute(sqlite_store, "risk")
    last = rows[-1]
    assert (last.label, last.rank, last.wins, last.draws, last.losses) == ("doormat@1", 4, 0, 0, 18)
    assert last.score == 0.0
    assert all(last.elo_high < r.elo for r in rows[:-1])
    assert all(last.online_elo < r.online_elo for r in rows[:-1])


def test_wins_draws_and_losses_count_matches_by_first_places(store):
    x, y, z = _bots(store, "x", "y", "z")
    _record(store, [x, y, z], (1, 2, 3))  # x wins
    _record(store, [x, y, z], (1, 1, 3))  # x and y share first: a draw each
    _record(store, [z, x, y], (1, 2, 1))  # y and z share first
    _record(store, [y, z, x], (2, 2, 1))  # x wins; a shared second is a loss
    rows = {r.label: r for r in compute(store, "risk")}
    assert {k: (r.games, r.wins, r.draws, r.losses) for k, r in rows.items()} == {
        "x@1": (4, 2, 1, 1),
        "y@1": (4, 0, 2, 2),
        "z@1": (4, 0, 1, 3),
    }
    # the score is the share of pairwise points: 8 pairs each
    assert rows["x@1"].score == pytest.approx(5.5 / 8)
    assert rows["y@1"].score == pytest.approx(4.5 / 8)
    assert rows["z@1"].score == pytest.approx(2 / 8)
    assert [r.label for r in compute(store, "risk")] == ["x@1", "y@1", "z@1"]


def test_a_match_with_one_bot_in_two_seats_is_left_out(store):
    a, b = _bots(store, "a", "b")
    _record(store, [a, a], (1, 2))
    assert compute(store, "risk") == []
    _record(store, [a, b], (2, 1))
    _record(store, [b, a, a], (3, 1, 2))
    rows = {r.label: r for r in compute(store, "risk")}
    assert {k: (r.games, r.wins, r.losses) for k, r in rows.items()} == {
        "b@1": (1, 1, 0),
        "a@1": (1, 0, 1),
    }


def test_only_finished_matches_of_the_board_s_game_and_variants_count(sqlite_store):
    a, b, c = _bots(sqlite_store, "a", "b", "c")
    _record(sqlite_store, [a, b, c], (1, 2, 3))
    _record(sqlite_store, [a, b], (2, 1), variants=("neutral",))
    _record(sqlite_store, [a, b], (2, 1), game="stratego")
    aborted = uuid.uuid4().hex
    sqlite_store.start_match(aborted, "risk", ["a@1", "c@1"], bot_ids=[a.id, c.id], seed=2)
    sqlite_store.record_result(Outcome(aborted, "aborted", error="lost"))

    assert [(r.label, r.games) for r in compute(sqlite_store, "risk")] == [
        ("a@1", 1),
        ("b@1", 1),
        ("c@1", 1),
    ]
    neutral = compute(sqlite_store, "risk", "neutral")
    assert [(r.label, r.wins, r.losses) for r in neutral] == [("b@1", 1, 0), ("a@1", 0, 1)]
    assert [r.label for r in compute(sqlite_store, "stratego")] == ["b@1", "a@1"]
    assert compute(sqlite_store, "risk", "capital") == []
    assert sqlite_store.boards() == [("risk", ""), ("risk", "neutral"), ("stratego", "")]


def test_refresh_replaces_the_stored_leaderboard(store):
    a, b = _bots(store, "a", "b")
    _record(store, [a, b], (1, 2))
    first = refresh(store, "risk")
    assert [(r.bot_id, r.rank, r.games) for r in store.ratings("risk", "")] == [
        (a.id, 1, 1),
        (b.id, 2, 1),
    ]
    for _ in range(3):
        _record(store, [a, b], (2, 1))
    rows = refresh(store, "risk")
    assert rows != first
    stored = store.ratings("risk", "")
    assert [(r.bot_id, r.rank, r.games, r.wins) for r in stored] == [
        (b.id, 1, 4, 3),
        (a.id, 2, 4, 1),
    ]
    assert [r.elo for r in stored] == pytest.approx([r.elo for r in rows])
    assert [r.elo_low for r in stored] == pytest.approx([r.elo_low for r in rows])
    assert [r.elo_high for r in stored] == pytest.approx([r.elo_high for r in rows])


def test_render_shows_every_bot_with_its_interval(sqlite_store):
    bots = _bots(sqlite_store, "alpha", "beta", "a-rather-long-bot-name")
    _play_pairs(
        sqlite_store,
        bots,
        dict.fromkeys(["alpha", "beta", "a-rather-long-bot-name"], 1500.0),
        4,
        random.Random(1),
    )
    rows = compute(sqlite_store, "risk")
    text = render(rows, "risk (classic)")
    lines = text.splitlines()
    assert lines[0] == "risk (classic)"
    assert "95% interval" in lines[1] and "OpenSkill" in lines[1]
    assert len(lines) == 3 + len(rows)
    for row, line in zip(rows, lines[3:], strict=True):
        assert re.match(rf"\s*{row.rank}\s+{re.escape(row.label)}\s+{row.games}\s", line), line
        assert f"{row.elo_low:.0f}..{row.elo_high:.0f}" in line
        assert f"{row.mu:.1f} ±" in line
    assert len({len(line) for line in lines[1:]}) == 1  # the columns line up
    assert render([], "stratego (classic)") == "stratego (classic)\n  (no finished matches yet)"
