"""``arena demo`` end to end, as a user runs it: a referee and every example bot as
processes (the Node.js bot too), a Risk and a Stratego round robin, both leaderboards,
and nothing left running afterwards; ``arena leaderboard`` reads the same results."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena import demo
from arena.store import Store

RISK_BOTS = {
    "aggressive@1",
    "defensive@1",
    "random@1",
    "search@1",
    "node-random@1",
    "house:blitz@1",
}
STRATEGO_BOTS = {
    "random@1",
    "heuristic@1",
    "stratego-search@1",
    "node-random@1",
    "house:heuristic@1",
}
ROW = re.compile(r"^\s*\d+\s+(\S+@\d+)\s")
GAMES = re.compile(r"^\s*\d+\s+(\S+@\d+)\s+(\d+)\s")


def session_processes(session: int) -> list[str]:
    """The command lines of the live processes of a session (every descendant of a
    process started with ``start_new_session`` that did not leave it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # it ended meanwhile
            continue
        # pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[3]) == session:
            found.append(f"{entry.name}: {cmdline}")
    return found


def processes_mentioning(text: str) -> list[str]:
    """The command lines of live processes other than this one that contain ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{entry.name}: {cmdline}")
    return found


def boards(output: str) -> dict[str, list[str]]:
    """The rows of every leaderboard table in ``output``, by the table's title line."""
    tables: dict[str, list[str]] = {}
    title = ""
    for line in output.splitlines():
        if ROW.match(line):
            tables.setdefault(title, []).append(line)
        elif line.strip() and not line.lstrip().startswith(("#", "-")):
            title = line.strip()
    return tables


def board_bots(rows: list[str]) -> set[str]:
    return {m.group(1) for row in rows if (m := ROW.match(row))}


def start_demo(tmp_path: Path, db: Path, *extra: str) -> tuple[subprocess.Popen[bytes], Path]:
    """Start ``arena demo`` with its smallest settings (and ``extra``) on ``db``, in a
    session of its own; the process, and the file its output goes to."""
    # the demo's logs go to a temporary directory: this test's
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONUNBUFFERED="1")
    out_path = tmp_path / "demo.out"
    command = [sys.executable, "-m", "arena.cli", "demo", "--risk-games", "1"]
    command += ["--stratego-games", "1", "--db", str(db), "--quiet", *extra]
    with out_path.open("wb") as out:
        child = subprocess.Popen(
            command,
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # everything it starts is in this session
        )
    return child, out_path


def run_demo(tmp_path: Path, db: Path, *extra: str) -> str:
    """Run ``arena demo --no-web`` with its smallest settings (and ``extra``) on ``db`` as
    a user would; its output, once it has ended with status 0 and left nothing running."""
    child, out_path = start_demo(tmp_path, db, "--no-web", *extra)
    session = child.pid
    try:
        code = child.wait(timeout=120)
        output = out_path.read_text(errors="replace")
        assert code == 0, output[-4000:]
        assert_left_nothing_running(session, output, tmp_path)
    finally:
        if child.poll() is None or session_processes(session):
            os.killpg(session, signal.SIGKILL)
            child.wait(timeout=10)
    return output


