"""Tournaments end to end: a real ``arena referee`` process, real bot processes
(``python -m arena.bots.MODULE``) and ``arena tournament run`` as a process, over 127.0.0.1, on
SQLite and on PostgreSQL; the organiser's gRPC calls (CreateTournament, StartTournament,
StopTournament, GetTournament, GetLeaderboard); a registered bot that never connects.

What the tests read back comes from the database itself (a Store on the referee's URL):
every scheduled match finished exactly once, seats with places, replays that verify.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import grpc
import pytest

from arena.cli import main
from arena.engine.replay import from_json, verify
from arena.store import Store
from arena.tournament.leaderboard import compute
from arena.v1 import arena_pb2 as pb

from .conftest import Process

KEY = "tournament-organiser-key"
RPC_TIMEOUT = 10.0
TOURNAMENT_TIMEOUT = 90.0
RISK_LIMIT = {"turn-limit": "40"}  # short games; a turn limit is a real end with places
QUICK_RISK = {"turn-limit": "5", "setup": "deal"}  # shorter still, for many matches

# --- helpers -------------------------------------------------------------------------


def poll(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.1) -> Any:
    """Call ``predicate`` until it returns something true, at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)
    return value


@contextmanager
def open_store(url: str) -> Iterator[Store]:
    store = Store(url)
    try:
        yield store
    finally:
        store.close()


def assert_competition_ranking(places: list[int]) -> None:
    """One place a seat, 1 the best, ties share (1, 2, 2, 4)."""
    assert 1 in places, places
    for place in places:
        assert place == 1 + sum(other < place for other in places), places


def assert_played_once(store: Store, tournament_id: str, seats: int) -> list[Any]:
    """Every scheduled match finished, started exactly once, with a place for every seat
    and a replay that re-simulates to the same result. Returns the matches."""
    matches = store.tournament_matches(tournament_id)
    assert matches, "the tournament has no matches"
    for match in matches:
        assert match.status == "finished", (match.id, match.status, match.error)
        assert match.attempts == 1, (match.id, match.attempts)
        places = [seat.place for seat in store.seats(match.id)]
        assert len(places) == seats and None not in places, (match.id, places)
        assert_competition_ranking(places)
        assert match.result["places"] == places
        data = store.replay(match.id)
        assert data, f"match {match.id} has no replay"
        record = from_json(json.loads(data))
        assert verify(record) == len(record.steps) > 0
        assert record.result is not None and list(record.result.places) == places
    return matches


def assert_board(rows: list[Any], labels: set[str], games: int, seats: int) -> None:
    """Every bot once, each with an interval around its Elo, ranked 1..n by Elo, and
    exactly ``games`` matches of ``seats`` counted (none twice)."""
    assert {row.label for row in rows} == labels
    assert [row.rank for row in rows] == list(range(1, len(labels) + 1))
    for row in rows:
        assert row.elo_low < row.elo < row.elo_high, row
    assert [row.elo for row in rows] == sorted((row.elo for row in rows), reverse=True)
    assert sum(row.games for row in rows) == games * seats


# --- the CLI with bot processes, on SQLite and PostgreSQL ----------------------------


