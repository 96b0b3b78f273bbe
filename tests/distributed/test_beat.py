"""Recurring tournaments: ``arena tournament create --every`` stores one, Celery beat
(``celery -A arena.workers.app beat``) creates each run when it is due, with the newest
version of every registered bot that plays the game, and the workers play it. A paused
one makes no run until it is resumed; a run does not start while the previous run of
its schedule is going; a deleted one never runs again, and its runs stay."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

#: what beat's periodic task returned, each time a worker ran it
FIRED = re.compile(r"Task arena\.fire_due_tournaments\[[0-9a-f-]+\] succeeded in \S+: (\[.*\])")
SKIPPED = re.compile(r"recurring (\w+): run (\d+) skipped: the previous run (\w+) is still going")
STRATEGO = ("--game", "stratego", "--seats", "2", "--option", "turn-limit=300")


def fired(worker) -> list[str]:
    """What each run of ``arena.fire_due_tournaments`` on this worker returned."""
    return FIRED.findall(worker.log())


def every_second(cluster, *bots: str) -> str:
    """A recurring Stratego tournament, every second, first due now: its id."""
    created = cluster.arena(
        *("tournament", "create", *STRATEGO, "--every", "1s", "--now"),
        *("--bots", ",".join(bots), "--db", cluster.db),
    )
    assert created.returncode == 0, created.stderr
    return re.search(r"^recurring tournament (\w+):", created.stdout, re.M).group(1)


def recurring(cluster, action: str, rid: str) -> str:
    """``arena tournament recurring ACTION ID``: what it printed."""
    done = cluster.arena("tournament", "recurring", action, rid, "--db", cluster.db)
    assert done.returncode == 0, done.stderr
    return done.stdout


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


def test_a_paused_schedule_makes_no_run_until_it_is_resumed(cluster) -> None:
    rid = every_second(cluster, "random", "heuristic")
    assert "(paused)" in recurring(cluster, "pause", rid)  # before beat ever saw it due
    worker = cluster.worker("w1")
    cluster.beat()
    # beat's task has run again and again on a due, paused schedule: no run came of it
    cluster.wait(lambda: len(fired(worker)) >= 4, 60, "beat's task to run four times")
    assert set(fired(worker)) == {"[]"}
    store = cluster.store
    assert store.tournaments() == []
    (paused,) = store.recurring()
    assert (paused.enabled, paused.runs, paused.last_tournament_id) == (False, 0, None)

    recurring(cluster, "resume", rid)
    run = cluster.wait(
        lambda: (runs := store.tournaments()) and runs[0].status == "finished" and runs[0],
        120,
        "the first run after the resume to finish",
        interval=0.5,
    )
    assert run.name.endswith(" #1")  # the runs missed while paused were not made up
    cluster.played_once(run.id)
    assert {entry.label for entry in store.entries(run.id)} == {
        "house:random@1",
        "house:heuristic@1",
    }


def test_runs_of_a_schedule_never_overlap_and_a_deleted_one_never_runs_again(cluster) -> None:
    # the run's registered bot is not connected: its match waits for it, and the run is
    # going for as long as the test wants
    cluster.settings["ARENA_BOT_WAIT_S"] = "600"
    referee = cluster.referee()
    late, token = cluster.register("late", "stratego")
    rid = every_second(cluster, "heuristic")
    worker = cluster.worker("w1")
    cluster.beat()
    store = cluster.store
    first = cluster.wait(store.tournaments, 60, "the first run to be created")[0]
    assert {entry.label for entry in store.entries(first.id)} == {late, "house:heuristic@1"}

    def skips() -> list[tuple[str, str, str]]:
        return SKIPPED.findall(worker.log())

    cluster.wait(lambda: len(skips()) >= 3, 60, "three due runs to be skipped")
    # each skip named the run still going, and the schedule's next time moved on
    assert {(r, previous) for r, _, previous in skips()} == {(rid, first.id)}
    assert {run for _, run, _ in skips()} == {"2"}  # the skipped run is not counted
    assert [t.id for t in store.tournaments()] == [first.id]
    (schedule,) = store.recurring()
    assert schedule.runs == 1
    # past the time run 1 was claimed at by a period for that claim and each skip
    assert schedule.next_run > schedule.claimed + timedelta(seconds=3)

    cluster.module_bot("random_bot", token, [referee])  # the first run can end now
    referee.wait_connected(late)
    second = cluster.wait(
        lambda: (runs := store.tournaments()) and len(runs) > 1 and runs[1],
        120,
        "the second run",
        interval=0.2,
    )
    assert second.name.endswith(" #2")
    first_ended = max(m.finished for m in store.tournament_matches(first.id))
    assert all(m.status == "finished" for m in store.tournament_matches(first.id))
    assert second.created >= first_ended  # it started once the first had ended

    deleted = recurring(cluster, "delete", rid)
    assert f"deleted recurring {rid}" in deleted
    ids = {t.id for t in store.tournaments()}  # (a run claimed just before stays too)
    cluster.wait(
        lambda: all(store.tournament(t).status == "finished" for t in ids),
        120,
        "the runs going on to play to their end",
        interval=0.5,
    )
    seen = len(fired(worker))
    cluster.wait(lambda: len(fired(worker)) >= seen + 4, 60, "beat's task to run four times")
    assert {t.id for t in store.tournaments()} == ids  # no run since the delete
    assert store.recurring() == []
    for tid in ids:  # the runs and their results stay
        cluster.played_once(tid)
