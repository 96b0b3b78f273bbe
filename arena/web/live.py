"""The live view: a running match's frames, pushed to browsers as server-sent events.

The referee's ``WatchMatch`` stream, asked for batches, gives every step's public
events (and whose step it was), with the position as a spectator may see it
(``State.spectator_view``) after the last step of each batch (the steps of 100 ms), and
first where the match stands. One :class:`Feed` per watched match reads that stream once
for every browser watching it and turns it into frames (:mod:`arena.web.frames`: the
same deltas), one per position the referee gave: a slow match's frame is one step, a
fast match's the steps of a batch, each of which its log still lists. A Risk battle
carries the odds it had when it began (:class:`~arena.web.frames.RiskOdds`) when its
step is the first after a frame: the armies are known then; a battle inside a batch
has none (its armies changed where the web could not see). Every :data:`SEND_EVERY`
seconds the frames made since are encoded once, as one ``frames`` event, and queued for
every browser watching (:meth:`LiveHub.stream`): a fast match costs the web one
encoding and a write per browser per interval, and a frame per batch, not per step.

Everything sent comes from the referee's spectator messages (only public facts), the
match's players and the map's names.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from arena.web import frames

#: a browser's queue: each event as sent plain and deflated (b"" if nobody asked), then
#: None for the end
Queue = asyncio.Queue[tuple[bytes, bytes] | None]

log = logging.getLogger(__name__)
#: the largest battle (attacking x defending armies) a live view gives odds for: the web
#: computes them in its event loop as the match is played
LIVE_ODDS_CELLS = 62_500
#: how often the new frames go to the browsers, as one event (seconds)
SEND_EVERY = 0.2


def _event(kind: str, text: str) -> bytes:
    """One server-sent event (``text`` is JSON: one line)."""
    return f"event: {kind}\ndata: {text}\n\n".encode()


def deflate(data: bytes) -> bytes:
    """``data`` as deflate blocks that stand alone (raw deflate, a compressor of its own,
    ending on a byte boundary): a stream of such pieces, in any order that a browser is
    sent them, inflates to the pieces' data, so one piece serves every browser. A
    browser's stream wraps them as HTTP's ``deflate`` coding is (zlib, RFC 1950): a
    header first, and last the final block and the Adler-32 of what it inflates to
    (:class:`Inflatable`)."""
    packer = zlib.compressobj(DEFLATE_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush(zlib.Z_FULL_FLUSH)


class Inflatable:
    """One browser's deflated stream: the pieces it is sent, wrapped as zlib (its header
    first, and at the end the final block and the Adler-32 of all it inflates to; each
    browser starts where it starts, so the checksum is its own)."""

    def __init__(self) -> None:
        self.adler = zlib.adler32(b"")

    def first(self, event: bytes) -> bytes:
        return ZLIB_HEADER + self.piece(event, deflate(event))

    def piece(self, event: bytes, deflated: bytes) -> bytes:
        """``deflated`` (:func:`deflate` of ``event``), counting ``event`` in."""
        self.adler = zlib.adler32(event, self.adler)
        return deflated

    def end(self) -> bytes:
        return DEFLATE_END + self.adler.to_bytes(4, "big")


def accepts_deflate(accept_encoding: str) -> bool:
    """Whether a request's Accept-Encoding takes ``deflate`` (and not with q=0)."""
    for item in accept_encoding.lower().split(","):
        coding, _, params = item.partition(";")
        if coding.strip() in ("deflate", "*"):
            quality = params.strip().removeprefix("q=").strip() if "q=" in params else "1"
            try:
                return float(quality) > 0
            except ValueError:
                return False
    return False


#: the first piece of a deflated stream: zlib's header (deflate, a 32 KB window, fastest)
ZLIB_HEADER = b"\x78\x01"
#: the final block of a deflated stream (empty); zlib's Adler-32 follows it
DEFLATE_END = b"\x03\x00"
#: how hard the web compresses (1: fastest; the frames' JSON shrinks about 7 times)
DEFLATE_LEVEL = 1


@dataclass
class Part:
    """One frame as JSON texts: its keyframe (every KEYFRAME_EVERY frames), its delta, the
    log of the steps it covers (one ``[seat, events]`` each) and its step; joined with
    others into one ``frames`` event."""

    keyframe: str | None
    delta: str
    log: str
    step: int


def _join(parts: list[Part]) -> str:
    keyframes = ",".join(p.keyframe for p in parts if p.keyframe is not None)
    deltas = ",".join(p.delta for p in parts)
    logs = ",".join(p.log for p in parts)
    steps = ",".join(str(p.step) for p in parts)
    return f'{{"keyframes":[{keyframes}],"deltas":[{deltas}],"steps":[{steps}],"log":[{logs}]}}'


