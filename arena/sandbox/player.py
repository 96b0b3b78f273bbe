"""A bot program run as its own process, played over its stdin and stdout.

:class:`SandboxedPlayer` is an engine player held to the referee's rules
(:class:`arena.engine.match.Refereed`): each decision is a DecisionRequest line with
the seat's clock (the referee's own time controls: a per-decision deadline and a time
bank), answered by an ActionReply line. A timeout, an error the bot reports, or an
answer that cannot be read is a strike (``BotFailed``); a bot whose process ended, or
which broke the protocol beyond repair (a line longer than the limit, its stdout
closed), forfeits at once (``BotGone``). ``close()`` ends its whole process tree.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from arena.engine.core import Decision, Event, Result
from arena.engine.match import BotFailed, BotGone
from arena.referee.codec import (
    CodecError,
    action_from_proto,
    fill_observation,
    to_json_text,
)
from arena.referee.limits import short
from arena.referee.live import new_request_id
from arena.sandbox import bwrap
from arena.sandbox.limits import ISOLATIONS, Limits
from arena.sandbox.stdio import bot_message, message_line
from arena.v1 import arena_pb2 as pb

#: the referee's defaults (arena.referee.server.RefereeConfig)
DECISION_MS = 5000
TIME_BANK_MS = 30000
#: how long a bot may take to exit once told its match ended, before it is killed
EXIT_S = 1.0


class SandboxError(RuntimeError):
    """A bot program could not start (``reason``: why, in one line)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class BotProgram:
    """A bot as a program: its own files (bound read-only at /bot) and the argv run there."""

    code_dir: Path
    command: tuple[str, ...]


class _Line:
    """What the reader thread saw: a line, or the end of the bot's output (``why``)."""

    __slots__ = ("at", "data", "why")

    def __init__(self, data: bytes | None, why: str = "") -> None:
        self.data = data
        self.why = why
        self.at = time.monotonic()


