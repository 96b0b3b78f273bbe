"""Unattended tournaments recover on their own: real Redis, real Celery workers and beat
as processes, and no client following the tournament (queued with ``arena tournament
create``, or a recurring run), unless the test is about the client's Ctrl-C.

- a worker killed whole under a backlog: beat sweeps in its own process, never behind
  the queue, and the match sent again goes ahead of the backlog;
- Redis away when the last result is written: the end of the tournament is derived by
  the sweep, not left to one message;
- a late RunMatch (a worker's, after its claim was taken back): the referee owns the
  match on a lease, and a sweep takes it back once the referee is gone;
- Ctrl-C of ``arena tournament run --executor celery``: no further match starts;
- a recurring run that lost a worker ends, and the schedule's next run follows.

The matches are between the ``slow-*`` Risk bots of slow_bots.py: seconds each.
"""

from __future__ import annotations

import contextlib
import re
import signal
import threading
import time

from arena.tournament.executor import RefereeClient
from arena.tournament.runner import jobs

from .conftest import ORGANISER_KEY
from .conftest import SLOW_RISK_BOTS as SLOW_BOTS

RISK = ["--game", "risk", "--seats", "3", "--option", "turn-limit=15"]


def create(cluster, *args: str) -> str:
    """``arena tournament create`` (queued for the workers, nobody follows it): its id."""
    done = cluster.arena("tournament", "create", *RISK, *args, "--db", cluster.db)
    assert done.returncode == 0, done.stderr
    return cluster.tournament_id(done.stdout)


def running_on(cluster, tid: str, worker) -> object:
    """A match of the tournament that ``worker`` has claimed and is playing."""
    rows = [m for m in cluster.running(tid) if (m.worker or "").startswith(f"{worker.node} pid ")]
    return rows[0] if rows else None


def test_a_worker_killed_under_a_backlog_has_its_match_played_again_soon(cluster) -> None:
    # a lease of 3 s; the backlog is real: 60 matches of seconds each for 2 workers
    cluster.settings.update(ARENA_LEASE_S="3", ARENA_TEST_THINK_MS="10")
    w1, w2 = cluster.start_workers("w1", "w2")
    beat = cluster.beat()
    tid = create(cluster, "--games-per-pairing", "60", "--bots", SLOW_BOTS)
    victim = cluster.wait(lambda: running_on(cluster, tid, w1), 60, "w1 to play a match")
    time.sleep(1)  # in its middle
    store = cluster.store
    finished = [m.finished for m in store.tournament_matches(tid) if m.finished]
    # at least 2 minutes of work wait behind it: 2 workers, each match some seconds
    queued = cluster.redis.queued()
    assert queued >= 50, queued
    w1.proc.kill()
    killed = time.monotonic()

    def again():
        row = store.match(victim.id)
        return row.attempts >= 2 and row.status in ("running", "finished") and row

    row = cluster.wait(again, 90, "the victim to be played again", interval=0.2)
    assert time.monotonic() - killed < 90
    assert row.worker.startswith(f"{w2.node} pid ")
    assert "re-sent 1 match whose worker stopped renewing its lease (worker died?)" in beat.log()
    # ...ahead of the backlog, which is still there
    assert cluster.redis.queued() >= queued - 20
    assert len(finished) < 10


def test_the_end_of_a_tournament_survives_redis_away_at_its_last_result(cluster) -> None:
    cluster.settings.update(ARENA_TEST_THINK_MS="20")
    cluster.worker("w1")
    cluster.beat()
    tid = create(cluster, "--bots", SLOW_BOTS)
    store = cluster.store
    (match,) = cluster.wait(lambda: cluster.running(tid), 60, "the match to start")
    cluster.redis.stop()  # while it is played: its worker writes the result without Redis
    try:
        cluster.wait(
            lambda: store.match(match.id).status == "finished", 120, "the result to be written"
        )
        time.sleep(2)  # the message that would have ended the tournament is lost
    finally:
        cluster.redis.start()
    back = time.monotonic()
    cluster.wait(
        lambda: store.tournament(tid).status == "finished", 60, "the tournament to end", 0.5
    )
    assert time.monotonic() - back < 60
    cluster.played_once(tid)


