"""What the referee admits: every call's request within bounds, every connection's new
streams within a rate, and every address's connections within a cap.

* :class:`Admission`, a server interceptor: each call of every service is counted
  against its connection's rate of new streams (a token bucket, ``max_new_streams_per_s``;
  past it the call ends with RESOURCE_EXHAUSTED and the connection is closed, as for a
  "rapid reset" of streams opened and cancelled at once), and a call with one request
  has it checked against ``limits.request_problem`` before its handler runs
  (INVALID_ARGUMENT naming the field and the bound).
* :class:`PeerLimits`: what every bot stream from one address shares, whatever the
  connections they come over: a rate of new ``Connect`` streams (a bot that reconnects
  in a loop), a budget of unsolicited messages (pings, stale replies), and a cap on the
  bytes queued for bots that do not read. A classroom behind one NAT shares them: its
  bots send few unsolicited messages, and a light sender is never the one cut.
* :class:`ConnectionGuard`: the referee's own TCP connections, read from ``/proc``
  (Linux) every GUARD_INTERVAL_S in a thread. An address holding more than
  ``max_connections_per_peer`` of them loses the newest beyond the cap, those that carry
  no bot's stream first; beyond ``max_connections`` in all, the newest go the same way.
  gRPC cannot refuse a connection by its address, and one that never speaks is closed
  only after the idle timeout: this keeps a flood of silent connections from one
  address from taking the descriptors a registered bot needs.

A connection over a cap is closed by shutting its socket down (``shutdown(2)``, on a
duplicate of the referee's own descriptor, checked to be the same socket): gRPC sees its
peer gone and ends its streams. No GOAWAY goes out first; the peer sees the TCP
connection end.

A connection that opens streams faster than allowed (counted by the interceptor for the
calls that reach a handler, and by gRPC's own per-connection counts, read through
channelz, for the streams reset before one does: a "rapid reset") is *held* instead: a
socket filter (classic BPF, ``SO_ATTACH_FILTER``) makes the kernel drop whatever it sends
from then on, so that neither gRPC nor the referee spends anything more on it, and the
client, whose packets are never acknowledged, waits on its own timeouts instead of
reconnecting at once (closing it would only invite the next connection). What was
already written to it (the refusal's status) still goes out. It is shut down
HOLD_S later.

Abuse that no gRPC client commits by mistake, streams reset before any handler ran
faster than the rate, or a connection that sends more than STREAMLESS_BYTES without
opening a stream (a flood of PINGs or SETTINGS), or connections the referee had to
close (``closed_per_peer`` in a minute, counted from the kernel's TIME_WAIT entries: a
flood of PINGs gets GOAWAY ``too_many_pings``, but gRPC acks every PING of a burst it has
read first, and the flooder reconnects at once), also *bans* the address for BAN_S: a filter
on the listening socket drops its packets, the SYN of a new connection included, so
that a client reconnecting in a loop is not accepted again (IPv4 addresses; the
connections it holds already are held or shut down as above, those of other addresses
are untouched).
"""

from __future__ import annotations

import contextlib
import ctypes
import inspect
import json
import logging
import os
import resource
import socket
import struct
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
#: a connection held for opening streams too fast is shut down this long after (seconds)
HOLD_S = 30.0
#: an address banned for abuse stays banned this long (seconds)
BAN_S = 60.0
#: bytes a connection may send without opening a stream (an honest client sends its
#: preface, SETTINGS and a PING now and then: well under 1 KiB)
STREAMLESS_BYTES = 64 << 10
_SO_ATTACH_FILTER = getattr(socket, "SO_ATTACH_FILTER", 26)
_SO_DETACH_FILTER = getattr(socket, "SO_DETACH_FILTER", 27)
_TCP_INFO = getattr(socket, "TCP_INFO", 11)
#: where ``tcpi_bytes_received`` sits in ``struct tcp_info`` (Linux 4.1 and later)
_BYTES_RECEIVED = 128
# classic BPF (linux/filter.h): instructions of a socket filter
_RET, _LD_ABS_W, _LD_ABS_B, _JEQ, _ALU_RSH = 0x06, 0x20, 0x30, 0x15, 0x74
_NET = -0x100000  # SKF_NET_OFF: offsets from the start of the IP header


