"""Failures in the middle of a tournament through Celery: a worker killed, Redis
restarted, the referee restarted. The tournament completes each time, no match is lost
and none is counted twice.

The matches here are between the ``slow-*`` Risk bots of slow_bots.py (conftest.py
installs it as a plugin): each lasts a few seconds, so there is a middle to hit.
"""

from __future__ import annotations

import json
import time

from arena.engine import replay
from arena.engine.seeds import house_bot_seed

SLOW_BOTS = "slow-aggressive,slow-defensive,slow-blitz"
#: three bots, three seats: one match of a few seconds per game of the pairing
SLOW = ["--game", "risk", "--seats", "3", "--option", "turn-limit=15", "--quiet"]
FOUR = ["--games-per-pairing", "4"]


def bot_class(label: str) -> str:
    """The class slow_bots.py logs for a seat label: ``house:slow-blitz@1`` ->
    ``BlitzRiskBot``."""
    name = label.removeprefix("house:slow-").split("@")[0]
    return f"{name.capitalize()}RiskBot"


def verify_from_start(cluster, match_id: str) -> None:
    """The stored replay re-simulates from the match's first deal to its end."""
    data = cluster.store.replay(match_id)
    assert data is not None, match_id
    record = replay.from_json(json.loads(data))
    assert record.result is not None
    assert replay.verify(record) == len(record.steps) > 0


def test_a_worker_killed_whole_is_replaced_when_its_lease_lapses(cluster) -> None:
    # the visibility timeout as in production: the broker would hand the lost task out
    # again after 65 minutes; the lease (3 s here, a minute by default) comes first
    cluster.settings.update(ARENA_VISIBILITY_S="3900", ARENA_TASK_TIME_LIMIT_S="3600")
    cluster.settings.update(ARENA_LEASE_S="3", ARENA_TEST_THINK_MS="5")
    w1 = cluster.worker("w1")
    w2 = cluster.worker("w2")
    run, tid = cluster.start_tournament(*SLOW, *FOUR, "--bots", SLOW_BOTS)

    def w1_mid_match():
        # claimed is not yet begun: the match has begun once its bots are made (the
        # play log names each bot's class, seat and seed, which follows from the
        # match's; the rotations of a deal share its seed, so the seed alone could be
        # another rotation's)
        made = cluster.play_log.read_text() if cluster.play_log.exists() else ""
        for match_id in cluster.playing(w1):
            row = cluster.store.match(match_id)
            if row is not None and row.status == "running":
                lines = {
                    f"{bot_class(label)} seat {seat} seed {house_bot_seed(row.seed, seat)}\n"
                    for seat, label in enumerate(row.players)
                }
                if all(line in made for line in lines):
                    return row
        return None

    victim = cluster.wait(w1_mid_match, 60, "w1 to be in the middle of a match")
    assert victim.worker.startswith(f"{w1.node} pid ")
    w1.proc.kill()  # the worker and its pool process, at once, as in a crash
    killed = time.monotonic()

    stopped = cluster.store.match(victim.id)
    assert (stopped.status, stopped.attempts) == ("running", 1)  # killed half-way
    output = cluster.finish(run, timeout=120)
    assert time.monotonic() - killed < 120
    assert run.popen.returncode == 0, output + cluster.logs()
    assert "re-sent 1 match whose worker stopped renewing its lease (worker died?)" in output
    assert f"tournament {tid}: finished, 4/4 matches finished" in output
    cluster.played_once(tid)
    assert cluster.board(output) == {f"house:{bot}@1": 4 for bot in SLOW_BOTS.split(",")}
    # w2 played the victim again from its start; every match has one result, and was
    # started once, but the victim, twice (once by the dead worker)
    assert victim.id not in w1.succeeded().values()
    matches = cluster.store.tournament_matches(tid)
    assert {m.id: m.attempts for m in matches} == {
        m.id: 2 if m.id == victim.id else 1 for m in matches
    }
    assert cluster.plays(seats=3) == 5  # counted by the bots: four matches, one again
    assert cluster.store.match(victim.id).worker.startswith(f"{w2.node} pid ")
    verify_from_start(cluster, victim.id)