def test_a_late_run_match_is_owned_by_its_referee_and_taken_back(cluster) -> None:
    cluster.settings.update(ARENA_LEASE_S="3", ARENA_TEST_THINK_MS="40")
    referee = cluster.referee()
    beat = cluster.beat()
    store = cluster.store
    tournament = store.tournament(create(cluster, "--bots", SLOW_BOTS))  # no worker yet
    (match,) = store.tournament_matches(tournament.id)
    # a worker claimed it, and was taken for dead before its RunMatch went out: the
    # sweep takes the claim back (the task it sends waits: no worker runs yet)
    assert store.claim_match(match.id, "late@box pid 1", -1, referee.address) == 1
    cluster.wait(lambda: store.match(match.id).status == "pending", 30, "the claim taken back")
    # ...then its RunMatch reaches the referee
    job = jobs(store, tournament, [store.match(match.id)])[0]
    client = RefereeClient(referee.address, ORGANISER_KEY)
    threading.Thread(target=lambda: _quietly(client.play, job), daemon=True).start()
    owned = cluster.wait(
        lambda: (row := store.match(match.id)).status == "running" and row, 30, "the referee"
    )
    assert owned.worker.startswith(f"referee {referee.address} pid ")
    assert owned.lease_until is not None and owned.attempts == 2
    time.sleep(3)  # past a lease: the referee renews it
    assert store.match(match.id).status == "running"
    referee.proc.kill()  # the referee dies with it

    def reclaimed():
        row = store.match(match.id)
        return row.status != "running" and row

    row = cluster.wait(reclaimed, 60, "the sweep to take the match back", interval=0.2)
    assert row.error is None or "lapsed" in row.error or row.status == "finished"
    assert re.search(r"re-sent 1 match whose worker stopped renewing", beat.log())
    cluster.worker("w1")  # a worker plays it (house bots: in the worker)
    cluster.wait(
        lambda: store.tournament(tournament.id).status == "finished", 120, "the tournament"
    )
    cluster.played_once(tournament.id)
    assert store.match(match.id).attempts == 3


def _quietly(call, *args) -> None:
    with contextlib.suppress(Exception):  # the referee killed under the call
        call(*args)


def test_ctrl_c_of_a_distributed_tournament_starts_no_further_match(cluster) -> None:
    cluster.settings.update(ARENA_TEST_THINK_MS="10")
    w1, w2 = cluster.start_workers("w1", "w2")
    run, tid = cluster.start_tournament(
        *RISK, "--quiet", "--games-per-pairing", "16", "--bots", SLOW_BOTS
    )
    store = cluster.store
    cluster.wait(lambda: cluster.running(tid), 120, "a match to start")
    run.popen.send_signal(signal.SIGINT)  # Ctrl-C
    output = cluster.finish(run, timeout=60)
    assert run.popen.returncode == 130, output
    assert "stopped: resume with" in output
    assert store.tournament(tid).status == "stopped"
    begun = {m.id for m in store.tournament_matches(tid) if m.attempts > 0}
    assert cluster.redis.queued() == 0  # its queued tasks were withdrawn
    # the matches in play end as they would; no other one starts
    cluster.wait(lambda: not cluster.running(tid), 60, "the matches in play to end")
    time.sleep(5)  # a match lasts seconds: the workers had time to take more
    assert {m.id for m in store.tournament_matches(tid) if m.attempts > 0} == begun
    assert len(begun) < 16
    # a local resume plays the rest, each match once
    done = cluster.arena(
        "tournament", "resume", tid, "--executor", "local", "--workers", "2",
        "--db", cluster.db, "--quiet", timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    cluster.played_once(tid)
    assert all(m.attempts == 1 for m in store.tournament_matches(tid))
    assert w1.proc.alive() and w2.proc.alive()


def test_a_recurring_schedule_whose_run_lost_a_worker_keeps_its_next_run(cluster) -> None:
    cluster.settings.update(ARENA_LEASE_S="3", ARENA_TEST_THINK_MS="10")
    w1, _ = cluster.start_workers("w1", "w2")
    created = cluster.arena(
        *("tournament", "create", *RISK, "--games-per-pairing", "8", "--every", "2s", "--now"),
        *("--bots", SLOW_BOTS, "--db", cluster.db),
    )
    assert created.returncode == 0, created.stderr
    cluster.beat()
    store = cluster.store
    first = cluster.wait(store.tournaments, 60, "the first run")[0]
    victim = cluster.wait(lambda: running_on(cluster, first.id, w1), 60, "w1 to play a match")
    time.sleep(1)
    w1.proc.kill()

    def second_run():
        runs = store.tournaments()
        return len(runs) >= 2 and runs[1]

    second = cluster.wait(second_run, 150, "the schedule's next run", interval=0.5)
    assert second.name.endswith(" #2")
    cluster.wait(lambda: store.tournament(first.id).status == "finished", 60, "the first run")
    cluster.played_once(first.id)
    assert store.match(victim.id).attempts == 2
