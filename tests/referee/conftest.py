"""Fixtures for the referee integration tests: a real referee process, real bot
processes (``arena bot run``), misbehaving bot processes (misbehaving_bot.py) and raw
in-process gRPC clients, all over 127.0.0.1.

Every child process is reaped in teardown; every wait and every RPC is bounded.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.engine.core import Decision
from arena.plugins import load_registry
from arena.referee.codec import action_to_proto, observation_from_proto
from arena.sdk import _territory_indices
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parents[2]
MISBEHAVING_BOT = Path(__file__).resolve().with_name("misbehaving_bot.py")
CONNECT = "/arena.v1.BotService/Connect"
RPC_TIMEOUT = 10.0  # any unary call
MATCH_TIMEOUT = 60.0  # a whole match
LISTENING = re.compile(r"referee listening on (\S+:\d+)")

# The session referee: short clocks so that misbehaviour costs little time.
DECISION_MS = 500
TIME_BANK_MS = 300
GRACE_S = 1.5
MAX_STRIKES = 3
MAX_ATTEMPTS = 3  # RefereeConfig.max_attempts (not a CLI flag)

REGISTRY = load_registry()


def load_sibling(name: str) -> Any:
    """A module of this directory, loaded by path (the tests are not a package)."""
    module_name = f"referee_tests_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    path = Path(__file__).resolve().with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


wire = load_sibling("misbehaving_bot")  # the wire helpers (either wire form)


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, interval=0.05) -> Any:
    """Poll ``predicate`` until it returns something true, at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


# --- child processes ---------------------------------------------------------------------


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


class Process:
    """A child process whose output goes to files; ``stop`` always reaps it."""

    def __init__(self, name: str, args: list[str], logdir: Path) -> None:
        self.name = name
        self.args = args
        self.out_path = logdir / f"{name}.out"
        self.err_path = logdir / f"{name}.err"
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.popen = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=ROOT, env=_env()
            )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stdout(self) -> str:
        return self.out_path.read_text(errors="replace")

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def wait(self, timeout: float) -> int:
        return self.popen.wait(timeout=timeout)

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=5)

    def received(self) -> list[Received]:
        """What a misbehaving_bot.py process logged: every message and stream status."""
        out = []
        for line in self.stdout().splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            raw = base64.b64decode(record["b64"]) if "b64" in record else b""
            out.append(
                Received(
                    t=record["t"],
                    wall=record["wall"],
                    conn=record["conn"],
                    raw=raw,
                    message=pb.RefereeMessage.FromString(raw) if raw else None,
                    status=record.get("status"),
                    note=record.get("note"),
                )
            )
        return out

    def __repr__(self) -> str:
        return f"Process({self.name}, pid {self.pid})"


@dataclass
class Received:
    t: float  # seconds since the process started
    wall: float  # time.time()
    conn: int
    raw: bytes
    message: pb.RefereeMessage | None
    status: str | None = None
    note: str | None = None

    @property
    def kind(self) -> str | None:
        return self.message.WhichOneof("kind") if self.message is not None else None


# --- the referee ----------------------------------------------------------------------


