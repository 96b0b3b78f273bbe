"""The Node.js example bot (bots/node, @grpc/grpc-js from npm) plays whole games against
Python bots, every one a separate process, through a real referee on loopback."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from arena.engine.replay import from_json, verify
from arena.plugins import load_registry
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

from .conftest import wait_until

ROOT = Path(__file__).resolve().parents[2]
NODE_BOT = ROOT / "bots" / "node" / "bot.js"


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    """A child process whose output goes to a file (a pipe nobody reads would fill up)."""
    with log.open("ab") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)


@pytest.fixture(scope="module")
def referee(tmp_path_factory):
    work = tmp_path_factory.mktemp("node")
    log = work / "referee.log"
    proc = _start(
        [
            sys.executable,
            "-m",
            "arena.cli",
            "referee",
            "--port",
            "0",
            "--db",
            str(work / "arena.db"),
            "--decision-ms",
            "3000",
            "--grace",
            "2",
        ],
        log,
    )
    deadline = time.monotonic() + 20
    match = None
    while match is None and time.monotonic() < deadline and proc.poll() is None:
        match = re.search(r"listening on ([\d.]+:\d+)", log.read_text())
        time.sleep(0.05)
    assert match, f"referee did not start: {log.read_text()!r}"
    address = match.group(1)
    channel = grpc.insecure_channel(address)
    stub = pb_grpc.ArenaServiceStub(channel)
    children: list[subprocess.Popen[bytes]] = []
    yield address, stub, children, work
    for child in [*children, proc]:
        child.kill()
        child.wait(timeout=10)
    channel.close()


def _wait_connected(stub, names: list[str]) -> None:
    """Node starts slowly on a busy machine: seat no bot before it is connected (the
    referee's grace of 2 s is for bots that drop out, not for slow starters)."""

    def connected() -> bool:
        bots = stub.ListBots(pb.ListBotsRequest(), timeout=10).bots
        return {b.name for b in bots if b.connected} >= set(names)

    wait_until(connected, 60, f"{', '.join(names)} to connect")


def _register(stub, name: str) -> str:
    return stub.RegisterBot(pb.RegisterBotRequest(name=name), timeout=10).token


def test_node_is_installed_by_the_test_command():
    assert shutil.which("node"), "node is needed (the README's test command installs the deps)"
    assert (ROOT / "bots" / "node" / "node_modules" / "@grpc" / "grpc-js").is_dir()


@pytest.mark.parametrize(
    ("game", "variants", "options", "others"),
    [
        ("risk", [], {}, ["aggressive", "random"]),
        ("risk", ["capital"], {"defender-dice": "choose"}, ["defensive", "aggressive", "random"]),
        ("stratego", ["isf"], {}, ["heuristic"]),
    ],
)
def test_node_bot_plays_a_whole_game_against_python_bot_processes(
    referee, game, variants, options, others
):
    address, stub, children, work = referee
    node_name = f"node-{game}-{len(others)}"
    token = _register(stub, node_name)
    node = ["node", str(NODE_BOT), "--referee", address, "--token", token, "--matches", "1"]
    children.append(_start(node, work / f"{node_name}.log"))
    players = [node_name]
    for i, bot in enumerate(others):
        name = f"py-{bot}-{game}-{i}-{len(others)}"
        token = _register(stub, name)
        command = [
            sys.executable,
            "-m",
            "arena.cli",
            "bot",
            "run",
            bot,
            "--referee",
            address,
            "--token",
            token,
            "--matches",
            "1",
        ]
        children.append(_start(command, work / f"{name}.log"))
        players.append(name)
    _wait_connected(stub, players)
    request = pb.RunMatchRequest(
        game=game, variants=variants, options=options, players=players, seed=3, wait=True
    )
    info = stub.RunMatch(request, timeout=240).match
    assert info.status == "finished"
    assert not info.result.forfeits, [f"{f.seat}: {f.why}" for f in info.result.forfeits]
    assert info.result.reason in ("victory", "turn_limit", "no_moves", "draw")
    rec = from_json(json.loads(info.replay_json))
    assert rec.players[0].startswith(node_name)
    assert verify(rec, load_registry()) == len(rec.steps)
    # the Node bot really decided: its seat has steps of its own in the replay (a Stratego
    # setup and a move at the least; a quick loss can end it there)
    assert sum(1 for step in rec.steps if step[0] == 0) >= 2


def test_node_bot_reads_batches_in_concurrent_matches(referee):
    """The Node.js bot asks for batches: in four Risk matches at once (seat 0 in each, so
    its first decision comes with its MatchStarted) it reads them, may answer with
    BotBatches, and finishes every match without a strike."""
    import concurrent.futures

    address, stub, children, work = referee
    token = _register(stub, "node-batches")
    node = ["node", str(NODE_BOT), "--referee", address, "--token", token, "--matches", "4"]
    log = work / "node-batches.log"
    children.append(_start(node, log))
    others = []
    for i in range(2):
        name = f"py-batches-{i}"
        command = [sys.executable, "-m", "arena.cli", "bot", "run", "random", "--referee"]
        command += [address, "--token", _register(stub, name), "--matches", "4"]
        children.append(_start(command, work / f"{name}.log"))
        others.append(name)
    _wait_connected(stub, ["node-batches", *others])
    request = dict(game="risk", players=["node-batches", *others], options={"turn-limit": "40"})
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        infos = list(
            pool.map(
                lambda seed: (
                    stub.RunMatch(
                        pb.RunMatchRequest(seed=seed, wait=True, **request), timeout=240
                    ).match
                ),
                range(4),
            )
        )
    for info in infos:
        assert info.status == "finished", info
        assert not info.result.forfeits, [f"{f.seat}: {f.why}" for f in info.result.forfeits]
        rec = from_json(json.loads(info.replay_json))
        assert verify(rec, load_registry()) == len(rec.steps)
        assert sum(1 for step in rec.steps if step[0] == 0) >= 2
    deadline = time.monotonic() + 10
    while "batches:" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    found = re.search(r"batches: received (\d+), sent (\d+)", log.read_text())
    assert found, log.read_text()
    assert int(found.group(1)) > 0, log.read_text()  # its MatchStarted and first decision
    assert int(found.group(2)) > 0, log.read_text()  # several decisions of a batch answered
    assert "rejected" not in log.read_text()


def _node_exit(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["node", str(NODE_BOT), *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_node_bot_says_in_one_line_why_it_stops(referee):
    """A refused token, a referee that is not there: each exit is one line and status 1."""
    address, _stub, _children, _work = referee
    refused = _node_exit(["--referee", address, "--token", "arena_not-a-token"])
    assert refused.returncode == 1
    assert refused.stdout == ""
    assert refused.stderr.startswith("referee refused the token (unknown token")
    assert len(refused.stderr.splitlines()) == 1
    gone = _node_exit(["--referee", "127.0.0.1:1", "--token", "arena_not-a-token"])
    assert gone.returncode == 1
    assert (
        gone.stderr
        == "referee 127.0.0.1:1 is gone or not there (No connection established); exiting\n"
    )


def test_node_bot_says_so_when_its_referee_shuts_down(tmp_path):
    referee = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "referee", "--port", "0", "--db", "r.db"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert referee.stdout is not None
        address = re.search(r"listening on (\S+)", referee.stdout.readline()).group(1)
        channel = grpc.insecure_channel(address)
        token = _register(pb_grpc.ArenaServiceStub(channel), "node-leaves")
        channel.close()
        node = subprocess.Popen(
            ["node", str(NODE_BOT), "--referee", address, "--token", token],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert node.stdout is not None
        assert node.stdout.readline().startswith("connected as node-leaves")
        referee.send_signal(signal.SIGINT)
        _out, err = node.communicate(timeout=60)
        assert node.returncode == 1
        assert err == "referee closed the connection (it is shutting down); exiting\n"
    finally:
        referee.kill()
        referee.wait(timeout=10)