def test_cli_round_robin_with_bot_processes(database_url, referee_factory, spawn, tmp_path):
    """``arena tournament run --referee`` plays every match of a round robin once through
    a referee on the same database, with three bot processes and a house bot."""
    ref = referee_factory(db=database_url, organiser_key=KEY, decision_ms=2000)
    # (arena.bots.stratego_heuristic plays only Stratego: it has its tournament further down)
    modules = {"a": "aggressive", "b": "random_bot", "c": "defensive"}
    for name, module in modules.items():
        spawn.module_bot(ref, module, name)
    ref.wait_connected(*modules)

    run = spawn.cli(
        tmp_path,
        "tournament-run",
        *("tournament", "run", "--db", database_url, "--referee", ref.address),
        *("--organiser-key", KEY, "--game", "risk", "--bots", "a,b,c,house:blitz"),
        *("--seats", "3", "--games-per-pairing", "1", "--option", "turn-limit=40"),
        *("--quiet", "--workers", "1"),
    )
    code = run.wait(timeout=TOURNAMENT_TIMEOUT)
    output = run.stdout()
    assert code == 0, f"exit {code}\n{output}\n{run.stderr()[-3000:]}"

    labels = {"a@1", "b@1", "c@1", "house:blitz@1"}
    with open_store(database_url) as store:
        (tournament,) = store.tournaments()
        assert tournament.status == "finished"
        assert tournament.options == RISK_LIMIT
        # four bots, three seats, one game a group: every 3 of the 4 once
        matches = assert_played_once(store, tournament.id, seats=3)
        assert len(matches) == 4
        assert {frozenset(m.players) for m in matches} == {
            frozenset(labels - {left}) for left in labels
        }
        rows = compute(store, "risk", tournament_id=tournament.id)
        assert_board(rows, labels, games=4, seats=3)
    assert f"tournament {tournament.id}: finished, 4/4 matches finished (4 in this run)" in output
    # the CLI printed the same standings: every bot, with its interval
    for row in rows:
        line = next(line for line in output.splitlines() if f" {row.label} " in line)
        assert f"{row.elo_low:.0f}..{row.elo_high:.0f}" in line, line


def test_a_cli_run_stopped_by_ctrl_c_is_resumed_through_its_referee(
    database_url, referee_factory, spawn, tmp_path, monkeypatch, capsys
):
    """Ctrl-C on ``arena tournament run --referee``: the referee plays the matches in
    flight to their end and writes them to the shared store (``show`` tells it, none
    stays running); ``arena tournament resume ID`` as printed, given the organiser key
    again (never stored), plays the rest through the same referee, each match once."""
    monkeypatch.delenv("ARENA_ORGANISER_KEY", raising=False)
    monkeypatch.delenv("ARENA_BROKER_URL", raising=False)
    ref = referee_factory(db=database_url, organiser_key=KEY, decision_ms=2000)
    modules = {"a": "aggressive", "b": "random_bot", "c": "defensive", "d": "aggressive"}
    for name, module in modules.items():
        spawn.module_bot(ref, module, name)
    ref.wait_connected(*modules)
    options = [arg for name, value in QUICK_RISK.items() for arg in ("--option", f"{name}={value}")]
    # every 3 of the 5 bots 3 times: 30 matches, more than the run keeps in flight at once
    # (17): some wait their turn
    run = spawn.cli(
        tmp_path,
        "tournament-run",
        *("tournament", "run", "--db", database_url, "--referee", ref.address),
        *("--organiser-key", KEY, "--game", "risk", "--bots", "a,b,c,d,house:blitz"),
        *("--seats", "3", "--games-per-pairing", "3", *options, "--quiet", "--workers", "0"),
    )
    with open_store(database_url) as store:

        def some_finished() -> bool:
            assert run.alive(), run.stderr()[-3000:]
            rows = store.tournaments()
            return bool(rows) and store.progress(rows[0].id).get("finished", 0) >= 1

        poll(some_finished, TOURNAMENT_TIMEOUT, "a first finished match")
        run.popen.send_signal(signal.SIGINT)
        assert run.wait(timeout=TOURNAMENT_TIMEOUT) == 130, run.stderr()[-3000:]
        (tournament,) = store.tournaments()
        # the resume names the store: it is not the default one
        db = shlex.quote(database_url)
        printed = f"`arena tournament resume {tournament.id} --db {db} --organiser-key KEY`"
        assert f"stopped: resume with {printed}" in run.stderr()
        assert KEY not in run.stdout() + run.stderr()
        row = store.tournament(tournament.id)
        assert (row.executor, row.workers, row.referee) == ("local", 0, ref.address)
        assert row.organiser_key is True  # that one was given; the key is nowhere in the row
        assert KEY not in repr([getattr(row, c.key) for c in row.__mapper__.column_attrs])

        # what is still running is so at the referee, which finishes it and counts it
        def none_running() -> bool:
            return not store.tournament_matches(tournament.id, statuses=["running"])

        poll(none_running, TOURNAMENT_TIMEOUT, "the referee to end the matches in flight")
        finished = store.progress(tournament.id)["finished"]
        assert 1 <= finished < 30
        assert set(store.progress(tournament.id)) <= {"finished", "pending"}
    assert main(["tournament", "show", tournament.id, "--db", database_url]) == 0
    shown = capsys.readouterr().out
    assert "running now" not in shown
    assert f"{finished} finished" in shown and "(of 30)" in shown

    # the key is not stored: a resume without it says so in one line and plays nothing
    assert main(["tournament", "resume", tournament.id, "--db", database_url]) == 2
    err = capsys.readouterr().err.strip()
    assert "--organiser-key" in err and ref.address in err and len(err.splitlines()) == 1

    command = shlex.split(printed.strip("`").replace("KEY", KEY))
    assert command[:4] == ["arena", "tournament", "resume", tournament.id]
    resume = spawn.cli(tmp_path, "tournament-resume", *command[1:])
    code = resume.wait(timeout=TOURNAMENT_TIMEOUT)
    output = resume.stdout()
    assert code == 0, f"exit {code}\n{output}\n{resume.stderr()[-3000:]}"
    assert f"30/30 matches finished ({30 - finished} in this run)" in output
    with open_store(database_url) as store:
        assert store.tournament(tournament.id).status == "finished"
        assert len(assert_played_once(store, tournament.id, seats=3)) == 30


