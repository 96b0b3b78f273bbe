"""The web's server: uvicorn (its h11 protocol), with what a public web face needs that
uvicorn lacks, and its own bounds set.

uvicorn bounds a request's head (``h11_max_incomplete_event_size``), idle keep-alive
connections (``timeout_keep_alive``) and connections in all (``limit_concurrency``: a
request beyond it gets a 503), but nothing bounds how long a client may take to send
its request's head: a connection that sends a few bytes and then one more now and then
(slowloris) is kept for ever, and a thousand of them use up the process's open files,
after which nobody is answered. :class:`GuardedH11` adds:

* a **head timeout**: a request's head (from its first byte, or from the connection's
  opening) must be in within :attr:`Guard.head_s` seconds, or the connection is closed;
* a **cap on connections still sending a head** (:attr:`Guard.most`): beyond it the
  oldest of them (if it has waited a second; beyond twice the cap, whatever its age)
  is closed to make room, so a client that sends its request at once is
  accepted and answered while the slow ones wait their turn to be dropped; the cap is
  kept well below the open-files limit, so accepting never fails for want of one;
* ``TCP_NODELAY`` on every connection (asyncio sets it only on sockets made with
  ``IPPROTO_TCP``): without it each answer on a kept-alive connection waited 40 ms.

And :class:`RateLimit` keeps the log from flooding: a message that repeats (the same
logger and text: "Too many open files", a 503 beyond the concurrency limit, an answer
given up on a browser that stopped reading) is written once per :data:`LOG_EVERY_S`
seconds, with the count of those left out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
import sys
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, ClassVar

from uvicorn.protocols.http.h11_impl import H11Protocol

#: the defaults of ``arena web``'s options (docs/web.md, "Bounds")
MAX_CONNECTIONS = 1_000
HEAD_S = 10.0
KEEP_ALIVE_S = 5.0
#: the largest request head taken (bytes): h11's own default
MAX_HEAD_BYTES = 16 * 1024
#: connections waiting to be accepted (the listening socket's backlog)
BACKLOG = 2_048
#: open files kept for the app itself (its database, its worker's pipes, its files)
FD_RESERVE = 64
#: a connection waits at least this long for its head before it may be closed to make
#: room (seconds)
MIN_WAIT_S = 1.0
#: a repeated log message is written at most once per this many seconds
LOG_EVERY_S = 10.0


def open_files_limit() -> int:
    """The process's soft limit of open files."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def connection_cap(wanted: int) -> int:
    """``wanted`` connections, or fewer if the open-files limit leaves fewer (less
    :data:`FD_RESERVE` for the app itself)."""
    return max(16, min(wanted, open_files_limit() - FD_RESERVE))


