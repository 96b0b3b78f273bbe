"""Bot files through the real ``arena`` command: ``arena tournament run`` sandboxes
them by default, ``arena play`` plays them in process unless told ``--isolation``;
where bubblewrap cannot run, bot files are refused in one line unless ``--isolation
process``. The cheater is a real file that walks ``gc`` for the match's state and,
finding it, raises at every decision (five strikes: a forfeit)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

CHEATER = """
import gc
from arena.engine.core import State
from arena.sdk import Bot


class Cheater(Bot):
    def decide_stratego(self, observation, decision):
        found = [o for o in gc.get_objects() if isinstance(o, State)]
        if found:
            raise RuntimeError(f"found the live state: {type(found[0]).__name__}")
        if decision.kind == "move":
            src, dst = decision.options["moves"][0]
            return {"type": "move", "from": src, "to": dst}
        return self.default_setup(decision)
"""
RULES = ("--variant", "barrage", "--option", "turn-limit=40")


def arena(*args: str, cwd: Path, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    import os

    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def cheater(tmp_path: Path) -> Path:
    path = tmp_path / "cheater.py"
    path.write_text(CHEATER)
    return path


@pytest.mark.parametrize(
    ("isolation", "found"), [("inprocess", True), ("process", False), ("sandbox", False)]
)
def test_arena_play_isolation(tmp_path: Path, cheater: Path, isolation: str, found: bool) -> None:
    done = arena(
        *("play", "stratego", "--players", "./cheater.py,random", "--seed", "3", *RULES),
        *("--isolation", isolation),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if "seat 0 file:cheater" in x)
    if found:
        assert "forfeited: 5 strikes (last: bot raised RuntimeError: found the live state" in line
    else:
        assert line.endswith("0 strikes, 0 timeouts, no forfeit"), line


def test_a_tournament_sandboxes_bot_files_by_default(tmp_path: Path, cheater: Path) -> None:
    done = arena(
        *("tournament", "run", "--db", "t.db", "--game", "stratego", *RULES),
        *("--bots", "./cheater.py,random", "--games-per-pairing", "2", "--quiet"),
        *("--workers", "2"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2/2 matches finished" in done.stdout
    with sqlite3.connect(tmp_path / "t.db") as db:
        forfeits = db.execute("select forfeit from seats where forfeit is not null").fetchall()
    assert forfeits == []  # in its sandbox the cheater found nothing, and played on
    # the same tournament in process: the cheater finds the state in every match
    inproc = arena(
        *("tournament", "run", "--db", "u.db", "--game", "stratego", *RULES),
        *("--bots", "./cheater.py,random", "--games-per-pairing", "2", "--quiet"),
        *("--workers", "0", "--isolation", "inprocess"),
        cwd=tmp_path,
    )
    assert inproc.returncode == 0, inproc.stdout + inproc.stderr
    with sqlite3.connect(tmp_path / "u.db") as db:
        forfeits = db.execute("select forfeit from seats where forfeit is not null").fetchall()
    # (a match may end before its 5th strike: barrage's few pieces can fall fast)
    assert forfeits and all("found the live state" in f for (f,) in forfeits)


def test_without_bubblewrap_bot_files_are_refused_in_one_line_unless_process(
    tmp_path: Path, cheater: Path
) -> None:
    missing = {"ARENA_BWRAP": str(tmp_path / "no-bwrap")}
    tournament = ("tournament", "run", "--db", "t.db", "--game", "stratego")
    for command in (
        (*tournament, "--bots", "./cheater.py,random"),
        ("play", "stratego", "--players", "./cheater.py,random", "--isolation", "sandbox"),
    ):
        done = arena(*command, *RULES, cwd=tmp_path, env=missing)
        assert done.returncode == 2, done.stdout + done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith("arena: error: bubblewrap is not installed")
        assert "unless you say --isolation process" in lines[0]
    assert not (tmp_path / "t.db").exists()  # refused before anything was written
    done = arena(
        *("play", "stratego", "--players", "./cheater.py,random", "--isolation", "process"),
        *RULES,
        cwd=tmp_path,
        env=missing,
    )
    assert done.returncode == 0, done.stderr
