"""What the referee admits: every call's request within bounds, every connection's new
streams within a rate, and every address's connections within a cap.

* :class:`Admission`, a server interceptor: each call of every service is counted
  against its connection's rate of new streams (a token bucket, ``max_new_streams_per_s``;
  past it the call ends with RESOURCE_EXHAUSTED and the connection is closed, as for a
  "rapid reset" of streams opened and cancelled at once), and a call with one request
  has it checked against ``limits.request_problem`` before its handler runs
  (INVALID_ARGUMENT naming the field and the bound).
* :class:`ConnectionGuard`: the referee's own TCP connections, read from ``/proc``
  (Linux) every GUARD_INTERVAL_S in a thread. An address holding more than
  ``max_connections_per_peer`` of them loses the newest beyond the cap, those that carry
  no bot's stream first; beyond ``max_connections`` in all, the newest go the same way.
  gRPC cannot refuse a connection by its address, and one that never speaks is closed
  only after the idle timeout: this keeps a flood of silent connections from one
  address from taking the descriptors a registered bot needs.

A connection is closed by shutting its socket down (``shutdown(2)``, on a duplicate of
the referee's own descriptor, checked to be the same socket): gRPC sees its peer gone and
ends its streams. No GOAWAY goes out first; the peer sees the TCP connection end.
"""

from __future__ import annotations

import inspect
import logging
import os
import resource
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import grpc

from arena.referee.limits import TokenBucket, peer_host, request_problem

log = logging.getLogger("arena.referee")

#: how often the connection guard looks at the referee's connections (seconds)
GUARD_INTERVAL_S = 0.5
#: descriptors kept free of connections when the cap comes from the open-files limit:
#: the store, logs, worker pipes, a tournament's processes
FD_HEADROOM = 256
#: the limit on new streams of one connection forgets it after this long unused (seconds)
_IDLE_PEER_S = 30.0


class Admission(grpc.aio.ServerInterceptor):
    """Every call, before its handler: its connection's rate of new streams, then its
    request's bounds. ``drop(peer)`` closes a connection (the ConnectionGuard's)."""

    def __init__(
        self,
        max_new_streams_per_s: float,
        burst: float,
        drop: Callable[[str], None] | None = None,
    ) -> None:
        self.rate = max_new_streams_per_s
        self.burst = burst
        self.drop = drop
        self._buckets: dict[str, TokenBucket] = {}
        self._swept = time.monotonic()
        #: calls refused for their connection's rate (for tests and the log)
        self.refused = 0

    async def intercept_service(
        self, continuation: Callable[[Any], Any], details: grpc.HandlerCallDetails
    ) -> Any:
        handler = await continuation(details)
        if handler is None:
            return None  # no such method: gRPC answers UNIMPLEMENTED
        return _wrapped(handler, self)

    def over_rate(self, peer: str) -> bool:
        """True if ``peer`` (a connection: address and port) opens streams faster than
        allowed; it is then closed."""
        now = time.monotonic()
        bucket = self._buckets.get(peer)
        if bucket is None:
            if now - self._swept > _IDLE_PEER_S:
                self._sweep(now)
            bucket = self._buckets[peer] = TokenBucket(self.rate, self.burst, now)
        if bucket.take(now):
            return False
        self.refused += 1
        if bucket.tokens > -1.0:  # the first refusal of a run: close it once
            bucket.tokens = -1.0
            log.warning("closing %s: more than %g new streams a second", peer, self.rate)
            if self.drop is not None:
                self.drop(peer)
        return True

    def _sweep(self, now: float) -> None:
        """Forget connections whose bucket has been full for a while (gone or calm)."""
        self._swept = now
        for peer, bucket in list(self._buckets.items()):
            if now - bucket.stamp > _IDLE_PEER_S:
                del self._buckets[peer]

    async def refuse(self, request: Any, context: grpc.aio.ServicerContext) -> None:
        """End the call if its connection is over its rate or its request over a bound."""
        if self.over_rate(context.peer()):
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"more than {self.rate:g} new streams a second on this connection",
            )
        if request is not None:
            problem = request_problem(request)
            if problem is not None:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)


