"""Failures in the middle of a tournament through Celery: a worker killed whole, the
referee restarted, the database away while a result is recorded. The tournament
completes each time, no match is lost and none is counted twice (Redis restarted:
test_redis_restarts.py and test_lost_tasks.py).

The matches here are between the ``slow-*`` Risk bots of slow_bots.py (conftest.py
installs it as a plugin): each lasts a few seconds, so there is a middle to hit.
"""

from __future__ import annotations

import json
import time

from arena.engine.seeds import attempt_seed, house_bot_seed

from .conftest import FOUR, verify_from_start
from .conftest import SLOW_RISK as SLOW
from .conftest import SLOW_RISK_BOTS as SLOW_BOTS


def replay_seeds(cluster, match_id: str) -> tuple[int, int | None]:
    """The seed and the deal seed the stored replay was played with."""
    data = json.loads(cluster.store.replay(match_id))
    return data["seed"], data.get("deal_seed")


def bot_class(label: str) -> str:
    """The class slow_bots.py logs for a seat label: ``house:slow-blitz@1`` ->
    ``BlitzRiskBot``."""
    name = label.removeprefix("house:slow-").split("@")[0]
    return f"{name.capitalize()}RiskBot"


def test_a_worker_killed_whole_is_replaced_when_its_lease_lapses(cluster) -> None:
    # the visibility timeout as in production: the broker would hand the lost task out
    # again after 65 minutes; the lease (3 s here, a minute by default) comes first
    cluster.settings.update(ARENA_VISIBILITY_S="3900", ARENA_TASK_TIME_LIMIT_S="3600")
    cluster.settings.update(ARENA_LEASE_S="3", ARENA_TEST_THINK_MS="5")
    w1, w2 = cluster.start_workers("w1", "w2")
    run, tid = cluster.start_tournament(*SLOW, *FOUR, "--bots", SLOW_BOTS)

    def w1_mid_match():
        # claimed is not yet begun: the match has begun once its bots are made (the
        # play log names each bot's class, seat and seed, which follows from the
        # match's own seed)
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
    # played again with a fresh seed (the dead worker's bots saw what the first made), the
    # same deal; the matches played once kept the seeds they were scheduled with
    again = cluster.store.match(victim.id)
    assert again.seed == attempt_seed(victim.seed, 2) and again.deal_seed == victim.deal_seed
    assert replay_seeds(cluster, victim.id) == (again.seed, again.deal_seed)
    for match in matches:
        if match.id != victim.id:
            assert replay_seeds(cluster, match.id) == (match.seed, match.deal_seed)


def test_referee_restarted_mid_tournament(cluster) -> None:
    # long enough for the bots to come back to the new referee
    cluster.settings.update(ARENA_BOT_WAIT_S="60", ARENA_TEST_THINK_MS="5")
    referee = cluster.referee()
    names = ["r-aggressive", "r-defensive", "r-blitz"]
    for name in names:  # SDK bot processes: they reconnect by themselves
        cluster.run_bot(name.replace("r-", "slow-"), name, [referee])
    referee.wait_connected(*(f"{name}@1" for name in names))
    cluster.start_workers("w1", "w2")
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
        again = cluster.store.match(match.id)
        assert again.attempts >= 2
        verify_from_start(cluster, match.id)
        # with a fresh seed (the chain from the first, one link an attempt), the same deal
        seed = match.seed
        for attempt in range(2, again.attempts + 1):
            seed = attempt_seed(seed, attempt)
        assert again.seed == seed != match.seed and again.deal_seed == match.deal_seed
        assert replay_seeds(cluster, match.id) == (seed, match.deal_seed)


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