def _bpf(*instructions: tuple[int, int, int, int]) -> bytes:
    return b"".join(
        struct.pack("HBBI", code, jt, jf, k & 0xFFFFFFFF) for code, jt, jf, k in instructions
    )


#: return 0 (keep no byte of the packet: drop it)
_DROP_ALL = _bpf((_RET, 0, 0, 0))


def ban_filter(addresses: list[str]) -> bytes:
    """A socket filter that drops the IPv4 packets from ``addresses`` and keeps every
    other packet whole: the version nibble, then the source address against each."""
    banned = [int.from_bytes(socket.inet_aton(a), "big") for a in addresses]
    count = len(banned)
    program = [
        (_LD_ABS_B, 0, 0, _NET),  # A = the IP header's first byte
        (_ALU_RSH, 0, 0, 4),  # A = the IP version
        (_JEQ, 0, count + 1, 4),  # not IPv4: keep it
        (_LD_ABS_W, 0, 0, _NET + 12),  # A = the source address
    ]
    for index, address in enumerate(banned):
        # a match jumps to the drop (past the rest and the keep), else goes on
        program.append((_JEQ, count - index, 0, address))
    program += [(_RET, 0, 0, 0xFFFFFFFF), (_RET, 0, 0, 0)]
    return _bpf(*program)