@dataclass
class Guard:
    """The connections of one server still sending a request's head, oldest first: at
    most ``most``, each for at most ``head_s`` seconds."""

    most: int
    head_s: float = HEAD_S

    def __post_init__(self) -> None:
        #: each with when it began waiting (time.monotonic)
        self.waiting: OrderedDict[GuardedH11, float] = OrderedDict()
        #: connections closed for taking too long, and to make room
        self.timed_out = 0
        self.evicted = 0

    def add(self, protocol: GuardedH11) -> None:
        """``protocol`` waits for its head; beyond ``most`` the oldest waiting is closed,
        if it has waited :data:`MIN_WAIT_S` (a client that has just connected and whose
        request the server has not read yet is not the one to drop), and beyond twice
        ``most`` whatever its age."""
        now = time.monotonic()
        while len(self.waiting) >= self.most:
            oldest, since = next(iter(self.waiting.items()))
            if now - since < MIN_WAIT_S and len(self.waiting) < 2 * self.most:
                break
            del self.waiting[oldest]
            self.evicted += 1
            oldest.drop()
        self.waiting[protocol] = now

    def discard(self, protocol: GuardedH11) -> None:
        self.waiting.pop(protocol, None)


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a head timeout and the :class:`Guard`'s cap (the
    class made for a server by :func:`protocol` holds its guard)."""

    guard: ClassVar[Guard]

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._head_timer: asyncio.TimerHandle | None = None
        # asyncio turns Nagle's algorithm off only for a socket made with IPPROTO_TCP,
        # and a listener from socket.create_server is not: every answer on a kept-alive
        # connection (headers, then body: two writes) then waited 40 ms for the
        # client's delayed ACK
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
        self._head_begins()

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_in()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.cycle is None or self.cycle.response_complete:
            self._head_begins()  # a request's head starts (or goes on)
        before = self.cycle
        super().data_received(data)
        if self.cycle is not before:  # its head is in: the app has the request
            self._head_in()

    def _head_begins(self) -> None:
        if self._head_timer is None and not self.transport.is_closing():
            self._head_timer = self.loop.call_later(self.guard.head_s, self._head_late)
            self.guard.add(self)

    def _head_in(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        self.guard.discard(self)

    def _head_late(self) -> None:
        self._head_timer = None
        self.guard.discard(self)
        self.guard.timed_out += 1
        self._close_now()

    def drop(self) -> None:
        """Closed at once (by the guard, to make room)."""
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        self._close_now()

    def _close_now(self) -> None:
        """The connection aborted and its socket closed now: asyncio closes an aborted
        socket only at the loop's next turn, and one turn accepts up to the backlog's
        worth of connections, each making room by closing another: the open files ran
        out in the middle of such a burst."""
        self.transport.abort()  # the loop stops watching the socket, here and now
        sock = getattr(self.transport, "_sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()


def protocol(guard: Guard) -> type[GuardedH11]:
    """The protocol class of one server, with its guard."""
    return type("GuardedH11", (GuardedH11,), {"guard": guard})


class RateLimit(logging.Filter):
    """Lets a message through once per ``every_s`` seconds per (logger, message
    template); the next one let through says how many were left out meanwhile."""

    def __init__(self, every_s: float = LOG_EVERY_S) -> None:
        super().__init__()
        self.every_s = every_s
        self._last: dict[tuple[str, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "asyncio" and record.exc_info and not _one_line(record):
            return False
        key = (record.name, str(record.msg)[:200])
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last[0] < self.every_s:
            self._last[key] = (last[0], last[1] + 1)
            return False
        if len(self._last) > 1_000:  # a bounded table: the oldest keys go
            for old in sorted(self._last, key=lambda k: self._last[k][0])[:500]:
                del self._last[old]
        self._last[key] = (now, 0)
        if last is not None and last[1]:
            record.msg = f"{record.getMessage()} ({last[1]} more like this left out)"
            record.args = None
        return True


def _one_line(record: logging.LogRecord) -> bool:
    """asyncio's error with its exception said in one line, not a traceback (out of
    descriptors, its accept fails again and again: each is a line, rate-limited); False
    for one not worth a line: the listening socket closed at shutdown while asyncio's
    retry of a failed accept was still due (its descriptor is -1 by then)."""
    error = record.exc_info[1] if record.exc_info else None
    if isinstance(error, ValueError) and "Invalid file descriptor" in str(error):
        return False
    if isinstance(error, OSError):
        record.msg = f"{record.getMessage()}: {error}"
        record.args = None
        record.exc_info = None
    return True


def quiet_logs(every_s: float = LOG_EVERY_S) -> RateLimit:
    """Every message of the process (uvicorn's, asyncio's, the app's) through one
    :class:`RateLimit`, written to stderr: call once uvicorn has set up its logging."""
    limit = RateLimit(every_s)
    root = logging.getLogger()
    if not any(getattr(h, "_arena", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler._arena = True  # type: ignore[attr-defined]
        root.addHandler(handler)
        root.setLevel(min(root.level or logging.WARNING, logging.WARNING))
    for name in ("", "uvicorn", "uvicorn.error", "uvicorn.access"):
        for handler in logging.getLogger(name).handlers:
            handler.addFilter(limit)
    return limit


def config(
    app: Any,
    max_connections: int = MAX_CONNECTIONS,
    head_s: float = HEAD_S,
    keep_alive_s: float = KEEP_ALIVE_S,
    graceful_s: float = 3.0,
) -> Any:
    """uvicorn's config for the web: h11 with :class:`GuardedH11` (a third of the
    connections at most still sending a head), ``limit_concurrency`` (:func:`connection_cap`),
    the keep-alive timeout, the head's size, the backlog; its logging quiet
    (:func:`quiet_logs`)."""
    import uvicorn

    cap = connection_cap(max_connections)
    # at most a third of the connections waiting for a head (two thirds, briefly), so
    # that those sending their requests at once stay within limit_concurrency
    guard = Guard(max(8, cap // 3), head_s)
    settings = uvicorn.Config(
        app,
        http=protocol(guard),
        loop="asyncio",
        log_level="warning",
        limit_concurrency=cap,
        timeout_keep_alive=keep_alive_s,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        backlog=BACKLOG,
        timeout_graceful_shutdown=graceful_s,
    )
    settings.arena_guard = guard  # type: ignore[attr-defined]
    quiet_logs()
    return settings
