"""Recurring tournaments in the store: due runs are claimed once, missed runs are not
made up, a run does not start while the previous one is going, a paused schedule makes
no run and resumes on its cadence, a deleted one never runs again (its runs stay), and a
run takes the newest version of every bot that plays the game."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from arena.cli.tournament import parse_duration
from arena.store import Claim, Outcome, RecurringRow, Store
from arena.store.db import CREATING_S
from arena.tournament.runner import TournamentSpec, create_tournament

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def recurring(store: Store, every_s: int = 3600, first: datetime = T0, **extra) -> RecurringRow:
    return store.add_recurring(
        RecurringRow(
            id=extra.get("id", uuid.uuid4().hex[:12]),
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
    assert [(c.recurring.id, c.run, c.skipped) for c in claimed] == [(row.id, 1, False)]
    assert store.claim_due(T0) == []  # the same run again: nothing
    (after,) = store.recurring()
    assert after.runs == 1
    assert after.next_run.replace(tzinfo=UTC) == T0 + timedelta(hours=1)
    assert after.last_tournament_id == claimed[0].tournament_id  # named by the claim


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


# --- runs do not overlap ---------------------------------------------------------------


def play(store: Store, claim: Claim) -> str:
    """The claimed run's tournament (two house bots, one match), written as beat does."""
    tournament = create_tournament(
        store,
        TournamentSpec(
            game="stratego",
            bots=["house:random", "house:heuristic"],
            seats=2,
            name=f"nightly #{claim.run}",
            tournament_id=claim.tournament_id,
        ),
    )
    assert tournament.id == claim.tournament_id
    return tournament.id


def finish(store: Store, tournament_id: str, status: str = "finished") -> None:
    for match in store.tournament_matches(tournament_id):
        store.record_result(Outcome(match.id, status, reason="victory", places=(1, 2)))


def test_a_run_is_not_made_while_the_previous_one_is_going_and_its_time_moves_on(store):
    recurring(store, game="stratego")
    (first,) = store.claim_due(T0)
    run = play(store, first)
    (second,) = store.claim_due(T0 + timedelta(hours=1))  # run 1 has a pending match
    assert second.skipped and second.recurring.last_tournament_id == run
    (after,) = store.recurring()
    assert (after.runs, after.last_tournament_id) == (1, run)
    assert after.next_run.replace(tzinfo=UTC) == T0 + timedelta(hours=2)
    store.start_match(store.tournament_matches(run)[0].id, "stratego", ["a", "b"])
    (third,) = store.claim_due(T0 + timedelta(hours=2))  # now it is being played
    assert third.skipped
    finish(store, run)
    (fourth,) = store.claim_due(T0 + timedelta(hours=3))
    assert (fourth.skipped, fourth.run) == (False, 2)
    assert store.recurring()[0].last_tournament_id == fourth.tournament_id != run


@pytest.mark.parametrize("ended", ["aborted", "failed"])
def test_a_previous_run_left_with_matches_to_resume_does_not_hold_the_schedule(store, ended):
    recurring(store, game="stratego")
    (first,) = store.claim_due(T0)
    finish(store, play(store, first), ended)  # given up on: a resume plays it, not beat
    (second,) = store.claim_due(T0 + timedelta(hours=1))
    assert (second.skipped, second.run) == (False, 2)


def test_a_stopped_previous_run_does_not_hold_the_schedule(store):
    recurring(store, game="stratego")
    (first,) = store.claim_due(T0)
    store.set_tournament_status(play(store, first), "stopped")
    (second,) = store.claim_due(T0 + timedelta(hours=1))
    assert not second.skipped


def test_a_claimed_run_being_created_holds_the_schedule_until_its_creator_is_presumed_dead(
    store,
):
    recurring(store, every_s=60)
    assert store.claim_due(T0)  # claimed; no tournament written (yet)
    (second,) = store.claim_due(T0 + timedelta(minutes=1))
    assert second.skipped
    (third,) = store.claim_due(T0 + timedelta(seconds=CREATING_S + 60))
    assert (third.skipped, third.run) == (False, 2)


def test_a_released_claim_leaves_the_schedule_as_it_was(store):
    recurring(store, every_s=60)
    (first,) = store.claim_due(T0)
    store.release(first)  # e.g. too few bots: no run this time
    (after,) = store.recurring()
    assert (after.runs, after.last_tournament_id, after.claimed) == (0, None, None)
    (second,) = store.claim_due(T0 + timedelta(minutes=1))
    assert (second.skipped, second.run) == (False, 1)


# --- pause, resume, delete ---------------------------------------------------------------


def test_a_paused_schedule_makes_no_run_and_its_next_time_stays(store):
    row = recurring(store)
    assert store.pause_recurring(row.id).enabled is False
    assert store.pause_recurring(row.id).enabled is False  # again: nothing changes
    for hours in (0, 1, 30):
        assert store.claim_due(T0 + timedelta(hours=hours)) == []
    (after,) = store.recurring()
    assert (after.runs, after.next_run.replace(tzinfo=UTC)) == (0, T0)


def test_resuming_keeps_the_cadence_and_makes_up_no_missed_run(store):
    row = recurring(store)
    store.pause_recurring(row.id)
    resumed = store.resume_recurring(row.id, T0 + timedelta(hours=5, minutes=30))
    assert resumed.enabled
    assert resumed.next_run == T0 + timedelta(hours=6)  # not at once, not five runs
    assert store.claim_due(T0 + timedelta(hours=5, minutes=59)) == []
    claimed = store.claim_due(T0 + timedelta(hours=6))
    assert [(c.run, c.skipped) for c in claimed] == [(1, False)]


def test_resuming_before_the_next_time_keeps_it(store):
    row = recurring(store)
    store.pause_recurring(row.id)
    later = store.resume_recurring(row.id, T0 - timedelta(minutes=10))
    assert later.next_run.replace(tzinfo=UTC) == T0
    again = store.resume_recurring(row.id, T0 + timedelta(hours=3))  # not paused: nothing
    assert again.next_run.replace(tzinfo=UTC) == T0


def test_a_deleted_schedule_never_runs_again_and_its_runs_stay(store):
    row = recurring(store, game="stratego")
    (claim,) = store.claim_due(T0)
    run = play(store, claim)
    finish(store, run)
    assert store.delete_recurring(row.id).id == row.id
    assert store.recurring() == []
    assert store.claim_due(T0 + timedelta(days=30)) == []
    assert store.tournament(run).name == "nightly #1"
    assert [m.status for m in store.tournament_matches(run)] == ["finished"]


def test_unknown_ids_change_nothing_and_a_unique_prefix_will_do(store):
    row = recurring(store, id="abcd12340000")
    recurring(store, id="abce56780000")
    for call in (store.pause_recurring, store.delete_recurring, store.find_recurring):
        assert call("feedbeef0000") is None
        assert call("") is None
    assert store.resume_recurring("feedbeef0000", T0) is None
    assert store.find_recurring("abcd").id == row.id
    assert store.pause_recurring("abcd1").id == row.id
    assert store.find_recurring("abc") is None  # too short to be taken as a prefix
    assert store.find_recurring("abcd%") is None  # a LIKE wildcard is not a prefix
    assert len(store.recurring()) == 2


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
