"""Tournaments through Celery: ``arena tournament run --executor celery`` sends every
match to two real worker processes on a private Redis, with house bots played in the
workers and connected bots played through real referees."""

from __future__ import annotations

RISK = ["--game", "risk", "--seats", "3", "--games-per-pairing", "2"]
RISK += ["--option", "turn-limit=40"]


def both_played(cluster, matches: set[str]) -> None:
    """Each worker completed some of the matches, and no match was completed twice."""
    done = [list(w.succeeded().values()) for w in cluster.workers]
    assert all(done), [(w.name, d) for w, d in zip(cluster.workers, done, strict=True)]
    every = [match for ids in done for match in ids]
    assert sorted(every) == sorted(matches)


def test_house_bots_through_two_workers(cluster) -> None:
    cluster.start_workers("w1", "w2")

    done = cluster.tournament_run(*RISK, "--bots", "random,aggressive,defensive,blitz")

    assert done.returncode == 0, done.stdout + done.stderr + cluster.logs()
    tid = cluster.tournament_id(done.stdout)
    assert f"tournament {tid}: finished, 8/8 matches finished (8 in this run)" in done.stdout
    rows = cluster.played_once(tid)
    labels = {f"house:{name}@1" for name in ("random", "aggressive", "defensive", "blitz")}
    assert {row.label for row in rows} == labels
    assert f"tournament {tid}: risk (classic)" in done.stdout  # the leaderboard
    for row in rows:
        assert row.games == 6  # 4 groups of 3, twice each: every bot in 3 groups
        assert f" {row.label} " in done.stdout
    matches = cluster.store.tournament_matches(tid)
    assert all(m.attempts == 1 and m.referee == "" for m in matches)  # played in a worker
    both_played(cluster, {m.id for m in matches})


def test_connected_bots_through_two_workers(cluster) -> None:
    referee = cluster.referee()
    agg, agg_token = cluster.register("agg", "risk")
    cluster.module_bot("aggressive", agg_token, [referee])  # python -m arena.bots.aggressive
    cluster.run_bot("defensive", "def", [referee])  # arena bot run --register-as
    cluster.run_bot("blitz", "blz", [referee])
    referee.wait_connected(agg, "def@1", "blz@1")
    cluster.start_workers("w1", "w2")

    done = cluster.tournament_run(*RISK, "--bots", "agg,def,blz,house:random")

    assert done.returncode == 0, done.stdout + done.stderr + cluster.logs()
    tid = cluster.tournament_id(done.stdout)
    assert f"tournament {tid}: finished, 8/8 matches finished (8 in this run)" in done.stdout
    rows = cluster.played_once(tid)
    assert {row.label for row in rows} == {"agg@1", "def@1", "blz@1", "house:random@1"}
    for row in rows:
        assert row.games == 6
        assert f" {row.label} " in done.stdout
    matches = cluster.store.tournament_matches(tid)
    # every group has a connected bot: every match was played by the referee, once
    assert all(m.attempts == 1 and m.referee == referee.address for m in matches)
    both_played(cluster, {m.id for m in matches})


def test_each_match_goes_to_a_referee_where_all_its_bots_are(cluster) -> None:
    one = cluster.referee()
    two = cluster.referee()
    cluster.run_bot("random", "a", [one])
    cluster.run_bot("random", "b", [two])
    cluster.run_bot("random", "c", [one, two])  # --referee ONE,TWO: connected to both
    one.wait_connected("a@1", "c@1")
    two.wait_connected("b@1", "c@1")
    assert "b@1" not in one.connected() and "a@1" not in two.connected()
    cluster.start_workers("w1", "w2")  # ARENA_REFEREES names both

    # a gauntlet of c: its matches need {a, c} (only on one) and {b, c} (only on two)
    done = cluster.tournament_run(
        *("--game", "stratego", "--seats", "2", "--games-per-pairing", "2"),
        *("--bots", "a,b,c", "--challenger", "c", "--option", "turn-limit=300"),
    )

    assert done.returncode == 0, done.stdout + done.stderr + cluster.logs()
    tid = cluster.tournament_id(done.stdout)
    cluster.played_once(tid)
    where = sorted((sorted(m.players), m.referee) for m in cluster.store.tournament_matches(tid))
    assert where == [(["a@1", "c@1"], one.address)] * 2 + [(["b@1", "c@1"], two.address)] * 2


def test_a_bot_that_never_connects_forfeits(cluster) -> None:
    cluster.settings.update(ARENA_BOT_WAIT_S="3")  # then its matches are played without it
    referee = cluster.referee(grace_s=1)  # ...and the referee waits 1 s for it, no more
    ghost, _ = cluster.register("ghost", "stratego")  # registered, never run
    cluster.run_bot("random", "rnd", [referee])
    referee.wait_connected("rnd@1")
    cluster.start_workers("w1", "w2")

    done = cluster.tournament_run(
        *("--game", "stratego", "--seats", "2", "--option", "turn-limit=300"),
        *("--bots", f"{ghost},rnd,house:heuristic"),
    )

    assert done.returncode == 0, done.stdout + done.stderr + cluster.logs()
    tid = cluster.tournament_id(done.stdout)
    assert f"tournament {tid}: finished, 3/3 matches finished" in done.stdout
    rows = cluster.played_once(tid)
    assert (rows[-1].label, rows[-1].games, rows[-1].losses) == (ghost, 2, 2)
    assert list(cluster.board(done.stdout))[-1] == ghost  # last on the printed board too
    store = cluster.store
    for match in store.tournament_matches(tid):
        seats = store.seats(match.id)
        for seat, label in zip(seats, match.players, strict=True):
            if label == ghost:
                assert seat.forfeit and seat.place == 2, (seat.forfeit, seat.place)
            else:
                assert seat.forfeit is None
