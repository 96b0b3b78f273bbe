"""The built package, as a user installs it: the sdist is built from the source tree and
the wheel from the sdist, the wheel is installed into a fresh virtual environment (no
system or development site-packages), and from a directory outside the repository
``arena play`` plays a game, ``arena referee`` answers ``arena health``, ``arena demo
--no-web`` plays (saying it leaves the Node bot out, whose sources only the repository
has) and ``arena proto --path`` names the shipped contract. The wheel adds no top-level
package but ``arena``: ``import bots`` fails there.

The dependencies' wheels are kept in the development environment (``wheelhouse/``),
downloaded once, so that later runs install offline."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WHEELHOUSE = Path(sys.prefix) / "wheelhouse"
PIP = (sys.executable, "-m", "pip", "--disable-pip-version-check")


def run(command: list[str] | tuple[str, ...], **kwargs) -> subprocess.CompletedProcess[str]:
    kwargs.setdefault("timeout", 300)
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def source_tree(into: Path) -> Path:
    """The repository's files as git knows them (tracked, and new ones not ignored)."""
    listed = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT)
    for name in filter(None, listed.stdout.split("\0")):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


def build(tmp: Path) -> Path:
    """The sdist, built from the source tree, and the wheel, built from the sdist (as
    ``python -m build`` does); the wheel's path."""
    src = source_tree(tmp / "src")
    hook = "import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])"
    run([sys.executable, "-c", hook, str(tmp / "sdist")], cwd=src)
    (sdist,) = (tmp / "sdist").glob("arena-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
        archive.extractall(tmp / "unpacked", filter="data")
    assert any(n.endswith("/arena/proto/arena/v1/arena.proto") for n in names), names
    (unpacked,) = (tmp / "unpacked").iterdir()
    wheels = tmp / "dist"
    run([*PIP, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(unpacked)])
    (wheel,) = wheels.glob("arena-*.whl")
    return wheel


def install(wheel: Path, venv: Path) -> Path:
    """A fresh virtual environment holding the wheel and its dependencies; its bin/."""
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = str(venv / "bin" / "python")
    # offline from the wheels kept here; whatever is missing is downloaded once
    offline = ["--no-index", "--find-links", str(WHEELHOUSE)]
    download = [*PIP, "download", "-q", "-d", str(WHEELHOUSE), str(wheel)]
    if subprocess.run([*download, *offline], capture_output=True).returncode:
        run(download, timeout=600)
    for copy in WHEELHOUSE.glob("arena-*.whl"):  # only its dependencies are kept
        copy.unlink()
    run([*PIP, "--python", python, "install", "-q", "--no-compile", *offline, str(wheel)])
    return venv / "bin"


@dataclass
class Installed:
    """The fresh environment's bin/, an environment for its commands (its bin/ first on
    PATH, nothing of this checkout), and a working directory outside the repository."""

    bin: Path
    env: dict[str, str]
    work: Path

    def arena(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """The installed ``arena ARGS``, run to its end (status 0)."""
        return run([str(self.bin / "arena"), *args], cwd=self.work, env=self.env, timeout=timeout)

    def python(self, code: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin / "python"), "-c", code]
        return subprocess.run(command, cwd=self.work, env=self.env, capture_output=True, text=True)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    tmp = tmp_path_factory.mktemp("wheel")
    bin_dir = install(build(tmp), tmp / "venv")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", PYTHONUNBUFFERED="1")
    work = tmp / "elsewhere"
    work.mkdir()
    return Installed(bin_dir, env, work)


def test_the_wheel_installs_no_generic_top_level_package(installed):
    for name in ("bots", "workers"):
        done = installed.python(f"import {name}")
        assert done.returncode != 0 and f"No module named '{name}'" in done.stderr
    where = installed.python("import arena.bots.plugin, arena.workers.app; print(arena.__file__)")
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(installed.bin.parent)  # not this checkout


def test_arena_play_plays_a_game(installed):
    done = installed.arena(
        "play", "risk", "--players", "random,aggressive,defensive", "--seed", "7"
    )
    assert re.search(r"^ranking: 1\. ", done.stdout, re.M), done.stdout


def test_arena_referee_answers_arena_health(installed):
    log = installed.work / "referee.log"
    with log.open("wb") as out:
        referee = subprocess.Popen(
            [str(installed.bin / "arena"), "referee", "--port", "0", "--db", "referee.db"],
            cwd=installed.work,
            env=installed.env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while not (found := re.search(r"referee listening on (\S+:\d+)", log.read_text())):
            assert referee.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        health = installed.arena("health", "--referee", found.group(1))
        assert health.stdout.strip() == f"{found.group(1)}: SERVING"
        referee.send_signal(signal.SIGINT)
        assert referee.wait(timeout=30) == 0, log.read_text()
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()


def test_arena_demo_plays_and_leaves_the_node_bot_out(installed):
    smallest = ("--risk-games", "1", "--stratego-games", "1", "--workers", "1", "--quiet")
    done = installed.arena("demo", "--no-web", *smallest, "--db", "demo.db")
    said = [line for line in done.stdout.splitlines() if "Node" in line]
    assert said == [
        "(the Node.js bot sits this one out: its sources come with the repository "
        "(bots/node), not with an installed Arena)"
    ], done.stdout
    connected = (
        "6 bot processes connected: aggressive, defensive, random, heuristic, search, "
        "stratego-search"
    )
    assert connected in done.stdout
    assert re.search(r"^leaderboard: Risk", done.stdout, re.M), done.stdout
    assert re.search(r"^leaderboard: Stratego", done.stdout, re.M), done.stdout


def test_arena_proto_names_the_shipped_contract(installed):
    path = Path(installed.arena("proto", "--path").stdout.strip())
    assert path.is_file() and path.is_relative_to(installed.bin.parent)
    shipped = ROOT / "arena" / "proto" / "arena" / "v1" / "arena.proto"
    assert path.read_text() == shipped.read_text()
