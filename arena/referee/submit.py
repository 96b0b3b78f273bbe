"""``SubmitBot`` and ``GetBotLog``: bots whose code the referee keeps and runs.

A submission is a client stream: a header (the name, a token or the registration key,
the file's name and size, the games), then the file's bytes in chunks. The header is
checked before any byte is read (authentication, the declared size against the cap);
the bytes are counted as they arrive, and the call ends (RESOURCE_EXHAUSTED) at the
first chunk past the cap, the rest unread. The whole file is then checked in a thread
(``arena.hosting.check``: the archive's bounds, the manifest, the code asked its first
decision in the sandbox) and kept in the store by content (a new version for new
content, the same version for the same content).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import grpc

from arena.hosting.archive import Bounds, Refused, format_of
from arena.hosting.check import check_submission
from arena.referee.limits import request_problem
from arena.store import BotRow
from arena.store.db import BOT_NAME_RULE, valid_bot_name
from arena.v1 import arena_pb2 as pb

if TYPE_CHECKING:
    from arena.referee.server import Referee


class Submissions:
    """The referee's submissions: at most ``max_checks`` checked at once (each runs a
    sandbox), the others wait their turn."""

    def __init__(self, referee: Referee) -> None:
        self.referee = referee
        self._checks = asyncio.Semaphore(referee.config.max_submission_checks)

    async def submit(
        self, chunks: AsyncIterator[pb.SubmitBotChunk], context: grpc.aio.ServicerContext
    ) -> pb.SubmitBotResponse:
        config = self.referee.config
        store = self.referee.store
        cap = config.max_submission_bytes
        first = await anext(aiter(chunks), None)
        if first is None or first.WhichOneof("kind") != "header":
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                "the first chunk of a submission must be its header (SubmitBotHeader)",
            )
        header = first.header
        problem = request_problem(header)
        if problem is not None:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        if header.size > cap:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{header.size} bytes: over this referee's cap of {cap} bytes a submission",
            )
        try:
            format_of(header.filename)
        except Refused as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        owner, new = await asyncio.to_thread(self._owner, header)
        if isinstance(owner, tuple):
            await context.abort(*owner)
        name = owner.name if isinstance(owner, BotRow) else header.name
        parts: list[bytes] = []
        total = 0
        async for chunk in chunks:
            if chunk.WhichOneof("kind") != "data":
                await context.abort(
                    grpc.StatusCode.INVALID_ARGUMENT, "after the header, only data chunks"
                )
            total += len(chunk.data)
            if total > cap:  # the rest is not read: the call ends here
                await context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"over this referee's cap of {cap} bytes a submission (refused at "
                    f"{total} bytes, the rest unread)",
                )
            parts.append(chunk.data)
        data = b"".join(parts)
        if header.size and header.size != len(data):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"the header says {header.size} bytes, {len(data)} came",
            )
        async with self._checks:
            try:
                checked = await asyncio.to_thread(
                    check_submission,
                    data,
                    header.filename,
                    list(header.games),
                    self.referee.registry,
                    bounds=Bounds(max_bytes=cap),
                    isolation=config.hosted_isolation,
                    decision_ms=config.decision_ms,
                )
            except Refused as exc:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"refused: {exc}")
        digest = hashlib.sha256(data).hexdigest()

        def keep() -> tuple[BotRow, str | None, bool]:
            store.put_code(digest, checked.format, data)
            return store.hosted_bot(name, digest, checked.games, token=new)

        try:
            row, token, made = await asyncio.to_thread(keep)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return pb.SubmitBotResponse(
            bot_id=row.id,
            name=row.name,
            version=row.version,
            digest=digest,
            new_version=made,
            token=token or "",
            games=list(row.games or []),
        )

    def _owner(self, header: pb.SubmitBotHeader) -> tuple[Any, bool]:
        """Who submits: (the version whose token was given, False), (None, True) for a
        new name, or ((status, why), False) to refuse."""
        from arena.referee.server import _check_key

        config = self.referee.config
        store = self.referee.store
        if header.token:
            row = store.bot_by_token(header.token)
            if row is None:
                return (grpc.StatusCode.UNAUTHENTICATED, "unknown token"), False
            if row.revoked:
                return (grpc.StatusCode.PERMISSION_DENIED, f"{row.label} is revoked"), False
            if header.name and header.name != row.name:
                return (
                    grpc.StatusCode.PERMISSION_DENIED,
                    f"this token is bot {row.name}'s, not {header.name}'s",
                ), False
            return row, False
        if not valid_bot_name(header.name):
            return (
                grpc.StatusCode.INVALID_ARGUMENT,
                f"bot name {header.name!r}: {BOT_NAME_RULE}",
            ), False
        if store.has_bot(header.name):
            return (
                grpc.StatusCode.ALREADY_EXISTS,
                f"bot {header.name} exists: submit a new version with the token of one of "
                "its versions (--token-file)",
            ), False
        if not config.open_registration and not _check_key(
            header.registration_key, config.registration_key
        ):
            return (
                grpc.StatusCode.PERMISSION_DENIED,
                "registration is closed: a new bot needs the registration key",
            ), False
        return None, True

    async def bot_log(
        self, request: pb.GetBotLogRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetBotLogResponse:
        store = self.referee.store

        def read() -> tuple[BotRow | None, tuple[str, str | None] | None, BotRow | None]:
            owner = store.bot_by_token(request.token) if request.token else None
            seat = store.seat_stderr(request.match_id, request.seat)
            played = store.bot(seat[0]) if seat is not None else None
            return owner, seat, played

        owner, seat, played = await asyncio.to_thread(read)
        if owner is None or owner.revoked:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "a bot's token is needed")
        if seat is None or played is None or played.name != owner.name:
            # the same answer for a seat that is not there and another owner's seat
            await context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"no seat {request.seat} of match {request.match_id} played by {owner.name}",
            )
        return pb.GetBotLogResponse(stderr=(seat[1] or "").encode())