@dataclass
class Feed:
    """One running match as the referee streams it to spectators, and the browsers
    watching it (each a queue of encoded events; None ends it)."""

    match_id: str
    referee: str
    head: dict[str, Any]  # game, players, board: what the start event says besides frames
    #: each browser's queue of events (None: the end), each with its deflated bytes if
    #: the browser asked for them deflated (b"" if not), and whether it did
    watchers: dict[Queue, bool] = field(default_factory=dict)
    parts: list[Part] = field(default_factory=list)
    #: how many of ``parts`` the watchers have been sent (the rest go at the next tick)
    sent: int = 0
    base: int | None = None
    #: the position of the last frame
    last: dict[str, Any] | None = None
    #: the log entries (JSON texts) of the steps since the last frame: they go with the
    #: next one (the referee gives a batch's position after its last step only)
    pending: list[str] = field(default_factory=list)
    ended: str | None = None  # the end event's JSON, once the match has ended
    problem: str | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    #: browsers on this feed, waiting for its first frame or watching
    viewers: int = 0
    odds: frames.RiskOdds | None = None

    def __post_init__(self) -> None:
        # the loop computes them as steps come: a battle beyond LIVE_ODDS_CELLS has none
        self.odds = frames.RiskOdds(LIVE_ODDS_CELLS) if self.head["game"] == "risk" else None

    async def run(self) -> None:
        import grpc

        from arena.v1 import arena_pb2 as pb
        from arena.v1 import arena_pb2_grpc as pb_grpc

        ticker = asyncio.create_task(self._tick(), name=f"send {self.match_id}")
        try:
            # the end without its replay (megabytes for a long match, and the web wants
            # only the result); a batch of a fast match with big views may still be large
            options = [("grpc.max_receive_message_length", -1)]
            async with grpc.aio.insecure_channel(self.referee, options=options) as channel:
                stub = pb_grpc.ArenaServiceStub(channel)
                request = pb.WatchMatchRequest(
                    match_id=self.match_id, batches=True, without_replay=True
                )
                async for message in stub.WatchMatch(request):
                    if message.HasField("finished"):
                        info = message.finished
                        self._end({"status": info.status, "reason": info.result.reason})
                        return
                    for events in message.batch.steps or [message.events]:
                        self._add(events)
            self._stop(f"the referee at {self.referee} ended the stream before the match")
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                self._stop(
                    f"the referee at {self.referee} is not playing match {self.match_id}: "
                    "it may be played by another referee"
                )
            else:
                self._stop(f"the referee at {self.referee} did not answer: {exc.details()}")
        except Exception as exc:  # a stream we cannot read: say so, never leave them waiting
            log.exception("watching match %s", self.match_id)
            self._stop(f"the live view of match {self.match_id} failed: {exc}")
        finally:
            ticker.cancel()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(SEND_EVERY)
            self.flush()

    def flush(self) -> None:
        """The frames not sent yet, as one event, to every watcher."""
        if self.sent < len(self.parts):
            event = _event("frames", _join(self.parts[self.sent :]))
            self.sent = len(self.parts)
            deflated = deflate(event) if any(self.watchers.values()) else b""
            for queue in self.watchers:
                queue.put_nowait((event, deflated))

    def _add(self, message: Any) -> None:
        """One step (a MatchEvents): its log entry; a frame if it comes with its position
        (the last step of a referee's batch, or where watching begins)."""
        seat = message.seat if message.HasField("seat") else None
        texts = message.events_json
        if self.base is None:  # where watching begins: a frame whatever its step
            if not message.view_json:
                return
            self.base = message.steps
        odds = self.odds
        # the position before this step is known when it follows a frame
        known = self.last is not None and not self.pending
        if odds is not None:
            if known:
                odds.before_step(self.last, None)  # type: ignore[arg-type]
            else:  # armies the web may not have seen change: no odds until a frame
                odds.armies = None
        if odds is not None and known and texts:
            seen = odds.annotate([orjson.loads(text) for text in texts])
            self.pending.append(orjson.dumps([seat, seen]).decode())
        else:  # the events as the referee wrote them (JSON): nothing to add
            self.pending.append(f"[{'null' if seat is None else seat},[{','.join(texts)}]]")
        if not message.view_json:
            return
        view = orjson.loads(message.view_json)
        index = len(self.parts)
        keyframe = orjson.dumps(view).decode() if index % frames.KEYFRAME_EVERY == 0 else None
        change = "{}" if self.last is None else orjson.dumps(frames.delta(self.last, view)).decode()
        log = f"[{','.join(self.pending)}]"
        if "\n" in log or "\r" in log:  # the referee's JSON spaced out: an event is one line
            log = orjson.dumps(orjson.loads(log)).decode()
        self.parts.append(Part(keyframe, change, log, message.steps))
        self.pending = []
        self.last = view
        self.ready.set()

    def _end(self, end: dict[str, Any]) -> None:
        self.ended = orjson.dumps(end).decode()
        self._close()

    def _stop(self, why: str) -> None:
        self.problem = orjson.dumps({"detail": why}).decode()
        self._close()

    def _close(self) -> None:
        self.flush()
        self.ready.set()
        for queue, packed in self.watchers.items():
            self._finish(queue, packed)

    def _finish(self, queue: Queue, packed: bool) -> None:
        """The last event (the end, or why it cannot be watched), then the stream's end
        (``packed``: deflated too)."""
        if self.ended is not None:
            event = _event("end", self.ended)
        else:
            event = _event("problem", self.problem or "{}")
        queue.put_nowait((event, deflate(event) if packed else b""))
        queue.put_nowait(None)

    def watch(self, packed: bool = False) -> tuple[bytes | None, Queue]:
        """A new watcher: its start event (None before the first frame) and its queue of
        what follows (deflated too if ``packed``), made together so that no frame is
        missed or sent twice."""
        self.flush()
        queue: Queue = asyncio.Queue()
        if self.ended is not None or self.problem is not None:
            self._finish(queue, packed)
        else:
            self.watchers[queue] = packed
        if not self.parts:
            return None, queue
        return self.start_event(), queue

    def start_event(self) -> bytes:
        """Everything so far: the frames from where this feed began watching."""
        doc = _join(self.parts)
        head = orjson.dumps(
            {**self.head, "base": self.base or 0, "keyframe_every": frames.KEYFRAME_EVERY}
        ).decode()
        return _event("start", f"{head[:-1]},{doc[1:]}")


