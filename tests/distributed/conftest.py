"""The docker-compose topology as real local processes, for the distributed tests.

Each test gets a :class:`Cluster`: a fresh PostgreSQL database (``postgres_url``), a
private ``redis-server`` on a free port (never the machine's shared one: tests stop and
restart it), and whatever it starts on top: Celery workers and beat
(``celery -A arena.workers.app``), referees (``arena referee``), bot processes and ``arena``
commands. Every process runs in a process group of its own and the group is killed in
teardown, whatever happened. Every wait polls with a generous deadline.

``slow_bots.py`` is installed as a third-party plugin on the ``PYTHONPATH`` of every
process started here: its ``slow-*`` Risk bots make a match last seconds.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis

from arena.engine import replay
from arena.store import MatchRow, Store, database_url, variant_key
from arena.tournament.leaderboard import BoardRow, compute
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parents[2]
SLOW_BOTS = Path(__file__).resolve().with_name("slow_bots.py")
ORGANISER_KEY = "distributed-organiser-key"
ARENA = (sys.executable, "-m", "arena.cli")
CELERY = (sys.executable, "-m", "celery", "-A", "arena.workers.app")
LISTENING = re.compile(r"referee listening on (\S+:\d+)")
TOKEN = re.compile(r"registered (\S+) version (\d+).*\ntoken \(shown once, keep it secret\): (\S+)")
READY = re.compile(r"(\S+@\S+) ready\.")
RECEIVED = re.compile(r"Task arena\.play_match\[([0-9a-f-]+)\] received")
SUCCEEDED = re.compile(
    r"Task arena\.play_match\[([0-9a-f-]+)\] succeeded in \S+: \{'match_id': '([^']+)'"
)
TOURNAMENT = re.compile(r"^tournament (\w+): ", re.MULTILINE)
#: a leaderboard row: rank, label, games, W, D, L, ...
BOARD_ROW = re.compile(r"^ *\d+  (\S+) +(\d+) +\d+ +\d+ +\d+  ", re.MULTILINE)

#: the settings of every worker and client unless a test changes them
SETTINGS = {
    "ARENA_BOT_WAIT_S": "20",
    "ARENA_TASK_TIME_LIMIT_S": "60",
    "ARENA_VISIBILITY_S": "90",
    "ARENA_BEAT_INTERVAL_S": "1",
    "ARENA_TEST_THINK_MS": "10",
    # leases, sweeps and lost tasks in seconds, not minutes (a loaded machine: a lease
    # of a few seconds could lapse under a live worker)
    "ARENA_LEASE_S": "10",
    "ARENA_SWEEP_S": "1",
    "ARENA_LOST_AFTER_S": "5",
}


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, interval=0.1) -> Any:
    """Poll ``predicate`` until it returns something true, at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    """A child process in its own process group, its output (both streams) in a file."""

    def __init__(self, name: str, args: Sequence[str], logdir: Path, env: dict[str, str]):
        self.name = name
        self.args = list(args)
        self.log_path = logdir / f"{name}.log"
        with open(self.log_path, "wb") as log:
            self.popen = subprocess.Popen(
                self.args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
                env=env,
                start_new_session=True,  # its own group: killing it kills its children
            )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait(self, timeout: float) -> int:
        return self.popen.wait(timeout=timeout)

    def _signal_group(self, sig: int) -> None:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    def kill(self) -> None:
        """SIGKILL to the whole group: no clean-up of any kind, as in a crash."""
        self._signal_group(signal.SIGKILL)
        self.popen.wait(timeout=10)

    def stop(self, grace_s: float = 5.0) -> None:
        """SIGTERM to the group, SIGKILL if it is still there after ``grace_s``; the group
        is swept with SIGKILL in any case (children outliving their parent)."""
        if self.alive():
            self._signal_group(signal.SIGTERM)
            with suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=grace_s)
        self._signal_group(signal.SIGKILL)
        with suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=10)

    def __repr__(self) -> str:
        return f"Proc({self.name}, pid {self.pid})"


