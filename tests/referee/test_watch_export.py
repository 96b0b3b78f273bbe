"""``arena match watch`` prints a live match's public events as real bot processes play
it on a real referee, and ends with the result (Ctrl-C: exit 130, quietly);
``arena replay export`` writes its replay, which ``arena replay verify`` accepts."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

from arena.store import Store
from arena.v1 import arena_pb2 as pb

from .conftest import RPC_TIMEOUT, Process, RefereeServer, wait_until

#: a legal, passive Risk bot that thinks for a while, and starts when the file GO_FILE
#: exists (once the watcher is there): its matches last long enough to watch
SLOW_BOT = """
import os
import time

from arena.sdk import Bot, main


class Slow(Bot):
    def decide_risk(self, observation, decision):
        while not os.path.exists(GO_FILE):
            time.sleep(0.05)
        time.sleep(DELAY)
        opts = decision.options
        kind = decision.kind
        if kind in ("claim", "setup_place", "headquarters"):
            return {"type": "place" if kind == "setup_place" else kind,
                    "territory": opts["territories"][0]}
        if kind == "trade":
            if opts["must_trade"]:
                return {"type": "trade", "cards": opts["sets"][0]}
            return {"type": "no_trade"}
        if kind == "reinforce":
            return {"type": "reinforce", "armies": {opts["territories"][0]: opts["armies"]}}
        if kind == "move_in":
            return {"type": "move_in", "armies": opts["min"]}
        if kind == "defend":
            return {"type": "defend", "dice": 1}
        return {"type": "end_attack" if kind == "attack" else "end_turn"}


if __name__ == "__main__":
    main(Slow)
