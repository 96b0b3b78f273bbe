"""A tournament's progress on the console, through the real ``arena`` command: a bar that
fits the terminal (rich), plain lines with no control codes when the output is not a
terminal, a line per finished game with ``-v`` (as cutechess-cli prints them), and a
running leader that agrees with the final table."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from arena.store import Store

ARENA = [sys.executable, "-m", "arena.cli"]
# 4 bots, 3 seats: 4 tables, 2 games each: 8 matches
RUN = [
    *("tournament", "run", "--game", "risk", "--bots", "aggressive,blitz,defensive,random"),
    *("--seats", "3", "--games-per-pairing", "2", "--option", "turn-limit=40", "--seed", "9"),
    *("--workers", "2"),
]
CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
ROW = re.compile(r"^\s*1\s+(\S+@\d+)\s+\d+\s+\d+\s+\d+\s+\d+\s+[\d.]+\s+(\d+)\s", re.M)
LEADER = re.compile(r"leader (\S+@\d+) \((\d+)\)")
GAME = re.compile(r"^game (\d+)/(\d+): (.+) \(([a-z ]+), (\d+) (turns|moves)\)$")


def run_in_terminal(command: list[str], columns: int, cwd: Path) -> tuple[int, str]:
    """Run ``command`` with a pseudo-terminal ``columns`` wide as its stdout and stderr;
    its exit status and everything it wrote."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env["TERM"] = "xterm-256color"
    child = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env)
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the child closed its end
                    break
                if not data:
                    break
                out += data
            elif child.poll() is not None:
                break
        code = child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(master)
    return code, out.decode(errors="replace")


def table_leader(out: str) -> tuple[str, int]:
    """The first row of the final table: its bot and Elo."""
    first = ROW.search(out)
    assert first, out
    return first.group(1), int(first.group(2))


def test_the_bar_fits_a_narrow_terminal_and_its_leader_tops_the_final_table(tmp_path):
    code, out = run_in_terminal([*ARENA, *RUN, "--db", "t.db"], 80, tmp_path)
    assert code == 0, out
    assert "\x1b[" in out  # drawn in place, as a terminal's bar is
    screens = [CONTROL.sub("", part) for part in re.split(r"\r\n|\r|\n", out)]
    bars = [s for s in screens if " matches " in s and "━" in s]
    assert len(bars) >= 2, screens
    assert all(len(bar.rstrip()) <= 80 for bar in bars), [b for b in bars if len(b) > 80]
    assert bars[-1].split()[1] == "8/8", bars[-1]
    shown = LEADER.search(bars[-1])
    assert shown, bars[-1]
    assert (shown.group(1), int(shown.group(2))) == table_leader(out)


def test_piped_output_has_plain_lines_and_a_line_per_game(tmp_path):
    db = tmp_path / "t.db"
    done = subprocess.run(
        [*ARENA, *RUN, "--db", str(db), "-v"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\r" not in done.stdout
    lines = done.stdout.splitlines()
    # said before any match ends (through a referee the first can take minutes)
    assert lines[1] == "0/8 matches: playing (a line every 5 s once results come)", lines

    games = [m for line in lines if (m := GAME.match(line))]
    assert [(int(m.group(1)), int(m.group(2))) for m in games] == [(n, 8) for n in range(1, 9)]
    # each line tells a stored match: its bots by place, how it ended, how many turns
    store = Store(str(db), create=False)
    try:
        (tournament,) = store.tournaments()
        expected = []
        for match in store.tournament_matches(tournament.id):
            places = match.result["places"]
            seats = sorted(range(len(places)), key=places.__getitem__)
            ordinals = {1: "1st", 2: "2nd", 3: "3rd"}
            placed = ", ".join(f"{match.players[s]} {ordinals[places[s]]}" for s in seats)
            steps = json.loads(store.replay(match.id))["steps"]
            turns = max(e["turn"] for step in steps for e in step[2] if e["e"] == "turn")
            reason = match.result["reason"].replace("_", " ")
            expected.append(f"{placed} ({reason}, {turns} turns)")
    finally:
        store.close()
    shown = [f"{m.group(3)} ({m.group(4)}, {m.group(5)} {m.group(6)})" for m in games]
    assert sorted(shown) == sorted(expected)

    # the status lines' last leader is the table's first
    status = [line for line in lines if re.match(r"^\d+/8 matches ", line)]
    assert status and status[-1].startswith("8/8 matches"), lines
    shown_leader = LEADER.search(status[-1])
    assert shown_leader, status[-1]
    assert (shown_leader.group(1), int(shown_leader.group(2))) == table_leader(done.stdout)


def test_quiet_with_verbose_prints_the_games_and_no_progress(tmp_path):
    done = subprocess.run(
        [*ARENA, *RUN, "--db", str(tmp_path / "t.db"), "--quiet", "-v"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert len([line for line in done.stdout.splitlines() if GAME.match(line)]) == 8
    assert not re.search(r"^\d+/8 matches", done.stdout, re.M)


def test_the_time_left_counts_this_run_s_matches_only():
    """A resume finds 4 of 10 done and plays 2 in 10 s: 4 left at that rate is 20 s (not
    the 6-in-10-s rate that counted the earlier run's); none before its first."""
    from arena.cli.console import status_line, time_left
    from arena.tournament.runner import Progress

    state = Progress("t", total=10, finished=4, problems=0, started=100.0)
    assert time_left(state, 105.0, already=4) is None
    assert status_line(state, "", 105.0, already=4) == "4/10 matches  5 s elapsed"
    state.finished = 6
    assert time_left(state, 110.0, already=4) == pytest.approx(20.0)
    assert status_line(state, "", 110.0, already=4) == "6/10 matches  10 s elapsed, ~20 s left"