class RedisServer:
    """A private redis-server: append-only file in its own directory, so that queued
    and unacknowledged tasks survive a restart on the same port."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.port = free_port()
        self.dir = cluster.workdir / "redis"
        self.dir.mkdir()
        self.proc: Proc | None = None
        self.starts = 0
        self.start()

    def url(self, db: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def ping(self) -> bool:
        client = redis.Redis(port=self.port, socket_connect_timeout=1, socket_timeout=1)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def start(self) -> None:
        self.starts += 1
        self.proc = self.cluster.spawn(
            f"redis-{self.starts}",
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "yes", "--dir", str(self.dir)),
            ],
        )
        wait_until(self.ping, 20, f"redis-server on port {self.port}")

    def stop(self) -> None:
        """SIGTERM: Redis writes its append-only file and exits."""
        assert self.proc is not None
        self.proc.stop(grace_s=10)
        assert not self.ping()

    def restart_empty(self) -> None:
        """Stop it, lose everything it held (as a Redis without persistence does), and
        start it again on the same port."""
        self.stop()
        shutil.rmtree(self.dir)
        self.dir.mkdir()
        self.start()

    def queued(self) -> int:
        """Tasks waiting in Celery's default queue (its lists, one per priority)."""
        from arena.tournament.distributed import QUEUE_LISTS

        client = redis.Redis(port=self.port, socket_connect_timeout=1, socket_timeout=1)
        try:
            return sum(int(client.llen(name)) for name in QUEUE_LISTS)
        finally:
            client.close()


@dataclass
class Referee:
    proc: Proc
    address: str

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def connected(self) -> set[str]:
        """``name@version`` of the bots connected to it (empty if it does not answer)."""
        with grpc.insecure_channel(self.address) as channel:
            try:
                reply = pb_grpc.ArenaServiceStub(channel).ListBots(pb.ListBotsRequest(), timeout=5)
            except grpc.RpcError:
                return set()
        return {f"{b.name}@{b.version}" for b in reply.bots if b.connected}

    def wait_connected(self, *labels: str, timeout: float = 60) -> None:
        wait_until(
            lambda: set(labels) <= self.connected(),
            timeout,
            f"{', '.join(labels)} to connect to {self.address}",
            interval=0.2,
        )


class Worker:
    """A ``celery -A arena.workers.app worker`` process (one pool process)."""

    def __init__(self, proc: Proc, node: str) -> None:
        self.proc = proc
        #: its Celery node name, NAME@HOST
        self.node = node
        self.name = node.split("@", 1)[0]

    def log(self) -> str:
        return self.proc.log()

    def received(self) -> list[str]:
        """Task ids of the play_match tasks it took, in order."""
        return RECEIVED.findall(self.log())

    def succeeded(self) -> dict[str, str]:
        """Task id -> match id of the play_match tasks it completed."""
        return dict(SUCCEEDED.findall(self.log()))

    def busy_with(self) -> list[str]:
        """Task ids it has taken and not completed (it is playing them)."""
        done = self.succeeded()
        return [task for task in self.received() if task not in done]


