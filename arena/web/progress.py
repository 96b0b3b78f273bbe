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

Shared by every viewer (:class:`TournamentHub`): one look at the store per tournament
watched, and one render per change (in a worker thread, not on the event loop), whose
bytes go to every stream open on it; a big tournament's renders are spaced out after a
costly one. A page's cost does not grow with the number of its viewers.

A stream ends when the tournament is no longer ``created`` or ``running`` (after the
event that shows it so), after :data:`STREAM_S` seconds in any case (the browser then
connects again by itself), and when the server is asked to stop: uvicorn waits for open
answers before it stops, and tells the app nothing, so :func:`end_streams_on_signal`
chains a handler before uvicorn's own for SIGINT and SIGTERM.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool

from arena.store import Store
from arena.web import streams

log = logging.getLogger(__name__)

#: how often the store is looked at, per tournament watched
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


#: the most tournament streams open at once, by default (``arena web`` option)
STREAMS = 200
#: after a render that took t seconds, the next waits at least RENDER_GAP x t (at most
#: RENDER_GAP_MAX seconds): a big tournament's page costs the web a tenth of a core at
#: most, whatever changes and however many watch
RENDER_GAP = 9.0
RENDER_GAP_MAX = 15.0


class _Watch:
    """One tournament's page, looked at and rendered for every stream open on it."""

    def __init__(self, tournament_id: str) -> None:
        self.tournament_id = tournament_id
        self.streams = 0
        #: the latest event (its id, the render's number) and whether it can still change
        self.event: bytes | None = None
        self.event_id = ""
        self.version = 0
        self.live = True
        self.gone = False
        self.changed = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.renders = 0

    def notify(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()


class TournamentHub:
    """The event streams of tournament pages (``/api/tournaments/ID/events``): one
    look at the store every ``poll_s`` seconds per tournament watched, and one render
    per change for every stream open on it (``render(tournament_id)``: the event's data,
    made in a worker thread, off the event loop), throttled after a costly one
    (:data:`RENDER_GAP`); at most ``streams`` streams in all (:meth:`admit`). The
    render's data has the ``status`` and ``progress`` (matches by status, sorted) it
    shows: a look that finds the same is no change."""

    def __init__(
        self,
        store: Store,
        render: Callable[[str], dict[str, Any]],
        stopping: threading.Event,
        poll_s: float = POLL_S,
        streams: int = STREAMS,
        stream_s: float = STREAM_S,
    ) -> None:
        self.store = store
        self.render = render
        self.stopping = stopping
        self.poll_s = poll_s
        self.stream_s = stream_s
        self.max_streams = streams
        self.open = 0
        self.watches: dict[str, _Watch] = {}
        #: every render made, of any tournament: an event's id (never reused)
        self.renders = 0

    def admit(self) -> Callable[[], None] | None:
        """A place for one more stream (call what it returns, once, when it ends), or
        None when as many are open as the app takes."""
        if self.open >= self.max_streams:
            return None
        self.open += 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.open -= 1

        return release

    def stop(self) -> None:
        """The server is stopping: every stream ends now (from the event loop)."""
        for watch in self.watches.values():
            watch.notify()

    async def _follow(self, watch: _Watch) -> None:
        """:meth:`_look` until it returns; a failure ends the streams (the log says
        why: the browsers connect again by themselves)."""
        try:
            await self._look(watch)
        except Exception:
            log.exception("following tournament %s", watch.tournament_id)
            watch.gone = True
            watch.notify()

    async def _look(self, watch: _Watch) -> None:
        """Looks at the tournament every poll_s seconds while a stream is open on it;
        renders it once per change (not sooner than the throttle allows)."""
        last: object = None
        not_before = 0.0
        while not self.stopping.is_set():
            now = await run_in_threadpool(state, self.store, watch.tournament_id)
            if now is None:
                watch.gone = True
                watch.notify()
                return
            if now != last:
                wait = not_before - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                began = time.monotonic()
                payload = await run_in_threadpool(self.render, watch.tournament_id)
                cost = time.monotonic() - began
                not_before = time.monotonic() + min(RENDER_GAP_MAX, RENDER_GAP * cost)
                self.renders += 1
                watch.renders += 1
                watch.version = self.renders
                text = orjson.dumps(payload).decode()
                # the render's number, then what it shows (a browser that has it is not
                # sent it again, whichever render made it)
                digest = hashlib.sha256(text.encode()).hexdigest()[:16]
                watch.event_id = f"{watch.version}.{digest}"
                watch.event = f"id: {watch.event_id}\nevent: tournament\ndata: {text}\n\n".encode()
                # what was rendered (the store may have moved on since the look)
                last = (payload["status"], tuple(payload["progress"].items()))
                watch.live = payload["status"] in LIVE
                watch.notify()
                if not watch.live:
                    return
            await asyncio.sleep(self.poll_s)
        watch.notify()

    def _watch(self, tournament_id: str) -> _Watch:
        watch = self.watches.get(tournament_id)
        if watch is None or watch.task is None or (watch.task.done() and watch.live):
            watch = self.watches[tournament_id] = _Watch(tournament_id)
            watch.task = asyncio.create_task(self._follow(watch), name=f"follow {tournament_id}")
        return watch

    async def stream(self, tournament_id: str, last_id: str | None = None) -> AsyncIterator[bytes]:
        """The event stream of one tournament (its full id): a ``tournament`` event (its
        ``id``: the render's number and a digest of what it shows) at once and at each
        change, ``end`` once it can no longer change; at most :attr:`stream_s` seconds,
        and it ends when the server stops. ``last_id`` (the browser's Last-Event-ID,
        when it connects again): what it shows already is not sent again."""
        yield f"retry: {RETRY_MS}\n\n".encode()
        watch = self._watch(tournament_id)
        watch.streams += 1
        # the content the browser has (an id's part after the render's number)
        seen = (last_id or "").rpartition(".")[2] or None
        started = quiet = time.monotonic()
        try:
            while True:
                changed = watch.changed
                shows = watch.event_id.rpartition(".")[2]
                if watch.event is not None and shows != seen:
                    yield watch.event
                    seen, quiet = shows, time.monotonic()
                if watch.gone:
                    return
                if watch.event is not None and not watch.live:
                    yield b"event: end\ndata: {}\n\n"
                    return
                left = self.stream_s - (time.monotonic() - started)
                if self.stopping.is_set() or left <= 0:
                    return
                try:
                    await asyncio.wait_for(changed.wait(), min(left, KEEPALIVE_S))
                except TimeoutError:
                    if time.monotonic() - quiet >= KEEPALIVE_S:
                        yield b": still here\n\n"
                        quiet = time.monotonic()
        finally:
            watch.streams -= 1
            if not watch.streams:
                if self.watches.get(tournament_id) is watch:
                    del self.watches[tournament_id]
                if watch.task is not None:
                    watch.task.cancel()
                streams.give_memory_back()