class RefereeServer:
    """A real ``arena referee`` process on a free port, and stubs to drive it."""

    def __init__(
        self,
        workdir: Path,
        *,
        decision_ms: int = DECISION_MS,
        time_bank_ms: int = TIME_BANK_MS,
        grace_s: float = GRACE_S,
        max_strikes: int = MAX_STRIKES,
        organiser_key: str = "",
        registration_key: str = "",
        shutdown_grace: float = 10.0,
        db: str = "",
        extra: tuple[str, ...] = (),
    ) -> None:
        self.workdir = workdir
        #: the referee's database: an SQLite file in ``workdir`` unless a URL is given
        self.db = db or str(workdir / "arena.db")
        self.decision_ms = decision_ms
        self.time_bank_ms = time_bank_ms
        self.grace_s = grace_s
        self.max_strikes = max_strikes
        self.max_attempts = MAX_ATTEMPTS
        self.organiser_key = organiser_key
        self.registration_key = registration_key
        args = [
            sys.executable,
            "-m",
            "arena.cli",
            "referee",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--db",
            self.db,
            "--decision-ms",
            str(decision_ms),
            "--time-bank-ms",
            str(time_bank_ms),
            "--grace",
            str(grace_s),
            "--max-strikes",
            str(max_strikes),
            "--shutdown-grace",
            str(shutdown_grace),
        ]
        args += extra  # more `arena referee` flags
        if organiser_key:
            args += ["--organiser-key", organiser_key]
        if registration_key:
            args += ["--registration-key", registration_key]
        self.process = Process("referee", args, workdir)
        self.processes: list[Process] = []
        try:
            self.address: str = wait_until(self._address, 30, "the referee to listen")
        except BaseException:
            self.process.stop()
            raise
        self.channel = grpc.insecure_channel(self.address)
        self.arena = pb_grpc.ArenaServiceStub(self.channel)

    def _address(self) -> str | None:
        if not self.process.alive():
            raise RuntimeError(f"the referee exited: {self.process.stderr()[-2000:]}")
        found = LISTENING.search(self.process.stdout())
        return found.group(1) if found else None

    # --- ArenaService ------------------------------------------------------------------

    def organiser(self) -> list[tuple[str, str]]:
        return [("authorization", f"Bearer {self.organiser_key}")] if self.organiser_key else []

    def register(self, name: str) -> pb.RegisterBotResponse:
        return self.arena.RegisterBot(
            pb.RegisterBotRequest(name=name, registration_key=self.registration_key),
            timeout=RPC_TIMEOUT,
        )

    def match_request(
        self,
        game: str,
        players: list[str],
        *,
        variants: tuple[str, ...] | list[str] = (),
        options: dict[str, str] | None = None,
        seed: int | None = None,  # None: the referee draws a secret one
        decision_ms: int = 0,
        time_bank_ms: int = 0,
        wait: bool = True,
    ) -> pb.RunMatchRequest:
        return pb.RunMatchRequest(
            game=game,
            variants=list(variants),
            options=options or {},
            players=players,
            seed=seed,
            wait=wait,
            decision_ms=decision_ms,
            time_bank_ms=time_bank_ms,
        )

    def _fleet_ready(self, players: list[str]) -> None:
        """The shared bot processes may be reconnecting (with backoff) after a test that
        took their token over: seat them only once they are back."""
        fleet = [p for p in players if p in FLEET]
        if fleet:
            self.wait_connected(*fleet)

    def run_match(self, game: str, players: list[str], **kwargs: Any) -> pb.MatchInfo:
        """Run a match and wait for its end (RunMatch with wait=true)."""
        self._fleet_ready(players)
        request = self.match_request(game, players, wait=True, **kwargs)
        reply = self.arena.RunMatch(request, metadata=self.organiser(), timeout=MATCH_TIMEOUT)
        return reply.match

    def start_match(self, game: str, players: list[str], **kwargs: Any) -> str:
        self._fleet_ready(players)
        request = self.match_request(game, players, wait=False, **kwargs)
        reply = self.arena.RunMatch(request, metadata=self.organiser(), timeout=RPC_TIMEOUT)
        return reply.match_id

    def get_match(self, match_id: str) -> pb.MatchInfo:
        return self.arena.GetMatch(pb.GetMatchRequest(match_id=match_id), timeout=RPC_TIMEOUT)

    def wait_match(self, match_id: str, timeout: float = MATCH_TIMEOUT) -> pb.MatchInfo:
        def ended() -> pb.MatchInfo | None:
            info = self.get_match(match_id)
            return info if info.status != "running" else None

        return wait_until(ended, timeout, f"match {match_id} to end", interval=0.1)

    def bots(self) -> dict[str, pb.BotInfo]:
        """The latest version of every registered bot, by name."""
        reply = self.arena.ListBots(pb.ListBotsRequest(), timeout=RPC_TIMEOUT)
        return {b.name: b for b in sorted(reply.bots, key=lambda b: b.version)}

    def wait_connected(self, *names: str, timeout: float = 30) -> None:
        def connected() -> bool:
            for process in self.processes:  # a bot process that died will never connect
                if process.name.split("-", 1)[-1] in names and not process.alive():
                    raise AssertionError(
                        f"{process} exited with {process.popen.returncode}: "
                        f"{process.stderr()[-3000:]}"
                    )
            bots = self.bots()
            return all(n in bots and bots[n].connected for n in names)

        wait_until(connected, timeout, f"{', '.join(names)} to connect")

    def health(self, service: str = "") -> int:
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        stub = health_pb2_grpc.HealthStub(self.channel)
        reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=RPC_TIMEOUT)
        return reply.status

    # --- bot processes -------------------------------------------------------------------

    def start_bot(self, builtin: str, name: str, *extra: str) -> Process:
        """``arena bot run BUILTIN`` as its own process, registered as ``name``."""
        token = self.register(name).token
        process = Process(
            f"bot-{name}",
            [
                sys.executable,
                "-m",
                "arena.cli",
                "bot",
                "run",
                builtin,
                "--referee",
                self.address,
                "--token",
                token,
                *extra,
            ],
            self.workdir,
        )
        self.processes.append(process)
        return process

    def start_misbehaving(self, name: str, mode: str, *extra: str, token: str = "") -> Process:
        """tests/referee/misbehaving_bot.py in ``mode``, registered as ``name``."""
        token = token or self.register(name).token
        process = Process(
            f"{mode}-{name}",
            [
                sys.executable,
                str(MISBEHAVING_BOT),
                "--referee",
                self.address,
                "--token",
                token,
                "--mode",
                mode,
                "--timeout",
                str(MATCH_TIMEOUT),
                *extra,
            ],
            self.workdir,
        )
        self.processes.append(process)
        return process

    def close(self) -> None:
        for process in self.processes:
            process.stop()
        self.channel.close()
        self.process.stop()


