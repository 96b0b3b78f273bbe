"""The README's two commands where a machine lacks something: ``make run`` without
Node.js plays on without the Node.js bot and says so in one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NODE_TOOLS = {"node", "nodejs", "npm", "npx"}


def path_without_node(tmp_path: Path) -> str:
    """A PATH holding every command of this one except Node.js and npm."""
    shadow = tmp_path / "bin"
    shadow.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            target = shadow / entry.name
            if entry.name not in NODE_TOOLS and not target.exists():
                target.symlink_to(entry.path)
    return str(shadow)


def test_make_run_without_node_plays_on_and_says_so_once(tmp_path: Path) -> None:
    venv = Path(sys.prefix)
    env = {**os.environ, "PATH": path_without_node(tmp_path)}
    demo_args = f"--risk-games 1 --stratego-games 1 --quiet --no-web --db {tmp_path / 'arena.db'}"
    done = subprocess.run(
        # -o: the virtual environment running this test is already set up
        [
            "make",
            "--no-print-directory",
            "-o",
            f"{venv}/.installed",
            "run",
            f"VENV={venv}",
            f"DEMO_ARGS={demo_args}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    said = [line for line in lines if "Node.js" in line]
    assert said == [
        "(the Node.js bot sits this one out: Node.js is not installed"
        " (install Node.js 18+ with npm to add it))"
    ], done.stdout
    assert "npm: not found" not in done.stdout + done.stderr
    assert any(line.startswith("leaderboard: Risk") for line in lines), done.stdout
    assert any(line.startswith("leaderboard: Stratego") for line in lines), done.stdout
    assert not any("node-random" in line for line in lines), done.stdout


def test_ctrl_c_ends_make_run_serving_the_web_without_a_make_error(tmp_path: Path) -> None:
    """Ctrl-C is how `make run` ends (it serves the web until then): the terminal's
    SIGINT reaches make and the demo, and make adds no "*** [run] Error 130" line."""
    venv = Path(sys.prefix)
    env = {**os.environ, "PATH": path_without_node(tmp_path), "PYTHONUNBUFFERED": "1"}
    demo_args = f"--risk-games 1 --stratego-games 1 --quiet --web-port 0 --db {tmp_path / 'a.db'}"
    out_path = tmp_path / "make.out"
    command = ["make", "--no-print-directory", "-o", f"{venv}/.installed", "run", f"VENV={venv}"]
    with out_path.open("wb") as out:
        make = subprocess.Popen(
            [*command, f"DEMO_ARGS={demo_args}"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, as a terminal's foreground job
        )
    try:
        deadline = time.monotonic() + 240
        while "(Ctrl-C to stop)" not in out_path.read_text():
            assert make.poll() is None, out_path.read_text()[-3000:]
            assert time.monotonic() < deadline, out_path.read_text()[-3000:]
            time.sleep(0.2)
        os.killpg(make.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        code = make.wait(timeout=60)
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGKILL)
            make.wait(timeout=10)
    output = out_path.read_text()
    assert code == -signal.SIGINT, output[-3000:]  # make ends by the signal, as a shell expects
    assert "make: ***" not in output and "Traceback" not in output, output[-3000:]


def test_make_bubblewrap_without_it_says_how_in_one_line(tmp_path: Path) -> None:
    """Where bubblewrap is missing and cannot be installed (no apt-get), `make
    bubblewrap` (a step of `make test`) fails with one line saying how to get it."""
    shadow = tmp_path / "bin"
    shadow.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if os.path.isdir(folder):
            for entry in os.scandir(folder):
                target = shadow / entry.name
                if entry.name not in {"apt-get", "bwrap"} and not target.exists():
                    target.symlink_to(entry.path)
    env = {**os.environ, "PATH": str(shadow), "ARENA_BWRAP": str(tmp_path / "no-bwrap")}
    done = subprocess.run(
        ["make", "--no-print-directory", "bubblewrap"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    said = [line for line in done.stderr.splitlines() if not line.startswith("make")]
    assert said == [
        f"the sandbox for bot code needs bubblewrap at {tmp_path / 'no-bwrap'}: install it, "
        "e.g. 'sudo apt-get install bubblewrap', then run make again"
    ], done.stderr
    ok = subprocess.run(["make", "--no-print-directory", "bubblewrap"], cwd=ROOT, check=False)
    assert ok.returncode == 0  # here it is installed and runs
