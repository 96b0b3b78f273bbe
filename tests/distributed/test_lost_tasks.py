"""Tasks that a Redis without persistence lost, for a tournament that nobody follows
(queued with ``arena tournament create``): beat's sweep sends its matches again,
and it is played to its end, each match once.

The matches here are between the ``slow-*`` Risk bots of slow_bots.py (conftest.py
installs it as a plugin): each lasts a few seconds, so there is a middle to hit.
"""

from __future__ import annotations

from .conftest import FOUR
from .conftest import SLOW_RISK as SLOW
from .conftest import SLOW_RISK_BOTS as SLOW_BOTS


def test_a_queued_tournament_survives_a_redis_without_persistence(cluster) -> None:
    # nobody follows a queued (or recurring) run: beat's sweep finds its lost tasks
    cluster.settings.update(ARENA_TEST_THINK_MS="5")
    cluster.worker("w1")
    beat = cluster.beat()
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
    # beat sweeps in its own process, and says so there
    assert "re-sent 3 matches whose tasks were lost (broker restarted?)" in beat.log()


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
    cluster.worker("w1")
    beat = cluster.beat()

    cluster.wait(lambda: store.tournament(tid).status == "finished", 180, "the run to finish")
    cluster.played_once(tid)
    assert all(m.attempts == 1 for m in store.tournament_matches(tid))
    assert "re-sent 4 matches whose tasks were lost (broker restarted?)" in beat.log()