def _attach(fd: int, program: bytes | None) -> bool:
    """Attach the filter ``program`` to the socket ``fd`` (a duplicate is made; None:
    take any filter off). True if it was."""
    sock = socket.socket(fileno=os.dup(fd))
    try:
        if program is None:
            with contextlib.suppress(OSError):  # none was attached
                sock.setsockopt(socket.SOL_SOCKET, _SO_DETACH_FILTER, 0)
            return True
        code = ctypes.create_string_buffer(program, len(program))
        # struct sock_fprog: the number of instructions, then a pointer to them
        fprog = struct.pack("HL", len(program) // 8, ctypes.addressof(code))
        sock.setsockopt(socket.SOL_SOCKET, _SO_ATTACH_FILTER, fprog)
        return True
    except OSError:
        return False
    finally:
        sock.close()  # the duplicate only


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
        #: every call gRPC started, served or not (a stream reset before its handler ran
        #: is counted here and nowhere else): the connection guard's cue to look for a
        #: connection that churns streams
        self.calls = 0

    async def intercept_service(
        self, continuation: Callable[[Any], Any], details: grpc.HandlerCallDetails
    ) -> Any:
        self.calls += 1
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
            log.warning("holding %s: more than %g new streams a second", peer, self.rate)
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


# --- what the bots of one address share ----------------------------------------------

#: a Connect stream refused for its address's rate is refused this long after it came
#: (seconds): a client reconnecting in a loop waits, at no cost to the referee
REFUSE_AFTER_S = 1.0
#: unsolicited messages a stream may send in a second and still never be the one cut
#: when its address's budget is spent (an honest bot sends none; a flood, hundreds)
LIGHT_SENDER = 20


class PeerShare:
    """What the bot streams from one address share: a token bucket of unsolicited
    messages, and the bytes queued for all of them (``streams``: their connections, each
    with ``queued_bytes``, ``recent_unsolicited(now)`` and ``close(reason, drop)``)."""

    __slots__ = ("bucket", "host", "queued_bytes", "streams")

    def __init__(self, host: str, messages_per_s: float, now: float) -> None:
        self.host = host
        self.bucket = TokenBucket(messages_per_s, messages_per_s, now)
        self.queued_bytes = 0
        self.streams: set[Any] = set()


class PeerLimits:
    """The limits that span every bot stream of one address (see the module's
    docstring). ``connect(host)`` admits a new Connect stream or says why not;
    ``unsolicited(stream, now)`` spends from the address's budget; ``queued(stream,
    n)`` counts bytes queued for a stream (negative: written or dropped), closing the
    address's stream with the most queued once the address is over its cap."""

    def __init__(self, messages_per_s: float, connects_per_s: float, queued_bytes: int) -> None:
        self.messages_per_s = messages_per_s
        self.connects_per_s = connects_per_s
        self.max_queued_bytes = queued_bytes
        self.shares: dict[str, PeerShare] = {}
        self._connects: dict[str, TokenBucket] = {}
        self._swept = time.monotonic()

    def connect(self, host: str) -> str:
        """ "" if a new Connect stream from ``host`` is admitted, else why not: at most
        ``connects_per_s`` a second, ten times as many at once (a classroom starting
        together), before the token is even looked up."""
        now = time.monotonic()
        if now - self._swept > _IDLE_PEER_S:
            self._sweep(now)
        bucket = self._connects.get(host)
        if bucket is None:
            burst = 10 * self.connects_per_s
            bucket = self._connects[host] = TokenBucket(self.connects_per_s, burst, now)
        if bucket.take(now):
            return ""
        return f"more than {self.connects_per_s:g} new bot streams a second from your address"

    def join(self, stream: Any, host: str) -> PeerShare:
        share = self.shares.get(host)
        if share is None:
            share = self.shares[host] = PeerShare(host, self.messages_per_s, time.monotonic())
        share.streams.add(stream)
        return share

    def leave(self, stream: Any, share: PeerShare) -> None:
        """``stream`` has ended: what was still queued for it no longer counts."""
        if stream in share.streams:
            share.streams.discard(stream)
            share.queued_bytes -= stream.queued_bytes

    def unsolicited(self, stream: Any, share: PeerShare, now: float) -> bool:
        """True if ``stream``'s unsolicited message fits its address's budget. Once the
        budget is spent, the address's heaviest sender of the last second goes: this
        stream (False) if it is the heaviest, else that one is closed and this message
        passes. A stream that sent at most LIGHT_SENDER of them is never the one cut."""
        if share.bucket.take(now):
            return True
        heaviest = max(share.streams, key=lambda s: s.recent_unsolicited(now), default=stream)
        if heaviest.recent_unsolicited(now) <= LIGHT_SENDER:
            return True  # light senders only: none of them is the flood
        if heaviest is stream or heaviest.recent_unsolicited(now) <= stream.recent_unsolicited(now):
            return False
        heaviest.close(self.flood_reason(), drop=True)
        return True

    def flood_reason(self) -> str:
        return f"flood: more than {self.messages_per_s:g} messages/s from the bots of your address"

    def queued(self, share: PeerShare, size: int) -> None:
        """``size`` bytes more (or fewer) wait for a stream of ``share``; past the cap,
        the stream of that address with the most waiting is closed."""
        share.queued_bytes += size
        if size > 0 and share.queued_bytes > self.max_queued_bytes and share.streams:
            heaviest = max(share.streams, key=lambda s: s.queued_bytes)
            heaviest.close(
                f"not reading: over {self.max_queued_bytes} bytes queued for the bots "
                "of your address",
                drop=True,
            )

    def _sweep(self, now: float) -> None:
        """Forget addresses whose budgets have been full for a while and that hold no
        stream (gone, or calm)."""
        self._swept = now
        for host, bucket in list(self._connects.items()):
            if now - bucket.stamp > _IDLE_PEER_S:
                del self._connects[host]
        for host, share in list(self.shares.items()):
            if not share.streams and now - share.bucket.stamp > _IDLE_PEER_S:
                del self.shares[host]


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


def referee_connections(port: int, state: str = "01") -> list[Connection]:
    """The established TCP connections to ``port`` whose sockets this process holds
    (``state`` "0A": its listening sockets)."""
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
                    if len(fields) < 10 or fields[3] != state:  # 01: ESTABLISHED
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


def hold(connection: Connection) -> bool:
    """Make the kernel drop everything ``connection``'s peer sends from now on (see the
    module's docstring), if its descriptor still holds that very socket. True if it
    does."""
    try:
        fd = os.dup(connection.fd)
    except OSError:
        return False
    try:
        if os.fstat(fd).st_ino != connection.inode:
            return False
        return _attach(fd, _DROP_ALL)
    finally:
        os.close(fd)


def received_bytes(connection: Connection) -> int:
    """Bytes the kernel has received on ``connection`` (its TCP_INFO; 0 if unknown)."""
    try:
        sock = socket.socket(fileno=os.dup(connection.fd))
    except OSError:
        return 0
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, _BYTES_RECEIVED + 8)
    except OSError:
        return 0
    finally:
        sock.close()
    if len(info) < _BYTES_RECEIVED + 8:
        return 0
    return int.from_bytes(info[_BYTES_RECEIVED : _BYTES_RECEIVED + 8], "little")