"""


LIMIT = {"turn-limit": "25"}


def _slow_bot(referee: RefereeServer, tmp_path: Path, name: str, delay: float) -> Process:
    """The slow bot as a process, connected; it plays once ``tmp_path / "go"`` exists."""
    path = tmp_path / f"{name.replace('-', '_')}.py"
    go = repr(str(tmp_path / "go"))
    path.write_text(SLOW_BOT.replace("DELAY", str(delay)).replace("GO_FILE", go))
    token = referee.register(name).token
    command = [sys.executable, str(path), "--referee", referee.address, "--token", token]
    process = Process(name, command, tmp_path)
    referee.processes.append(process)
    referee.wait_connected(name)
    return process


def _slow_match(
    referee: RefereeServer, tmp_path: Path, name: str, delay: float, **options: str
) -> tuple[Process, str]:
    """The slow bot, and a Risk match of it against two house bots, waiting for ``_watch``."""
    bot = _slow_bot(referee, tmp_path, name, delay)
    try:
        match_id = referee.start_match(
            "risk",
            [name, "house:aggressive", "house:defensive"],
            options=options,
            decision_ms=120_000,  # the slow bot waits for the watcher
        )
    except BaseException:
        bot.stop()
        raise
    return bot, match_id


def _watch(referee: RefereeServer, tmp_path: Path, match_id: str, label: str) -> Process:
    """``arena match watch`` as a process; the slow bot starts once it is watching."""
    command = _arena("match", "watch", match_id, "--referee", referee.address)
    watch = Process(label, command, tmp_path)
    wait_until(lambda: watch.stdout() or not watch.alive(), 60, "the watcher's first line")
    (tmp_path / "go").touch()
    return watch


def _arena(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena.cli", *args]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    """``arena ARGS``, to its end."""
    return subprocess.run(_arena(*args), capture_output=True, text=True, timeout=120)


def _event_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if re.match(r"\S.* \(seat \d\): ", line)]


def test_watch_prints_live_events_and_the_result_then_the_replay_exports_and_verifies(
    referee_server: RefereeServer, tmp_path: Path
) -> None:
    bot, match_id = _slow_match(referee_server, tmp_path, "watched-slow", 0.02, **LIMIT)
    try:
        # a running match has no replay yet
        running = _run("replay", "export", match_id, "--db", referee_server.db)
        assert running.returncode == 2
        assert running.stderr.strip() == (
            f"arena: error: match {match_id} is running: it has a replay once it has finished"
        )
        watch = _watch(referee_server, tmp_path, match_id, "watch")
        assert watch.wait(timeout=300) == 0, watch.stderr()
    finally:
        bot.stop()
    out = watch.stdout()
    assert out.startswith(f"match {match_id}: risk, seats 0:watched-slow@1, 1:house:aggressive")
    events = _event_lines(watch.out_path)
    assert any(
        re.search(r"house:aggressive@1 \(seat 1\): battle from=\d+ to=\d+", e) for e in events
    )
    assert any(": turn turn=" in e for e in events)
    assert "game_over" in out
    assert re.search(rf"^match {match_id}: finished, [a-z ]+: ", out, re.M), out
    assert out.rstrip().splitlines()[-1].startswith("  seat 2: house:defensive@1 place ")

    exported = tmp_path / "watched.json.gz"
    done = _run("replay", "export", match_id, "--db", referee_server.db, "-o", str(exported))
    assert done.returncode == 0, done.stderr
    remote = _run("replay", "export", match_id, "--referee", referee_server.address)
    assert remote.returncode == 0, remote.stderr
    (tmp_path / "remote.json").write_text(remote.stdout)
    for path in (exported, tmp_path / "remote.json"):
        verified = _run("replay", "verify", str(path))
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert f"{path}: OK (" in verified.stdout


def test_ctrl_c_stops_watching_with_130_and_no_traceback(
    referee_server: RefereeServer, tmp_path: Path
) -> None:
    bot, match_id = _slow_match(referee_server, tmp_path, "watched-slower", 0.2)
    try:
        watch = _watch(referee_server, tmp_path, match_id, "watch-int")
        try:
            wait_until(lambda: _event_lines(watch.out_path), 60, "the first event")
            watch.popen.send_signal(signal.SIGINT)
            assert watch.wait(timeout=30) == 130
        finally:
            watch.stop()
        assert watch.stderr() == ""
    finally:
        bot.stop()


def test_unknown_matches_are_one_line(referee_server: RefereeServer, tmp_path: Path) -> None:
    for args in (
        ("match", "watch", "nope", "--referee", referee_server.address),
        ("replay", "export", "nope", "--referee", referee_server.address),
        ("replay", "export", "nope", "--db", referee_server.db),
    ):
        done = _run(*args)
        assert done.returncode == 2
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "nope" in done.stderr


def test_a_running_tournaments_replay_is_the_organisers_only(referee_factory, tmp_path: Path):
    """Its duplicate seeds replay one deal in several matches: before the tournament's end
    a referee gives the replay to the organiser's key only; the store's reader is the
    organiser. The house bots' matches end while the slow bot's wait: then it is stopped."""
    key = "watch-organiser"
    ref = referee_factory(organiser_key=key)
    bot = _slow_bot(ref, tmp_path, "held", 0)
    try:
        request = pb.CreateTournamentRequest(
            game="risk",
            bots=["held", "house:blitz", "house:defensive", "house:random"],
            seats=3,
            games_per_pairing=6,
            options={"turn-limit": "10"},
            decision_ms=120_000,
            start=True,
        )
        info = ref.arena.CreateTournament(request, metadata=ref.organiser(), timeout=RPC_TIMEOUT)
        tournament = pb.GetTournamentRequest(tournament_id=info.tournament_id)
        wait_until(
            lambda: ref.arena.GetTournament(tournament, timeout=RPC_TIMEOUT).finished,
            120,
            "a house bots' match to end",
        )
        stop = pb.StopTournamentRequest(tournament_id=info.tournament_id)
        ref.arena.StopTournament(stop, metadata=ref.organiser(), timeout=RPC_TIMEOUT)
        (tmp_path / "go").touch()  # the matches in flight end; no other begins
        wait_until(
            lambda: ref.arena.GetTournament(tournament, timeout=RPC_TIMEOUT).status == "stopped",
            120,
            "the stop",
        )
    finally:
        bot.stop()
    store = Store(ref.db)
    match_id = store.tournament_matches(info.tournament_id, ["finished"])[0].id

    refused = _run("replay", "export", match_id, "--referee", ref.address)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip() == (
        f"arena: error: match {match_id}: its tournament has not ended, and its replay would "
        "tell the deals of its other matches (the organiser key shows it)"
    )
    for extra in (("--referee", ref.address, "--organiser-key", key), ("--db", ref.db)):
        shown = _run("replay", "export", match_id, *extra)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.strip() == store.replay(match_id)