def _wrapped(handler: grpc.RpcMethodHandler, admission: Admission) -> grpc.RpcMethodHandler:
    """``handler`` with ``admission.refuse`` first, of the same kind (a coroutine or an
    async generator, as gRPC tells them apart)."""
    for kind in ("unary_unary", "unary_stream", "stream_unary", "stream_stream"):
        inner = getattr(handler, kind)
        if inner is not None:
            break
    else:
        return handler
    unary = kind.startswith("unary")

    if inspect.isasyncgenfunction(inner):

        async def stream(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await admission.refuse(request if unary else None, context)
            async for item in inner(request, context):
                yield item

        return handler._replace(**{kind: stream})

    async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
        await admission.refuse(request if unary else None, context)
        return await inner(request, context)

    return handler._replace(**{kind: call})


# --- connections ---------------------------------------------------------------------


@dataclass(frozen=True)
class Connection:
    """One TCP connection to the referee: its descriptor in this process, its socket's
    inode (newer sockets have larger ones), the peer's address and port."""

    fd: int
    inode: int
    host: str
    port: int

    @property
    def peer(self) -> str:
        return f"{self.host}:{self.port}"


def raise_open_files_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit; the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return soft


def connection_cap(configured: int, open_files: int) -> int:
    """The most connections the referee keeps: ``configured`` (0: none given) within the
    open-files limit less FD_HEADROOM (at least a few)."""
    cap = max(8, open_files - FD_HEADROOM)
    return min(configured, cap) if configured > 0 else cap


def _hex_address(text: str) -> str:
    """An address of /proc/net/tcp[6] (hex, in the kernel's byte order) as text."""
    raw = bytes.fromhex(text)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    if words[:12] == b"\0" * 10 + b"\xff\xff":  # an IPv4 peer of an IPv6 socket
        return socket.inet_ntop(socket.AF_INET, words[12:])
    return socket.inet_ntop(socket.AF_INET6, words)


def referee_connections(port: int) -> list[Connection]:
    """The established TCP connections to ``port`` whose sockets this process holds."""
    inodes: dict[int, int] = {}
    try:
        for name in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{name}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes[int(target[8:-1])] = int(name)
    except OSError:
        return []
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as lines:
                next(lines, None)
                for line in lines:
                    fields = line.split()
                    if len(fields) < 10 or fields[3] != "01":  # 01: ESTABLISHED
                        continue
                    inode = int(fields[9])
                    fd = inodes.get(inode)
                    if fd is None:
                        continue
                    local_port = int(fields[1].rsplit(":", 1)[1], 16)
                    if local_port != port:
                        continue
                    address, remote_port = fields[2].rsplit(":", 1)
                    found.append(Connection(fd, inode, _hex_address(address), int(remote_port, 16)))
        except OSError:
            continue
    return found


def shut_down(connection: Connection) -> bool:
    """Shut ``connection``'s socket down (both ways), if its descriptor still holds that
    very socket: gRPC then sees the peer gone. True if it was."""
    try:
        fd = os.dup(connection.fd)
    except OSError:
        return False
    try:
        if os.fstat(fd).st_ino != connection.inode:
            return False  # the descriptor was closed and reused meanwhile
        sock = socket.socket(fileno=fd)
        fd = -1  # the socket object owns the duplicate now
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            return False
        finally:
            sock.close()  # the duplicate only: the referee's descriptor stays gRPC's
        return True
    finally:
        if fd >= 0:
            os.close(fd)


def over_cap(
    connections: Iterable[Connection], per_peer: int, total: int, keep: set[str]
) -> list[Connection]:
    """Which connections go: per address, the newest beyond ``per_peer``; then the
    newest beyond ``total`` of what is left. Those of ``keep`` (peers carrying a bot's
    stream) go last: a bot keeps its connection while anything else can go instead."""

    def order(c: Connection) -> tuple[bool, int]:  # kept ones first, then the oldest
        return (c.peer not in keep, c.inode)

    ranked = sorted(connections, key=order)
    going: list[Connection] = []
    staying: list[Connection] = []
    per: Counter[str] = Counter()
    for connection in ranked:
        per[connection.host] += 1
        (going if per[connection.host] > per_peer else staying).append(connection)
    going += staying[total:]
    return going


class ConnectionGuard:
    """Keeps the referee's connections within ``per_peer`` an address and ``total`` in
    all (see the module's docstring), looking every GUARD_INTERVAL_S from a thread.
    ``keep()`` names the peers (``host:port``) that carry a bot's stream (called from
    the guard's thread: it must only copy what the loop keeps)."""

    def __init__(self, port: int, per_peer: int, total: int, keep: Callable[[], set[str]]) -> None:
        self.port = port
        self.per_peer = per_peer
        self.total = total
        self.keep = keep
        #: connections shut down so far (for tests and the log)
        self.closed = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if not os.path.isdir("/proc/self/fd"):
            log.info("no /proc here: connections are not capped per address")
            return
        self._thread = threading.Thread(target=self._run, name="connection-guard", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(GUARD_INTERVAL_S):
            try:
                self.enforce()
            except Exception:  # the guard must never take the referee down
                log.exception("the connection guard failed; it goes on")

    def enforce(self) -> int:
        """One look: shut down what is over the caps; how many went."""
        connections = referee_connections(self.port)
        if len(connections) <= min(self.per_peer, self.total):
            return 0  # nothing can be over a cap
        going = over_cap(connections, self.per_peer, self.total, self.keep())
        closed = sum(shut_down(c) for c in going)
        if closed:
            self.closed += closed
            hosts = Counter(c.host for c in going)
            log.warning(
                "closed %d connections over the caps (%d an address, %d in all): %s",
                closed,
                self.per_peer,
                self.total,
                ", ".join(f"{h} ({n})" for h, n in hosts.most_common(3)),
            )
        return closed

    def drop(self, peer: str) -> None:
        """Close the connection of ``peer`` (a call's peer), from a thread: finding it
        reads /proc, which the loop does not wait for."""
        threading.Thread(target=self._drop, args=(peer,), daemon=True).start()

    def _drop(self, peer: str) -> None:
        host, port = _split_peer(peer)
        for connection in referee_connections(self.port):
            if connection.host == host and connection.port == port and shut_down(connection):
                self.closed += 1


def call_peer(peer: str) -> str:
    """``host:port`` of a call's peer, as :attr:`Connection.peer` spells it."""
    host, port = _split_peer(peer)
    return f"{host}:{port}"


def _split_peer(peer: str) -> tuple[str, int]:
    """(address, port) of a call's peer (``ipv4:1.2.3.4:5678``, ``ipv6:[::1]:5678``)."""
    host = peer_host(peer)
    try:
        port = int(peer.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        port = -1
    return host, port
