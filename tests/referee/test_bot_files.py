"""A bot file runs unchanged as its own process against a real referee: the starter of
``arena bot new`` as ``python NAME.py --token T`` (arena.sdk.main), and any bot file as
``arena bot run ./NAME.py --register-as NAME`` (registered for the games it plays)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.v1 import arena_pb2 as pb

from .conftest import RPC_TIMEOUT, Process, RefereeServer


def _new_bot(tmp_path: Path, name: str, game: str) -> Path:
    command = [sys.executable, "-m", "arena.cli", "bot", "new", name, "--game", game]
    subprocess.run(command, cwd=tmp_path, check=True, capture_output=True, timeout=60)
    return tmp_path / f"{name}.py"


@pytest.mark.parametrize(
    ("game", "opponents", "options"),
    [
        ("risk", ["house:aggressive", "house:defensive"], {"turn-limit": "40"}),
        ("stratego", ["house:random"], {}),
    ],
)
def test_a_new_bot_plays_as_a_process_against_a_referee(
    referee_server: RefereeServer,
    tmp_path: Path,
    game: str,
    opponents: list[str],
    options: dict[str, str],
) -> None:
    name = f"starter-{game}"
    path = _new_bot(tmp_path, name.replace("-", "_"), game)
    token = referee_server.register(name).token
    command = [sys.executable, str(path), "--referee", referee_server.address, "--token", token]
    process = Process(name, command, tmp_path)
    referee_server.processes.append(process)  # wait_connected notices if it dies
    try:
        referee_server.wait_connected(name)
        info = referee_server.run_match(game, [name, *opponents], options=options)
        assert info.status == "finished", info
        assert not info.result.forfeits, info.result.forfeits
        assert info.players[0] == f"{name}@1"
    finally:
        process.stop()


def test_arena_bot_run_plays_a_bot_file_registered_for_its_games(
    referee_server: RefereeServer, tmp_path: Path
) -> None:
    path = _new_bot(tmp_path, "filed", "risk")
    command = [
        *(sys.executable, "-m", "arena.cli", "bot", "run", str(path)),
        *("--referee", referee_server.address, "--register-as", "filed"),
        *("--token-file", str(tmp_path / "filed.token")),
    ]
    process = Process("bot-filed", command, tmp_path)
    referee_server.processes.append(process)
    try:
        referee_server.wait_connected("filed")
        reply = referee_server.arena.ListBots(pb.ListBotsRequest(), timeout=RPC_TIMEOUT)
        (info,) = [b for b in reply.bots if b.name == "filed"]
        assert list(info.games) == ["risk"]  # from its decide_risk
        match = referee_server.run_match(
            "risk", ["filed", "house:random", "house:random"], options={"turn-limit": "5"}
        )
        assert match.status == "finished" and not match.result.forfeits
    finally:
        process.stop()