class Cluster:
    """The processes of one test, on one database and one private Redis."""

    def __init__(self, workdir: Path, db: str) -> None:
        self.workdir = workdir
        self.db = db
        self.procs: list[Proc] = []
        self.referees: list[Referee] = []
        self.workers: list[Worker] = []
        self.settings = dict(SETTINGS)
        #: one line per slow bot made for a match, by any process (slow_bots.py)
        self.play_log = workdir / "plays.log"
        self.site = self._install_plugin()
        self._store: Store | None = None
        self._control: Any = None
        #: started by the fixture, inside its clean-up
        self.redis: RedisServer | None = None

    wait = staticmethod(wait_until)

    def _install_plugin(self) -> Path:
        """slow_bots.py as pip would install it: a module and a dist-info with its entry
        point, on the PYTHONPATH of every process started here."""
        site = self.workdir / "site"
        site.mkdir()
        shutil.copy(SLOW_BOTS, site / "arena_test_slow_bots.py")
        dist = site / "arena_test_slow_bots-0.1.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: arena-test-slow-bots\nVersion: 0.1\n"
        )
        (dist / "entry_points.txt").write_text("[arena]\nslow = arena_test_slow_bots\n")
        return site

    # --- processes ------------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        env = dict(os.environ, PYTHONUNBUFFERED="1", **self.settings)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(ROOT), str(self.site), env.get("PYTHONPATH")) if p
        )
        env["ARENA_DB"] = self.db
        env["ARENA_SPOOL_DIR"] = str(self.workdir / "spool")
        env["ARENA_TEST_PLAY_LOG"] = str(self.play_log)
        if self.redis is not None:
            env["ARENA_BROKER_URL"] = self.redis.url(0)
            env["ARENA_RESULT_BACKEND"] = self.redis.url(1)
        env["ARENA_REFEREES"] = ",".join(r.address for r in self.referees)
        env["ARENA_ORGANISER_KEY"] = ORGANISER_KEY
        return env

    def spawn(self, name: str, args: Sequence[str]) -> Proc:
        if any(p.name == name for p in self.procs):
            name = f"{name}-{len(self.procs)}"
        proc = Proc(name, args, self.workdir, self.env())
        self.procs.append(proc)
        return proc

    def worker(self, name: str) -> Worker:
        """A Celery worker, ready to take tasks (it reads the referees and settings now)."""
        (worker,) = self.start_workers(name)
        return worker

    def start_workers(self, *names: str) -> list[Worker]:
        """Celery workers, one per name, started at once: each ready to take tasks (they
        read the referees and settings now)."""
        procs = [
            self.spawn(
                f"worker-{name}",
                [
                    *CELERY,
                    *("worker", "--concurrency", "1", "-n", f"{name}@%h", "--loglevel", "INFO"),
                    *("--without-gossip", "--without-mingle"),
                ],
            )
            for name in names
        ]
        started = []
        for name, proc in zip(names, procs, strict=True):
            ready = wait_until(
                lambda proc=proc: self._started(proc, READY), 60, f"worker {name} to be ready"
            )
            started.append(Worker(proc, ready.group(1)))
        self.workers += started
        return started

    def beat(self) -> Proc:
        proc = self.spawn(
            "beat",
            [
                *CELERY,
                *("beat", "--loglevel", "INFO"),
                *("--schedule", str(self.workdir / "celerybeat-schedule")),
            ],
        )
        wait_until(lambda: self._started(proc, "beat: Starting"), 60, "beat to start")
        return proc

    def referee(self, port: int = 0, grace_s: float = 5.0) -> Referee:
        """An ``arena referee`` on the shared database (``port`` 0: a free one)."""
        proc = self.spawn(
            "referee",
            [
                *ARENA,
                *("referee", "--host", "127.0.0.1", "--port", str(port), "--db", self.db),
                *("--organiser-key", ORGANISER_KEY, "--grace", str(grace_s)),
                *("--shutdown-grace", "1"),
            ],
        )
        found = wait_until(
            lambda: self._started(proc, LISTENING), 60, "the referee to listen", interval=0.05
        )
        referee = Referee(proc, found.group(1))
        self.referees = [r for r in self.referees if r.address != referee.address] + [referee]
        return referee

    def _started(self, proc: Proc, mark: str | re.Pattern[str]) -> Any:
        log = proc.log()
        if not proc.alive():
            raise AssertionError(f"{proc} exited with {proc.popen.returncode}:\n{log[-3000:]}")
        return mark.search(log) if isinstance(mark, re.Pattern) else mark in log

    def arena(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """An ``arena`` command, run to its end."""
        return subprocess.run(
            [*ARENA, *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=self.env(),
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def arena_bg(self, name: str, *args: str) -> Proc:
        """An ``arena`` command as a background process."""
        return self.spawn(name, [*ARENA, *args])

    def register(self, name: str, *games: str, referee: Referee | None = None) -> tuple[str, str]:
        """``arena bot register NAME [--game G ...]``: the new version's label and token."""
        address = (referee or self.referees[0]).address
        done = self.arena(
            "bot", "register", name, "--referee", address, "--new-version", *_each("--game", games)
        )
        assert done.returncode == 0, done.stderr
        found = TOKEN.search(done.stdout)
        assert found, done.stdout
        return f"{found.group(1)}@{found.group(2)}", found.group(3)

    def module_bot(self, module: str, token: str, referees: Sequence[Referee]) -> Proc:
        """``python -m arena.bots.MODULE --referee A[,B] --token T``."""
        return self.spawn(
            f"bot-{module}",
            [
                *(sys.executable, "-m", f"arena.bots.{module}", "--token", token),
                *("--referee", ",".join(r.address for r in referees)),
            ],
        )

    def run_bot(self, builtin: str, name: str, referees: Sequence[Referee]) -> Proc:
        """``arena bot run BUILTIN --referee A[,B] --register-as NAME``."""
        return self.arena_bg(
            f"bot-{name}",
            "bot",
            "run",
            builtin,
            "--referee",
            ",".join(r.address for r in referees),
            "--register-as",
            name,
        )

    def playing(self, worker: Worker) -> list[str]:
        """The match ids of the play_match tasks the worker is executing now, as it
        answers itself (Celery's remote control: ``inspect active``)."""
        if self._control is None:
            from celery import Celery

            assert self.redis is not None
            self._control = Celery("arena-test", broker=self.redis.url(0))
        inspect = self._control.control.inspect([worker.node], timeout=5, limit=1)
        tasks = (inspect.active() or {}).get(worker.node, [])
        return [task["args"][0] for task in tasks if task["name"] == "arena.play_match"]

    # --- the store --------------------------------------------------------------------------

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store(self.db)
        return self._store

    def tournament_run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``arena tournament run --executor celery --db DB ARGS``, run to its end."""
        return self.arena(
            "tournament", "run", "--executor", "celery", "--db", self.db, *args, timeout=timeout
        )

    def start_tournament(self, *args: str) -> tuple[Proc, str]:
        """``arena tournament run --executor celery`` in the background; it and the id."""
        run = self.arena_bg(
            "tournament", "tournament", "run", "--executor", "celery", "--db", self.db, *args
        )
        found = wait_until(
            lambda: self._started(run, TOURNAMENT) or (not run.alive() and run.log()),
            60,
            "the tournament to be created",
        )
        assert isinstance(found, re.Match), found
        return run, found.group(1)

    def finish(self, run: Proc, timeout: float = 180) -> str:
        """Wait for a background ``arena`` command to end; its output."""
        try:
            run.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{run} still running after {timeout}s\n{self.logs()}") from None
        return run.log()

    def plays(self, seats: int) -> int:
        """How many matches of slow bots were started, by any process: the bots made for
        them (slow_bots.py logs each), over the seats of a match."""
        if not self.play_log.exists():
            return 0
        return len(self.play_log.read_text().splitlines()) // seats

    def database(self, allow: bool) -> None:
        """Let connections to this test's PostgreSQL database in again, or throw every
        one out and keep new ones out (as a database restarting or unreachable would)."""
        from sqlalchemy import create_engine, text

        base, name = self.db.rsplit("/", 1)
        admin = create_engine(
            database_url(os.environ.get("ARENA_TEST_POSTGRES", f"{base}/postgres")),
            isolation_level="AUTOCOMMIT",
        )
        try:
            with admin.connect() as connection:
                connection.execute(
                    text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {str(allow).lower()}')
                )
                if not allow:
                    connection.execute(
                        text(
                            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE datname = :name AND pid <> pg_backend_pid()"
                        ),
                        {"name": name},
                    )
        finally:
            admin.dispose()

    def running(self, tid: str) -> list[MatchRow]:
        """The tournament's matches being played now, as the store says."""
        return self.store.tournament_matches(tid, statuses=["running"])

    @staticmethod
    def board(output: str) -> dict[str, int]:
        """The games of every bot on a leaderboard printed by ``arena``."""
        return {label: int(games) for label, games in BOARD_ROW.findall(output)}

    @staticmethod
    def tournament_id(output: str) -> str:
        """The id in ``arena tournament ...`` output."""
        found = TOURNAMENT.search(output)
        assert found, output
        return found.group(1)

    def played_once(self, tid: str) -> list[BoardRow]:
        """Check that every match of the tournament finished, once: its seats placed, and
        the tournament's standings count each match once per seat. The standings."""
        store = self.store
        tournament = store.tournament(tid)
        assert tournament is not None
        matches = store.tournament_matches(tid)
        assert matches
        for match in matches:
            assert match.status == "finished", (match.id, match.status, match.error)
            assert match.attempts >= 1, match.id
            places = [seat.place for seat in store.seats(match.id)]
            assert len(places) == tournament.seats and all(p and p >= 1 for p in places), places
            assert min(places) == 1, places
        assert tournament.status == "finished"
        rows = compute(store, tournament.game, variant_key(tournament.variants), tid)
        assert sum(row.games for row in rows) == len(matches) * tournament.seats
        return rows

    def close(self) -> None:
        # the newest first, Redis last: the workers shut down while they can reach it
        for proc in sorted(reversed(self.procs), key=lambda p: p.name.startswith("redis")):
            proc.stop()
        if self._store is not None:
            self._store.close()
        if self._control is not None:
            self._control.close()

    def logs(self, tail: int = 2500) -> str:
        """The end of every process's output: the message of a failed assertion."""
        return "\n".join(f"--- {p.name} ---\n{p.log()[-tail:]}" for p in self.procs)


def _each(flag: str, values: Sequence[str]) -> list[str]:
    return [item for value in values for item in (flag, value)]


# --- the failure tests' tournaments ---------------------------------------------------------

#: the slow bots of slow_bots.py: three bots, three seats, one match of a few seconds per
#: game of the pairing (test_failures.py, test_redis_restarts.py, test_lost_tasks.py)
SLOW_RISK_BOTS = "slow-aggressive,slow-defensive,slow-blitz"
SLOW_RISK = ["--game", "risk", "--seats", "3", "--option", "turn-limit=15", "--quiet"]
FOUR = ["--games-per-pairing", "4"]


def verify_from_start(cluster: Cluster, match_id: str) -> None:
    """The stored replay re-simulates from the match's first deal to its end."""
    data = cluster.store.replay(match_id)
    assert data is not None, match_id
    record = replay.from_json(json.loads(data))
    assert record.result is not None
    assert replay.verify(record) == len(record.steps) > 0


@pytest.fixture
def cluster(tmp_path: Path, postgres_url: str) -> Iterator[Cluster]:
    """A fresh database and a private Redis; every process started is killed after."""
    made = Cluster(tmp_path, postgres_url)
    try:
        made.redis = RedisServer(made)
        yield made
    finally:
        made.close()
