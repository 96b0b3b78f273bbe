"""Recurring tournaments: ``arena tournament create --every`` stores one, Celery beat
(``celery -A workers.app beat``) creates each run when it is due, with the newest
version of every registered bot that plays the game, and the workers play it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def test_a_scheduled_tournament_fires_from_beat(cluster) -> None:
    referee = cluster.referee()
    cluster.register("s1", "stratego")  # version 1: superseded before the run
    s1, s1_token = cluster.register("s1", "stratego")
    s3, s3_token = cluster.register("s3")  # no games named: it plays every game
    cluster.register("risky", "risk")  # it does not play Stratego
    cluster.module_bot("random_bot", s1_token, [referee])
    cluster.module_bot("random_bot", s3_token, [referee])
    referee.wait_connected(s1, s3)
    assert s1 == "s1@2"

    created = cluster.arena(
        *("tournament", "create", "--game", "stratego", "--seats", "2"),
        *("--option", "turn-limit=300"),
        *("--every", "1h", "--now", "--bots", "heuristic", "--db", cluster.db),
    )
    assert created.returncode == 0, created.stderr
    assert "recurring tournament" in created.stdout
    cluster.worker("w1")
    cluster.beat()  # ARENA_BEAT_INTERVAL_S=1: it looks for due runs every second

    store = cluster.store

    def finished_run():
        runs = store.tournaments()
        return runs and runs[0].status == "finished" and runs[0]

    run = cluster.wait(finished_run, 120, "beat's run to finish", interval=0.5)
    assert {entry.label for entry in store.entries(run.id)} == {s1, s3, "house:heuristic@1"}
    cluster.played_once(run.id)
    assert len(store.tournaments()) == 1  # the next run is an hour away
    (recurring,) = store.recurring()
    assert (recurring.runs, recurring.last_tournament_id) == (1, run.id)
    assert recurring.next_run > datetime.now(UTC) + timedelta(minutes=50)

    board = cluster.arena("leaderboard", "--game", "stratego", "--db", cluster.db)
    assert board.returncode == 0, board.stderr
    assert "stratego (classic)" in board.stdout
    assert cluster.board(board.stdout) == {s1: 2, s3: 2, "house:heuristic@1": 2}
