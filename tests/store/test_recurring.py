"""Recurring tournaments in the store: due runs are claimed once, missed runs are not
made up, and a run takes the newest version of every bot that plays the game."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from arena.cli import parse_duration
from arena.store import RecurringRow, Store

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def recurring(store: Store, every_s: int = 3600, first: datetime = T0, **extra) -> RecurringRow:
    return store.add_recurring(
        RecurringRow(
            id=uuid.uuid4().hex[:12],
            name="nightly",
            game=extra.get("game", "risk"),
            variants=[],
            options={},
            seats=3,
            games_per_pairing=1,
            house_bots=[],
            every_s=every_s,
            next_run=first,
            runs=0,
            enabled=extra.get("enabled", True),
            created=T0,
        )
    )


def test_nothing_is_due_before_its_time(store):
    recurring(store)
    assert store.claim_due(T0 - timedelta(seconds=1)) == []


def test_a_due_run_is_claimed_once_and_the_next_one_is_a_period_later(store):
    row = recurring(store)
    claimed = store.claim_due(T0)
    assert [r.id for r in claimed] == [row.id]
    assert store.claim_due(T0) == []  # the same run again: nothing
    (after,) = store.recurring()
    assert after.runs == 1
    assert after.next_run.replace(tzinfo=UTC) == T0 + timedelta(hours=1)


def test_missed_runs_are_not_made_up(store):
    recurring(store)
    late = T0 + timedelta(hours=5, minutes=30)  # beat was down for five periods
    assert len(store.claim_due(late)) == 1
    (after,) = store.recurring()
    assert after.next_run.replace(tzinfo=UTC) == T0 + timedelta(hours=6)
    assert after.runs == 1


def test_a_disabled_definition_never_runs(store):
    recurring(store, enabled=False)
    assert store.claim_due(T0 + timedelta(days=3)) == []


def test_of_several_claimers_at_once_only_one_gets_the_run(store):
    recurring(store)
    claims: list[int] = []
    barrier = threading.Barrier(6)

    def claim() -> None:
        barrier.wait()
        claims.append(len(store.claim_due(T0)))

    threads = [threading.Thread(target=claim) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(claims) == [0, 0, 0, 0, 0, 1]
    assert store.recurring()[0].runs == 1


def test_latest_bots_are_the_newest_unrevoked_version_of_each_bot_of_the_game(store):
    old, _ = store.register_bot("alpha", ["risk"])
    new, _ = store.register_bot("alpha", ["risk"])
    store.register_bot("beta")  # no games: plays everything
    store.register_bot("gamma", ["stratego"])
    revoked, _ = store.register_bot("delta", ["risk"])
    store.revoke_bot(revoked.id)
    store.house_bot("random")
    assert [b.label for b in store.latest_bots("risk")] == ["alpha@2", "beta@1"]
    assert [b.label for b in store.latest_bots("stratego")] == ["beta@1", "gamma@1"]
    assert old.id != new.id


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90), ("90s", 90), ("10m", 600), ("6h", 21600), ("1d", 86400), ("1.5h", 5400)],
)
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "h", "six hours", "0s", "-5m"])
def test_bad_durations_are_refused_with_the_value(text):
    with pytest.raises(ValueError, match="--every"):
        parse_duration(text)
