"""``arena bot new NAME --game GAME``: a starter bot file that plays whole games in
process through ``arena play`` (its run as a process against a referee is in
tests/referee/test_bot_files.py), and clear refusals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.sdk.starter import class_name


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "arena.cli", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    ("game", "opponents"), [("risk", "aggressive,defensive"), ("stratego", "random")]
)
def test_a_new_bot_plays_a_whole_game_through_arena_play(
    tmp_path: Path, game: str, opponents: str
) -> None:
    made = arena("bot", "new", "my_first", "--game", game, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert f"arena play {game} --players ./my_first.py,{opponents}" in made.stdout
    text = (tmp_path / "my_first.py").read_text()
    assert "class MyFirst(Bot):" in text and "main(MyFirst)" in text

    played = arena("play", game, "--players", f"./my_first.py,{opponents}", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    assert "0:file:my_first" in played.stdout
    assert "ranking: 1. " in played.stdout  # played to its end


def test_bot_new_refuses_to_overwrite_and_bad_names_and_games(tmp_path: Path) -> None:
    mine = tmp_path / "mine.py"
    mine.write_text("# my work\n")
    cases = [
        (("mine", "--game", "risk"), f"arena: error: {Path('mine.py')} exists"),
        (("_bad", "--game", "risk"), "arena: error: bot name '_bad': 1 to 64 ASCII letters"),
        (("spy\u0410", "--game", "risk"), "arena: error: bot name 'spy\u0410': 1 to 64 ASCII"),
        (("ok", "--game", "chess"), "arena: error: --game 'chess': expected one of risk, stratego"),
        (("nowhere/bot", "--game", "risk"), "arena: error: nowhere: no such directory"),
    ]
    for args, expected in cases:
        done = arena("bot", "new", *args, cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr.startswith(expected), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert mine.read_text() == "# my work\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.py"]


@pytest.mark.parametrize(
    ("stem", "expected"), [("mybot", "Mybot"), ("my-bot_2", "MyBot2"), ("7up", "Bot7up")]
)
def test_the_class_is_named_after_the_file(stem: str, expected: str) -> None:
    assert class_name(stem) == expected
