"""One bot connection: the stream's outbox, its pending decisions, and its limits."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from arena.referee.limits import TokenBucket
from arena.v1 import arena_pb2 as pb

if TYPE_CHECKING:
    from arena.referee.guard import PeerLimits, PeerShare

log = logging.getLogger("arena.referee")

#: The most messages in a RefereeBatch, and the size after which a batch takes no more:
#: far below any bot's receive limit (gRPC's default is 4 MiB).
MAX_BATCH = 64
BATCH_BYTES = 512 << 10
_BATCH_FIELD = pb.RefereeMessage.DESCRIPTOR.fields_by_name["batch"].number
_ITEMS_FIELD = pb.RefereeBatch.DESCRIPTOR.fields_by_name["messages"].number
#: what a queued message costs beyond its bytes (the bytes object, its queue slot): a
#: flood of tiny messages must count for the memory it takes
MESSAGE_OVERHEAD = 64


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _embedded(number: int, data: bytes) -> bytes:
    """Field ``number`` holding the serialized message ``data`` (protobuf wire format)."""
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def as_bytes(message: pb.RefereeMessage | bytes) -> bytes:
    """The response serializer of BotService.Connect: what the connection queued is
    written as the bytes it was serialized to, a message object is serialized as usual."""
    return message if type(message) is bytes else message.SerializeToString()


class ConnectionLost(Exception):
    """The bot's stream ended while a decision was pending (``str(exc)``: why)."""


