"""The live view: a running match's frames, pushed to browsers as server-sent events.

The referee's ``WatchMatch`` stream gives, after each step, its public events and the
position as a spectator may see it (``State.spectator_view``), and first where the
match stands. One :class:`Feed` per watched match reads that stream once for every
browser watching it and turns it into frames (:mod:`arena.web.frames`: the same
deltas, and for Risk the odds a battle had when it began) that it hands to each
browser's queue. A browser's stream (:meth:`LiveHub.stream`) sends what queued as one
event at most every :data:`SEND_EVERY` seconds, so a fast match costs the web a write
per browser per interval, not per step.

Everything sent comes from the referee's spectator messages (only public facts), the
match's players and the map's names.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from arena.web import frames

#: a browser gets what queued at most this often (seconds)
SEND_EVERY = 0.1


def _event(kind: str, text: str) -> bytes:
    """One server-sent event (``text`` is JSON: one line)."""
    return f"event: {kind}\ndata: {text}\n\n".encode()


@dataclass
class Part:
    """One frame as JSON texts: its keyframe (every KEYFRAME_EVERY frames), its delta,
    its log entry; joined with others into one ``frames`` event."""

    keyframe: str | None
    delta: str
    log: str


def _join(parts: list[Part]) -> str:
    keyframes = ",".join(p.keyframe for p in parts if p.keyframe is not None)
    deltas = ",".join(p.delta for p in parts)
    logs = ",".join(p.log for p in parts)
    return f'{{"keyframes":[{keyframes}],"deltas":[{deltas}],"log":[{logs}]}}'


@dataclass
class Feed:
    """One running match as the referee streams it to spectators, and the browsers
    watching it (each a queue of parts; None ends it)."""

    match_id: str
    referee: str
    head: dict[str, Any]  # game, players, board: what the start event says besides frames
    watchers: set[asyncio.Queue[Any]] = field(default_factory=set)
    parts: list[Part] = field(default_factory=list)
    base: int | None = None
    last: dict[str, Any] | None = None
    ended: str | None = None  # the end event's JSON, once the match has ended
    problem: str | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    odds: frames.RiskOdds | None = None

    def __post_init__(self) -> None:
        self.odds = frames.RiskOdds() if self.head["game"] == "risk" else None

    async def run(self) -> None:
        import grpc

        from arena.v1 import arena_pb2 as pb
        from arena.v1 import arena_pb2_grpc as pb_grpc

        try:
            async with grpc.aio.insecure_channel(self.referee) as channel:
                stub = pb_grpc.ArenaServiceStub(channel)
                stream = stub.WatchMatch(pb.WatchMatchRequest(match_id=self.match_id))
                async for message in stream:
                    if message.HasField("finished"):
                        info = message.finished
                        self._end({"status": info.status, "reason": info.result.reason})
                        return
                    self._add(message.events)
            self._stop(f"the referee at {self.referee} ended the stream before the match")
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                self._stop(
                    f"the referee at {self.referee} is not playing match {self.match_id}: "
                    "it may be played by another referee"
                )
            else:
                self._stop(f"the referee at {self.referee} did not answer: {exc.details()}")

    def _add(self, message: Any) -> None:
        events = [orjson.loads(text) for text in message.events_json]
        view = orjson.loads(message.view_json) if message.view_json else None
        if view is None:
            return
        if self.base is None or self.last is None:  # where watching begins
            self.base = message.steps
            seen = self.odds.annotate(events) if self.odds else events
            part = Part(orjson.dumps(view).decode(), "{}", orjson.dumps([None, seen]).decode())
        else:
            index = message.steps - self.base
            if self.odds is not None:
                self.odds.before_step(self.last, None)
            seen = self.odds.annotate(events) if self.odds else events
            keyframe = orjson.dumps(view).decode() if index % frames.KEYFRAME_EVERY == 0 else None
            # the seat that acted: the one whose decision it was
            entry = [self.last.get("player"), seen]
            part = Part(
                keyframe,
                orjson.dumps(frames.delta(self.last, view)).decode(),
                orjson.dumps(entry).decode(),
            )
        self.last = view
        self.parts.append(part)
        for queue in self.watchers:
            queue.put_nowait(part)
        self.ready.set()

    def _end(self, end: dict[str, Any]) -> None:
        self.ended = orjson.dumps(end).decode()
        self._close()

    def _stop(self, why: str) -> None:
        self.problem = orjson.dumps({"detail": why}).decode()
        self._close()

    def _close(self) -> None:
        self.ready.set()
        for queue in self.watchers:
            queue.put_nowait(None)

    def start_event(self) -> bytes:
        """Everything so far: the frames from where this feed began watching."""
        doc = _join(self.parts)
        head = orjson.dumps(
            {**self.head, "base": self.base or 0, "keyframe_every": frames.KEYFRAME_EVERY}
        ).decode()
        return _event("start", f"{head[:-1]},{doc[1:]}")


def _drain(queue: asyncio.Queue[Any]) -> list[Any]:
    items = []
    while not queue.empty():
        items.append(queue.get_nowait())
    return items


class LiveHub:
    """The feeds of the matches browsers watch, on one referee."""

    def __init__(self, referee: str) -> None:
        self.referee = referee
        self.feeds: dict[str, Feed] = {}

    async def stream(self, match_id: str, head: dict[str, Any]) -> AsyncIterator[bytes]:
        """A browser's server-sent events: ``start`` (the frames so far), then
        ``frames`` as the match is played, then ``end`` or ``problem``."""
        feed = self.feeds.get(match_id)
        if feed is None or feed.task is None or feed.task.done():
            feed = self.feeds[match_id] = Feed(match_id, self.referee, head)
            feed.task = asyncio.create_task(feed.run(), name=f"watch {match_id}")
        queue: asyncio.Queue[Any] = asyncio.Queue()
        feed.watchers.add(queue)
        try:
            yield b": watching\n\n"  # the response starts at once
            await feed.ready.wait()
            if feed.parts:
                start = feed.start_event()
                _drain(queue)  # the start holds these: the queue keeps what comes next
                yield start
            while True:
                waited = []
                if feed.ended is None and feed.problem is None:
                    waited.append(await queue.get())  # the next frame, or None: the end
                batch = [part for part in waited + _drain(queue) if part is not None]
                if batch:
                    yield _event("frames", _join(batch))
                if feed.ended is not None or feed.problem is not None:
                    break
                await asyncio.sleep(SEND_EVERY)
            if feed.ended is not None:
                yield _event("end", feed.ended)
            elif feed.problem is not None:
                yield _event("problem", feed.problem)
        finally:
            feed.watchers.discard(queue)
            if not feed.watchers and feed.task is not None and not feed.task.done():
                feed.task.cancel()  # nobody watches: stop reading the referee
                with contextlib.suppress(asyncio.CancelledError):
                    await feed.task
            if self.feeds.get(match_id) is feed and not feed.watchers:
                del self.feeds[match_id]

    async def close(self) -> None:
        for feed in list(self.feeds.values()):
            if feed.task is not None:
                feed.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await feed.task
        self.feeds.clear()