def test_a_tournament_through_a_referee_waits_for_its_bots_saying_who_is_missing(
    referee_factory, spawn, tmp_path
):
    """A registered bot that is not connected would forfeit every match it is seated in:
    the run says who is missing and waits, then plays once it is there."""
    ref = referee_factory(organiser_key=KEY, decision_ms=2000)
    token = ref.register("late").token
    run = spawn.cli(
        tmp_path,
        "tournament-run",
        *("tournament", "run", "--db", ref.db, "--referee", ref.address, "--organiser-key"),
        *(KEY, "--game", "risk", "--bots", "late,house:blitz,house:random", "--seats", "3"),
        *("--games-per-pairing", "1", "--option", "turn-limit=5", "--quiet", "--workers", "0"),
    )
    waiting = f"waiting for 1 of its bots to connect to {ref.address}: late@1 (Ctrl-C stops"
    poll(lambda: waiting in run.stdout(), 60, "the run to say who is missing")
    with open_store(ref.db) as store:
        assert store.progress(store.tournaments()[0].id) == {"pending": 1}  # nothing played
    bot = Process(
        "bot-late",
        [sys.executable, "-m", "arena.bots.random_bot", "--referee", ref.address, "--token", token],
        tmp_path,
    )
    spawn.started.append(bot)
    assert run.wait(timeout=TOURNAMENT_TIMEOUT) == 0, run.stderr()[-3000:]
    assert "all 1 of its registered bots are connected: playing" in run.stdout()
    with open_store(ref.db) as store:
        (match,) = store.tournament_matches(store.tournaments()[0].id)
        assert match.status == "finished" and not match.result.get("forfeits"), match.result


def test_a_match_refuses_a_bot_away_or_registered_for_another_game(referee_factory, tmp_path):
    ref = referee_factory(organiser_key=KEY)
    ref.register("away")
    ref.arena.RegisterBot(pb.RegisterBotRequest(name="strat", games=["stratego"]), timeout=30)
    command = [sys.executable, "-m", "arena.cli", "match", "run", "risk", "--referee", ref.address]
    command += ["--organiser-key", KEY, "--players"]
    away = subprocess.run(
        [*command, "away,house:blitz,house:random"], capture_output=True, text=True, timeout=60
    )
    assert away.returncode == 2 and away.stdout == ""
    assert away.stderr == (
        f"arena: error: not connected to {ref.address}: away@1 (start each bot process first)\n"
    )
    with pytest.raises(grpc.RpcError) as refused:
        ref.arena.RunMatch(
            pb.RunMatchRequest(game="risk", players=["strat", "house:blitz", "house:random"]),
            metadata=ref.organiser(),
            timeout=30,
        )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details().startswith(
        "bot strat@1 is registered for stratego only, not risk"
    )


# --- the organiser's gRPC calls ------------------------------------------------------


