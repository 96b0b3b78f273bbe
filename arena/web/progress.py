"""A tournament's page as it is played: server-sent events from
``/api/tournaments/ID/events``.

The server looks at the store every :data:`POLL_S` seconds, cheaply (the tournament's
row and its matches counted by status, one index range), and pushes the live part of
the page (``_tournament_live.html``: status, progress, standings, crosstable, matches)
when that look differs from the last one, and once at the start. The page's script puts
it in place; without JavaScript the page is the same, as of when it was loaded.

What is pushed is the page itself, rendered from :func:`arena.web.data.tournament`, so
it shows exactly what a reload would show: nothing of a running tournament's seeds and
replays (:mod:`arena.web.visibility`).

A stream ends when the tournament is no longer ``created`` or ``running`` (after the
event that shows it so), after :data:`STREAM_S` seconds in any case (the browser then
connects again by itself), and when the server is asked to stop: uvicorn waits for open
answers before it stops, and tells the app nothing, so :func:`end_streams_on_signal`
chains a handler before uvicorn's own for SIGINT and SIGTERM.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool

from arena.store import Store
from arena.web import data

#: how often the store is looked at, per stream
POLL_S = 1.0
#: a comment line this often keeps proxies from closing a quiet stream
KEEPALIVE_S = 15.0
#: the longest one stream lasts (the browser connects again after RETRY_MS)
STREAM_S = 60.0
RETRY_MS = 1000
#: the statuses in which a tournament may still change
LIVE = ("created", "running")


def end_streams_on_signal(
    stopping: threading.Event, then: Callable[[], None] | None = None
) -> None:
    """Set ``stopping`` when the process gets SIGINT or SIGTERM, call ``then`` (say, to
    end the streams that wait on their own events), then do what was done before
    (uvicorn's handler: stop serving, once every response has ended). Only the main
    thread can do this (a server run by ``uvicorn.run`` starts its app there; a test
    client does not)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for number in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(number)

        def handler(signum: int, frame: Any, previous: Any = previous) -> None:
            stopping.set()
            if then is not None:
                then()
            if callable(previous):
                previous(signum, frame)
            elif previous == signal.SIG_DFL and signum == signal.SIGINT:
                raise KeyboardInterrupt

        signal.signal(number, handler)


def state(store: Store, tournament_id: str) -> tuple[str, tuple[tuple[str, int], ...]] | None:
    """What a change of the page shows in: the status and the matches by status."""
    t = store.tournament(tournament_id)
    if t is None:
        return None
    return t.status, tuple(sorted(store.progress(t.id).items()))


async def tournament_events(
    store: Store,
    render: Callable[[dict[str, Any]], str],
    tournament_id: str,
    stopping: threading.Event,
    poll_s: float = POLL_S,
    stream_s: float = STREAM_S,
) -> AsyncIterator[str]:
    """The event stream of one tournament (its full id): ``tournament`` events with the
    rendered live part, ``end`` once it can no longer change; it stops early when
    ``stopping`` is set (the server stopping)."""
    yield f"retry: {RETRY_MS}\n\n"
    last: object = None
    started = quiet = time.monotonic()
    while True:
        now = await run_in_threadpool(state, store, tournament_id)
        if now is None:
            return
        if now != last:
            t = await run_in_threadpool(data.tournament, store, tournament_id)
            payload = {
                "status": t["status"],
                "matches": t["matches"],
                "finished_matches": t["finished_matches"],
                "progress": t["progress"],
                "html": render(t),
            }
            yield f"event: tournament\ndata: {orjson.dumps(payload).decode()}\n\n"
            last, quiet = now, time.monotonic()
            if now[0] not in LIVE:
                yield "event: end\ndata: {}\n\n"
                return
        if stopping.is_set() or time.monotonic() - started > stream_s:
            return
        if time.monotonic() - quiet > KEEPALIVE_S:
            yield ": still here\n\n"
            quiet = time.monotonic()
        await asyncio.sleep(poll_s)