# --- raw in-process clients -----------------------------------------------------------


def _serialize(message: Any) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


class LegalPlayer:
    """Plays legally with built-in bots (``policies``: game -> bot name), one instance
    per (match, seat), from the messages a raw client receives."""

    def __init__(self, policies: dict[str, str]) -> None:
        self.policies = policies
        self.bots: dict[tuple[str, int], Any] = {}
        self.games: dict[str, str] = {}

    def handle(self, message: pb.RefereeMessage) -> pb.BotMessage | None:
        kind = message.WhichOneof("kind")
        if kind == "match_started":
            started = message.match_started
            self.games[started.match_id] = started.game
            key = (started.match_id, started.seat)
            if key not in self.bots:
                spec = REGISTRY.bot(started.game, self.policies[started.game])
                self.bots[key] = spec.factory(started.seat, 99 + started.seat)
            return None
        if kind != "decision":
            return None
        return self.reply(message.decision)

    def action(self, request: pb.DecisionRequest) -> dict[str, Any]:
        """The built-in bot's action for ``request`` (as a dict, indices on the wire)."""
        game = self.games[request.match_id]
        bot = self.bots[(request.match_id, request.seat)]
        observation = observation_from_proto(request.observation)
        options = wire.decision_options(request)
        action = bot.decide(observation, Decision(request.seat, request.kind, lambda: options))
        return _territory_indices(game, action, observation)

    def reply(self, request: pb.DecisionRequest) -> pb.BotMessage:
        game = self.games[request.match_id]
        return pb.BotMessage(
            action=pb.ActionReply(
                match_id=request.match_id,
                request_id=request.request_id,
                action=action_to_proto(game, self.action(request)),
            )
        )


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def split_batch(raw: bytes) -> list[bytes]:
    """The bytes of each message of a serialized ``RefereeMessage(batch=...)``, exactly as
    they were on the wire (read from the wire format itself, not re-serialized)."""
    tag, at = _varint(raw, 0)
    assert tag == (8 << 3) | 2, f"not a batch: tag {tag}"
    length, at = _varint(raw, at)
    assert at + length == len(raw), "a batch with bytes after it"
    body, at = raw[at:], 0
    inner = []
    while at < len(body):
        tag, at = _varint(body, at)
        assert tag == (1 << 3) | 2, f"a batch with a field other than its messages: {tag}"
        length, at = _varint(body, at)
        inner.append(body[at : at + length])
        at += length
    assert at == len(body)
    return inner