def create_with_key(ref: Any, request: pb.CreateTournamentRequest) -> pb.TournamentInfo:
    return ref.arena.CreateTournament(request, metadata=ref.organiser(), timeout=RPC_TIMEOUT)


def create(ref: Any, **fields: Any) -> pb.TournamentInfo:
    """CreateTournament with the organiser key."""
    return create_with_key(ref, pb.CreateTournamentRequest(**fields))


def start(ref: Any, tournament_id: str) -> pb.TournamentInfo:
    request = pb.StartTournamentRequest(tournament_id=tournament_id)
    return ref.arena.StartTournament(request, metadata=ref.organiser(), timeout=RPC_TIMEOUT)


def stop(ref: Any, tournament_id: str) -> pb.TournamentInfo:
    request = pb.StopTournamentRequest(tournament_id=tournament_id)
    return ref.arena.StopTournament(request, metadata=ref.organiser(), timeout=RPC_TIMEOUT)


def get(ref: Any, tournament_id: str, standings: bool = False) -> pb.TournamentInfo:
    request = pb.GetTournamentRequest(tournament_id=tournament_id, standings=standings)
    return ref.arena.GetTournament(request, timeout=RPC_TIMEOUT)


def wait_status(ref: Any, tournament_id: str, status: str) -> pb.TournamentInfo:
    def reached() -> pb.TournamentInfo | None:
        info = get(ref, tournament_id)
        return info if info.status == status else None

    return poll(reached, TOURNAMENT_TIMEOUT, f"tournament {tournament_id} to be {status}")


