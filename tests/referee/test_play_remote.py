"""``arena play`` seats a remote bot next to in-process ones: it starts a referee, says
how to connect, and plays once the bot (here ``arena bot run``, its own process) has."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import Process, wait_until

WAITING = re.compile(r"waiting for (\S+): run it with --referee (\S+) --token (\S+)")


def _arena(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena.cli", *args]


@pytest.mark.parametrize(
    ("game", "players", "options"),
    [
        ("risk", ["random", "remote:mine", "aggressive"], ["--option", "turn-limit=30"]),
        ("stratego", ["remote:mine", "heuristic"], ["--variant", "barrage"]),
    ],
)
def test_arena_play_seats_a_remote_bot_process_next_to_house_bots(
    tmp_path: Path, game: str, players: list[str], options: list[str]
) -> None:
    replay = tmp_path / "replay.json"
    play = Process(
        "play",
        _arena(
            *("play", game, "--players", ",".join(players), "--seed", "3"),
            *("--port", "0", "--wait", "60", "--replay", str(replay), *options),
        ),
        tmp_path,
    )
    bot = None
    try:
        found = wait_until(lambda: WAITING.search(play.stdout()), 30, "the connect line")
        name, address, token = found.groups()
        assert name == "mine"
        bot = Process(
            "bot", _arena("bot", "run", "random", "--referee", address, "--token", token), tmp_path
        )
        assert play.wait(timeout=120) == 0, play.stderr()
    finally:
        play.stop()
        if bot is not None:
            bot.stop()
    assert f"replay: {replay}" in play.stdout()
    data = json.loads(replay.read_text())
    assert data["players"] == players
    remote_seat = players.index("remote:mine")
    assert any(step[0] == remote_seat for step in data["steps"])  # the remote bot played
    assert data["result"]["places"]
    verified = subprocess.run(
        _arena("replay", "verify", str(replay)), capture_output=True, text=True, timeout=60
    )
    assert verified.returncode == 0, verified.stderr
