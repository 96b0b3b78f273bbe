"""Registering a name a second time is never silent: `arena bot register` refuses it
(saying which version there is, and whether it is connected) unless told --new-version,
which makes the next version that matches then seat."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import ROOT, Process, RefereeServer

ARENA = [sys.executable, "-m", "arena.cli"]


def _register(server: RefereeServer, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [*ARENA, "bot", "register", "twice", "--referee", server.address, *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)


def test_a_second_registration_is_refused_without_new_version(
    referee_server: RefereeServer, tmp_path: Path
) -> None:
    first = _register(referee_server)
    assert first.returncode == 0 and "registered twice version 1" in first.stdout
    again = _register(referee_server)
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr.strip().splitlines() == [
        f"arena: error: {referee_server.address}: bot twice is registered already: version 1 "
        "(not connected); use its token, or register version 2 with --new-version "
        "(new_version): matches naming the bot then seat the new version"
    ]
    assert referee_server.bots()["twice"].version == 1  # nothing was registered
    token = first.stdout.split("keep it secret): ")[1].strip()
    bot = Process("bot-twice", [*ARENA, "bot", "run", "random", "--referee",
                                referee_server.address, "--token", token], tmp_path)  # fmt: skip
    referee_server.processes.append(bot)
    try:
        referee_server.wait_connected("twice")
        connected = _register(referee_server)
    finally:
        bot.stop()
    assert connected.returncode == 2 and "version 1 (connected); use its token" in connected.stderr
    newer = _register(referee_server, "--new-version")
    assert newer.returncode == 0 and "registered twice version 2" in newer.stdout
    assert referee_server.bots()["twice"].version == 2
