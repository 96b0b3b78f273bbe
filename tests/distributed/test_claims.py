"""A match is claimed before it is played, and transient trouble puts it off on its row:
two deliveries of one match play it once, and a retry goes to whichever worker is free,
not to the one that put it off."""

from __future__ import annotations

from celery import Celery

SLOW_BOTS = "slow-aggressive,slow-defensive,slow-blitz"
SLOW = ["--game", "risk", "--seats", "3", "--option", "turn-limit=15"]


def test_two_deliveries_at_once_play_the_match_once(cluster) -> None:
    cluster.settings.update(ARENA_TEST_THINK_MS="5")
    workers = cluster.start_workers("w1", "w2")
    created = cluster.arena("tournament", "create", *SLOW, "--bots", SLOW_BOTS, "--db", cluster.db)
    assert created.returncode == 0, created.stderr
    tid = cluster.tournament_id(created.stdout)
    (match,) = cluster.store.tournament_matches(tid)
    sender = Celery("arena-test-sender", broker=cluster.redis.url(0))
    try:  # two more deliveries of the match, at once: three in all
        for _ in range(2):
            sender.send_task("arena.play_match", args=[match.id])
    finally:
        sender.close()

    cluster.wait(
        lambda: sum(len(w.received()) for w in workers) == 3, 60, "the three deliveries to arrive"
    )
    cluster.wait(
        lambda: cluster.store.tournament(tid).status == "finished", 120, "the tournament to end"
    )
    cluster.played_once(tid)
    assert cluster.store.match(match.id).attempts == 1
    assert cluster.plays(seats=3) == 1  # counted by the bots: one play, not two or three
    skipped = sum(w.log().count(f"{{'skipped': '{match.id}'") for w in workers)
    assert skipped == 2, cluster.logs()


def test_a_retry_goes_to_the_free_worker(cluster) -> None:
    # a long match for one worker (slow bots), and a match put off for a bot not connected
    cluster.settings.update(
        ARENA_TEST_THINK_MS="150", ARENA_BOT_WAIT_S="300", ARENA_TASK_TIME_LIMIT_S="600"
    )
    referee = cluster.referee()
    late, token = cluster.register("late", "stratego")  # not connected yet
    w1 = cluster.worker("w1")
    run, tid = cluster.start_tournament(
        *("--game", "stratego", "--seats", "2", "--option", "turn-limit=300", "--quiet"),
        *("--bots", f"{late},house:random"),
    )
    store = cluster.store
    cluster.wait(
        lambda: all(m.retries >= 1 for m in store.tournament_matches(tid)),
        60,
        "w1 to put the matches off",
    )
    long_run, long_tid = cluster.start_tournament(*SLOW, "--quiet", "--bots", SLOW_BOTS)
    (long,) = cluster.wait(lambda: cluster.running(long_tid), 60, "w1 to start the long match")
    assert long.worker.startswith(f"{w1.node} pid ")
    w2 = cluster.worker("w2")
    cluster.module_bot("random_bot", token, [referee])
    referee.wait_connected(late)

    output = cluster.finish(run)
    assert run.popen.returncode == 0, output + cluster.logs()
    cluster.played_once(tid)
    # the retries were played by the free worker while w1 still plays its long match
    assert store.match(long.id).status == "running"
    assert cluster.playing(w1) == [long.id]
    for match in store.tournament_matches(tid):
        assert match.retries >= 1 and match.worker.startswith(f"{w2.node} pid "), match.worker
    assert long_run.alive()