def assert_left_nothing_running(session: int, output: str, where: Path) -> None:
    """The demo that printed ``output``, in the session ``session`` and the directory
    ``where``, has ended, and with it everything it started: every process of its
    session (a worker's resource tracker may take a moment), any bot of its referee and
    any referee on its database."""
    deadline = time.monotonic() + 10
    while (left := session_processes(session)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == [], f"left running: {left}"
    address = re.search(r"referee on (\S+:\d+);", output)
    assert address, output
    assert processes_mentioning(address.group(1)) == []  # no bot of its referee
    assert processes_mentioning(str(where)) == []  # no referee on its database


def demo_boards(output: str) -> tuple[list[str], list[str]]:
    """The rows of the demo's Risk and Stratego leaderboards."""
    tables = boards(output)
    risk = next(rows for title, rows in tables.items() if title.startswith("leaderboard: Risk"))
    stratego = next(
        rows for title, rows in tables.items() if title.startswith("leaderboard: Stratego")
    )
    return risk, stratego


def legends(output: str) -> list[list[str]]:
    """The legend under each leaderboard: the indented lines right after its rows."""
    found: list[list[str]] = []
    state = ""  # what the previous line was: "row", "legend" or ""
    for line in output.splitlines():
        if ROW.match(line):
            state = "row"
        elif state and line.startswith("  ") and line.strip():
            if state == "row":
                found.append([])
            found[-1].append(line.strip())
            state = "legend"
        else:
            state = ""
    return found


def games_by_bot(rows: list[str]) -> dict[str, int]:
    """Each row's label and number of games."""
    return {m.group(1): int(m.group(2)) for row in rows if (m := GAMES.match(row))}


SERVING = re.compile(r"^open (http://\S+) \(Ctrl-C to stop\)$", re.M)


@dataclass(frozen=True)
class Played:
    """A demo that played, served its results on the web and was stopped with Ctrl-C."""

    where: Path  # the directory it ran in
    db: Path
    serving: str  # its output once it said where the web is
    home: str  # the web's home page then
    code: int  # its exit status after Ctrl-C
    output: str  # its whole output
    commands: set[str]  # the command lines of its processes, sampled while it played


@pytest.fixture(scope="module")
def first_demo(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """``arena demo -v`` on a new database, played once for the tests that read it: it
    ends serving its store with the web app, whose home page is read before Ctrl-C stops
    it. None of the tests writes to its database (the later runs play on a copy)."""
    where = tmp_path_factory.mktemp("first-demo")
    db = where / "arena.db"
    child, out_path = start_demo(where, db, "-v", "--web-port", "0")
    session = child.pid
    commands: set[str] = set()
    try:
        deadline = time.monotonic() + 120
        while not (found := SERVING.search(serving := out_path.read_text(errors="replace"))):
            assert child.poll() is None, serving[-4000:]
            assert time.monotonic() < deadline, serving[-4000:]
            commands.update(line.split(": ", 1)[1] for line in session_processes(session))
            time.sleep(0.2)
        with urllib.request.urlopen(found.group(1) + "/", timeout=30) as page:
            assert page.status == 200
            home = page.read().decode()
        child.send_signal(signal.SIGINT)
        code = child.wait(timeout=30)
        output = out_path.read_text(errors="replace")
        assert_left_nothing_running(session, output, where)
    finally:
        if child.poll() is None or session_processes(session):
            os.killpg(session, signal.SIGKILL)
            child.wait(timeout=10)
    return Played(where, db, serving, home, code, output, commands)


def copy_database(db: Path, into: Path) -> Path:
    """A copy of the SQLite database ``db`` (its write-ahead log included) and of the
    tokens the demo keeps beside it, in ``into``; the copy's path."""
    copy = into / db.name
    source, target = sqlite3.connect(db), sqlite3.connect(copy)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
    tokens = Path(f"{db}.tokens")
    shutil.copytree(tokens, Path(f"{copy}.tokens"))  # its modes too
    return copy


def test_the_demo_puts_no_secret_on_a_command_line(first_demo: Played) -> None:
    """Every user of a machine sees every command line (``ps``): the bots' tokens go in
    their token files and the organiser key in the referee's environment."""
    tokens = [p.read_text().strip() for p in Path(f"{first_demo.db}.tokens").glob("*.token")]
    assert len(tokens) >= 5
    bots = [c for c in first_demo.commands if "--token-file" in c]
    assert len(bots) >= 5 and any(" referee " in c for c in first_demo.commands)
    for command in first_demo.commands:
        assert "--token " not in command and "--organiser-key" not in command, command
        assert not any(token in command for token in tokens), command


def test_demo_runs_everything_and_leaves_nothing_running(first_demo: Played) -> None:
    """The first demo played both round robins with every bot (its fixture checked that
    it left nothing running once stopped), and `arena leaderboard` reads its results."""
    assert demo.node_available() == "", "`make test` installs Node.js and bots/node's packages"
    output = first_demo.output

    assert "sits this one out" not in output
    # -v: a line per game, Risk's in turns, Stratego's in moves
    games = re.findall(
        r"^game (\d+)/(\d+): .+ 1st, .+ \([a-z ]+, \d+ (turns|moves)\)$", output, re.M
    )
    # Risk: 6 bots, 3 seats, C(6, 3) = 20 tables; Stratego: 5 bots, C(5, 2) = 10 pairs
    risk_games = [(int(n), unit) for n, total, unit in games if total == "20"]
    stratego_games = [(int(n), unit) for n, total, unit in games if total == "10"]
    assert risk_games == [(n, "turns") for n in range(1, 21)], output
    assert stratego_games == [(n, "moves") for n in range(1, 11)], output
    connected = (
        "7 bot processes connected: aggressive, defensive, random, heuristic, search, "
        "stratego-search, node-random"
    )
    assert connected in output
    assert re.search(r"tournament \w+ finished: 20/20 matches", output), output
    assert re.search(r"tournament \w+ finished: 10/10 matches", output), output
    risk, stratego = demo_boards(output)
    assert board_bots(risk) == RISK_BOTS
    assert board_bots(stratego) == STRATEGO_BOTS
    for row in risk + stratego:  # an Elo inside its interval
        elo, low, high = re.search(r"\s(\d+)\s+(\d+)\.\.(\d+)\s", row).groups()
        assert int(low) < int(elo) < int(high), row

    again = subprocess.run(
        [sys.executable, "-m", "arena.cli", "leaderboard", "--db", str(first_demo.db)],
        cwd=first_demo.where,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0, again.stderr
    tables = boards(again.stdout)
    assert tables == {"risk (classic)": risk, "stratego (classic)": stratego}


def test_later_demos_on_a_database_play_its_bot_versions_under_a_legend(
    first_demo: Played, tmp_path: Path
) -> None:
    first = first_demo.output
    # the tokens that let the next run be the same bots are secrets: the owner's only
    kept = Path(f"{first_demo.db}.tokens")
    assert kept.stat().st_mode & 0o777 == 0o700
    tokens = sorted(kept.iterdir())
    assert [t.name for t in tokens] == sorted(
        f"{name}.token"
        for name in (
            "aggressive",
            "defensive",
            "random",
            "heuristic",
            "search",
            "stratego-search",
            "node-random",
        )
    )
    assert all(t.stat().st_mode & 0o777 == 0o600 for t in tokens)

    # the next run, on a copy of that database and its tokens. Two of the tokens are no
    # longer this database's bots (the database was deleted, or the version revoked):
    # those two are replaced by new registrations, the five others play again as the
    # same versions
    db = copy_database(first_demo.db, tmp_path)
    kept = Path(f"{db}.tokens")
    store = Store(str(db))
    try:
        assert store.revoke_bot(store.find_bot("aggressive@1").id)
    finally:
        store.close()
    (kept / "random.token").write_text("arena_not-a-token\n")
    second = run_demo(tmp_path, db)

    replaced = {"aggressive@1": "aggressive@2", "random@1": "random@2"}
    for before, after in zip(demo_boards(first), demo_boards(second), strict=True):
        played = games_by_bot(before)
        # every match in the database: the old versions too, their games as they were;
        # a new version played as many games as its old one did in the first run
        assert games_by_bot(after) == {
            **{label: games if label in replaced else 2 * games for label, games in played.items()},
            **{replaced[label]: games for label, games in played.items() if label in replaced},
        }
    risk, stratego = demo_boards(second)
    assert board_bots(risk) == RISK_BOTS | {"aggressive@2", "random@2"}
    assert board_bots(stratego) == STRATEGO_BOTS | {"random@2"}
    assert f"their tokens stay in {kept}: the next run on {db} plays the same versions" in second
    # which entry is played inside the referee and which is a process, under each board
    for output in (first, second):
        risk_legend, stratego_legend = legends(output)
        assert risk_legend == [
            "house:blitz = built into Arena, played inside the referee",
            "the others = bot processes connected over gRPC; @N = the registered version",
        ]
        assert stratego_legend == [
            "house:heuristic = built into Arena, played inside the referee",
            "heuristic = the same bot, run as its own process",
            "the others = bot processes connected over gRPC; @N = the registered version",
        ]


def test_the_demo_ends_serving_its_results_on_the_web_until_ctrl_c(first_demo: Played) -> None:
    """Without --no-web the demo serves its store with the web app, says where in one
    line, and stops cleanly on Ctrl-C (no traceback, nothing left running: the fixture
    checks that)."""
    found = SERVING.search(first_demo.serving)
    assert found.group(0) == first_demo.serving.rstrip().splitlines()[-1]  # its last line
    # its leaderboards: the top five of each (of six Risk bots, at least five show;
    # the sixth may show among the recent matches)
    home = first_demo.home
    shown = {b for b in RISK_BOTS if re.search(rf"(?<![\w:-]){re.escape(b)}", home)}
    assert len(shown) >= 5, (shown, home)
    assert first_demo.code in (0, 130)
    assert "Traceback" not in first_demo.output, first_demo.output[-4000:]


def test_a_web_port_in_use_stops_the_demo_before_it_plays(tmp_path: Path) -> None:
    """Another program on the web's port (8000 is a popular one) stops the demo at once,
    in one line naming the option that picks another, not after a minute of play."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        child, out_path = start_demo(tmp_path, tmp_path / "arena.db", "--web-port", str(port))
        session = child.pid
        try:
            assert child.wait(timeout=60) == 2
        finally:
            if child.poll() is None or session_processes(session):
                os.killpg(session, signal.SIGKILL)
                child.wait(timeout=10)
    assert out_path.read_text().splitlines() == [
        f"arena: error: cannot serve the web on 127.0.0.1:{port}: address already in use;"
        " choose another port with --web-port (0: any free one)"
    ]
    assert {p.name for p in tmp_path.iterdir()} == {"demo.out"}  # no store, no tokens
