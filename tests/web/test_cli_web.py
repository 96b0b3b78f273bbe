"""`arena web` from the command line, and the referee's health on its home page."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from fastapi.testclient import TestClient

from arena.cli import main
from arena.web import create_app
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