WATCHING = b": watching\n\n"


class LiveHub:
    """The feeds of the matches browsers watch, on one referee."""

    def __init__(self, referee: str) -> None:
        self.referee = referee
        self.feeds: dict[str, Feed] = {}
        #: the heads being looked up in the store, by match: a crowd that comes at once
        #: (before any feed has its head) asks the store once
        self._looking: dict[str, asyncio.Future[dict[str, Any]]] = {}

    async def head(
        self, match_id: str, look_up: Callable[[], Awaitable[dict[str, Any]]]
    ) -> dict[str, Any]:
        """The head of a match to watch: its feed's while it is watched (see
        :meth:`watched`), else what ``look_up`` says, one look-up at a time per match
        for every browser asking meanwhile (its exception, such as a match that is not
        running, goes to each of them)."""
        head = self.watched(match_id)
        if head is not None:
            return head
        looking = self._looking.get(match_id)
        if looking is None:
            looking = self._looking[match_id] = asyncio.ensure_future(look_up())
            looking.add_done_callback(lambda _: self._looking.pop(match_id, None))
        # shielded: a browser that leaves does not cancel the others' look-up
        return await asyncio.shield(looking)

    def watched(self, match_id: str) -> dict[str, Any] | None:
        """The head of the match's feed while it is being watched and has not ended
        (what a new watcher needs, without asking the store again), else None."""
        feed = self.feeds.get(match_id)
        if feed is None or feed.ended is not None or feed.problem is not None:
            return None
        return feed.head

    async def stream(
        self, match_id: str, head: dict[str, Any], packed: bool = False
    ) -> AsyncIterator[bytes]:
        """A browser's server-sent events: ``start`` (the frames so far), then
        ``frames`` as the match is played, then ``end`` or ``problem``; as HTTP's
        ``deflate`` coding if ``packed`` (each ``frames`` event deflated once for every
        such browser: :class:`Inflatable`)."""
        feed = self.feeds.get(match_id)
        if feed is None or feed.task is None or feed.task.done():
            feed = self.feeds[match_id] = Feed(match_id, self.referee, head)
            feed.task = asyncio.create_task(feed.run(), name=f"watch {match_id}")
        queue: Queue | None = None
        zlib_stream = Inflatable() if packed else None
        feed.viewers += 1
        try:
            # the response starts at once
            yield zlib_stream.first(WATCHING) if zlib_stream else WATCHING
            await feed.ready.wait()  # the first frame, or why there is none
            start, queue = feed.watch(packed)
            if start is not None:
                yield zlib_stream.piece(start, deflate(start)) if zlib_stream else start
            while (item := await queue.get()) is not None:
                event, deflated = item
                yield zlib_stream.piece(event, deflated) if zlib_stream else event
            if zlib_stream:
                yield zlib_stream.end()
        finally:
            feed.viewers -= 1
            if queue is not None:
                feed.watchers.pop(queue, None)
            if not feed.viewers:
                if self.feeds.get(match_id) is feed:
                    del self.feeds[match_id]
                if feed.task is not None and not feed.task.done():
                    feed.task.cancel()  # nobody watches: stop reading the referee
                    with contextlib.suppress(asyncio.CancelledError):
                        await feed.task

    def stop(self) -> None:
        """The server is stopping: end every browser's stream now (a ``problem`` event
        says why), so that the server need not wait for the matches to end."""
        for feed in self.feeds.values():
            if feed.ended is None and feed.problem is None:
                feed._stop("the web app is stopping")
            if feed.task is not None:
                feed.task.cancel()

    async def close(self) -> None:
        for feed in list(self.feeds.values()):
            if feed.task is not None:
                feed.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await feed.task
        self.feeds.clear()
