"""The Celery workers' claims on matches: a guarded UPDATE numbered by attempt (the
fencing token), a lease that lapses, retries that come due, tasks found lost. On SQLite
and on PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from arena.store import Outcome
from arena.tournament.runner import TournamentSpec, create_tournament

BOTS = ["house:random", "house:aggressive", "house:defensive"]


@pytest.fixture
def tid(store) -> str:
    spec = TournamentSpec(game="risk", bots=BOTS, seats=3, games_per_pairing=4)
    tournament = create_tournament(store, spec)
    store.set_tournament_status(tournament.id, "running")
    return tournament.id


def _ids(store, tid: str) -> list[str]:
    return [m.id for m in store.tournament_matches(tid)]


def _finished(match_id: str) -> Outcome:
    return Outcome(match_id, "finished", reason="conquest", places=(1, 2, 3))


def test_a_match_is_claimed_once_and_the_claim_is_numbered(store, tid) -> None:
    m = _ids(store, tid)[0]
    assert store.claim_match(m, "w1", 60, "ref:1") == 1
    assert store.claim_match(m, "w2", 60) is None  # the second delivery does nothing
    row = store.match(m)
    assert (row.status, row.attempts, row.worker, row.referee) == ("running", 1, "w1", "ref:1")
    assert row.lease_until.replace(tzinfo=UTC) > datetime.now(UTC)
    assert store.renew_lease(m, 1, 60)
    assert store.record_result(_finished(m), attempt=1)
    assert store.claim_match(m, "w2", 60) is None  # finished: nothing to claim
    assert store.match(m).lease_until is None


def test_a_lapsed_claim_is_reclaimed_and_its_worker_is_fenced_out(store, tid) -> None:
    m, other = _ids(store, tid)[:2]
    assert store.claim_match(m, "w1", -1) == 1  # a lease that has lapsed already
    assert store.claim_match(other, "w3", 60) == 1  # a live one
    assert store.reclaim_stale([tid]) == [m]
    row = store.match(m)
    assert (row.status, row.error) == ("pending", "the lease of w1 lapsed")
    assert store.reclaim_stale([tid]) == []  # handed out once
    assert store.claim_match(m, "w2", 60) == 2
    # w1 comes back: it can neither renew nor write over w2's claim
    assert not store.renew_lease(m, 1, 60)
    assert not store.record_result(_finished(m), attempt=1)
    assert not store.record_result(Outcome(m, "aborted", error="late"), attempt=1)
    assert store.match(m).status == "running"
    assert store.record_result(_finished(m), attempt=2)
    assert store.match(m).attempts == 2


def test_a_lapsed_claim_that_nobody_took_again_keeps_its_result(store, tid) -> None:
    m = _ids(store, tid)[0]
    assert store.claim_match(m, "w1", -1) == 1
    assert store.reclaim_stale([tid]) == [m]
    # its worker was slow, not dead (a store away a while): the match it played counts,
    # and the task sent again finds nothing to play
    assert store.record_result(_finished(m), attempt=1)
    assert store.claim_match(m, "w2", 60) is None
    assert store.match(m).attempts == 1


def test_a_match_put_off_is_sent_again_once_its_retry_is_due(store, tid) -> None:
    m = _ids(store, tid)[0]
    assert store.claim_match(m, "w1", 60) == 1
    assert store.put_off(m, 3600, "referee away", attempt=1)
    row = store.match(m)
    assert (row.status, row.retries, row.error) == ("pending", 1, "referee away")
    assert row.waiting_since is not None and row.lease_until is None
    assert store.claim_match(m, "w2", 60) is None  # not due: an early delivery waits
    assert store.due_retries([tid]) == []
    assert not store.put_off(m, 0, "stale", attempt=0)  # not the caller's claim
    assert store.put_off(m, -1, "bots not connected")  # nobody plays it: allowed
    assert store.match(m).waiting_since == row.waiting_since  # the wait counts from the first
    assert store.due_retries([tid]) == [m]
    assert store.due_retries() == []  # each due retry is handed out once
    assert store.claim_match(m, "w2", 60) == 2


def test_pending_matches_whose_tasks_were_lost_are_found(store, tid) -> None:
    ids = _ids(store, tid)
    assert store.unclaimed(-1, [tid]) == []  # never sent: nobody waits for them
    store.mark_sent(ids)
    assert store.claim_match(ids[0], "w1", 60) == 1
    store.delivered(ids[0])  # running: nothing changes
    assert store.match(ids[0]).status == "running"
    assert store.unclaimed(3600, [tid]) == []  # sent just now
    assert sorted(store.unclaimed(-1)) == sorted(ids[1:])  # every running tournament's
    store.set_tournament_status(tid, "stopped")
    assert store.unclaimed(-1) == []  # a stopped tournament is left alone
    assert sorted(store.unclaimed(-1, [tid])) == sorted(ids[1:])  # unless named


def test_sending_again_makes_earlier_runs_leftovers_claimable(store, tid) -> None:
    aborted, failed, orphan, leased = _ids(store, tid)[:4]
    store.record_result(Outcome(aborted, "aborted", error="x"))
    store.record_result(Outcome(failed, "failed", error="y"))
    # a local run that died: running, its lease lapsed
    store.start_match(orphan, "risk", BOTS, owner="local gone", lease_s=-1)
    store.claim_match(leased, "w1", 60)
    store.mark_sent([aborted, failed, orphan, leased])
    states = store.match_states([aborted, failed, orphan, leased])
    assert states == {
        aborted: "pending",
        failed: "pending",
        orphan: "pending",
        leased: "running",
    }
    assert store.match(orphan).lease_until is None
    assert store.tournaments_of([aborted, leased]) == {tid}


def test_every_running_match_has_a_lease_and_an_owner(store, tid) -> None:
    # a referee starts a match nobody holds (a worker's RunMatch that came after its
    # claim was taken back): the referee owns it, on a lease it renews
    m, other = _ids(store, tid)[:2]
    assert store.claim_match(m, "w1", -1) == 1
    assert store.reclaim_stale([tid]) == [m]  # the worker taken for dead
    started = store.start_match(m, "risk", BOTS, referee="ref:1", owner="referee r1", lease_s=60)
    assert started is not None and started.attempt == 2
    row = store.match(m)
    assert (row.status, row.worker) == ("running", "referee r1")
    assert row.lease_until.replace(tzinfo=UTC) > datetime.now(UTC)
    assert store.claim_match(m, "w2", 60) is None  # the task sent again does nothing
    assert store.renew_owned("referee r1", [m, other], 60) == [m]
    assert store.renew_owned("referee r2", [m], 60) == []  # not its match
    assert [r.id for r in store.live_leases(tid)] == [m]
    store.mark_sent([m])  # a client sending its matches leaves a live one alone
    assert store.match(m).status == "running"
    # the referee dies: once its lease lapses, the sweep takes the match back
    assert store.renew_owned("referee r1", [m], -1) == [m]
    assert store.live_leases(tid) == []
    assert store.reclaim_stale([tid]) == [m]
    row = store.match(m)
    assert (row.status, row.error) == ("pending", "the lease of referee r1 lapsed")
    # an owner may give up its own match; another writer may not give up a held one
    assert store.start_match(m, "risk", BOTS, owner="local a", lease_s=60)
    assert not store.record_result(Outcome(m, "aborted", error="x"), owner="local b")
    assert store.record_result(Outcome(m, "aborted", error="x"), owner="local a")


def test_a_stopped_tournament_starts_no_match(store, tid) -> None:
    m, other = _ids(store, tid)[:2]
    store.set_tournament_status(tid, "stopped")
    assert store.claim_match(m, "w1", 60) is None  # its queued tasks do nothing
    store.set_tournament_status(tid, "running")
    assert store.claim(other, "w1", 60) == (1, store.match(other).seed)


def test_a_lost_pool_process_gives_its_match_back_at_once(store, tid) -> None:
    m = _ids(store, tid)[0]
    assert store.claim_match(m, "w1 pid 7", 60) == 1
    assert not store.release_lost(m, "w1 pid 8")  # another process's claim
    assert store.release_lost(m, "w1 pid 7")
    row = store.match(m)
    assert (row.status, row.lease_until, row.error) == (
        "pending",
        None,
        "the process of w1 pid 7 died",
    )
    assert store.claim_match(m, "w2 pid 9", 60) == 2


def test_a_tournament_whose_matches_all_finished_is_finished_by_a_sweep(store, tid) -> None:
    ids = _ids(store, tid)
    for m in ids[:-1]:
        assert store.record_result(_finished(m))
    assert store.finish_complete() == []  # one match left
    assert store.record_result(_finished(ids[-1]))
    assert store.finish_complete([tid]) == [tid]
    assert store.tournament(tid).status == "finished"
    assert store.tournament(tid).finished is not None
    assert store.finish_complete() == []  # once


def test_the_referee_of_a_claimed_match_counts_no_other_attempt(store, tid) -> None:
    m = _ids(store, tid)[0]
    assert store.claim_match(m, "w1", 60, "ref:1") == 1
    assert store.start_match(m, "risk", BOTS, referee="ref:1")  # the referee starts it
    row = store.match(m)
    assert (row.status, row.attempts, row.worker) == ("running", 1, "w1")
    assert store.record_result(_finished(m), attempt=1)


CLAIM = """
import sys
from arena.store import Store
store = Store(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
print(store.claim_match(sys.argv[2], sys.argv[3], 60))
"""


def test_deliveries_racing_from_processes_claim_once(store, tid, race) -> None:
    m = _ids(store, tid)[0]
    outputs = race(CLAIM, [[store.url, m, f"w{n}"] for n in range(4)])
    assert sorted(outputs) == ["1", "None", "None", "None"]
    assert store.match(m).attempts == 1


def test_a_delivered_task_is_not_taken_for_lost(store, tid) -> None:
    m = _ids(store, tid)[0]
    store.mark_sent([m])
    sent = store.match(m).sent
    store.delivered(m)  # a worker got the task and asks the referees before it claims
    assert store.match(m).sent > sent


def test_only_the_worker_that_holds_a_match_marks_it_unfinished(store, tid) -> None:
    m = _ids(store, tid)[0]
    assert store.claim_match(m, "w1", 60, "ref:1") == 1
    # the referee aborts it (shutting down): the worker hears it too, and puts it off
    assert not store.record_result(Outcome(m, "aborted", error="referee shutting down"))
    assert store.match(m).status == "running"
    assert store.record_result(Outcome(m, "aborted", error="gave up"), attempt=1)
    assert store.match(m).status == "aborted"
    # a finished result from the referee counts whoever holds the match
    assert store.claim_match(m, "w2", 60, "ref:1") == 2
    assert store.record_result(_finished(m))


def test_a_match_that_keeps_losing_its_worker_is_given_up(store, tid) -> None:
    m = _ids(store, tid)[0]
    for attempt in (1, 2):
        assert store.claim_match(m, "w1", -1) == attempt
        assert store.reclaim_stale([tid], max_attempts=2) == ([m] if attempt < 2 else [])
    row = store.match(m)
    assert (row.status, row.error) == ("aborted", "the lease of w1 lapsed, 2 attempts: given up")