def closed_by_us(port: int) -> Counter[str]:
    """Connections to ``port`` that this side closed in about the last minute, by the
    peer's address: the kernel keeps each in TIME_WAIT for 60 s (the side that closes
    first does; a client that ends its own connection keeps it on its side)."""
    found: Counter[str] = Counter()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as lines:
                next(lines, None)
                for line in lines:
                    fields = line.split()
                    if len(fields) < 4 or fields[3] != "06":  # 06: TIME_WAIT
                        continue
                    if int(fields[1].rsplit(":", 1)[1], 16) != port:
                        continue
                    found[_hex_address(fields[2].rsplit(":", 1)[0])] += 1
        except OSError:
            continue
    return found


def listening_socket(port: int) -> Connection | None:
    """The socket this process listens on at ``port`` (its descriptor and inode)."""
    return next(iter(referee_connections(port, state="0A")), None)


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

    def __init__(
        self,
        port: int,
        per_peer: int,
        total: int,
        keep: Callable[[], set[str]],
        streams_per_s: float = 0.0,
        calls: Callable[[], int] | None = None,
        closed_per_peer: int = 0,
    ) -> None:
        self.port = port
        self.per_peer = per_peer
        self.total = total
        self.keep = keep
        #: new streams a connection may open a second (twice as many at once), and how
        #: many calls gRPC has started so far (the interceptor's count): the cue to read
        #: each connection's own count (channelz), which costs more
        self.streams_per_s = streams_per_s
        self.calls = calls
        #: connections shut down so far, and held (for tests and the log)
        self.closed = 0
        self.held = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._calls_seen = 0
        self._looked = time.monotonic()
        #: streams each connection (``host:port``) had started when last looked at
        self._streams: dict[str, tuple[float, int]] = {}
        #: held connections, by inode: when each is to be shut down
        self._holding: dict[int, tuple[float, Connection]] = {}
        #: connections of one address the referee may close in a minute (0: no limit);
        #: those the guard closes itself (over a cap, held) do not count
        self.closed_per_peer = closed_per_peer
        self._shut: list[tuple[float, str]] = []
        #: banned addresses: until when
        self.bans: dict[str, float] = {}
        self._filtered: list[str] = []

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
        """One look: hold what opens streams too fast, shut down what was held long
        enough and what is over the caps; how many were shut down."""
        self._release_held()
        connections: list[Connection] | None = None
        if self.calls is not None and self.streams_per_s > 0:
            calls = self.calls()
            now = time.monotonic()
            quiet = calls - self._calls_seen <= 2 * self.streams_per_s + self.streams_per_s * (
                now - self._looked
            )
            self._calls_seen, self._looked = calls, now
            if not quiet:  # enough new calls that one connection may be over its rate
                connections = referee_connections(self.port)
                self._hold_churning(connections, now)
            elif self._streams:
                self._streams.clear()
        if connections is None:
            connections = referee_connections(self.port)
        self._hold_streamless(connections)
        self._ban_churning()
        self._apply_bans()
        if len(connections) <= min(self.per_peer, self.total):
            return 0  # nothing can be over a cap
        going = over_cap(connections, self.per_peer, self.total, self.keep())
        closed = sum(self._shut_down(c) for c in going)
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

    def _hold_churning(self, connections: list[Connection], now: float) -> None:
        """Hold the connections whose own count of streams (gRPC's, through channelz)
        grew faster than ``streams_per_s`` (twice as many at once) since last looked."""
        counts = channelz_streams()
        ours = {c.peer: c for c in connections}
        seen: dict[str, tuple[float, int]] = {}
        for peer, started in counts.items():
            connection = ours.get(peer)
            if connection is None:
                continue
            seen[peer] = (now, started)
            before = self._streams.get(peer)
            if before is None:
                continue
            allowed = 2 * self.streams_per_s + self.streams_per_s * (now - before[0])
            if started - before[1] > allowed:
                log.warning(
                    "holding %s: %d new streams in %.1f s (at most %g a second)",
                    peer,
                    started - before[1],
                    now - before[0],
                    self.streams_per_s,
                )
                self._hold(connection)
                self._ban(connection.host, "streams reset before any handler ran")
        self._streams = seen

    def _hold_streamless(self, connections: list[Connection]) -> None:
        """Hold, and ban the address of, a connection that has sent more than
        STREAMLESS_BYTES without opening a stream (a bot's stream is spared the look)."""
        kept = self.keep()
        heavy = {
            c.peer: c
            for c in connections
            if c.peer not in kept
            and c.inode not in self._holding
            and received_bytes(c) > STREAMLESS_BYTES
        }
        if not heavy:
            return
        for peer, started in channelz_streams(set(heavy)).items():
            if started == 0:
                connection = heavy[peer]
                log.warning(
                    "holding %s: %d bytes sent and no stream", peer, received_bytes(connection)
                )
                self._hold(connection)
                self._ban(connection.host, "bytes sent and no stream")

    def _ban_churning(self) -> None:
        """Ban the addresses whose connections the referee closed more than
        ``closed_per_peer`` times in the last minute (the guard's own closes aside)."""
        if self.closed_per_peer <= 0:
            return
        now = time.monotonic()
        with self._lock:
            self._shut = [(t, h) for t, h in self._shut if now - t < 60.0]
            ours = Counter(h for _, h in self._shut)
        for host, count in closed_by_us(self.port).items():
            if count - ours[host] > self.closed_per_peer and host not in self.bans:
                self._ban(host, f"{count} of its connections closed in a minute")

    def _shut_down(self, connection: Connection) -> bool:
        """``shut_down``, noted: what the guard closes itself is not the peer's churn."""
        with self._lock:
            self._shut.append((time.monotonic(), connection.host))
        return shut_down(connection)

    def _ban(self, host: str, why: str) -> None:
        """Ban ``host`` for BAN_S (an IPv4 address; others are only held)."""
        try:
            socket.inet_aton(host)
        except OSError:
            return
        new = host not in self.bans
        self.bans[host] = time.monotonic() + BAN_S
        self._apply_bans()
        if new:  # said once the filter is on: from this line on, it is not accepted
            log.warning("banning %s for %g s: %s", host, BAN_S, why)

    def _apply_bans(self) -> None:
        """The listening socket's filter, made anew when the banned addresses change."""
        now = time.monotonic()
        for host, until in list(self.bans.items()):
            if until <= now:
                del self.bans[host]
                log.info("%s is no longer banned", host)
        banned = sorted(self.bans)
        if banned == self._filtered:
            return
        listener = listening_socket(self.port)
        if listener is not None and _attach(listener.fd, ban_filter(banned) if banned else None):
            self._filtered = banned

    def _hold(self, connection: Connection) -> None:
        with self._lock:
            if connection.inode in self._holding:
                return
            if hold(connection):
                self.held += 1
                self._holding[connection.inode] = (time.monotonic() + HOLD_S, connection)

    def _release_held(self) -> None:
        """Shut down the connections held for HOLD_S."""
        now = time.monotonic()
        with self._lock:
            due = [c for when, c in self._holding.values() if when <= now]
            for connection in due:
                del self._holding[connection.inode]
        for connection in due:
            if self._shut_down(connection):
                self.closed += 1

    def drop(self, peer: str) -> None:
        """Hold the connection of ``peer`` (a call's peer), from a thread: finding it
        reads /proc, which the loop does not wait for."""
        threading.Thread(target=self._drop, args=(peer,), daemon=True).start()

    def _drop(self, peer: str) -> None:
        host, port = _split_peer(peer)
        for connection in referee_connections(self.port):
            if connection.host == host and connection.port == port:
                self._hold(connection)


