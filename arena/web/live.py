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
has none (its armies changed where the web could not see).

**Shared, not per browser.** Everything a browser is sent is a :class:`Piece`, the
same bytes object for every browser, deflated once (when a browser that takes
``deflate`` first needs it) and with its Adler-32 known, so that each browser's zlib
stream costs it no pass over the bytes (:func:`adler32_combine`):

* every :data:`SEND_EVERY` seconds the frames made since are one ``frames`` piece,
  put in each watcher's queue;
* a browser that comes late gets the match so far as the **prepared start**: the
  segments sealed as the frames came (each about :data:`SEGMENT_BYTES`, the first a
  ``start`` event, the rest ``frames`` events), and the frames since the last seal as
  one more piece, made once for every browser that comes before the next frame (at
  most :data:`START_BYTES` of frames: a long match's latest). A late crowd costs the
  web nothing per browser but writing the same pieces out.

**Bounded.** The watchers of one match and of all matches are capped (:class:`LiveHub`:
a browser beyond the cap gets a 503 that says the match is full); each watcher's queue
holds :data:`QUEUE_EVENTS` pieces: a browser that falls that far behind (it stopped
reading) is dropped, with a ``problem`` event saying why once it reads again, and the
others never wait for it.

Everything sent comes from the referee's spectator messages (only public facts), the
match's players and the map's names.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import zlib
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from arena.web import frames, streams

log = logging.getLogger(__name__)
#: the largest battle (attacking x defending armies) a live view gives odds for: the web
#: computes them in its event loop as the match is played
LIVE_ODDS_CELLS = 62_500
#: how often the new frames go to the browsers, as one event (seconds): each send wakes
#: every watcher's stream in the one event loop, so 500 watchers every 0.2 s kept it busy
#: enough to put a normal page's p95 at 400 ms (benchmarks/web_crowds.py); every 0.5 s
#: they cost it 10 ms, and a spectator half a second
SEND_EVERY = 0.5
#: a sealed segment of the prepared start holds frames of about this many bytes
SEGMENT_BYTES = 128 * 1024
#: the frames a start holds at most (bytes of JSON): a browser that comes late to a long
#: match gets its latest frames, from a keyframe (``base`` says the step), not all of it
START_BYTES = 8 * 2**20
#: the pieces a watcher may have waiting: beyond, it is dropped (10 s of a fast match)
QUEUE_EVENTS = 20
#: the watchers of one match, and of every match, by default (``arena web`` options)
WATCHERS_PER_MATCH = 800
WATCHERS = 1_000


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


_ADLER_BASE = 65521


def adler32_combine(first: int, second: int, second_length: int) -> int:
    """The Adler-32 of ``a + b`` from that of ``a``, that of ``b`` and ``len(b)``
    (zlib's ``adler32_combine``, which Python's zlib does not offer): a browser's
    checksum over the shared pieces it is sent, without reading their bytes again."""
    rem = second_length % _ADLER_BASE
    sum1 = first & 0xFFFF
    sum2 = (rem * sum1) % _ADLER_BASE
    sum1 += (second & 0xFFFF) + _ADLER_BASE - 1
    sum2 += ((first >> 16) & 0xFFFF) + ((second >> 16) & 0xFFFF) + _ADLER_BASE - rem
    sum1 %= _ADLER_BASE
    sum2 %= _ADLER_BASE
    return sum1 | (sum2 << 16)


class Piece:
    """Bytes sent as they are to every browser that gets them: ``plain``, its deflated
    form (:func:`deflate`, made once, when a browser first asks for it) and the
    Adler-32 and length of ``plain``."""

    __slots__ = ("_deflated", "adler", "plain")

    def __init__(self, plain: bytes) -> None:
        self.plain = plain
        self.adler = zlib.adler32(plain)
        self._deflated: bytes | None = None

    def deflated(self) -> bytes:
        if self._deflated is None:
            self._deflated = deflate(self.plain)
        return self._deflated


class Inflatable:
    """One browser's deflated stream: the pieces it is sent, wrapped as zlib (its header
    first, and at the end the final block and the Adler-32 of all it inflates to; each
    browser starts where it starts, so the checksum is its own, made from the pieces'
    own by :func:`adler32_combine`)."""

    def __init__(self) -> None:
        self.adler = zlib.adler32(b"")

    def first(self, piece: Piece) -> bytes:
        return ZLIB_HEADER + self.piece(piece)

    def piece(self, piece: Piece) -> bytes:
        """``piece`` deflated, counting its bytes in."""
        self.adler = adler32_combine(self.adler, piece.adler, len(piece.plain))
        return piece.deflated()

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
#: the first bytes of every stream: the response starts at once
WATCHING = Piece(b": watching\n\n")
#: what a watcher dropped for falling behind is told
TOO_SLOW = (
    "this browser fell too far behind the match (it read the stream too slowly) and was "
    "dropped: reload the page to watch from where the match is now"
)
#: the last event of a watcher dropped for falling behind
DROPPED = Piece(_event("problem", orjson.dumps({"detail": TOO_SLOW, "dropped": True}).decode()))
#: what a browser beyond the cap of watchers is told
FULL = "this match has as many watchers as this web app takes: try again in a minute"


@dataclass
class Part:
    """One frame as JSON texts: its keyframe (every KEYFRAME_EVERY frames), its delta, the
    log of the steps it covers (one ``[seat, events]`` each) and its step; joined with
    others into one ``frames`` event."""

    keyframe: str | None
    delta: str
    log: str
    step: int

    def size(self) -> int:
        return len(self.keyframe or "") + len(self.delta) + len(self.log) + 12


@dataclass
class Segment:
    """Frames ``first`` (a keyframe) to ``end`` of the prepared start, sealed: as a
    ``frames`` event, and as a ``start`` event once it is the first kept."""

    first: int
    end: int
    #: the step of frame ``first`` (a start from it says so: its ``base``)
    step: int
    frames: Piece
    start: Piece | None = None


def _join(parts: list[Part]) -> str:
    keyframes = ",".join(p.keyframe for p in parts if p.keyframe is not None)
    deltas = ",".join(p.delta for p in parts)
    logs = ",".join(p.log for p in parts)
    steps = ",".join(str(p.step) for p in parts)
    return f'{{"keyframes":[{keyframes}],"deltas":[{deltas}],"steps":[{steps}],"log":[{logs}]}}'


class Watcher:
    """One browser on a feed: a queue of pieces of at most ``limit`` (None: the end)."""

    __slots__ = ("limit", "packed", "queue", "wake")

    def __init__(self, packed: bool, limit: int = QUEUE_EVENTS) -> None:
        self.packed = packed
        self.limit = limit
        self.queue: deque[Piece | None] = deque()
        self.wake = asyncio.Event()

    def put(self, piece: Piece) -> bool:
        """Queues ``piece``; False (and nothing queued) when the queue is full."""
        if len(self.queue) >= self.limit:
            return False
        self.queue.append(piece)
        self.wake.set()
        return True

    def end(self, piece: Piece, drop: bool = False) -> None:
        """The last piece, then the end; ``drop``: instead of what is waiting."""
        if drop:
            self.queue.clear()
        self.queue.append(piece)
        self.queue.append(None)
        self.wake.set()

    async def get(self) -> Piece | None:
        while not self.queue:
            self.wake.clear()
            await self.wake.wait()
        return self.queue.popleft()


@dataclass
class Feed:
    """One running match as the referee streams it to spectators, and the browsers
    watching it."""

    match_id: str
    referee: str
    head: dict[str, Any]  # game, players, board: what the start event says besides frames
    queue_events: int = QUEUE_EVENTS
    watchers: set[Watcher] = field(default_factory=set)
    #: the frames kept, from frame number ``offset`` (those before are in no start
    #: any more: :data:`START_BYTES`); ``count``: every frame made
    parts: list[Part] = field(default_factory=list)
    offset: int = 0
    count: int = 0
    #: how many frames the watchers have been sent (the rest go at the next tick)
    sent: int = 0
    base: int | None = None
    #: the position of the last frame
    last: dict[str, Any] | None = None
    #: the log entries (JSON texts) of the steps since the last frame: they go with the
    #: next one (the referee gives a batch's position after its last step only)
    pending: list[str] = field(default_factory=list)
    #: the prepared start: segments sealed (each from a keyframe on), where the frames
    #: not sealed yet begin and their bytes, and those frames as one piece (for
    #: ``open_upto`` frames), made when a browser first needs it
    segments: list[Segment] = field(default_factory=list)
    sealed_bytes: int = 0
    sealed_upto: int = 0
    open_bytes: int = 0
    open_piece: Piece | None = None
    open_upto: int = 0
    ended: str | None = None  # the end event's JSON, once the match has ended
    problem: str | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    #: browsers on this feed, waiting for its first frame or watching
    viewers: int = 0
    #: watchers dropped for falling behind
    dropped: int = 0
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
            self._stop("the referee ended the stream before the match ended")
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                self._stop(
                    f"the referee of this web app is not playing match {self.match_id}: "
                    "it may be played by another referee"
                )
            else:  # the referee's own words go to the log: they may name its machine
                log.warning("watching match %s: %s %s", self.match_id, exc.code(), exc.details())
                self._stop("the referee did not answer (the web's log says more)")
        except Exception:  # a stream we cannot read: say so, never leave them waiting
            log.exception("watching match %s", self.match_id)
            self._stop(f"the live view of match {self.match_id} failed (the web's log says why)")
        finally:
            ticker.cancel()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(SEND_EVERY)
            self.flush()

    def flush(self) -> None:
        """The frames not sent yet, as one piece, to every watcher; a watcher whose
        queue is full is dropped (told why), the others never wait for it."""
        if self.sent < self.count:
            piece = Piece(_event("frames", _join(self._parts(self.sent, self.count))))
            self.sent = self.count
            self._let_go()
            for watcher in [w for w in self.watchers if not w.put(piece)]:
                self.watchers.discard(watcher)
                self.dropped += 1
                watcher.end(DROPPED, drop=True)

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
        index = self.count
        keyframe = orjson.dumps(view).decode() if index % frames.KEYFRAME_EVERY == 0 else None
        change = "{}" if self.last is None else orjson.dumps(frames.delta(self.last, view)).decode()
        log = f"[{','.join(self.pending)}]"
        if "\n" in log or "\r" in log:  # the referee's JSON spaced out: an event is one line
            log = orjson.dumps(orjson.loads(log)).decode()
        part = Part(keyframe, change, log, message.steps)
        self.parts.append(part)
        self.count += 1
        self.pending = []
        self.last = view
        self.open_bytes += part.size()
        # a segment ends before a keyframe, so that each begins with one
        if self.open_bytes >= SEGMENT_BYTES and self.count % frames.KEYFRAME_EVERY == 0:
            self._seal()
        self.ready.set()

    def _parts(self, start: int, end: int) -> list[Part]:
        """The frames numbered ``start`` to ``end`` (kept ones)."""
        return self.parts[start - self.offset : end - self.offset]

    def _start_event(self, doc: str, first: int, step: int) -> Piece:
        """``doc`` (frames from frame ``first``, a keyframe, at ``step``) as a ``start``
        event."""
        base = (self.base or 0) if first == 0 else step
        head = orjson.dumps(
            {**self.head, "base": base, "keyframe_every": frames.KEYFRAME_EVERY}
        ).decode()
        return Piece(_event("start", f"{head[:-1]},{doc[1:]}"))

    def _seal(self) -> None:
        first, end = self.sealed_upto, self.count
        parts = self._parts(first, end)
        doc = _join(parts)
        segment = Segment(first, end, parts[0].step, Piece(_event("frames", doc)))
        self.segments.append(segment)
        if len(self.segments) == 1:
            segment.start = self._start_event(doc, first, segment.step)
        self.sealed_upto, self.sealed_bytes = end, self.sealed_bytes + len(doc)
        self.open_bytes = 0
        self.open_piece = None
        # a long match: the start keeps its latest START_BYTES, from a segment's keyframe
        while self.sealed_bytes > START_BYTES and len(self.segments) > 1:
            gone = self.segments.pop(0)
            self.sealed_bytes -= len(gone.frames.plain)
            self.segments[0].start = None  # made when a browser next needs it
        self._let_go()

    def _let_go(self) -> None:
        """The frames both sealed and sent are in the segments' text: not kept twice."""
        keep = min(self.sealed_upto, self.sent)
        if keep > self.offset:
            del self.parts[: keep - self.offset]
            self.offset = keep

    def start_pieces(self) -> list[Piece]:
        """The prepared start: every frame kept (none before the first), as the sealed
        segments (the first as a ``start`` event) and one piece of the frames since the
        last seal (made once for every browser until a frame comes)."""
        pieces = [segment.frames for segment in self.segments]
        if pieces:
            first = self.segments[0]
            if first.start is None:
                text = first.frames.plain.decode()
                doc = text.split("data: ", 1)[1].removesuffix("\n\n")
                first.start = self._start_event(doc, first.first, first.step)
            pieces[0] = first.start
        if self.sealed_upto < self.count:
            if self.open_piece is None or self.open_upto != self.count:
                doc = _join(self._parts(self.sealed_upto, self.count))
                self.open_piece = (
                    Piece(_event("frames", doc))
                    if self.segments
                    else self._start_event(doc, self.sealed_upto, 0)
                )
                self.open_upto = self.count
            pieces.append(self.open_piece)
        return pieces

    def _end(self, end: dict[str, Any]) -> None:
        self.ended = orjson.dumps(end).decode()
        self._close()

    def _stop(self, why: str) -> None:
        self.problem = orjson.dumps({"detail": why}).decode()
        self._close()

    def _last_piece(self) -> Piece:
        """The end event, or why the match cannot be watched."""
        if self.ended is not None:
            return Piece(_event("end", self.ended))
        return Piece(_event("problem", self.problem or "{}"))

    def _close(self) -> None:
        self.flush()
        self.ready.set()
        last = self._last_piece()
        for watcher in self.watchers:
            watcher.end(last)

    def watch(self, packed: bool = False) -> tuple[list[Piece], Watcher]:
        """A new watcher: its start (the pieces of every frame so far) and its queue of
        what follows, made together so that no frame is missed or sent twice."""
        self.flush()
        watcher = Watcher(packed, self.queue_events)
        if self.ended is not None or self.problem is not None:
            watcher.end(self._last_piece())
        else:
            self.watchers.add(watcher)
        return self.start_pieces(), watcher


class LiveHub:
    """The feeds of the matches browsers watch, on one referee, and how many browsers
    may watch (:meth:`admit`): ``per_match`` on one match, ``watchers`` in all."""

    def __init__(
        self,
        referee: str,
        watchers: int = WATCHERS,
        per_match: int = WATCHERS_PER_MATCH,
        queue_events: int = QUEUE_EVENTS,
    ) -> None:
        self.referee = referee
        self.max_watchers = watchers
        self.max_per_match = per_match
        self.queue_events = queue_events
        self.feeds: dict[str, Feed] = {}
        #: browsers admitted, in all and per match (each until its stream ends)
        self.admitted = 0
        self.per_match: dict[str, int] = {}
        #: the heads being looked up in the store, by match: a crowd that comes at once
        #: (before any feed has its head) asks the store once
        self._looking: dict[str, asyncio.Future[dict[str, Any]]] = {}

    def admit(self, match_id: str) -> Callable[[], None] | None:
        """A place for one more browser on ``match_id`` (call what it returns, once,
        when its stream ends), or None when the match or the app has as many as it
        takes."""
        count = self.per_match.get(match_id, 0)
        if count >= self.max_per_match or self.admitted >= self.max_watchers:
            return None
        self.admitted += 1
        self.per_match[match_id] = count + 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            self.admitted -= 1
            left = self.per_match[match_id] - 1
            if left:
                self.per_match[match_id] = left
            else:
                del self.per_match[match_id]

        return release

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
        """A browser's server-sent events: ``start`` (the frames so far, in pieces),
        then ``frames`` as the match is played, then ``end`` or ``problem``; as HTTP's
        ``deflate`` coding if ``packed`` (each piece deflated once for every such
        browser: :class:`Inflatable`)."""
        feed = self.feeds.get(match_id)
        if feed is None or feed.task is None or feed.task.done():
            feed = self.feeds[match_id] = Feed(match_id, self.referee, head, self.queue_events)
            feed.task = asyncio.create_task(feed.run(), name=f"watch {match_id}")
        watcher: Watcher | None = None
        zlib_stream = Inflatable() if packed else None
        feed.viewers += 1
        try:
            # the response starts at once
            yield zlib_stream.first(WATCHING) if zlib_stream else WATCHING.plain
            await feed.ready.wait()  # the first frame, or why there is none
            start, watcher = feed.watch(packed)
            for piece in start:
                yield zlib_stream.piece(piece) if zlib_stream else piece.plain
            while (piece := await watcher.get()) is not None:
                yield zlib_stream.piece(piece) if zlib_stream else piece.plain
            if zlib_stream:
                yield zlib_stream.end()
        finally:
            feed.viewers -= 1
            if watcher is not None:
                feed.watchers.discard(watcher)
            if not feed.viewers:
                if self.feeds.get(match_id) is feed:
                    del self.feeds[match_id]
                if feed.task is not None and not feed.task.done():
                    feed.task.cancel()  # nobody watches: stop reading the referee
                    with contextlib.suppress(asyncio.CancelledError):
                        await feed.task
                del feed
                streams.give_memory_back()

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