def test_redis_restarted_mid_tournament(cluster) -> None:
    cluster.settings.update(ARENA_VISIBILITY_S="15", ARENA_TASK_TIME_LIMIT_S="10")
    cluster.settings.update(ARENA_TEST_THINK_MS="5")
    workers = [cluster.worker("w1"), cluster.worker("w2")]
    run, tid = cluster.start_tournament(*SLOW, *FOUR, "--bots", SLOW_BOTS)
    cluster.wait(lambda: cluster.running(tid), 60, "a match to start")

    cluster.redis.stop()
    cluster.wait(
        lambda: all("Connection to broker lost" in w.log() for w in workers),
        60,
        "both workers to lose the broker",
    )
    # the matches in flight end with Redis away: their results reach the store, not Redis
    cluster.wait(lambda: not cluster.running(tid), 60, "the matches in flight to end")
    # no worker can take another match without Redis: the rest wait for it
    assert cluster.store.progress(tid).get("finished", 0) < 4
    assert run.alive()
    cluster.redis.start()

    output = cluster.finish(run)
    assert run.popen.returncode == 0, output + cluster.logs()
    assert f"tournament {tid}: finished, 4/4 matches finished" in output
    cluster.played_once(tid)
    assert cluster.board(output) == {f"house:{bot}@1": 4 for bot in SLOW_BOTS.split(",")}


def test_referee_restarted_mid_tournament(cluster) -> None:
    # long enough for the bots to come back to the new referee
    cluster.settings.update(ARENA_BOT_WAIT_S="60", ARENA_TEST_THINK_MS="5")
    referee = cluster.referee()
    names = ["r-aggressive", "r-defensive", "r-blitz"]
    for name in names:  # SDK bot processes: they reconnect by themselves
        cluster.run_bot(name.replace("r-", "slow-"), name, [referee])
    referee.wait_connected(*(f"{name}@1" for name in names))
    cluster.worker("w1")
    cluster.worker("w2")
    bots = ",".join(names)
    run, tid = cluster.start_tournament(*SLOW, "--games-per-pairing", "2", "--bots", bots)

    # the matches in flight (each lasts seconds, and has just started); once the referee
    # is gone their workers put them off at once, to be played again
    in_flight = cluster.wait(lambda: cluster.running(tid), 60, "a match to start on the referee")
    referee.proc.kill()
    assert all(m.attempts == 1 for m in in_flight)
    assert all(m.referee == referee.address for m in in_flight)
    health = ("health", "--referee", referee.address, "--timeout", "2")
    assert cluster.arena(*health).returncode == 1  # compose's health check: it is down
    again = cluster.referee(port=referee.port)  # same port, same database
    assert again.address == referee.address
    assert cluster.arena(*health).returncode == 0  # ...and up again

    output = cluster.finish(run)
    assert run.popen.returncode == 0, output + cluster.logs()
    assert f"tournament {tid}: finished, 2/2 matches finished" in output
    cluster.played_once(tid)
    assert cluster.board(output) == {f"{name}@1": 2 for name in names}
    for match in in_flight:  # played again from the start, by the new referee
        assert cluster.store.match(match.id).attempts >= 2
        verify_from_start(cluster, match.id)