def channelz_streams(wanted: set[str] | None = None) -> dict[str, int]:
    """Streams each connection of this process's gRPC servers has started, by its peer
    (``host:port``), from gRPC's channelz (a stream reset before its handler runs is
    counted there too); only those of ``wanted`` if given (each costs a look)."""
    from grpc._cython import cygrpc

    found: dict[str, int] = {}
    try:
        servers = json.loads(cygrpc.channelz_get_servers(0)).get("server", [])
    except Exception:  # channelz off, or an older gRPC
        return found
    for server in servers:
        server_id = int(server["ref"]["serverId"])
        start = 0
        while True:
            page = json.loads(cygrpc.channelz_get_server_sockets(server_id, start, 1000))
            refs = page.get("socketRef", [])
            for ref in refs:
                name = ref.get("name", "")
                if " " not in name:
                    continue
                host, port = _split_peer(name.split(" ", 1)[1])
                peer = f"{host}:{port}"
                if wanted is not None and peer not in wanted:
                    continue
                data = json.loads(cygrpc.channelz_get_socket(int(ref["socketId"])))
                started = data.get("socket", {}).get("data", {}).get("streamsStarted", 0)
                found[peer] = int(started)
            if page.get("end", True) or not refs:
                break
            start = int(refs[-1]["socketId"]) + 1
    return found


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


