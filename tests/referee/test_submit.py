"""SubmitBot over a real socket, from the proto: a referee process keeps submitted code
by content, checks it in the sandbox, refuses what it must with the reason, and plays
the hosted bot with no process of its author running; its owner reads its stderr."""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import sys
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from arena.sdk.starter import write_starter
from arena.v1 import arena_pb2 as pb

from .conftest import MATCH_TIMEOUT, RefereeServer

KEY = "registration-secret"
CAP = 2 << 20


@pytest.fixture(scope="module")
def referee(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RefereeServer]:
    server = RefereeServer(
        tmp_path_factory.mktemp("submit"),
        decision_ms=3000,
        time_bank_ms=3000,
        registration_key=KEY,
        extra=("--max-submission-bytes", str(CAP)),
    )
    try:
        yield server
    finally:
        server.close()


def starter(tmp_path: Path, game: str, extra: str = "") -> bytes:
    path = write_starter(str(tmp_path / f"{game}_{uuid.uuid4().hex[:8]}"), game)
    return path.read_bytes() + extra.encode()


def chunks(header: pb.SubmitBotHeader, data: bytes, size: int = 64 << 10):
    yield pb.SubmitBotChunk(header=header)
    for start in range(0, len(data), size):
        yield pb.SubmitBotChunk(data=data[start : start + size])


def submit(referee: RefereeServer, data: bytes, **header) -> pb.SubmitBotResponse:
    header.setdefault("filename", "bot.py")
    header.setdefault("size", len(data))
    return referee.arena.SubmitBot(chunks(pb.SubmitBotHeader(**header), data), timeout=120)


def refusal(referee: RefereeServer, data: bytes, **header) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as refused:
        submit(referee, data, **header)
    return refused.value


def test_a_bot_file_is_kept_by_content_and_versioned(referee, tmp_path):
    code = starter(tmp_path, "stratego")
    first = submit(referee, code, name="alice", registration_key=KEY, games=["stratego"])
    assert (first.name, first.version, first.new_version) == ("alice", 1, True)
    assert first.token.startswith("arena_") and first.digest == hashlib.sha256(code).hexdigest()
    same = submit(referee, code, name="alice", token=first.token, games=["stratego"])
    assert (same.version, same.new_version, same.token) == (1, False, "")
    edited = code + b"\n# a better strategy\n"
    second = submit(referee, edited, name="alice", token=first.token, games=["stratego"])
    assert (second.version, second.new_version) == (2, True)
    listed = {(b.name, b.version): b for b in referee.arena.ListBots(pb.ListBotsRequest()).bots}
    hosted = listed[("alice", 2)]
    assert (hosted.kind, hosted.digest, hosted.size) == ("hosted", second.digest, len(edited))
    assert hosted.created.startswith("20") and hosted.games == ["stratego"]


def test_who_may_submit(referee, tmp_path):
    code = starter(tmp_path, "stratego")
    owner = submit(referee, code, name="bob", registration_key=KEY, games=["stratego"])
    wrong = refusal(referee, code, name="bob", token="arena_not-a-token", games=["stratego"])
    assert wrong.code() == grpc.StatusCode.UNAUTHENTICATED
    taken = refusal(referee, code, name="bob", registration_key=KEY, games=["stratego"])
    assert taken.code() == grpc.StatusCode.ALREADY_EXISTS and "token" in taken.details()
    closed = refusal(referee, code, name="carol", games=["stratego"])
    assert closed.code() == grpc.StatusCode.PERMISSION_DENIED
    other = refusal(referee, code, name="carol", token=owner.token, games=["stratego"])
    assert other.code() == grpc.StatusCode.PERMISSION_DENIED and "bob's" in other.details()
    assert "carol" not in {b.name for b in referee.arena.ListBots(pb.ListBotsRequest()).bots}


