"""Crowds and attackers for ``arena web``, over real sockets: what its tests
(``tests/web/test_crowds.py``) and its benchmark (``benchmarks/web_crowds.py``) put on a
running server.

* :class:`Readers`: many clients of event streams (a live match, a tournament page) in
  one event loop of their own, each reading, or stopping to read, and keeping what it
  got;
* :class:`Slowloris`: connections that each send a request's head a few bytes at a
  time and never finish it, opened again when the server closes them;
* :class:`Timer`: a client that asks for a normal page again and again and keeps how
  long each answer took;
* :func:`rss_mb`: a process's resident memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path


def rss_mb(pid: int) -> float:
    """The resident memory of process ``pid`` (MB)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def more_open_files(wanted: int) -> None:
    """This process's soft limit of open files raised to ``wanted`` (within the hard
    limit): a crowd of a thousand connections needs them on the client side too."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))


@dataclass
class Reader:
    """One client of an event stream."""

    path: str
    deflate: bool = False
    #: stop reading after this many bytes (None: read on), until ``resume`` is set
    stall_after: int | None = None
    resume: threading.Event = field(default_factory=threading.Event)
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytearray = field(default_factory=bytearray)
    #: when each chunk came (time.monotonic) and its size
    arrivals: list[tuple[float, int]] = field(default_factory=list)
    done: bool = False
    error: str | None = None
    #: keep the body (off: only count what came, as a crowd in a benchmark)
    keep: bool = True
    received: int = 0

    def events(self) -> list[bytes]:
        """The events received (comments left out), each as sent."""
        return [e + b"\n\n" for e in bytes(self.body).split(b"\n\n") if e and e[:1] != b":"]


class Readers:
    """Clients of event streams on ``host:port``, run in an event loop of their own (a
    thread): :meth:`add` one, :meth:`close` them all."""

    def __init__(self, host: str, port: int, receive_buffer: int | None = None) -> None:
        self.host, self.port = host, port
        self.receive_buffer = receive_buffer
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.readers: list[Reader] = []
        self._tasks: set[asyncio.Task[None]] = set()

    def add(self, reader: Reader, headers: dict[str, str] | None = None) -> Reader:
        self.readers.append(reader)
        asyncio.run_coroutine_threadsafe(self._read(reader, headers or {}), self.loop)
        return reader

    async def _read(self, reader: Reader, headers: dict[str, str]) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        sock = socket.socket()
        if self.receive_buffer or reader.stall_after is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.receive_buffer or 4096)
        sock.setblocking(False)
        try:
            await self.loop.sock_connect(sock, (self.host, self.port))
            accept = "deflate" if reader.deflate else "identity"
            lines = [
                f"GET {reader.path} HTTP/1.1",
                f"Host: {self.host}",
                f"Accept-Encoding: {accept}",
            ]
            lines += [f"{k}: {v}" for k, v in headers.items()]
            await self.loop.sock_sendall(sock, ("\r\n".join(lines) + "\r\n\r\n").encode())
            raw = b""
            while b"\r\n\r\n" not in raw:
                chunk = await self.loop.sock_recv(sock, 65536)
                if not chunk:
                    raise ConnectionError("closed before the head")
                raw += chunk
            head, rest = raw.split(b"\r\n\r\n", 1)
            first, *fields = head.decode("latin-1").split("\r\n")
            reader.status = int(first.split()[1])
            reader.headers = {
                k.strip().lower(): v.strip() for k, v in (f.split(":", 1) for f in fields)
            }
            chunked = reader.headers.get("transfer-encoding") == "chunked"
            inflater = zlib.decompressobj() if reader.headers.get("content-encoding") else None
            got = 0
            decoder = _Chunks() if chunked else None
            data = rest
            while True:
                if data:
                    got += len(data)
                    reader.received = got
                    reader.arrivals.append((time.monotonic(), len(data)))
                    if reader.keep:
                        payload = decoder.feed(data) if decoder else data
                        reader.body += inflater.decompress(payload) if inflater else payload
                        if decoder is not None and decoder.ended:
                            break
                    elif data.endswith(b"\r\n0\r\n\r\n"):  # the last chunk
                        break
                if reader.stall_after is not None and got >= reader.stall_after:
                    while not reader.resume.is_set():
                        await asyncio.sleep(0.1)
                    reader.stall_after = None
                data = await self.loop.sock_recv(sock, 65536)
                if not data:
                    break
        except Exception as exc:
            reader.error = f"{type(exc).__name__}: {exc}"
        finally:
            reader.done = True
            sock.close()

    def wait(self, timeout_s: float) -> bool:
        """Whether every reader ended within ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if all(r.done for r in self.readers):
                return True
            time.sleep(0.1)
        return False

    def close(self) -> None:
        """Every reader stops and its connection is closed, then the loop ends."""

        async def stop_all() -> None:
            tasks = list(self._tasks)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop_all(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


class _Chunks:
    """HTTP/1.1 chunked transfer coding, decoded as it comes."""

    def __init__(self) -> None:
        self.buffer = b""
        self.ended = False

    def feed(self, data: bytes) -> bytes:
        self.buffer += data
        out = bytearray()
        while True:
            line, sep, rest = self.buffer.partition(b"\r\n")
            if not sep:
                break
            size = int(line.split(b";")[0] or b"0", 16)
            if len(rest) < size + 2:
                break
            out += rest[:size]
            self.buffer = rest[size + 2 :]
            if size == 0:
                self.ended = True
                break
        return bytes(out)


class Slowloris:
    """``count`` connections to ``host:port`` that each send the start of a request's
    head and then one more header line every ``every_s`` seconds, never its end; one
    the server closes is opened again (as an attacker would), in a thread."""

    def __init__(self, host: str, port: int, count: int, every_s: float = 1.0) -> None:
        self.host, self.port, self.count, self.every_s = host, port, count, every_s
        self.opened = self.closed = self.refused = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._socks: dict[socket.socket, int] = {}

    def __enter__(self) -> Slowloris:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        for sock in self._socks:
            sock.close()

    @property
    def open(self) -> int:
        return len(self._socks)

    def _open(self) -> None:
        sock = socket.socket()
        sock.settimeout(2)
        try:
            sock.connect((self.host, self.port))
            sock.sendall(f"GET / HTTP/1.1\r\nHost: {self.host}\r\n".encode())
        except OSError:
            self.refused += 1
            sock.close()
            return
        sock.setblocking(False)
        self._socks[sock] = 0
        self.opened += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            while len(self._socks) < self.count and not self._stop.is_set():
                self._open()
            began = time.monotonic()
            for sock in list(self._socks):
                try:
                    if sock.recv(4096) == b"":
                        raise ConnectionError
                except BlockingIOError:
                    pass
                except OSError:
                    self._drop(sock)
                    continue
                try:
                    number = self._socks[sock] = self._socks[sock] + 1
                    sock.send(f"X-a{number}: b\r\n".encode())
                except BlockingIOError:
                    pass
                except OSError:
                    self._drop(sock)
            self._stop.wait(max(0.0, self.every_s - (time.monotonic() - began)))

    def _drop(self, sock: socket.socket) -> None:
        del self._socks[sock]
        sock.close()
        self.closed += 1


class Timer:
    """Asks for ``path`` every ``every_s`` seconds on a connection of its own (a new one
    each time, as a browser that comes along would), in a thread; keeps each answer's
    time, or ``timeout_s`` for one that did not come."""

    def __init__(
        self, host: str, port: int, path: str, every_s: float = 0.2, timeout_s: float = 10.0
    ) -> None:
        self.host, self.port, self.path = host, port, path
        self.every_s, self.timeout_s = every_s, timeout_s
        self.times: list[float] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Timer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=self.timeout_s + 5)

    def _run(self) -> None:
        while not self._stop.is_set():
            began = time.monotonic()
            connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
            try:
                connection.request("GET", self.path)
                answer = connection.getresponse()
                answer.read()
                if answer.status != 200:
                    self.failures.append(f"{answer.status}")
                self.times.append(time.monotonic() - began)
            except OSError as exc:
                self.failures.append(f"{type(exc).__name__}: {exc}")
                self.times.append(max(self.timeout_s, time.monotonic() - began))
            finally:
                connection.close()
            self._stop.wait(max(0.0, self.every_s - (time.monotonic() - began)))

    def summary(self) -> dict[str, float]:
        """Answers, their median, 95th percentile and longest (ms), failures."""
        times = sorted(self.times)
        if not times:
            return {"answers": 0, "median_ms": 0.0, "p95_ms": 0.0, "max_ms": 0.0, "failed": 0}
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        return {
            "answers": len(times),
            "median_ms": 1000 * statistics.median(times),
            "p95_ms": 1000 * p95,
            "max_ms": 1000 * times[-1],
            "failed": len(self.failures),
        }


@contextlib.contextmanager
def sampled_rss(pid: int, every_s: float = 0.5) -> Iterator[list[float]]:
    """The RSS of ``pid`` every ``every_s`` seconds meanwhile (MB), in a list."""
    samples: list[float] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                samples.append(rss_mb(pid))
            stop.wait(every_s)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield samples
    finally:
        stop.set()
        thread.join(timeout=5)


@dataclass
class Web:
    """An ``arena web`` process: its base URL, host, port, the process and its log."""

    base: str
    host: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@contextlib.contextmanager
def web_process(
    db: Path | str, *extra: str, log: Path, open_files: int | None = None, timeout_s: float = 60
) -> Iterator[Web]:
    """``arena web`` on the store ``db`` on a free port (``extra``: more flags; its
    standard output and error in ``log``; ``open_files``: its limit of open files, as
    ``ulimit -n`` sets it), once it answers; stopped (SIGTERM) after."""
    from arena.web.browser import free_port, wait_up

    port = free_port()

    def limit() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    with open(log, "wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "arena.cli",
                "web",
                "--db",
                str(db),
                "--port",
                str(port),
                *extra,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=limit,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_up(base, process, timeout_s, log.read_text)
        yield Web(base, "127.0.0.1", port, process, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
