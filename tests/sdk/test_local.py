"""Bot files played in process: ``arena play --players ./mybot.py,...`` and tournaments
with ``--bots ./mybot.py,...``, through the real ``arena`` command; a clear one-line
error for each way a file can fail to be a bot."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from arena.store import Store
from arena.tournament.executor import play_local
from arena.tournament.runner import TournamentSpec, create_tournament, jobs

#: a Risk bot that names territories (the SDK turns names into indices, in process too)
NAMING_BOT = """
from arena.games.risk.map import load_map
from arena.sdk import Bot, main


class Namer(Bot):
    def decide_risk(self, observation, decision):
        opts = decision.options
        names = load_map(observation["map"]).territories
        if decision.kind == "claim":
            return {"type": "claim", "territory": names[opts["territories"][0]]}
        if decision.kind == "setup_place":
            return {"type": "place", "territory": names[opts["territories"][-1]]}
        if decision.kind == "trade":
            if opts["sets"]:
                return {"type": "trade", "cards": opts["sets"][0]}
            return {"type": "no_trade"}
        if decision.kind == "reinforce":
            return {"type": "reinforce", "armies": {names[opts["territories"][0]]: opts["armies"]}}
        if decision.kind == "attack":
            for a in opts["attacks"]:
                if observation["armies"][a["from"]] > observation["armies"][a["to"]] + 2:
                    return {"type": "attack", "from": names[a["from"]], "to": names[a["to"]]}
            return {"type": "end_attack"}
        if decision.kind == "move_in":
            return {"type": "move_in", "armies": opts["max"]}
        return {"type": "end_turn"}


if __name__ == "__main__":
    main(Namer)
