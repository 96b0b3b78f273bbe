"""How the web sends an event stream (a live match, a tournament's page): an answer of
its own, :class:`EventStream`, rather than Starlette's ``StreamingResponse``, for three
things a crowd needs:

* **Small writes.** A piece is written at most :data:`WRITE_BYTES` at a time, and the
  server (uvicorn) waits before each write until the connection's buffer has gone out
  below its mark: a browser that reads slowly holds about that much of the web's
  memory, not a copy of a whole start.
* **A write that stalls ends the stream.** A browser that stops reading altogether
  leaves a write waiting; after :data:`STALL_S` seconds the answer is given up (the
  server closes the connection), so its place and memory come back.
* **A release that always runs.** ``release`` (the place a cap gave the stream) is
  called however the answer ends: the stream's end, the browser leaving, a stall, the
  server stopping, or an answer that was never sent at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
from collections.abc import AsyncIterator, Callable, Mapping

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

try:  # glibc's: hands freed memory back to the system (elsewhere: nothing to do)
    _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
except (OSError, AttributeError):
    _malloc_trim = None

#: the most bytes written at once
WRITE_BYTES = 64 * 1024
#: a write waiting this long for the browser to read ends the stream (seconds)
STALL_S = 30.0


class EventStream(Response):
    """``text/event-stream`` from ``chunks`` (see the module's doc)."""

    media_type = "text/event-stream"

    def __init__(
        self,
        chunks: AsyncIterator[bytes],
        headers: Mapping[str, str] | None = None,
        release: Callable[[], None] | None = None,
        stall_s: float = STALL_S,
        status_code: int = 200,
    ) -> None:
        self.chunks = chunks
        self.status_code = status_code
        self.background = None
        self.release = release
        self.stall_s = stall_s
        self.init_headers({"x-accel-buffering": "no", **(headers or {})})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            streaming = asyncio.ensure_future(self._stream(send))
            listening = asyncio.ensure_future(self._listen(receive))
            try:
                await asyncio.wait({streaming, listening}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (streaming, listening):
                    task.cancel()
                await asyncio.gather(streaming, listening, return_exceptions=True)
                closing = getattr(self.chunks, "aclose", None)
                if closing is not None:
                    with contextlib.suppress(Exception):
                        await closing()
        finally:
            if self.release is not None:
                self.release()

    async def _listen(self, receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    async def _stream(self, send: Send) -> None:
        async def sent(message: dict[str, object]) -> bool:
            """Sends ``message``; False when the browser has not read for stall_s."""
            try:
                await asyncio.wait_for(send(message), self.stall_s)
            except TimeoutError:
                return False
            return True

        start = {
            "type": "http.response.start",
            "status": self.status_code,
            "headers": self.raw_headers,
        }
        if not await sent(start):
            return
        async for chunk in self.chunks:
            view = memoryview(chunk)
            for at in range(0, len(view), WRITE_BYTES):
                body = view[at : at + WRITE_BYTES] if len(view) > WRITE_BYTES else chunk
                if not await sent({"type": "http.response.body", "body": body, "more_body": True}):
                    return
        await sent({"type": "http.response.body", "body": b"", "more_body": False})


def give_memory_back() -> None:
    """Once a crowd has gone (the last watcher of a match, the last stream of a
    tournament page): the memory its streams used, freed, handed back to the system.
    glibc keeps freed memory for the process to use again, so without this the web's
    RSS stays at its peak long after the crowd has left."""
    if _malloc_trim is not None:
        _malloc_trim(0)
