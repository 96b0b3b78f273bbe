"""`arena web` from the command line, and the referee's health on its home page."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from fastapi.testclient import TestClient

from arena.cli import main
from arena.web import browser, create_app
from arena.web.browser import free_port

from .conftest import Filled


def test_a_missing_store_is_one_line_and_no_server(tmp_path: Path, capsys):
    missing = tmp_path / "none.db"
    assert main(["web", "--db", str(missing), "--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert err == f"arena: error: no SQLite database at '{missing}': nothing to show\n"
    assert not missing.exists()


def test_the_home_page_shows_a_serving_referee(filled: Filled, tmp_path: Path):
    port = free_port()
    args = ["referee", "--host", "127.0.0.1", "--port", str(port), "--db", str(tmp_path / "r.db")]
    referee = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with TestClient(create_app(filled.url, referee=f"127.0.0.1:{port}")) as web:
            deadline = time.monotonic() + 60
            while not (status := web.get("/api/home").json()["referee"])["serving"]:
                assert referee.poll() is None and time.monotonic() < deadline, status
                time.sleep(0.2)
            assert status == {"address": f"127.0.0.1:{port}", "status": "SERVING", "serving": True}
            assert "SERVING" in web.get("/").text
    finally:
        referee.terminate()
        referee.wait(timeout=30)


def referee_process(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen, str, Path]:
    """`arena referee` on a free port and a store of its own (``extra``: more flags)."""
    port = free_port()
    db = tmp_path / "referee.db"
    args = ["referee", "--host", "127.0.0.1", "--port", str(port), "--db", str(db), *extra]
    child = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    address = f"127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while not db.exists() or not _answers(address):
        assert child.poll() is None and time.monotonic() < deadline, "the referee did not start"
        time.sleep(0.2)
    return child, address, db


def _answers(address: str) -> bool:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    try:
        with grpc.insecure_channel(address) as channel:
            health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=2)
    except grpc.RpcError:
        return False
    return True


#: a connection of a process that has imported the command line (as `arena` has), left
#: idle until the referee sends it away (GOAWAY "connection idle"), which gRPC's C core
#: writes to stderr at INFO unless told otherwise
IDLE_CLIENT = """
import sys, time
import arena.cli
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

channel = grpc.insecure_channel(sys.argv[1])
health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
deadline = time.monotonic() + 60
while channel._channel.check_connectivity_state(False) == 2 and time.monotonic() < deadline:
    time.sleep(0.1)  # READY (2) until the referee's GOAWAY ends the connection
print("sent away" if time.monotonic() < deadline else "still connected", flush=True)
"""


def test_the_referees_goaway_of_an_idle_connection_is_not_on_the_terminal(tmp_path: Path):
    referee, address, _db = referee_process(tmp_path, "--idle-timeout", "1")
    try:
        said = subprocess.run(
            [sys.executable, "-c", IDLE_CLIENT, address],
            capture_output=True,
            text=True,
            timeout=120,
            env={k: v for k, v in os.environ.items() if k != "GRPC_VERBOSITY"},
        )
    finally:
        referee.terminate()
        referee.wait(timeout=30)
    assert said.stdout == "sent away\n"
    assert said.stderr == ""  # no "Got goaway [2] ... connection idle" of gRPC's core


def test_arena_web_prints_nothing_but_its_own_lines(tmp_path: Path):
    """The frames' worker starts (a match ends while the web runs), the home page asks
    the referee's health, the referee sends idle connections away: the terminal shows
    the web's first line and nothing else (no RuntimeWarning of the worker's start, no
    line of gRPC's)."""
    from .conftest import long_replay
    from .test_prebuild import whole_frames_kept

    referee, address, db = referee_process(tmp_path, "--idle-timeout", "1")
    said: list[str] = []
    try:
        with browser.serve(db, "--referee", address, said=said) as base:
            with urllib.request.urlopen(base + "/", timeout=30) as answer:
                assert "SERVING" in answer.read().decode()
            time.sleep(3)  # the web's first look at the store (2 s in) notes what was there
            match_id = browser.store_replay(db, long_replay())  # ended while the web runs
            deadline = time.monotonic() + 120
            while not whole_frames_kept(base, match_id):  # built ahead by the worker
                assert time.monotonic() < deadline, "the frames were not built ahead"
                time.sleep(0.5)
            with urllib.request.urlopen(base + "/", timeout=30) as answer:
                assert "SERVING" in answer.read().decode()
            time.sleep(4)  # past the referee's idle timeout
    finally:
        referee.terminate()
        referee.wait(timeout=30)
    assert len(said) == 1 and said[0].startswith("arena web: http://127.0.0.1:"), said