def test_redis_restarted_without_persistence(cluster) -> None:
    cluster.settings.update(ARENA_TEST_THINK_MS="5")
    cluster.worker("w1")
    run, tid = cluster.start_tournament(*SLOW, *FOUR, "--bots", SLOW_BOTS)
    cluster.wait(lambda: cluster.running(tid), 60, "a match to start")
    assert cluster.redis.queued() == 3  # the others wait in the queue...

    cluster.redis.restart_empty()  # ...which is gone
    assert cluster.redis.queued() == 0

    output = cluster.finish(run)
    assert run.popen.returncode == 0, output + cluster.logs()
    assert "re-sent 3 matches whose tasks were lost (broker restarted?)" in output
    assert f"tournament {tid}: finished, 4/4 matches finished" in output
    cluster.played_once(tid)
    matches = cluster.store.tournament_matches(tid)
    assert all(m.attempts == 1 for m in matches)
    assert cluster.plays(seats=3) == 4  # counted by the bots: none played twice


def test_a_database_outage_while_recording_keeps_the_played_result(cluster) -> None:
    cluster.settings.update(ARENA_TEST_THINK_MS="20", ARENA_LEASE_S="30")
    worker = cluster.worker("w1")
    run, tid = cluster.start_tournament(*SLOW, "--bots", SLOW_BOTS)
    (match,) = cluster.wait(lambda: cluster.running(tid), 60, "the match to start")

    cluster.database(allow=False)  # mid-match: every connection thrown out, none let in
    try:
        # the match ends and its worker cannot write the result: it waits, playing nothing
        cluster.wait(lambda: "the store is away" in worker.log(), 120, "the write to fail")
        time.sleep(3)  # an outage of some seconds, past the first retries
        assert run.alive()
    finally:
        cluster.database(allow=True)

    output = cluster.finish(run)
    assert run.popen.returncode == 0, output + cluster.logs()
    assert f"tournament {tid}: finished, 1/1 matches finished" in output
    cluster.played_once(tid)
    after = cluster.store.match(match.id)
    assert after.attempts == 1 and cluster.plays(seats=3) == 1  # played once, kept
    verify_from_start(cluster, match.id)


def test_a_queued_tournament_survives_a_redis_without_persistence(cluster) -> None:
    # nobody follows a queued (or recurring) run: beat's sweep finds its lost tasks
    cluster.settings.update(ARENA_TEST_THINK_MS="5")
    worker = cluster.worker("w1")
    cluster.beat()
    risk = [arg for arg in SLOW if arg != "--quiet"]
    created = cluster.arena(
        *("tournament", "create", *risk, *FOUR, "--bots", SLOW_BOTS, "--db", cluster.db)
    )
    assert created.returncode == 0, created.stderr
    tid = cluster.tournament_id(created.stdout)
    cluster.wait(lambda: cluster.running(tid), 60, "a match to start")

    cluster.redis.restart_empty()

    store = cluster.store
    cluster.wait(lambda: store.tournament(tid).status == "finished", 180, "the run to finish")
    cluster.played_once(tid)
    assert all(m.attempts == 1 for m in store.tournament_matches(tid))
    assert cluster.plays(seats=3) == 4
    assert "re-sent 3 matches whose tasks were lost (broker restarted?)" in worker.log()


def test_a_tournament_whose_schedule_task_was_lost_is_played(cluster) -> None:
    # queued while no worker runs, then the broker loses the one schedule task: the
    # matches were marked sent when it was queued, so beat's sweep sends them itself
    cluster.settings.update(ARENA_TEST_THINK_MS="5")
    risk = [arg for arg in SLOW if arg != "--quiet"]
    created = cluster.arena(
        *("tournament", "create", *risk, *FOUR, "--bots", SLOW_BOTS, "--db", cluster.db)
    )
    assert created.returncode == 0, created.stderr
    tid = cluster.tournament_id(created.stdout)
    store = cluster.store
    assert store.tournament(tid).status == "running"

    cluster.redis.restart_empty()
    worker = cluster.worker("w1")
    cluster.beat()

    cluster.wait(lambda: store.tournament(tid).status == "finished", 180, "the run to finish")
    cluster.played_once(tid)
    assert all(m.attempts == 1 for m in store.tournament_matches(tid))
    assert "re-sent 4 matches whose tasks were lost (broker restarted?)" in worker.log()
