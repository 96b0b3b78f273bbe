"""The worker service of docker-compose.yml as real processes: its command starts a
Celery worker named after its host, and its health check, run as the container's shell
would run it, passes for that worker and fails for any other name, even with another
worker of the same app answering on the same broker. Stopped as `docker compose stop`
stops it (SIGTERM to the worker's main process), it finishes the match it is playing
before it exits: what its stop_grace_period leaves time for."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import yaml

from .conftest import Worker

ROOT = Path(__file__).resolve().parents[2]
WORKER = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["worker"]
READY = re.compile(r"(\S+@\S+) ready\.")


def health_check(cluster, hostname: str) -> subprocess.CompletedProcess[str]:
    """The compose file's check, in a shell whose $HOSTNAME is ``hostname`` (Compose
    turns ``$$`` into the ``$`` the container's shell expands)."""
    kind, command = WORKER["healthcheck"]["test"]
    assert kind == "CMD-SHELL"
    env = dict(cluster.env(), HOSTNAME=hostname)
    env["PATH"] = os.pathsep.join((str(Path(sys.executable).parent), env["PATH"]))
    return subprocess.run(
        ["sh", "-c", command.replace("$$", "$")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )


def compose_worker(cluster) -> Worker:
    """The worker service's command, as a process here; ready to take tasks."""
    command = WORKER["command"]
    assert command[0] == "celery"
    proc = cluster.spawn("compose-worker", [sys.executable, "-m", *command])
    ready = cluster.wait(
        lambda: READY.search(proc.log()) or not proc.alive(),
        60,
        "the compose worker to be ready",
    )
    assert proc.alive(), proc.log()
    return Worker(proc, ready.group(1))


def test_the_health_check_passes_for_its_own_worker_only(cluster) -> None:
    worker = compose_worker(cluster)
    host = socket.gethostname()  # what %h is to Celery, and $HOSTNAME in a container
    assert worker.node == f"worker@{host}"
    other = cluster.worker("other")  # another worker of the app, answering pings

    passed = health_check(cluster, host)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert f"worker@{host}: OK" in passed.stdout and "pong" in passed.stdout
    assert "1 node online" in passed.stdout  # it asked this worker only
    assert other.node not in passed.stdout

    wrong = health_check(cluster, f"not-{host}")
    assert wrong.returncode != 0, wrong.stdout

    worker.proc.stop(grace_s=30)  # SIGTERM: a warm shutdown
    gone = health_check(cluster, host)
    assert gone.returncode != 0, gone.stdout  # the other worker does not answer for it


def test_a_stopped_worker_finishes_its_match_before_it_exits(cluster) -> None:
    cluster.settings["ARENA_TEST_THINK_MS"] = "20"  # a match of some seconds
    worker = compose_worker(cluster)
    run, tid = cluster.start_tournament(
        *("--game", "risk", "--seats", "3", "--option", "turn-limit=15", "--quiet"),
        *("--bots", "slow-aggressive,slow-defensive,slow-blitz"),
    )

    def mid_match() -> str | None:
        for match_id in cluster.playing(worker):
            row = cluster.store.match(match_id)
            if row is not None and row.status == "running":
                return match_id
        return None

    match_id = cluster.wait(mid_match, 60, "the worker to be in the middle of its match")
    worker.proc.popen.send_signal(signal.SIGTERM)  # to its main process, as Docker does
    assert worker.proc.wait(timeout=120) == 0, worker.log()
    assert "warm shutdown" in worker.log().lower()
    row = cluster.store.match(match_id)
    assert (row.tournament_id, row.status, row.attempts) == (tid, "finished", 1)  # to its end
    assert match_id in worker.succeeded().values()
    run.stop()