#: a bot cut for flooding waits this long before it may connect again, doubled at each
#: further cut (up to BENCH_MAX_S), forgotten after BENCH_FORGET_S without one
BENCH_FIRST_S = 2.0
BENCH_MAX_S = 60.0
BENCH_FORGET_S = 300.0


class Bench:
    """Bots cut for flooding, kept out for a while: a bot that floods and reconnects at
    once would otherwise cost the referee a Hello, a token lookup, a Welcome and a new
    message budget every time (its reconnect loop took honest matches to half their
    speed). The wait doubles with each cut and is forgotten after a quiet spell."""

    def __init__(self) -> None:
        #: bot id -> (when it may connect again, the wait it was given)
        self._until: dict[str, tuple[float, float]] = {}

    def cut(self, bot_id: str, now: float | None = None) -> float:
        """``bot_id`` was closed for a flood: how long it is kept out (seconds)."""
        now = time.monotonic() if now is None else now
        until, wait = self._until.get(bot_id, (0.0, 0.0))
        fresh = now - until > BENCH_FORGET_S
        wait = BENCH_FIRST_S if fresh or wait == 0 else min(BENCH_MAX_S, 2 * wait)
        self._until[bot_id] = (now + wait, wait)
        if len(self._until) > 10_000:  # bounded: the oldest (long since free) go first
            for key, (when, _) in sorted(self._until.items(), key=lambda kv: kv[1][0])[:5000]:
                if when < now:
                    del self._until[key]
        return wait

    def left(self, bot_id: str, now: float | None = None) -> float:
        """Seconds before ``bot_id`` may connect again (0: now)."""
        now = time.monotonic() if now is None else now
        until, _ = self._until.get(bot_id, (0.0, 0.0))
        return max(0.0, until - now)