class RawBot:
    """A bot speaking raw gRPC from this process: it records the exact bytes of every
    RefereeMessage it receives, and answers with ``player`` (if any)."""

    def __init__(
        self,
        address: str,
        token: str = "",
        *,
        first: Any = None,
        player: LegalPlayer | None = None,
        timeout: float = 90.0,
        batches: bool = False,
    ) -> None:
        self.player = player
        #: every message received, with its exact bytes; a RefereeBatch is recorded as
        #: the messages it holds, each with its own bytes as they were on the wire
        self.messages: list[tuple[bytes, pb.RefereeMessage]] = []
        self.batches = batches
        self.batches_received = 0
        self.batches_sent = 0
        self.status: grpc.StatusCode | None = None
        self.details = ""
        self.error: BaseException | None = None
        self.done = threading.Event()
        self._cond = threading.Condition()
        self._outbox: queue.Queue[Any] = queue.Queue()
        self.channel = grpc.insecure_channel(
            address, options=[("grpc.max_receive_message_length", 64 << 20)]
        )
        hello = first
        if hello is None:
            hello = pb.BotMessage(hello=pb.Hello(token=token, batches=batches))
        connect = self.channel.stream_stream(
            CONNECT, request_serializer=_serialize, response_deserializer=None
        )
        self.call = connect(self._requests(hello), timeout=timeout)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _requests(self, first: Any) -> Iterator[Any]:
        yield first
        while (message := self._outbox.get()) is not None:
            yield message

    def _read(self) -> None:
        try:
            for raw in self.call:
                message = pb.RefereeMessage.FromString(raw)
                if message.WhichOneof("kind") == "batch":
                    assert self.batches, "a batch for a client that did not ask for batches"
                    self.batches_received += 1
                    received = list(zip(split_batch(raw), message.batch.messages, strict=True))
                else:
                    received = [(raw, message)]
                with self._cond:
                    self.messages.extend(received)
                    self._cond.notify_all()
                if self.player is not None:
                    replies = [r for _, m in received if (r := self.player.handle(m)) is not None]
                    if len(replies) > 1 and self.batches:
                        batch = pb.BotMessage()
                        batch.batch.messages.extend(replies)
                        self.send(batch)
                        self.batches_sent += 1
                    else:
                        for reply in replies:
                            self.send(reply)
            self.status = grpc.StatusCode.OK
        except grpc.RpcError as exc:
            self.status = exc.code()
            self.details = exc.details() or ""
        except BaseException as exc:  # a bug in the test's player: keep it for the test
            self.error = exc
            self.call.cancel()
        finally:
            with self._cond:
                self.done.set()
                self._cond.notify_all()

    def send(self, message: Any) -> None:
        self._outbox.put(message)

    def wait_for(
        self,
        predicate: Callable[[pb.RefereeMessage], bool],
        timeout: float = 10.0,
        start: int = 0,
        what: str = "a message",
    ) -> tuple[int, pb.RefereeMessage]:
        """The first message from index ``start`` on that satisfies ``predicate``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            index = start
            while True:
                while index < len(self.messages):
                    if predicate(self.messages[index][1]):
                        return index, self.messages[index][1]
                    index += 1
                left = deadline - time.monotonic()
                if left <= 0 or self.done.is_set():
                    raise AssertionError(
                        f"no {what} within {timeout}s (stream status {self.status}: "
                        f"{self.details}); got {[m.WhichOneof('kind') for _, m in self.messages]}"
                    )
                self._cond.wait(left)

    def wait_kind(self, kind: str, timeout: float = 10.0, start: int = 0) -> tuple[int, Any]:
        index, message = self.wait_for(
            lambda m: m.WhichOneof("kind") == kind, timeout, start, what=kind
        )
        return index, getattr(message, kind)

    def wait_done(self, timeout: float = 10.0) -> grpc.StatusCode | None:
        if not self.done.wait(timeout):
            raise AssertionError(f"the stream did not end within {timeout}s")
        return self.status

    def of_kind(self, kind: str, match_id: str | None = None) -> list[Any]:
        with self._cond:
            found = [getattr(m, kind) for _, m in self.messages if m.WhichOneof("kind") == kind]
        return [f for f in found if match_id is None or f.match_id == match_id]

    def close(self) -> None:
        self._outbox.put(None)
        self.call.cancel()
        self._thread.join(timeout=5)
        self.channel.close()


# --- fixtures ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def referee_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RefereeServer]:
    """The shared referee: 500 ms decisions, 300 ms bank, 1.5 s grace, 3 strikes."""
    server = RefereeServer(tmp_path_factory.mktemp("referee"))
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def referee_factory(tmp_path: Path) -> Iterator[Callable[..., RefereeServer]]:
    """Referees of a test's own (their settings differ from the shared one's)."""
    made: list[RefereeServer] = []

    def make(**kwargs: Any) -> RefereeServer:
        workdir = tmp_path / f"referee-{len(made)}"
        workdir.mkdir()
        server = RefereeServer(workdir, **kwargs)
        made.append(server)
        return server

    try:
        yield make
    finally:
        for server in made:
            server.close()


ORGANISER_KEY = "organiser-secret"
REGISTRATION_KEY = "registration-secret"


@pytest.fixture(scope="module")
def locked_referee(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RefereeServer]:
    """A second referee with an organiser key and closed registration."""
    server = RefereeServer(
        tmp_path_factory.mktemp("locked"),
        organiser_key=ORGANISER_KEY,
        registration_key=REGISTRATION_KEY,
    )
    try:
        yield server
    finally:
        server.close()


#: name -> built-in bot, each run as its own ``arena bot run`` process
FLEET = {
    "aggressive": "aggressive",
    "defensive": "defensive",
    "rand": "random",
    "heuristic": "heuristic",
}


@pytest.fixture(scope="session")
def bot_fleet(referee_server: RefereeServer) -> dict[str, Process]:
    """Well-behaved bot processes connected to the shared referee (stopped with it)."""
    fleet = {name: referee_server.start_bot(builtin, name) for name, builtin in FLEET.items()}
    referee_server.wait_connected(*fleet)
    return fleet


@pytest.fixture
def raw_bots() -> Iterator[Callable[..., RawBot]]:
    """A factory of raw in-process clients, all closed after the test."""
    made: list[RawBot] = []

    def make(*args: Any, **kwargs: Any) -> RawBot:
        bot = RawBot(*args, **kwargs)
        made.append(bot)
        return bot

    try:
        yield make
    finally:
        for bot in made:
            bot.close()


class Spawner:
    """Starts processes for one test and stops them all after it."""

    def __init__(self) -> None:
        self.started: list[Process] = []

    def bot(self, server: RefereeServer, builtin: str, name: str, *extra: str) -> Process:
        process = server.start_bot(builtin, name, *extra)
        self.started.append(process)
        return process

    def misbehaving(
        self, server: RefereeServer, name: str, mode: str, *extra: str, token: str = ""
    ) -> Process:
        process = server.start_misbehaving(name, mode, *extra, token=token)
        self.started.append(process)
        return process

    def module_bot(self, server: RefereeServer, module: str, name: str, *extra: str) -> Process:
        """``python -m arena.bots.MODULE --referee ADDRESS --token T EXTRA...``, registered
        as ``name``."""
        token = server.register(name).token
        args = [sys.executable, "-m", f"arena.bots.{module}", "--referee", server.address]
        process = Process(f"bot-{name}", [*args, "--token", token, *extra], server.workdir)
        server.processes.append(process)  # wait_connected notices if it dies
        self.started.append(process)
        return process

    def cli(self, logdir: Path, label: str, *args: str) -> Process:
        """An ``arena`` command (``python -m arena.cli ARGS``) as its own process."""
        process = Process(label, [sys.executable, "-m", "arena.cli", *args], logdir)
        self.started.append(process)
        return process

    def stop_all(self) -> None:
        for process in self.started:
            process.stop()


@pytest.fixture
def spawn() -> Iterator[Spawner]:
    """Processes a test starts: stopped after the test, whatever happens."""
    spawner = Spawner()
    try:
        yield spawner
    finally:
        spawner.stop_all()


@pytest.fixture
def legal_player() -> Callable[[dict[str, str]], LegalPlayer]:
    return LegalPlayer
