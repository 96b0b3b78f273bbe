"""``--token-file``: a bot that registers itself (``--register-as``, as the compose file's
bots do) keeps its token, so that started again it is the same bot version, with the same
rating, instead of a new one. The Python ``arena bot run`` and the Node.js bot alike, as
real processes against the shared referee."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from arena.v1 import arena_pb2 as pb

from .conftest import REGISTRATION_KEY, ROOT, RPC_TIMEOUT, Process, RefereeServer, wait_until

KINDS = ("python", "node")


def _command(kind: str, referee: RefereeServer, *options: str) -> list[str]:
    if kind == "node":
        return [
            "node",
            str(ROOT / "bots" / "node" / "bot.js"),
            "--referee",
            referee.address,
            *options,
        ]
    return [
        *(sys.executable, "-m", "arena.cli", "bot", "run", "random"),
        *("--referee", referee.address, *options),
    ]


def _versions(referee: RefereeServer, name: str) -> list[pb.BotInfo]:
    reply = referee.arena.ListBots(pb.ListBotsRequest(), timeout=RPC_TIMEOUT)
    return [bot for bot in reply.bots if bot.name == name]


def _connected(referee: RefereeServer, name: str, process: Process) -> bool:
    assert process.alive(), f"{process.name} exited: {process.stdout()}{process.stderr()}"
    return any(bot.connected for bot in _versions(referee, name))


@pytest.mark.parametrize("kind", KINDS)
def test_a_bot_started_again_with_its_token_file_is_the_same_version(
    referee_server: RefereeServer, tmp_path: Path, kind: str
) -> None:
    name = f"kept-{kind}"
    token_file = tmp_path / "tokens" / f"{name}.token"  # its directory does not exist yet
    command = _command(kind, referee_server, "--register-as", name, "--token-file", str(token_file))
    first = Process(f"{name}-1", command, tmp_path)
    try:
        wait_until(lambda: _connected(referee_server, name, first), 30, f"{name} to connect")
    finally:
        first.stop()
    (registered,) = _versions(referee_server, name)
    assert "registered" in first.stdout()
    token = token_file.read_text().strip()
    assert token.startswith("arena_")
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600  # a secret: its owner's only
    assert [p.name for p in token_file.parent.iterdir()] == [token_file.name]  # no leftovers
    wait_until(lambda: not _versions(referee_server, name)[0].connected, 10, "the disconnect")

    again = Process(f"{name}-2", command, tmp_path)
    try:
        wait_until(lambda: _connected(referee_server, name, again), 30, f"{name} to reconnect")
        # the same version connected again: no second registration
        (reconnected,) = _versions(referee_server, name)
        assert (reconnected.bot_id, reconnected.version) == (registered.bot_id, 1)
        assert "registered" not in again.stdout()
        assert token_file.read_text().strip() == token
        # and it plays as that version
        info = referee_server.run_match(
            "risk", [name, "house:random", "house:random"], options={"turn-limit": "5"}
        )
        assert info.status == "finished" and not info.result.forfeits
        assert info.players[0] == f"{name}@1"
    finally:
        again.stop()


@pytest.mark.parametrize("kind", KINDS)
def test_a_refused_token_file_is_named_and_nothing_is_registered(
    referee_server: RefereeServer, tmp_path: Path, kind: str
) -> None:
    name = f"refused-{kind}"
    token_file = tmp_path / f"{name}.token"
    token_file.write_text("arena_not-a-token-of-this-referee\n")
    command = _command(kind, referee_server, "--register-as", name, "--token-file", str(token_file))
    process = Process(name, command, tmp_path)
    try:
        assert process.wait(timeout=30) != 0
    finally:
        process.stop()
    said = process.stdout() + process.stderr()
    assert f"the token in {token_file} was refused" in said, said
    assert "remove the file to register a new version" in said
    assert _versions(referee_server, name) == []  # it did not quietly become a new bot
    assert token_file.read_text() == "arena_not-a-token-of-this-referee\n"  # left as it was


@pytest.mark.parametrize("kind", KINDS)
def test_a_token_file_that_cannot_be_written_fails_before_registering(
    referee_server: RefereeServer, tmp_path: Path, kind: str
) -> None:
    """Else a bot container restarting in a loop would register a version at every start."""
    name = f"unwritable-{kind}"
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    token_file = blocker / f"{name}.token"  # its directory would have to be a file
    command = _command(kind, referee_server, "--register-as", name, "--token-file", str(token_file))
    process = Process(name, command, tmp_path)
    try:
        assert process.wait(timeout=30) == 2
    finally:
        process.stop()
    assert str(blocker) in process.stderr(), process.stderr()  # the error names the path
    assert _versions(referee_server, name) == []
    assert "registered" not in process.stdout()


def test_a_token_file_alone_reads_the_token_and_a_missing_one_is_a_clear_error(
    referee_server: RefereeServer, tmp_path: Path
) -> None:
    name = "from-file"
    token_file = tmp_path / "token"
    missing = _command("python", referee_server, "--token-file", str(token_file))
    process = Process("missing", missing, tmp_path)
    assert process.wait(timeout=30) == 2
    assert "--token-file holding one, or --register-as NAME" in process.stderr()

    token_file.write_text(referee_server.register(name).token + "\n")
    process = Process(name, missing, tmp_path)  # the same command, now with a token there
    try:
        wait_until(lambda: _connected(referee_server, name, process), 30, f"{name} to connect")
    finally:
        process.stop()


@pytest.mark.parametrize("kind", KINDS)
def test_a_bot_registers_itself_with_the_key_of_a_closed_registration(
    locked_referee: RefereeServer, tmp_path: Path, kind: str
) -> None:
    """The compose file closes registration: its bots register with the key (--key)."""
    name = f"keyed-{kind}"
    token_file = tmp_path / f"{name}.token"
    without = Process(
        f"{name}-nokey",
        _command(kind, locked_referee, "--register-as", name, "--token-file", str(token_file)),
        tmp_path,
    )
    try:
        assert without.wait(timeout=30) != 0
    finally:
        without.stop()
    assert "registration is closed" in without.stdout() + without.stderr()
    assert _versions(locked_referee, name) == [] and not token_file.exists()

    command = _command(kind, locked_referee, "--register-as", name, "--token-file", str(token_file))
    keyed = Process(f"{name}-key", [*command, "--key", REGISTRATION_KEY], tmp_path)
    try:
        wait_until(lambda: _connected(locked_referee, name, keyed), 30, f"{name} to connect")
    finally:
        keyed.stop()
    assert [bot.version for bot in _versions(locked_referee, name)] == [1]
