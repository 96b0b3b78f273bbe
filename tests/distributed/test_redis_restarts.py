"""Redis restarted in the middle of a tournament that ``arena tournament run`` follows:
with its append-only file (the tasks it held come back) and without it (they are
lost: the client sends them again). The tournament completes each time, no match is
lost and none is counted twice.

The matches here are between the ``slow-*`` Risk bots of slow_bots.py (conftest.py
installs it as a plugin): each lasts a few seconds, so there is a middle to hit.
"""

from __future__ import annotations

from .conftest import FOUR
from .conftest import SLOW_RISK as SLOW
from .conftest import SLOW_RISK_BOTS as SLOW_BOTS


def test_redis_restarted_mid_tournament(cluster) -> None:
    cluster.settings.update(ARENA_VISIBILITY_S="15", ARENA_TASK_TIME_LIMIT_S="10")
    cluster.settings.update(ARENA_TEST_THINK_MS="5")
    workers = cluster.start_workers("w1", "w2")
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