def rpc_error(call: Callable[[], Any]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value


def assert_rows_match(rows: Any, board: list[Any]) -> None:
    """Leaderboard rows from gRPC are the leaderboard computed from the database."""
    assert [(r.rank, r.bot, r.bot_id) for r in rows] == [(b.rank, b.label, b.bot_id) for b in board]
    for row, expected in zip(rows, board, strict=True):
        assert (row.games, row.wins, row.draws, row.losses) == (
            expected.games,
            expected.wins,
            expected.draws,
            expected.losses,
        )
        assert (row.elo, row.elo_low, row.elo_high) == pytest.approx(
            (expected.elo, expected.elo_low, expected.elo_high)
        )
        assert row.score == pytest.approx(expected.score)
        assert (row.openskill_mu, row.openskill_sigma) == pytest.approx(
            (expected.mu, expected.sigma)
        )


@pytest.fixture
def organiser_referee(referee_factory, spawn) -> Any:
    """A referee with an organiser key and two Risk bot processes connected to it:
    ``a`` (python -m arena.bots.aggressive) and ``b`` (python -m arena.bots.random_bot)."""
    ref = referee_factory(organiser_key=KEY, decision_ms=2000)
    spawn.module_bot(ref, "aggressive", "a")
    spawn.module_bot(ref, "random_bot", "b")
    ref.wait_connected("a", "b")
    return ref


def test_organiser_creates_and_starts_a_tournament(organiser_referee):
    """CreateTournament(start=true) plays it to the end; starting it again (while it runs,
    and once it is over) plays nothing twice; its standings and the game's leaderboard
    over gRPC are what the database holds."""
    ref = organiser_referee
    house = ["house:blitz", "house:defensive", "house:random"]  # one group is house only
    info = create(
        ref,
        name="organised",
        game="risk",
        bots=["a", "b", *house],
        seats=3,
        options=RISK_LIMIT,
        seed=7,
        start=True,
    )
    tournament_id = info.tournament_id
    assert info.matches == 10 and info.finished == 0  # every 3 of 5 bots once
    assert (info.game, info.seats, info.format) == ("risk", 3, "round-robin")
    for _ in range(2):  # idempotent while it is being played
        assert start(ref, tournament_id).tournament_id == tournament_id
    done = wait_status(ref, tournament_id, "finished")
    counts = (done.finished, done.pending, done.running, done.aborted, done.failed)
    assert counts == (10, 0, 0, 0, 0)
    assert start(ref, tournament_id).status == "finished"  # over: nothing more to play
    labels = {"a@1", "b@1", "house:blitz@1", "house:defensive@1", "house:random@1"}
    assert set(done.bots) == labels

    standings = get(ref, tournament_id, standings=True).standings
    everything = ref.arena.GetLeaderboard(
        pb.GetLeaderboardRequest(game="risk"), timeout=RPC_TIMEOUT
    )
    listed = ref.arena.ListTournaments(pb.ListTournamentsRequest(), timeout=RPC_TIMEOUT)
    assert [(t.tournament_id, t.status) for t in listed.tournaments] == [
        (tournament_id, "finished")
    ]
    with open_store(ref.db) as store:
        assert_played_once(store, tournament_id, seats=3)
        board = compute(store, "risk", tournament_id=tournament_id)
        assert_board(board, labels, games=10, seats=3)
        assert_rows_match(standings.rows, board)
        # the game's leaderboard: the same matches (no others were played here), stored
        assert_rows_match(everything.rows, compute(store, "risk"))
        assert [r.bot_id for r in store.ratings("risk", "")] == [r.bot_id for r in board]


GOOD = {"game": "risk", "bots": ["a", "house:blitz", "house:random"], "seats": 3}


def test_organiser_key_and_bad_requests(referee_factory):
    """Organiser calls need the key; a request that cannot be played is refused with
    INVALID_ARGUMENT and a reason, and leaves no tournament behind; an unknown id is
    NOT_FOUND."""
    ref = referee_factory(organiser_key=KEY)
    ref.register("a")
    good = pb.CreateTournamentRequest(**GOOD)
    for metadata in ([], [("authorization", "Bearer wrong-key")]):
        calls = {
            "CreateTournament": lambda m=metadata: ref.arena.CreateTournament(
                good, metadata=m, timeout=RPC_TIMEOUT
            ),
            "StartTournament": lambda m=metadata: ref.arena.StartTournament(
                pb.StartTournamentRequest(tournament_id="anything"), metadata=m, timeout=RPC_TIMEOUT
            ),
            "StopTournament": lambda m=metadata: ref.arena.StopTournament(
                pb.StopTournamentRequest(tournament_id="anything"), metadata=m, timeout=RPC_TIMEOUT
            ),
        }
        for name, call in calls.items():
            error = rpc_error(call)
            assert error.code() == grpc.StatusCode.PERMISSION_DENIED, (name, metadata)
            assert "organiser key" in error.details()

    bad = {
        "unknown game": ({"game": "chess"}, "'chess'"),
        "unknown bot": ({"bots": ["a", "nobody", "house:blitz"]}, "'nobody'"),
        "one seat": ({"seats": 1}, "not 1"),
        "no seats": ({"seats": 0}, "not 0"),
        "bad option": ({"options": {"turn-limit": "soon"}}, "turn-limit"),
        "a bot twice": ({"bots": ["a", "a", "house:blitz"]}, "twice"),
    }
    for case, (fields, reason) in bad.items():
        error = rpc_error(lambda f=fields: create(ref, **{**GOOD, **f, "start": True}))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, case
        assert reason in error.details(), (case, error.details())

    listed = ref.arena.ListTournaments(pb.ListTournamentsRequest(), timeout=RPC_TIMEOUT)
    assert list(listed.tournaments) == []
    with open_store(ref.db) as store:
        assert store.tournaments() == []
        assert store.boards() == []  # and no match was played

    for call in (
        lambda: get(ref, "feedbeef0000"),
        lambda: start(ref, "feedbeef0000"),
        lambda: stop(ref, "feedbeef0000"),
        lambda: get(ref, ""),
    ):
        error = rpc_error(call)
        assert error.code() == grpc.StatusCode.NOT_FOUND
        assert "no tournament" in error.details()
    # the good request works with the key (so the refusals above were about the key)
    info = create_with_key(ref, good)
    assert (info.status, info.matches) == ("created", 1)
    assert get(ref, info.tournament_id[:6]).tournament_id == info.tournament_id  # a prefix


def test_organiser_stops_and_resumes_a_tournament(organiser_referee):
    """StopTournament begins no new match (those in flight end) and leaves the tournament
    stopped with matches unplayed; StartTournament resumes it, also right after a stop
    while the stopped run still finishes its matches in flight; no match is played or
    counted twice."""
    ref = organiser_referee
    info = create(
        ref,
        game="risk",
        bots=["a", "b", "house:blitz", "house:defensive"],
        seats=3,
        games_per_pairing=12,
        options=QUICK_RISK,
        start=True,
    )
    tournament_id = info.tournament_id
    # many more matches than the referee begins at once (18, then one per result)
    assert info.matches == 48
    poll(lambda: get(ref, tournament_id).finished, TOURNAMENT_TIMEOUT, "a result", 0.02)
    stop(ref, tournament_id)
    stopped = wait_status(ref, tournament_id, "stopped")
    assert stopped.finished > 0 and stopped.pending > 0, stopped
    assert stopped.finished + stopped.pending == 48, stopped  # none left half-played
    with open_store(ref.db) as store:
        unplayed = store.tournament_matches(tournament_id, ["pending"])
        assert len(unplayed) == stopped.pending
        assert all(m.attempts == 0 and store.replay(m.id) is None for m in unplayed)
        first = {m.id: m.finished for m in store.tournament_matches(tournament_id, ["finished"])}

    start(ref, tournament_id)
    more = stopped.finished + 1
    poll(lambda: get(ref, tournament_id).finished >= more, TOURNAMENT_TIMEOUT, "a result", 0.02)
    stop(ref, tournament_id)
    start(ref, tournament_id)  # at once: not lost while the stopped run winds down
    done = wait_status(ref, tournament_id, "finished")
    assert (done.finished, done.pending, done.aborted, done.failed) == (48, 0, 0, 0)
    with open_store(ref.db) as store:
        assert_played_once(store, tournament_id, seats=3)
        for match in store.tournament_matches(tournament_id):
            if match.id in first:  # not played again by the resumed runs
                assert match.finished == first[match.id]
        labels = {"a@1", "b@1", "house:blitz@1", "house:defensive@1"}
        assert_board(compute(store, "risk", tournament_id=tournament_id), labels, 48, 3)


# --- a registered bot that never connects --------------------------------------------


def test_a_bot_that_never_connects_forfeits_and_ends_last(referee_factory, spawn):
    """A Stratego round robin with a registered bot that never connects: after the grace
    period each of its matches is forfeited to its opponent, the tournament finishes,
    and the absent bot is last on the leaderboard."""
    ref = referee_factory(organiser_key=KEY, grace_s=1.0, decision_ms=2000)
    spawn.module_bot(ref, "stratego_heuristic", "heuristic")
    spawn.module_bot(ref, "random_bot", "random")
    ref.register("ghost")  # registered, never run
    ref.wait_connected("heuristic", "random")
    info = create(
        ref,
        game="stratego",
        bots=["heuristic", "random", "ghost", "house:heuristic"],
        seats=2,
        games_per_pairing=2,
        options={"turn-limit": "300"},
        start=True,
    )
    assert info.matches == 12  # six pairs, both colours
    done = wait_status(ref, info.tournament_id, "finished")
    assert (done.finished, done.failed, done.aborted) == (12, 0, 0)

    board = ref.arena.GetLeaderboard(
        pb.GetLeaderboardRequest(game="stratego", tournament_id=info.tournament_id),
        timeout=RPC_TIMEOUT,
    )
    assert [row.bot for row in board.rows][-1] == "ghost@1"
    ghost = board.rows[-1]
    assert (ghost.games, ghost.wins, ghost.draws, ghost.losses) == (6, 0, 0, 6)
    assert ghost.score == 0.0
    assert all(row.elo > ghost.elo for row in board.rows[:-1])
    with open_store(ref.db) as store:
        matches = assert_played_once(store, info.tournament_id, seats=2)
        ghost_id = store.latest_bot("ghost").id
        absent = [m for m in matches if ghost_id in {s.bot_id for s in store.seats(m.id)}]
        assert len(absent) == 6
        for match in absent:
            for seat in store.seats(match.id):
                if seat.bot_id == ghost_id:
                    assert (seat.place, seat.forfeit) == (2, "disconnected"), match.id
                else:
                    assert (seat.place, seat.forfeit) == (1, None), match.id
            assert match.result["reason"] == "forfeit"