def test_a_1_gb_archive_is_refused_without_being_read(referee):
    sent = 0

    def gigabyte(declared: int):
        nonlocal sent
        yield pb.SubmitBotChunk(
            header=pb.SubmitBotHeader(
                name="huge", registration_key=KEY, filename="huge.zip", size=declared
            )
        )
        block = b"\0" * (512 << 10)
        for _ in range((1 << 30) // len(block)):
            sent += len(block)
            yield pb.SubmitBotChunk(data=block)

    with pytest.raises(grpc.RpcError) as declared:
        referee.arena.SubmitBot(gigabyte(1 << 30), timeout=120)
    assert declared.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert sent < 64 << 20  # refused on its header: at most what gRPC sent ahead
    sent = 0
    with pytest.raises(grpc.RpcError) as streamed:  # no size said: refused as it came
        referee.arena.SubmitBot(gigabyte(0), timeout=120)
    assert streamed.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "the rest unread" in streamed.value.details()
    assert sent < 64 << 20


def test_a_zip_bomb_is_refused(referee):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("arena-bot.toml", 'entry = "bot.py"\ngames = ["stratego"]\n')
        archive.writestr("bot.py", "x = 1\n")
        archive.writestr("bomb.bin", b"\0" * (300 << 20))
    bomb = out.getvalue()
    assert len(bomb) < CAP
    refused = refusal(referee, bomb, name="bomber", registration_key=KEY, filename="b.zip")
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "zip bomb" in refused.details()


def test_a_bot_that_fails_its_first_decision_is_refused_with_its_stderr(referee, tmp_path):
    code = b"""
import sys
from arena.sdk import Bot


class Broken(Bot):
    def decide_stratego(self, observation, decision):
        print("about to fail", file=sys.stderr)
        raise RuntimeError("no strategy yet")
"""
    refused = refusal(referee, code, name="broken", registration_key=KEY, games=["stratego"])
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "no strategy yet" in refused.details() and "about to fail" in refused.details()
    names = {b.name for b in referee.arena.ListBots(pb.ListBotsRequest()).bots}
    assert "broken" not in names  # nothing kept


def test_a_submission_must_say_its_games(referee, tmp_path):
    refused = refusal(referee, starter(tmp_path, "risk"), name="gameless", registration_key=KEY)
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "say which games it plays" in refused.details()


def test_an_archive_with_modules_plays_a_match_with_no_process_of_its_author(referee, tmp_path):
    code = starter(tmp_path, "stratego").replace(b"class ", b"import helper\n\n\nclass ", 1)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("arena-bot.toml", 'entry = "main.py"\ngames = ["stratego"]\n')
        archive.writestr("main.py", code)
        archive.writestr("helper.py", "import sys\nprint('helper loaded', file=sys.stderr)\n")
    owner = submit(referee, out.getvalue(), name="dana", registration_key=KEY, filename="dana.zip")
    played = referee.arena.RunMatch(
        pb.RunMatchRequest(game="stratego", players=["dana", "house:random"], wait=True),
        timeout=MATCH_TIMEOUT,
    ).match
    assert played.status == "finished", played
    assert played.players[0] == "dana@1"
    assert not [f for f in played.result.forfeits if f.seat == 0], played.result
    log = referee.arena.GetBotLog(
        pb.GetBotLogRequest(token=owner.token, match_id=played.match_id, seat=0), timeout=10
    )
    assert b"helper loaded" in log.stderr
    stranger = submit(
        referee,
        starter(tmp_path, "stratego"),
        name="eve",
        registration_key=KEY,
        games=["stratego"],
    )
    with pytest.raises(grpc.RpcError) as denied:
        referee.arena.GetBotLog(
            pb.GetBotLogRequest(token=stranger.token, match_id=played.match_id, seat=0),
            timeout=10,
        )
    assert denied.value.code() == grpc.StatusCode.NOT_FOUND


def arena_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, timeout=180
    )


def test_arena_bot_submit_list_and_log_on_the_command_line(referee, tmp_path):
    address = ("--referee", referee.address)
    not_code = tmp_path / "bot.exe"
    not_code.write_bytes(b"MZ")
    wrong = arena_cli("bot", "submit", "frank", str(not_code), *address)
    assert wrong.returncode != 0
    assert "not a bot file (.py) or an archive (.zip, .tar.gz, .tgz)" in wrong.stderr
    missing = arena_cli("bot", "submit", "frank", str(tmp_path / "gone.py"), *address)
    assert missing.returncode != 0 and "gone.py: no such file" in missing.stderr
    path = tmp_path / "frank.py"
    path.write_bytes(starter(tmp_path, "stratego"))
    token_file = tmp_path / "frank.token"
    args = ("--game", "stratego", "--key", KEY, "--token-file", str(token_file))
    done = arena_cli("bot", "submit", "frank", str(path), *address, *args)
    assert done.returncode == 0, done.stderr
    assert "submitted frank version 1 (a new version" in done.stdout
    assert token_file.read_text().strip().startswith("arena_")
    again = arena_cli("bot", "submit", "frank", str(path), *address, *args)
    assert "no new version" in again.stdout, again.stdout + again.stderr
    listed = arena_cli("bot", "list", *address, "--json")
    rows = {r["name"]: r for r in json.loads(listed.stdout)["bots"]}
    assert rows["frank"]["kind"] == "hosted" and rows["frank"]["size"] == path.stat().st_size
    text = arena_cli("bot", "list", *address).stdout
    assert re.search(r"frank@1 +hosted sha256 [0-9a-f]{12} \d+ bytes", text), text