"""


def arena(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The real ``arena`` command, run in ``cwd``."""
    command = [sys.executable, "-m", "arena.cli", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def namer(tmp_path: Path) -> Path:
    path = tmp_path / "namer.py"
    path.write_text(NAMING_BOT)
    return path


def test_a_bot_file_plays_arena_play_in_process(tmp_path: Path, namer: Path) -> None:
    done = arena(
        "play", "risk", "--players", "./namer.py,aggressive,defensive", "--seed", "5", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "seats (turn order): 0:file:namer, 1:aggressive, 2:defensive" in done.stdout
    assert "ranking: 1. " in done.stdout


BROKEN = {
    "none.py": ("x = 1\n", r"none\.py: defines no subclass of arena\.sdk\.Bot$"),
    "two.py": (
        "from arena.sdk import Bot\nclass A(Bot): pass\nclass B(Bot): pass\n",
        r"two\.py: defines 2 Bot subclasses \(A, B\); keep one$",
    ),
    "boom.py": (
        "import os\n\nraise RuntimeError('boom')\n",
        r"boom\.py, line 3: importing it failed: RuntimeError: boom$",
    ),
    "syntax.py": ("def f(:\n", r"syntax\.py, line 1: importing it failed: SyntaxError"),
    "-bad.py": ("", r"the file name '-bad' names the bot file:-bad"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_bot_file_is_one_line_naming_it(tmp_path: Path, name: str) -> None:
    text, expected = BROKEN[name]
    (tmp_path / name).write_text(text)
    done = arena("play", "risk", "--players", f"./{name},aggressive,defensive", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert re.search(expected, lines[0]), lines[0]


def test_a_bot_file_that_raises_plays_on_with_strikes_as_it_would_remotely(
    tmp_path: Path,
) -> None:
    """An exception in a decision is a strike, as over gRPC: a warning naming the file and
    the line, the default played; 5 strikes forfeit the seat and the match plays on."""
    (tmp_path / "crash.py").write_text(
        "from arena.sdk import Bot\n\nclass C(Bot):\n    def decide_risk(self, o, d):\n"
        "        return 1 / 0\n"
    )
    done = arena("play", "risk", "--players", "./crash.py,aggressive,defensive", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warnings = done.stderr.strip().splitlines()
    assert len(warnings) == 5, done.stderr
    assert all(
        re.fullmatch(
            r"arena: warning: file:crash \(seat 0\) failed its claim decision: \S*crash\.py, "
            r"line 5: ZeroDivisionError: division by zero \(a strike; the default is played\)",
            line,
        )
        for line in warnings
    ), warnings
    assert (
        "seat 0 file:crash: 5 strikes, 0 timeouts, forfeited: 5 strikes (last: bot raised "
        "ZeroDivisionError: division by zero)"
    ) in done.stdout


@pytest.mark.parametrize(
    ("spec", "expected"),
    [("./missing.py", "./missing.py: no such file"), ("./notes.txt", "not a Python file")],
)
def test_a_missing_or_non_python_file_is_refused(tmp_path: Path, spec: str, expected: str) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    done = arena("play", "risk", "--players", f"{spec},aggressive,defensive", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == f"arena: error: {expected}" or expected in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def _tournament(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return arena(
        *("tournament", "run", "--db", "t.db", "--game", "risk", "--seats", "3"),
        *("--bots", "./namer.py,house:aggressive,defensive", "--option", "turn-limit=30"),
        *("--workers", "2", "--quiet", *extra),
        cwd=tmp_path,
    )


def test_a_bot_file_plays_a_tournament_in_worker_processes_one_version_per_content(
    tmp_path: Path, namer: Path
) -> None:
    first = _tournament(tmp_path, "--games-per-pairing", "4")
    assert first.returncode == 0, first.stderr
    assert "finished, 4/4 matches finished" in first.stdout
    assert re.search(r"^\s*\d+\s+file:namer@1\s+4\s", first.stdout, re.M), first.stdout

    again = _tournament(tmp_path)  # the same content: the same version
    assert again.returncode == 0, again.stderr
    assert "file:namer@1" in again.stdout

    namer.write_text(NAMING_BOT + "\n# a better strategy\n")  # edited: a new version
    edited = _tournament(tmp_path)
    assert edited.returncode == 0, edited.stderr
    assert "file:namer@2" in edited.stdout and "file:namer@1" not in edited.stdout

    store = Store(str(tmp_path / "t.db"))
    rows = [b for b in store.bots() if b.name == "file:namer"]
    assert [(b.version, b.kind, b.path) for b in rows] == [
        (1, "file", str(namer)),
        (2, "file", str(namer)),
    ]
    assert all(len(b.digest or "") == 64 for b in rows) and rows[0].digest != rows[1].digest


def test_a_match_plays_the_files_content_stored_with_the_tournament_not_its_path(
    tmp_path: Path, namer: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_CODE_CACHE", str(tmp_path / "cache"))
    store = Store(str(tmp_path / "t.db"))
    spec = TournamentSpec(game="risk", bots=[str(namer), "aggressive", "defensive"], seats=3)
    tournament = create_tournament(store, spec)
    (job,) = jobs(store, tournament, store.tournament_matches(tournament.id))
    namer_seat = next(seat for seat in job.seats if seat.path)
    assert store.code(namer_seat.digest).data == namer.read_bytes()
    namer.unlink()  # gone from here (as on a worker of another machine): still played
    outcome = play_local(replace(job, options={"turn-limit": "20"}))
    assert outcome.status == "finished", outcome.error
    assert (tmp_path / "cache" / namer_seat.digest / "bot.py").is_file()


def test_a_job_without_a_store_plays_the_path_if_its_content_is_unchanged(
    tmp_path: Path, namer: Path
) -> None:
    store = Store(str(tmp_path / "t.db"))
    spec = TournamentSpec(game="risk", bots=[str(namer), "aggressive", "defensive"], seats=3)
    tournament = create_tournament(store, spec)
    (job,) = jobs(store, tournament, store.tournament_matches(tournament.id))
    job = replace(job, db=None)
    namer.write_text(NAMING_BOT + "\n# edited\n")
    outcome = play_local(job)
    assert outcome.status == "failed"
    assert f"{namer} changed since the tournament was created" in (outcome.error or "")
    namer.write_text(NAMING_BOT)  # restored: the version plays again
    assert play_local(replace(job, options={"turn-limit": "20"})).status == "finished"


def test_bot_files_and_registered_bots_share_a_tournament(tmp_path: Path, namer: Path) -> None:
    store = Store(str(tmp_path / "t.db"))
    store.register_bot("remote-one")
    spec = TournamentSpec(game="risk", bots=[str(namer), "remote-one", "aggressive"], seats=3)
    tournament = create_tournament(store, spec)
    (job,) = jobs(store, tournament, store.tournament_matches(tournament.id))
    # the match goes to the referee, which plays the file from the store by its label
    assert job.remote
    assert sorted(seat.player for seat in job.seats) == [
        "file:namer@1",
        "house:aggressive",
        "remote-one@1",
    ]


def test_a_stored_file_version_is_named_file_stem_at_version(tmp_path: Path, namer: Path) -> None:
    from arena.plugins import load_registry
    from arena.tournament.runner import resolve_bot

    store = Store(str(tmp_path / "t.db"))
    registry = load_registry()
    first = resolve_bot(store, registry, "risk", str(namer))
    assert (first.label, first.kind) == ("file:namer@1", "file")
    assert resolve_bot(store, registry, "risk", "file:namer@1").id == first.id
    with pytest.raises(ValueError, match=r"no bot file version 'file:namer@2'"):
        resolve_bot(store, registry, "risk", "file:namer@2")


def test_a_bot_file_in_arena_play_learns_nothing_of_the_seed(tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    (tmp_path / "spy.py").write_text(
        "from arena.sdk import Bot\n\n\n"
        "class Spy(Bot):\n"
        "    def decide_stratego(self, observation, decision):\n"
        f"        with open({str(seen)!r}, 'a') as out:\n"
        "            out.write(repr(vars(self.match)) + '\\n')\n"
        "        if decision.kind == 'setup':\n"
        "            return self.default_setup(decision)\n"
        "        src, dst = decision.options['moves'][0]\n"
        "        return {'type': 'move', 'from': src, 'to': dst}\n"
    )
    seed = "7311973460118204951"
    done = arena("play", "stratego", "--players", "./spy.py,random", "--seed", seed, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    contexts = set(seen.read_text().splitlines())
    assert len(contexts) == 1  # one instance for the match, the same context each decision
    (context,) = contexts
    assert "'seat': 0" in context and "'players': ['file:spy', 'random']" in context
    assert seed not in context and seed[:8] not in context
