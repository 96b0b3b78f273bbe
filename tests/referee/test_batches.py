"""Batching on the bot stream, piece by piece: what the referee's writer puts in one
RefereeBatch, and how the SDK groups its replies. (Whole games with batches: the bot
processes of test_referee.py use the SDK, which always asks for them; the
hidden-information audit reads batches as the bytes they were on the wire.)"""

from __future__ import annotations

import asyncio
from typing import Any

from arena.referee.connection import BATCH_BYTES, MAX_BATCH, BotConnection
from arena.sdk import _Session
from arena.v1 import arena_pb2 as pb


def _pong(nonce: int) -> pb.RefereeMessage:
    return pb.RefereeMessage(pong=pb.Pong(nonce=nonce))


class Stream:
    """Stands in for a gRPC stream: keeps what is written, in order."""

    def __init__(self) -> None:
        self.written: list[Any] = []

    async def write(self, message: Any) -> None:
        self.written.append(message)


def _connection(batches: bool) -> BotConnection:
    return BotConnection("id", "name", 100, Stream(), batches=batches)


def _nonces(written: list[pb.RefereeMessage]) -> list[list[int]]:
    """Per message written: the pongs' nonces it carries (one, or a batch's)."""
    return [
        [m.pong.nonce for m in message.batch.messages]
        if message.WhichOneof("kind") == "batch"
        else [message.pong.nonce]
        for message in written
    ]


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


def _sent(max_batch: int, count: int) -> list[list[int]]:
    session = _Session(lambda match: None, "token", 1, 0)
    session.max_batch = max_batch
    stream = Stream()
    asyncio.run(session._send(stream, _replies(count)))
    return [
        [m.action.request_id for m in message.batch.messages]
        if message.WhichOneof("kind") == "batch"
        else [message.action.request_id]
        for message in stream.written
    ]


def test_the_sdk_sends_its_replies_in_batches_the_referee_takes() -> None:
    assert _sent(4, 10) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert _sent(4, 1) == [[0]]
    # a referee that reads no batches (its Welcome says so) gets every reply alone
    assert _sent(0, 3) == [[0], [1], [2]]