class BotConnection:
    """A connected bot. Replies are matched to pending requests by (match, request id):
    a reply for another bot's seat, an old request or an unknown match is ignored."""

    def __init__(
        self,
        bot_id: str,
        bot_name: str,
        max_messages_per_s: int,
        context: Any = None,
        batches: bool = False,
        max_queued_bytes: int = 8 << 20,
        peer: str = "",
        limits: PeerLimits | None = None,
    ) -> None:
        self.bot_id = bot_id
        #: the stream's connection, ``host:port``: the connection guard spares it
        self.peer = peer
        self.bot_name = bot_name
        self.context = context  # the servicer context of the stream: the writer writes on it
        #: the bot reads RefereeBatch: what queues up while a write is in flight goes out
        #: as one message
        self.batches = batches
        #: serialized messages (or message objects) waiting for the writer; None ends it
        self.outbox: asyncio.Queue[bytes | pb.RefereeMessage | None] = asyncio.Queue()
        #: what the outbox holds, in bytes (MESSAGE_OVERHEAD each): at most
        #: ``max_queued_bytes``, or the bot is not reading and the connection is closed
        self.queued_bytes = 0
        self.max_queued_bytes = max_queued_bytes
        #: the decisions owed, by (match, request id): each resolves to the reply and
        #: when the stream's reader received it (loop time: the bot's clock stops then)
        self.pending: dict[tuple[str, int], asyncio.Future[tuple[pb.ActionReply, float]]] = {}
        self.closed = asyncio.Event()
        self.close_reason = ""
        self.stale_replies = 0
        self._max_rate = max_messages_per_s
        #: unsolicited messages: ``max_messages_per_s`` a second, as many at once
        self._unsolicited = TokenBucket(max_messages_per_s, max_messages_per_s)
        #: unsolicited messages in the second that began at ``_window``
        self._window = 0.0
        self._window_count = 0
        #: what this stream shares with the other bot streams of its address
        self._limits = limits
        self._share: PeerShare | None = None
        if limits is not None:
            self._share = limits.join(self, peer.rsplit(":", 1)[0])

    async def send(self, message: pb.RefereeMessage) -> None:
        """Queue ``message`` for this stream's writer. Never blocks: a bot that does not
        read (a stuck or partitioned peer) must not hold up a match or the referee."""
        self.send_nowait(message)

    def send_nowait(self, message: pb.RefereeMessage) -> None:
        """``send`` without a coroutine (the hot path of a decision). The message is
        serialized here, once: its size is what it costs while it waits. A bot whose
        messages pile up past ``max_queued_bytes`` does not read: its connection closes
        and what was queued for it is dropped, so it costs the referee no more."""
        if self.closed.is_set():
            return
        data = message.SerializeToString()
        cost = len(data) + MESSAGE_OVERHEAD
        self.queued_bytes += cost
        if self.queued_bytes > self.max_queued_bytes:
            limit = self.max_queued_bytes
            self.close(f"not reading: over {limit} bytes queued for the bot", drop=True)
            return
        self.outbox.put_nowait(data)
        if self._share is not None:  # the address's cap: the heaviest of its streams goes
            self._limits.queued(self._share, cost)  # type: ignore[union-attr]

    def _taken(self, data: bytes | pb.RefereeMessage) -> bytes:
        """A message taken from the outbox, as bytes (no longer counted as queued)."""
        if type(data) is not bytes:
            data = data.SerializeToString()
        before = self.queued_bytes
        self.queued_bytes = max(0, before - len(data) - MESSAGE_OVERHEAD)
        if self._share is not None:
            self._share.queued_bytes -= before - self.queued_bytes
        return data

    async def write_loop(self) -> None:
        """Write queued messages in order until the connection closes.

        A write takes a while to complete (gRPC hands it to its I/O thread and back), and
        messages of other matches queue up meanwhile. A bot that reads batches gets what
        has queued as one RefereeBatch: one gRPC message's cost (two thread hand-offs at
        each end, a system call) for all of them, in the same order."""
        outbox = self.outbox
        try:
            while (message := await outbox.get()) is not None:
                if self.batches and len(self.pending) > 1:
                    # the bot is in several matches at once: let the other matches that
                    # are ready to ask it something queue up first (one turn of the loop;
                    # a lone decision, whose latency matters most, never waits)
                    await asyncio.sleep(0)
                if self.batches and not outbox.empty():
                    data, stop = self._batch(message)
                    await self.context.write(data)
                    if stop:
                        return
                else:
                    await self.context.write(self._taken(message))
        except Exception as exc:  # the stream is gone
            self.close(f"write failed: {type(exc).__name__}")

    def _batch(self, first: bytes | pb.RefereeMessage) -> tuple[bytes, bool]:
        """``first`` and what is queued after it (up to MAX_BATCH messages or about
        BATCH_BYTES), as a serialized RefereeBatch message; True if the queue's end (None)
        was reached. Each message is serialized once, straight into the batch's bytes (a
        RefereeBatch built of message objects would copy each, then serialize it)."""
        items = [_embedded(_ITEMS_FIELD, self._taken(first))]
        size = len(items[0])
        outbox = self.outbox
        stop = False
        while size < BATCH_BYTES and len(items) < MAX_BATCH and not outbox.empty():
            message = outbox.get_nowait()
            if message is None:
                stop = True
                break
            items.append(_embedded(_ITEMS_FIELD, self._taken(message)))
            size += len(items[-1])
        return _embedded(_BATCH_FIELD, b"".join(items)), stop

    def expect(
        self, match_id: str, request_id: int
    ) -> asyncio.Future[tuple[pb.ActionReply, float]]:
        future: asyncio.Future[tuple[pb.ActionReply, float]]
        future = asyncio.get_running_loop().create_future()
        self.pending[(match_id, request_id)] = future
        return future

    def forget(self, match_id: str, request_id: int) -> None:
        self.pending.pop((match_id, request_id), None)

    def over_rate(self) -> str:
        """Why an unsolicited message is one too many (the stream is then closed), or
        "": a token bucket of ``max_messages_per_s`` a second and as many at once, so
        that a bot paced evenly below the rate is never cut, whatever its jitter; then
        its address's budget, shared by all its bots (``PeerLimits.unsolicited``).

        Replies to pending decisions are never counted: they are bounded by the
        referee's own requests. Pings, stale or unknown replies are."""
        now = time.monotonic()
        if now - self._window >= 1.0:
            self._window = now
            self._window_count = 0
        self._window_count += 1
        if not self._unsolicited.take(now):
            return f"flood: more than {self._max_rate} messages/s"
        limits = self._limits
        if limits is not None and not limits.unsolicited(self, self._share, now):
            return limits.flood_reason()
        return ""

    def recent_unsolicited(self, now: float) -> int:
        """Unsolicited messages this stream sent in about the last second."""
        if self.closed.is_set() or now - self._window >= 2.0:
            return 0
        return self._window_count

    def release(self) -> None:
        """The stream has ended: it no longer counts in its address's share."""
        if self._share is not None:
            self._limits.leave(self, self._share)  # type: ignore[union-attr]
            self._share = None

    def expected(self, reply: pb.ActionReply) -> bool:
        future = self.pending.get((reply.match_id, reply.request_id))
        return future is not None and not future.done()

    def deliver(self, reply: pb.ActionReply, arrived: float) -> bool:
        """Hand ``reply`` to the decision it answers, with when it arrived (loop time)."""
        future = self.pending.pop((reply.match_id, reply.request_id), None)
        if future is None or future.done():
            self.stale_replies += 1
            return False
        future.set_result((reply, arrived))
        return True

    def close(self, reason: str, drop: bool = False) -> None:
        """End the connection: its pending decisions fail, its writer stops after what is
        queued (a MatchEnded, say), or at once with ``drop`` (a flood, a bot that does
        not read: what is queued would go nowhere)."""
        if self.closed.is_set():
            return
        self.close_reason = reason
        self.closed.set()
        for future in self.pending.values():
            if not future.done():
                future.set_exception(ConnectionLost(reason))
        self.pending.clear()
        if drop:
            while not self.outbox.empty():
                self.outbox.get_nowait()
            if self._share is not None:
                self._share.queued_bytes -= self.queued_bytes
            self.queued_bytes = 0
        self.outbox.put_nowait(None)  # wakes the writer, which stops

    def __repr__(self) -> str:
        return f"BotConnection({self.bot_name}, closed={self.closed.is_set()})"


def describe(message: Any) -> str:
    return type(message).__name__
