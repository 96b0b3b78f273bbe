"""Batching on the bot stream, piece by piece: what the referee's writer puts in one
RefereeBatch, and how the SDK groups its replies. (Whole games with batches: the bot
processes of test_referee.py use the SDK, which always asks for them; the
hidden-information audit reads batches as the bytes they were on the wire.)"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from arena.referee.connection import BATCH_BYTES, MAX_BATCH, BotConnection
from arena.sdk import _Session
from arena.v1 import arena_pb2 as pb


def _pong(nonce: int) -> pb.RefereeMessage:
    return pb.RefereeMessage(pong=pb.Pong(nonce=nonce))


class Stream:
    """Stands in for a gRPC stream: keeps what is written, in order (a message the
    referee's writer wrote as bytes, as the message those bytes are)."""

    def __init__(self) -> None:
        self.written: list[Any] = []

    async def write(self, message: Any) -> None:
        if isinstance(message, bytes):
            message = pb.RefereeMessage.FromString(message)
        self.written.append(message)


def _connection(batches: bool) -> BotConnection:
    return BotConnection("id", "name", 100, Stream(), batches=batches)


def _per_message(written: list[Any], read: Callable[[Any], int]) -> list[list[int]]:
    """Per message written: ``read`` of each message it carries (itself, or a batch's)."""
    return [
        [read(m) for m in message.batch.messages]
        if message.WhichOneof("kind") == "batch"
        else [read(message)]
        for message in written
    ]


def _nonces(written: list[pb.RefereeMessage]) -> list[list[int]]:
    """Per message written: the pongs' nonces it carries."""
    return _per_message(written, lambda m: m.pong.nonce)


async def _drain(connection: BotConnection, queued: list[Any]) -> list[pb.RefereeMessage]:
    for message in queued:
        connection.outbox.put_nowait(message)
    await connection.write_loop()
    return connection.context.written


def test_what_queues_up_goes_out_as_one_batch_in_order_and_the_end_still_ends() -> None:
    count = MAX_BATCH + 5
    written = asyncio.run(
        _drain(_connection(batches=True), [_pong(n) for n in range(count)] + [None])
    )
    assert _nonces(written) == [list(range(MAX_BATCH)), list(range(MAX_BATCH, count))]


def test_a_bot_that_did_not_ask_gets_every_message_alone() -> None:
    written = asyncio.run(_drain(_connection(batches=False), [_pong(n) for n in range(5)] + [None]))
    assert _nonces(written) == [[0], [1], [2], [3], [4]]
    assert all(m.WhichOneof("kind") == "pong" for m in written)


def test_a_batch_stops_growing_at_its_size_limit() -> None:
    big = pb.RefereeMessage(rejected=pb.ActionRejected(match_id="m", reason="x" * (100 << 10)))
    written = asyncio.run(_drain(_connection(batches=True), [big] * 12 + [None]))
    sizes = [len(m.batch.messages) for m in written]
    assert sum(sizes) == 12 and len(sizes) > 1
    assert all(m.ByteSize() < BATCH_BYTES + (101 << 10) for m in written)


def _replies(count: int) -> list[pb.BotMessage]:
    return [pb.BotMessage(action=pb.ActionReply(match_id="m", request_id=n)) for n in range(count)]


def _request_ids(written: list[pb.BotMessage]) -> list[list[int]]:
    """Per message written: the request ids of the replies it carries."""
    return _per_message(written, lambda m: m.action.request_id)


def _sent(max_batch: int, count: int) -> list[list[int]]:
    session = _Session(lambda match: None, "token", 1, 0)
    session.max_batch = max_batch
    stream = Stream()
    asyncio.run(session._send(stream, _replies(count)))
    return _request_ids(stream.written)


def test_the_sdk_sends_its_replies_in_batches_the_referee_takes() -> None:
    assert _sent(4, 10) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert _sent(4, 1) == [[0]]
    # a referee that reads no batches (its Welcome says so) gets every reply alone
    assert _sent(0, 3) == [[0], [1], [2]]


def test_with_several_decisions_pending_the_writer_waits_one_turn_of_the_loop() -> None:
    """A message that becomes ready in the same turn of the loop joins the batch when the
    bot owes several decisions; a lone decision is written at once."""

    async def written(pending: int) -> list[list[int]]:
        connection = _connection(batches=True)
        loop = asyncio.get_running_loop()
        connection.pending = {("m", n): loop.create_future() for n in range(pending)}
        writer = asyncio.create_task(connection.write_loop())
        await asyncio.sleep(0)  # the writer waits for its outbox
        connection.outbox.put_nowait(_pong(1))
        loop.call_soon(connection.outbox.put_nowait, _pong(2))  # ready in the same turn
        await asyncio.sleep(0.01)
        connection.outbox.put_nowait(None)
        await writer
        return _nonces(connection.context.written)

    assert asyncio.run(written(pending=2)) == [[1, 2]]
    assert asyncio.run(written(pending=1)) == [[1], [2]]


def test_the_sdk_keeps_a_batch_under_the_referees_message_size() -> None:
    session = _Session(lambda match: None, "token", 1, 0)
    session.max_batch, session.max_bytes = 64, 1000
    stream = Stream()
    big = [pb.BotMessage(action=pb.ActionReply(match_id="x" * 300, request_id=n)) for n in range(7)]
    asyncio.run(session._send(stream, big))
    assert all(m.ByteSize() <= 1000 for m in stream.written)  # 7 replies are 2,200 bytes
    assert any(len(m.batch.messages) > 1 for m in stream.written)  # still batched
    ids = _request_ids(stream.written)
    assert [i for chunk in ids for i in chunk] == list(range(7))  # every reply, in order


def test_the_sdk_reads_what_the_welcome_allows() -> None:
    session = _Session(lambda match: None, "token", 1, 0)
    welcome = pb.Welcome(bot_name="b", batches=True, max_batch=8, max_message_bytes=4096)
    session._handle(None, pb.RefereeMessage(welcome=welcome), None, [])
    assert (session.max_batch, session.max_bytes) == (8, 4096)
    old = pb.Welcome(bot_name="b", max_batch=8)  # a referee that reads no batches
    session._handle(None, pb.RefereeMessage(welcome=old), None, [])
    assert session.max_batch == 0


class SlowBot:
    def __init__(self, match: Any, seconds: float) -> None:
        self.seconds = seconds

    def decide(self, observation: Any, decision: Any) -> dict[str, Any]:
        time.sleep(self.seconds)
        return {"type": "move", "from": 0, "to": 1}


def _answers(seconds: float, flush_after_s: float) -> list[list[int]]:
    session = _Session(lambda match: SlowBot(match, seconds), "token", 4, 0)
    session.max_batch = 64
    session.flush_after_s = flush_after_s
    batch = pb.RefereeMessage()
    for n in range(4):
        started = pb.MatchStarted(match_id=f"m{n}", game="stratego", seat=0, players=["a", "b"])
        batch.batch.messages.add(match_started=started)
    for n in range(4):
        batch.batch.messages.add(decision=pb.DecisionRequest(match_id=f"m{n}", request_id=n))
    stream = Stream()
    assert asyncio.run(session._answer(stream, batch, None)) is False
    return _request_ids(stream.written)


def test_a_batch_of_decisions_is_answered_with_one_batch() -> None:
    assert _answers(seconds=0, flush_after_s=10) == [[0, 1, 2, 3]]


def test_a_slow_bot_sends_each_reply_once_it_is_decided() -> None:
    """Each decision takes longer than the SDK's flush time: no reply waits for the
    decisions after it (their deadlines run from when the referee sent them)."""
    assert _answers(seconds=0.03, flush_after_s=0.02) == [[0], [1], [2], [3]]


def test_the_batch_bytes_are_what_protobuf_makes_of_the_same_batch() -> None:
    """The writer builds a batch's bytes itself (each message serialized once); they must
    be exactly protobuf's serialization of RefereeBatch, long lengths included."""
    messages = [
        pb.RefereeMessage(rejected=pb.ActionRejected(match_id="m", reason="x" * n))
        for n in (1, 200, 70_000)
    ]
    connection = _connection(batches=True)
    for message in messages[1:]:
        connection.outbox.put_nowait(message)
    data, stop = connection._batch(messages[0])
    expected = pb.RefereeMessage()
    expected.batch.messages.extend(messages)
    assert (data, stop) == (expected.SerializeToString(), False)
