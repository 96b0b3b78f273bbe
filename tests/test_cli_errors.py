"""The first hour's traps, through the real `arena` command: one line saying what is wrong
and what to do, a non-zero exit, no traceback, and no file left where none should be."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ARENA = [sys.executable, "-m", "arena.cli"]


def arena(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ARENA, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def start(cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*ARENA, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The error line, after checking it is the only output there is."""
    assert result.returncode == 2, result
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def files(path: Path) -> set[str]:
    return {p.name for p in path.iterdir()}


@pytest.mark.parametrize(
    ("db", "expected"),
    [
        ("bad.db", "cannot open the database bad.db: file is not a database"),
        ("nodir/x.db", "the directory nodir does not exist"),
        (
            "postgresql://postgres:secret@127.0.0.1:1/x",
            "cannot open the database postgresql://postgres:***@127.0.0.1:1/x",
        ),
        ("mysql://u@h/x", "database URL mysql://u@h/x: unsupported scheme 'mysql'"),
        ("ftp://example.org/x", "unsupported scheme 'ftp'"),
    ],
)
def test_a_database_that_will_not_open_is_one_line(tmp_path, db, expected):
    (tmp_path / "bad.db").write_bytes(b"this is no database at all, just text " * 4)
    for command in (["leaderboard"], ["tournament", "run", "--game", "stratego"]):
        line = one_line_error(
            arena(tmp_path, *command, "--bots", "random,blitz", "--db", db)
            if command[0] == "tournament"
            else arena(tmp_path, *command, "--db", db)
        )
        assert expected in line
        assert "secret" not in line
        assert files(tmp_path) == {"bad.db"}


@pytest.mark.parametrize(
    "command",
    [
        ["leaderboard"],
        ["leaderboard", "--game", "risk"],
        ["compare", "random", "blitz", "--game", "risk"],
        ["tournament", "show", "abc"],
        ["tournament", "list"],
        ["tournament", "resume", "abc"],
        ["tournament", "recurring", "pause", "abc"],
        ["bots", "list"],
    ],
)
def test_a_read_only_command_makes_no_database(tmp_path, command):
    line = one_line_error(arena(tmp_path, *command))
    assert line.startswith("arena: error: no database at arena.db: make one with `arena demo`")
    assert files(tmp_path) == set()


def test_a_read_only_command_reads_an_existing_database(tmp_path):
    made = arena(
        tmp_path, "tournament", "run", "--game", "stratego", "--bots", "random,heuristic",
        "--workers", "1", "--quiet",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    board = arena(tmp_path, "leaderboard", "--game", "stratego")
    assert board.returncode == 0, board.stderr
    assert "random" in board.stdout and "heuristic" in board.stdout


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["leaderboard", "--game", "chess"], "unknown game 'chess'; installed: risk, stratego"),
        (["leaderboard", "--game", "risk", "--variant", "nope"], "unknown variant 'nope'"),
        (["tournament", "run", "--workers", "-1"], "--workers: '-1': expected a whole number, 0"),
        (["play", "risk", "--players", "a,b", "--decision-ms", "-5"], "--decision-ms: '-5'"),
        (["tournament", "run", "--games-per-pairing", "0"], "--games-per-pairing: '0'"),
        (["tournament", "create", "--game", "risk", "--time-bank-ms", "-1"], "'-1': expected"),
        (["referee", "--port", "70000"], "--port: '70000': expected a port number"),
        (["demo", "--risk-games", "-3"], "--risk-games: '-3'"),
        (["bot", "run", "random", "--matches", "0"], "--matches: '0'"),
        (["health", "--timeout", "0"], "--timeout: '0': expected a number of seconds above 0"),
        (
            ["play", "risk", "--players", "random,blitz,blitz", "--replay", "nodir/g.json"],
            "--replay: 'nodir/g.json': the directory nodir does not exist",
        ),
        (["play", "risk", "--players", "a,b,c", "--replay", "."], "'.' is a directory"),
        (["match", "run", "risk", "--players", "a,b,c", "--replay", "no/m.json"], "directory no "),
        (["replay", "export", "m1", "-o", "nodir/m.json"], "the directory nodir does not exist"),
        (["replay", "verify", "game.json"], "arena: error: game.json: no such file or directory"),
        (
            ["tournament", "create", "--game", "risk", "--seats", "4", "--bots", "blitz"],
            "4 seats need at least 4 bots, got 1: blitz (every seat",
        ),
        (
            ["tournament", "run", "--game", "risk", "--seats", "3", "--bots", "blitz,random"],
            "3 seats need at least 3 bots, got 2: blitz, random",
        ),
    ],
)
def test_a_bad_value_is_refused_in_one_line(tmp_path, command, expected):
    assert expected in one_line_error(arena(tmp_path, *command))
    assert files(tmp_path) == set()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ({}, "r.json: not an arena replay: format None, not 'arena-replay'"),
        ([1, 2], "r.json: not an arena replay: a JSON list, not an object"),
    ],
)
def test_json_that_is_not_a_replay_is_one_line(tmp_path, content, expected):
    (tmp_path / "r.json").write_text(json.dumps(content))
    assert expected in one_line_error(arena(tmp_path, "replay", "verify", "r.json"))
    assert files(tmp_path) == {"r.json"}