class SandboxedPlayer:
    """One match's bot process (see the module's docstring)."""

    refereed = True

    def __init__(
        self,
        program: BotProgram,
        context: Any,
        *,
        isolation: str = "sandbox",
        limits: Limits = Limits(),  # noqa: B008 - frozen
        decision_ms: int = DECISION_MS,
        time_bank_ms: int = TIME_BANK_MS,
        name: str = "",
        extra_binds: Sequence[tuple[str, str]] = (),
    ) -> None:
        if isolation not in ISOLATIONS:
            raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}")
        if isolation == "inprocess":
            raise ValueError("a bot program runs as a process: isolation process or sandbox")
        self.program = program
        self.context = context
        self.game = context.game
        self.isolation = isolation
        self.limits = limits
        self.decision_ms = decision_ms
        self.bank_ms = time_bank_ms
        self.name = name or "bot"
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._lines: queue.Queue[_Line] = queue.Queue()
        self._retry = False
        self._attempt = 1
        self._last_request = 0
        self._closed = False
        self._slot: bwrap.UidSlot | None = None
        self._gone = ""
        self.started = time.monotonic()
        if isolation == "sandbox":
            problem = bwrap.sandbox_problem()
            if problem is not None:
                raise SandboxError(problem)
            if os.geteuid() == 0:
                self._slot = bwrap.UidSlot()
            argv = bwrap.sandbox_command(
                program.command,
                program.code_dir,
                limits,
                self._slot.uid if self._slot else None,
                extra_binds,
            )
            cwd = None
        else:
            argv = bwrap.process_command(program.command, limits)
            cwd = str(program.code_dir)
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                start_new_session=True,  # its own process group: killed whole
                env=None if isolation == "sandbox" else _process_env(),
            )
        except OSError as exc:
            self._release()
            raise SandboxError(f"{self.name} could not start: {exc}") from None
        assert self.process.stdout is not None and self.process.stderr is not None
        self._threads = [
            threading.Thread(target=self._read_stdout, args=(self.process.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(self.process.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        try:
            self._handshake()
        except BaseException:
            self.close()
            raise

    # --- starting --------------------------------------------------------------------

    def _handshake(self) -> None:
        """Wait for the bot's Hello (it is up), answer Welcome, then MatchStarted."""
        deadline = self.started + self.limits.start_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxError(
                    f"{self.name} did not start within {self.limits.start_s:g} s"
                    f"{self._stderr_tail()}"
                )
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            if line.data is None:
                self._wait_exit(2.0)
                raise SandboxError(
                    f"{self.name} did not start: {self._exit_why(line.why)}{self._stderr_tail()}"
                )
            try:
                message = bot_message(line.data)
            except CodecError as exc:
                raise SandboxError(f"{self.name} did not start: its first line: {exc}") from None
            if message.WhichOneof("kind") != "hello":
                raise SandboxError(f"{self.name} did not start: its first line is not a Hello")
            break
        self.start_s = time.monotonic() - self.started
        welcome = pb.RefereeMessage()
        welcome.welcome.bot_name = self.name
        welcome.welcome.max_message_bytes = self.limits.line_kb << 10
        context = self.context
        started = pb.RefereeMessage(
            match_started=pb.MatchStarted(
                match_id=context.match_id,
                game=context.game,
                variants=list(context.variants),
                options={k: "" if v is None else str(v) for k, v in context.options.items()},
                seat=context.seat,
                players=list(context.players),
                decision_ms=self.decision_ms,
                time_bank_ms=self.bank_ms,
            )
        )
        self.send(welcome)
        self.send(started)

    # --- the wire --------------------------------------------------------------------

    def send(self, message: pb.RefereeMessage) -> None:
        """Write one message line; BotGone if the bot no longer reads."""
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(message_line(message))
            stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            raise BotGone(self._gone_why("stopped reading its input")) from None

    def receive(self, request_id: int, timeout_s: float) -> tuple[pb.ActionReply, float]:
        """The bot's answer to ``request_id`` and when it arrived (time.monotonic).
        Stale answers and pings are passed over. TimeoutError past ``timeout_s``;
        BotFailed for a line that is not a BotMessage; BotGone if its output ended."""
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                raise TimeoutError from None
            if line.data is None:
                self._lines.put(line)  # it stays ended
                raise BotGone(self._gone_why(line.why))
            try:
                message = bot_message(line.data)
            except CodecError as exc:
                raise BotFailed(str(exc), f"unreadable line ({exc})") from None
            kind = message.WhichOneof("kind")
            if kind == "action" and message.action.request_id == request_id:
                return message.action, line.at
            if kind == "ping":
                self.send(pb.RefereeMessage(pong=pb.Pong(nonce=message.ping.nonce)))

    # --- the engine's player ---------------------------------------------------------

    def decide(self, view: Any, decision: Decision) -> dict[str, Any]:
        if self._gone:
            raise BotGone(self._gone)
        attempt = self._attempt + 1 if self._retry else 1
        self._attempt, self._retry = attempt, False
        observation = view.copy() if hasattr(view, "copy") else dict(view)
        message = pb.RefereeMessage()
        request = message.decision
        fill_observation(request.observation, self.game, observation)
        request.match_id = self.context.match_id
        request.seat = self.context.seat
        request.kind = decision.kind
        request.options_json = to_json_text(decision.options)
        request.deadline_ms = self.decision_ms
        request.time_bank_ms = self.bank_ms
        request.attempt = attempt
        self._last_request = request.request_id = new_request_id()
        events = decision.events
        if events:
            request.events_json.extend(to_json_text(e) for e in events)
        try:
            self.send(message)
            sent = time.monotonic()
            budget = (self.decision_ms + self.bank_ms) / 1000
            try:
                reply, arrived = self.receive(request.request_id, budget)
            except TimeoutError:
                self.bank_ms = 0
                raise BotFailed("timeout", "timeout") from None
            used_ms = int((arrived - sent) * 1000)
            self.bank_ms = max(0, self.bank_ms - max(0, used_ms - self.decision_ms))
            if reply.error:
                reason = short(" ".join(reply.error.split()), 200)
                raise BotFailed(reason)
            try:
                return action_from_proto(self.game, reply.action)
            except CodecError as exc:
                raise BotFailed(str(exc), f"unreadable action ({exc})") from None
        except BotGone as exc:
            self._gone = exc.why
            self._kill()
            raise

    def rejected(self, reason: str, allowed: str, strikes: int) -> None:
        self._retry = True
        message = pb.RefereeMessage(
            rejected=pb.ActionRejected(
                match_id=self.context.match_id,
                request_id=self._last_request,
                reason=short(reason),
                allowed=short(allowed, 2000),
                strikes=strikes,
            )
        )
        try:
            self.send(message)
        except BotGone as exc:
            self._gone = exc.why

    def ended(self, result: Result | None, events: list[Event], forfeits: dict[int, str]) -> None:
        """Tell the bot how the match ended, let it exit, then end what is left of it."""
        message = pb.RefereeMessage()
        ended = message.match_ended
        ended.match_id = self.context.match_id
        ended.seat = self.context.seat
        ended.events_json.extend(to_json_text(e) for e in events)
        if result is None:
            ended.result.reason = "aborted"
            ended.result.detail = "the match was aborted"
        else:
            ended.result.reason = result.reason.value
            ended.result.places.extend(result.places)
            ended.result.detail = result.detail
        for seat, why in sorted(forfeits.items()):
            ended.result.forfeits.add(seat=seat, why=why)
        if not self._gone:
            try:
                self.send(message)
                assert self.process.stdin is not None
                self.process.stdin.close()
            except (BotGone, OSError):
                pass
            self._wait_exit(EXIT_S)
        self.close()

    # --- its output ------------------------------------------------------------------

    def _read_stdout(self, stream: IO[bytes]) -> None:
        limit = self.limits.line_kb << 10
        try:
            while True:
                data = stream.readline(limit + 1)
                if not data:
                    self._lines.put(_Line(None, "closed its output"))
                    return
                if len(data) > limit and not data.endswith(b"\n"):
                    self._lines.put(
                        _Line(None, f"wrote a line over {self.limits.line_kb} KiB to its output")
                    )
                    self._kill()
                    return
                self._lines.put(_Line(data))
        except (OSError, ValueError):
            self._lines.put(_Line(None, "closed its output"))

    def _read_stderr(self, stream: IO[bytes]) -> None:
        keep = self.limits.stderr_kb << 10
        try:
            while chunk := stream.read1(65536):
                self._stderr.append(chunk)
                self._stderr_size += len(chunk)
                while self._stderr_size - len(self._stderr[0]) >= keep:
                    self._stderr_size -= len(self._stderr.popleft())
        except (OSError, ValueError):
            return

    def stderr(self) -> bytes:
        """The bot's stderr of this match: its last ``Limits.stderr_kb`` KiB."""
        data = b"".join(list(self._stderr))
        return data[-(self.limits.stderr_kb << 10) :]

    def _stderr_tail(self) -> str:
        lines = self.stderr().decode(errors="replace").strip().splitlines()
        return f" (its stderr: {short(lines[-1], 200)})" if lines else ""

    # --- ending ----------------------------------------------------------------------

    def _exit_why(self, fallback: str) -> str:
        code = self.process.poll()
        if code is None:
            return fallback
        if code < 0 or code > 128:
            number = -code if code < 0 else code - 128
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = f"signal {number}"
            if number == signal.SIGXCPU or (
                number == signal.SIGKILL and self._cpu_spent_s() >= self.limits.cpu_s
            ):
                return f"ran out of CPU time ({self.limits.cpu_s:g} s a match)"
            return f"its process was killed ({name})"
        return f"its process ended (exit status {code})"

    def _cpu_spent_s(self) -> float:
        return 0.0  # the process is gone: its time cannot be read any more

    def _gone_why(self, fallback: str) -> str:
        if self._gone:
            return self._gone
        self._wait_exit(0.5)
        return self._exit_why(fallback)

    def _wait_exit(self, timeout_s: float) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=timeout_s)

    def _kill(self) -> None:
        """End the whole tree: bwrap's PID namespace dies with it; a plain process's
        group is killed."""
        process = getattr(self, "process", None)
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)

    def close(self) -> None:
        """End the bot's whole process tree (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._kill()
        process = getattr(self, "process", None)
        if process is not None:
            self._wait_exit(5.0)
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        for thread in getattr(self, "_threads", ()):
            thread.join(timeout=1.0)
        self._release()

    def _release(self) -> None:
        if self._slot is not None:
            self._slot.release()
            self._slot = None

    def __enter__(self) -> SandboxedPlayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _process_env() -> dict[str, str]:
    """A plain process's environment: the host's, less what names its secrets."""
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "PYTHONPATH", "VIRTUAL_ENV", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env
