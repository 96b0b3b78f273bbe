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

from .conftest import Proc, Worker

ROOT = Path(__file__).resolve().parents[2]
WORKER = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["worker"]
READY = re.compile(r"(\S+@\S+) ready\.")


def health_checks(cluster, *hostnames: str) -> list[subprocess.CompletedProcess[str]]:
    """The compose file's check, in a shell whose $HOSTNAME is each of ``hostnames`` (Compose
    turns ``$$`` into the ``$`` the container's shell expands), all run at once; what each
    did, in order."""
    kind, command = WORKER["healthcheck"]["test"]
    assert kind == "CMD-SHELL"
    checks = []
    for hostname in hostnames:
        env = dict(cluster.env(), HOSTNAME=hostname)
        env["PATH"] = os.pathsep.join((str(Path(sys.executable).parent), env["PATH"]))
        shell = ["sh", "-c", command.replace("$$", "$")]
        checks.append(
            subprocess.Popen(
                shell, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env
            )
        )
    done = []
    for check in checks:
        try:
            out, err = check.communicate(timeout=60)
        finally:
            if check.poll() is None:
                check.kill()
                check.wait()
        done.append(subprocess.CompletedProcess(check.args, check.returncode, out, err))
    return done


def start_compose_worker(cluster) -> Proc:
    """The worker service's command, as a process here (see :func:`when_ready`)."""
    command = WORKER["command"]
    assert command[0] == "celery"
    return cluster.spawn("compose-worker", [sys.executable, "-m", *command])


def when_ready(cluster, proc: Proc) -> Worker:
    """The compose worker ``proc``, once it is ready to take tasks."""
    ready = cluster.wait(
        lambda: READY.search(proc.log()) or not proc.alive(),
        60,
        "the compose worker to be ready",
    )
    assert proc.alive(), proc.log()
    return Worker(proc, ready.group(1))


def test_the_health_check_passes_for_its_own_worker_only(cluster) -> None:
    starting = start_compose_worker(cluster)
    other = cluster.worker("other")  # another worker of the app, answering pings
    worker = when_ready(cluster, starting)
    host = socket.gethostname()  # what %h is to Celery, and $HOSTNAME in a container
    assert worker.node == f"worker@{host}"

    passed, wrong = health_checks(cluster, host, f"not-{host}")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert f"worker@{host}: OK" in passed.stdout and "pong" in passed.stdout
    assert "1 node online" in passed.stdout  # it asked this worker only
    assert other.node not in passed.stdout
    assert wrong.returncode != 0, wrong.stdout

    worker.proc.stop(grace_s=30)  # SIGTERM: a warm shutdown
    (gone,) = health_checks(cluster, host)
    assert gone.returncode != 0, gone.stdout  # the other worker does not answer for it


def test_a_stopped_worker_finishes_its_match_before_it_exits(cluster) -> None:
    cluster.settings["ARENA_TEST_THINK_MS"] = "20"  # a match of some seconds
    starting = start_compose_worker(cluster)  # it starts while the tournament is made
    run, tid = cluster.start_tournament(
        *("--game", "risk", "--seats", "3", "--option", "turn-limit=15", "--quiet"),
        *("--bots", "slow-aggressive,slow-defensive,slow-blitz"),
    )
    worker = when_ready(cluster, starting)

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