def test_ctrl_c_while_play_waits_for_a_remote_bot_exits_130_quietly(tmp_path):
    child = start(tmp_path, "play", "stratego", "--players", "heuristic,remote:mine", "--port", "0")
    assert child.stdout is not None
    assert child.stdout.readline().startswith("waiting for mine: run it with --referee")
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130
    assert (out, err) == ("", "")
    assert files(tmp_path) == set()


#: the console script, as a user runs it (its Ctrl-C while the CLI loads is quiet too)
SCRIPT = str(Path(sys.executable).with_name("arena"))


def _loading(pid: int) -> None:
    """Until process ``pid`` runs Arena's imports (asyncio's C part is loaded by the CLI,
    not by Python's own start-up, which no program can make quiet)."""
    deadline = time.monotonic() + 60
    while "_asyncio." not in Path(f"/proc/{pid}/maps").read_text():
        assert time.monotonic() < deadline, "the CLI did not start loading"
        time.sleep(0.005)


@pytest.mark.parametrize("after_s", [0.0, 0.2, 0.4, 0.7, 1.0, 1.4, 2.0])
def test_ctrl_c_at_any_moment_of_play_s_start_exits_130_with_nothing_but_its_lines(
    tmp_path, after_s
):
    """Ctrl-C while `arena play ... remote:NAME` loads, opens its store, starts its
    referee or waits (``after_s`` after its imports began): exit 130, and none of the
    asyncio or gRPC noise a half-started server leaves (``Event loop is closed``, ``...
    was never awaited``), no traceback."""
    child = subprocess.Popen(
        [SCRIPT, "play", "stratego", "--players", "heuristic,remote:mine", "--port", "0"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _loading(child.pid)
    time.sleep(after_s)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130, (out, err)
    assert err == "", err
    assert out == "" or out.startswith("waiting for mine: run it with --referee"), out
    assert files(tmp_path) == set()


def test_play_on_a_busy_port_says_so_in_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = arena(tmp_path, "play", "stratego", "--players", "heuristic,remote:mine",
                       "--port", str(port))  # fmt: skip
    line = one_line_error(result)  # gRPC's own "E1203 ... add_port.cc" line not first
    assert f"port {port} on 127.0.0.1 is in use" in line


def test_a_reader_that_goes_away_ends_the_output_quietly(tmp_path):
    """`arena play ... | head -1`: the pipe is closed before arena writes its first line."""
    child = start(tmp_path, "play", "risk", "--players", "aggressive,blitz,random", "--board")
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()
    err = child.stderr.read()
    assert child.wait(timeout=120) == 141  # as if killed by SIGPIPE, the shell's convention
    assert err == ""


def test_the_referee_says_it_listens_once_without_alembic_noise(tmp_path):
    child = start(tmp_path, "referee", "--port", "0", "--db", "r.db")
    assert child.stdout is not None
    assert child.stdout.readline().startswith("referee listening on 127.0.0.1:")
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0
    assert out == ""
    assert "listening" not in err
    assert "alembic.runtime.plugins" not in err
    assert "Running upgrade" in err  # the migrations an operator may want to see stay


def test_a_bot_that_never_reached_its_referee_gives_up_in_one_line(tmp_path):
    """A wrong address does not retry for ever: a few short lines, the waits growing,
    then one line saying why and exit 2. (A bot that was connected once keeps retrying:
    tests/referee's reconnection tests.)"""
    child = start(tmp_path, "bot", "run", "random", "--referee", "127.0.0.1:1", "--token", "x")
    out, err = child.communicate(timeout=60)
    assert child.returncode == 2
    assert "Traceback" not in err and out == ""
    lines = err.splitlines()
    assert "127.0.0.1:1: UNAVAILABLE (failed to connect to all addresses); retrying; 5 tries " \
        "before giving up" in lines[0]  # fmt: skip
    waits = [float(re.search(r"UNAVAILABLE, try \d+; next in ([\d.]+) s$", line).group(1))
             for line in lines[1:-1]]  # fmt: skip
    assert len(waits) == 3 and waits == sorted(waits) and waits[0] < waits[-1]
    assert lines[-1] == (
        "arena: error: 127.0.0.1:1: connection refused (is a referee running there?); gave up "
        "after 5 tries"
    )
    assert all(len(line) < 150 for line in lines)


def test_a_referee_address_without_a_port_is_one_line(tmp_path):
    done = arena(tmp_path, "bot", "run", "random", "--referee", "localhost", "--token", "x")
    assert one_line_error(done) == (
        "arena: error: referee 'localhost' has no port: give HOST:PORT (e.g. localhost:50051)"
    )
