"""The referee: a grpc.aio server where bots connect and matches with them are played.

``arena referee --port 50051 --db arena.db`` runs one. The gRPC health service and
server reflection are on. Bad input ends the offending stream with a clear status and
never the referee: a wrong token (UNAUTHENTICATED), a revoked bot (PERMISSION_DENIED),
a flood of messages, an oversized one or a bot that does not read (RESOURCE_EXHAUSTED), a
malformed message (INVALID_ARGUMENT), a newer connection of the same bot (ABORTED).
Connections that never speak are closed after the idle timeout (``server_options``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hmac
import logging
import os
import socket
import threading
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.engine.match import MAX_ATTEMPTS, MAX_STRIKES
from arena.engine.seeds import fresh_seed, house_bot_seed
from arena.plugins import Registry, load_registry
from arena.referee.clock import LoopLag
from arena.referee.connection import MAX_BATCH, BotConnection, as_bytes
from arena.referee.guard import (
    REFUSE_AFTER_S,
    Admission,
    Bench,
    ConnectionGuard,
    PeerLimits,
    call_peer,
    connection_cap,
    raise_open_files_limit,
)
from arena.referee.limits import peer_host, short, tournament_problem
from arena.referee.live import LiveMatch, Seat
from arena.referee.spectators import FINISHED, Watcher, hide_replay
from arena.store import MatchRow, RecurringRow, Store, TournamentRow, variant_key
from arena.store.db import as_utc, lease_seconds
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

log = logging.getLogger("arena.referee")
HOUSE_PREFIX = "house:"
#: why a connection was closed, in the status that ends its stream
REPLACED = "replaced by a new connection of the same bot"
REVOKED = "revoked"


#: the kinds of bot rows a referee's match may seat (house bots are named apart): a
#: connected process, and code from the store it runs in the sandbox
PLAYED_HERE = ("remote", "hosted", "file")


def stored_program(store: Store, kind: str, digest: str) -> Callable[[], Any]:
    """A function giving the program of a hosted bot's or a bot file's stored code (from
    the store, checked against its digest, unpacked in the private cache)."""
    from arena.hosting import cache

    def program() -> Any:
        if kind == "file":
            from arena.sandbox import python_bot_program

            return python_bot_program(cache.bot_file(digest, store))
        return cache.program(digest, store)

    return program


class AlreadyFinished(Exception):
    """A match id whose result is in the store already: it is not played again."""


@dataclass
class RefereeConfig:
    decision_ms: int = 5000
    time_bank_ms: int = 30000
    max_attempts: int = MAX_ATTEMPTS  # illegal actions per decision before the default
    max_strikes: int = MAX_STRIKES  # strikes before a forfeit
    grace_s: float = 10.0  # how long a disconnected bot may take to come back
    #: a connection with no stream, a stream with no Hello, a TCP connection that never
    #: starts HTTP/2: closed after this long
    idle_timeout_s: float = 10.0
    max_message_bytes: int = 1 << 20
    max_messages_per_s: int = 200  # unsolicited ones (pings, stale replies): a flood
    #: what may wait for a bot's writer (it does not read beyond that): 8 MiB
    max_queued_bytes: int = 8 << 20
    open_registration: bool = True
    registration_key: str = ""
    organiser_key: str = ""
    tournament_workers: int = 1  # processes for a tournament's house-bot matches
    finished_linger_s: float = 30.0  # an ended match stays in memory this long
    #: WatchMatch streams: at most this many watch one match, and this many come from
    #: one address (over all matches; a web relay watches each match once)
    max_spectators_per_match: int = 64
    max_spectators_per_peer: int = 32
    #: TCP connections: at most this many from one address, and this many in all (0:
    #: the open-files limit, raised to its hard limit at start, less 256)
    max_connections_per_peer: int = 128
    max_connections: int = 0
    #: streams (calls) open at once on one connection, and opened a second on one
    max_streams_per_connection: int = 100
    max_new_streams_per_s: float = 200.0
    #: what the bot streams of one address share (a classroom behind one NAT): its
    #: unsolicited messages a second, its new Connect streams a second (ten times as
    #: many at once), the bytes queued for all of them
    max_messages_per_peer_s: int = 400
    max_connects_per_peer_s: float = 5.0
    max_queued_bytes_per_peer: int = 32 << 20
    #: connections of one address the referee may close in a minute (a GOAWAY, an
    #: idle timeout) before the address is banned for a minute (0: never)
    max_closed_per_peer: int = 16
    #: a submitted bot's bytes (SubmitBot), refused past this as they arrive
    max_submission_bytes: int = 16 << 20
    #: submissions checked at once (each starts its bot in a sandbox)
    max_submission_checks: int = 2
    #: how hosted bots' code runs: "sandbox" (bubblewrap), or "process" where
    #: bubblewrap cannot run (a plain subprocess: no memory shared, but no walls)
    hosted_isolation: str = "sandbox"
    #: a match this referee starts itself (a RunMatch for a match no live claim holds:
    #: a worker's late one, a client without Celery) is its own on a lease of this long,
    #: renewed every third of it: a referee that dies leaves nothing running for good
    lease_s: float = field(default_factory=lease_seconds)


class Referee:
    """Connections, live matches and the store, shared by the two services."""

    def __init__(self, store: Store, config: RefereeConfig, registry: Registry | None = None):
        self.store = store
        self.config = config
        self.registry = registry or load_registry()
        self.connections: dict[str, BotConnection] = {}
        #: bots revoked while this referee runs: their seats forfeit without a grace
        self.revoked: set[str] = set()
        #: bots cut for flooding, kept out a while (their reconnect loops cost the most)
        self.bench = Bench()
        self.matches: dict[str, LiveMatch] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._leases: asyncio.Task[None] | None = None
        self._arrivals = asyncio.Condition()
        #: where this referee listens (set by start_server): tournaments play through it
        self.address = ""
        self.tournaments = TournamentHost(self)
        #: how late the loop runs: credited to the bots' clocks (started with the server)
        self.lag = LoopLag()
        #: WatchMatch streams open, by the address they come from
        self.watching: Counter[str] = Counter()
        #: keeps the connections within their caps (made by start_server)
        self.guard: ConnectionGuard | None = None
        #: what the bot streams of one address share
        self.peer_limits = PeerLimits(
            config.max_messages_per_peer_s,
            config.max_connects_per_peer_s,
            config.max_queued_bytes_per_peer,
        )

    def bot_peers(self) -> set[str]:
        """The peers (``host:port``) of the bots' streams: the connection guard closes
        other connections first (called from its thread: a copy, made in one step)."""
        return {connection.peer for connection in list(self.connections.values())}

    # --- connections ------------------------------------------------------------------

    def connection(self, bot_id: str | None) -> BotConnection | None:
        connection = self.connections.get(bot_id) if bot_id else None
        if connection is None or connection.closed.is_set():
            return None
        return connection

    async def attach(self, connection: BotConnection, welcome: pb.RefereeMessage) -> None:
        """Register the connection first (a revocation must find it), then say Welcome,
        then give it its seats back: Welcome is always the first message."""
        old = self.connections.get(connection.bot_id)
        self.connections[connection.bot_id] = connection
        if old is not None and old is not connection:
            old.close(REPLACED)
        await connection.send(welcome)
        async with self._arrivals:
            self._arrivals.notify_all()
        for match in list(self.matches.values()):
            await match.reconnected(connection.bot_id)

    async def revoke(self, bot_id: str) -> None:
        """End a revoked bot's stream, and wake its matches waiting for it to come back:
        its seats forfeit ("revoked") at once, with no grace period."""
        self.revoked.add(bot_id)
        connection = self.connections.get(bot_id)
        if connection is not None:
            self.detach(connection, REVOKED)
        async with self._arrivals:
            self._arrivals.notify_all()

    def detach(self, connection: BotConnection, reason: str) -> None:
        connection.close(reason)
        connection.release()
        if self.connections.get(connection.bot_id) is connection:
            del self.connections[connection.bot_id]

    async def wait_for_bot(self, bot_id: str | None, timeout_s: float) -> BotConnection | None:
        """The bot's live connection, waiting up to ``timeout_s`` for it to (re)connect
        (a revoked bot never does: None at once)."""
        connection = self.connection(bot_id)
        if connection is not None:  # the common case: connected, no waiting
            return connection
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        async with self._arrivals:
            while bot_id not in self.revoked:
                connection = self.connection(bot_id)
                if connection is not None:
                    return connection
                left = deadline - loop.time()
                if left <= 0:
                    return None
                try:
                    await asyncio.wait_for(self._arrivals.wait(), timeout=left)
                except TimeoutError:
                    return None
            return None

    # --- spectators ----------------------------------------------------------------------

    def spectator_seats(self, match: LiveMatch, peer: str) -> str:
        """Why a new watcher of ``match`` from ``peer`` (an address) is refused, or "":
        at most ``max_spectators_per_match`` watchers a match, and
        ``max_spectators_per_peer`` streams from one address over all matches."""
        config = self.config
        if len(match.audience.watchers) >= config.max_spectators_per_match:
            return f"this match has {config.max_spectators_per_match} spectators already"
        if self.watching[peer] >= config.max_spectators_per_peer:
            return f"{config.max_spectators_per_peer} WatchMatch streams from your address already"
        return ""

    def unwatch(self, peer: str) -> None:
        self.watching[peer] -= 1
        if self.watching[peer] <= 0:
            del self.watching[peer]

    # --- matches ----------------------------------------------------------------------

    def create_match(self, request: pb.RunMatchRequest) -> LiveMatch:
        """Validate a match request completely, then start it. ValueError says why not."""
        registry = self.registry
        game = registry.game(request.game)
        variants = registry.resolve_variants(request.game, list(request.variants))
        options = dict(request.options)
        registry.check_options(request.game, options, variants)
        game.parse_options(options, variants)  # refuse bad options before anything runs
        if not request.players:
            raise ValueError("a match needs players")
        game.check_players(len(request.players))  # before any player is looked up
        match_id = request.match_id or uuid.uuid4().hex
        if match_id in self.matches:
            return self.matches[match_id]  # idempotent by match id
        # no seed given: a secret one (0 would let any bot replay the match offline)
        seed = request.seed if request.HasField("seed") else fresh_seed()
        deal_seed = request.deal_seed if request.HasField("deal_seed") else None
        rows = []
        for name in request.players:
            if name.startswith(HOUSE_PREFIX):
                spec = registry.bot(request.game, name[len(HOUSE_PREFIX) :])
                rows.append((self.store.house_bot(spec.name), spec))
            else:
                row = self.store.find_bot(name) if "@" in name else self.store.latest_bot(name)
                if row is None or row.kind not in PLAYED_HERE or row.revoked:
                    raise ValueError(
                        f"no registered bot named {name!r} (house bots: {HOUSE_PREFIX}NAME)"
                    )
                if row.kind != "remote" and not row.digest:
                    raise ValueError(f"{row.label} has no stored code to play")
                row.check_plays(game.name)
                rows.append((row, None))
        started = self.store.start_match(
            match_id,
            game.name,
            [row.label for row, _ in rows],
            [row.id for row, _ in rows],
            [v.name for v in variants],
            options,
            seed,
            referee=self.address,
            deal_seed=deal_seed,
            owner=self.owner,
            lease_s=self.config.lease_s,
        )
        self._keep_leases()
        if started is None:
            raise AlreadyFinished(match_id)
        # the store's word: a match played before (aborted) plays a fresh seed
        seed, deal_seed = started.seed, started.deal_seed
        seats = [
            Seat(label=row.label, house=spec.factory(index, house_bot_seed(seed, index)))
            if spec is not None
            else Seat(label=row.label, bot_id=row.id)
            if row.kind == "remote"
            else Seat(
                label=row.label, program=stored_program(self.store, row.kind, row.digest or "")
            )
            for index, (row, spec) in enumerate(rows)
        ]
        match = LiveMatch(
            referee=self,
            match_id=match_id,
            game=game,
            variants=variants,
            options=options,
            seats=seats,
            seed=seed,
            decision_ms=request.decision_ms or self.config.decision_ms,
            time_bank_ms=request.time_bank_ms or self.config.time_bank_ms,
            deal_seed=deal_seed,
        )
        self.matches[match_id] = match
        task = asyncio.create_task(match.play(), name=f"match-{match_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return match

    async def match_finished(self, match: LiveMatch) -> None:
        """Write an ended match's result and replay to the store, in a thread: the store
        may be slow, or locked for a while by another writer sharing it (workers, the
        command line), and every other match runs on this loop, with its bots' clocks
        running."""
        result = match.result_message()
        try:
            await asyncio.to_thread(
                self.store.finish_match,
                match.match_id,
                match.status,
                {
                    "reason": result.reason,
                    "places": list(result.places),
                    "detail": result.detail,
                    "forfeits": [{"seat": f.seat, "why": f.why} for f in result.forfeits],
                },
                match.replay_text(),
                match.hosted_logs(),
                self.owner,
            )
        finally:
            # A referee runs for weeks: an ended match leaves memory once its last
            # waiters have read it (the store keeps it for GetMatch and WatchMatch). An
            # unfinished one goes at once, so that running its id again plays it again.
            if match.status == "finished":
                linger = self.config.finished_linger_s
                asyncio.get_running_loop().call_later(linger, self._forget, match)
            else:
                self._forget(match)

    @property
    def owner(self) -> str:
        """This referee's name on the matches it starts (``matches.worker``)."""
        return f"referee {self.address or 'in-process'} pid {os.getpid()}"

    def _keep_leases(self) -> None:
        """Renew the leases of the matches in flight here, from one task, for as long as
        any is (started with the first match)."""
        if self._leases is None or self._leases.done():
            self._leases = asyncio.create_task(self._renew_leases(), name="leases")

    async def _renew_leases(self) -> None:
        while self.matches:
            await asyncio.sleep(self.config.lease_s / 3)
            live = [m.match_id for m in list(self.matches.values()) if m.status == "running"]
            try:
                await asyncio.to_thread(
                    self.store.renew_owned, self.owner, live, self.config.lease_s
                )
            except Exception as exc:  # the store away: the next round tries again
                log.warning("cannot renew the leases of %d matches: %s", len(live), exc)

    def _forget(self, match: LiveMatch) -> None:
        if self.matches.get(match.match_id) is match:
            del self.matches[match.match_id]

    async def shutdown(self, grace_s: float) -> None:
        """Let matches in flight finish for ``grace_s``, then abort the rest cleanly."""
        self.tournaments.stop_all()  # start no new match; those in flight may finish
        running = [t for t in self._tasks if not t.done()]
        if running:
            _, pending = await asyncio.wait(running, timeout=grace_s)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        for connection in list(self.connections.values()):
            self.detach(connection, "the referee is shutting down")
        self.lag.stop()
        if self.guard is not None:
            self.guard.stop()
        await asyncio.to_thread(self.tournaments.join, 10.0)


class TournamentHost:
    """Tournaments that this referee plays, each in a thread of its own.

    A tournament's runner is the same code as ``arena tournament run``: house-bot
    matches in worker processes, matches with connected bots through this referee's
    own RunMatch (over loopback), results written once to the shared store."""

    def __init__(self, referee: Referee) -> None:
        self.referee = referee
        self._runs: dict[str, tuple[threading.Thread, threading.Event]] = {}
        self._lock = threading.Lock()

    def start(self, tournament_id: str) -> None:
        with self._lock:
            previous = self._runs.get(tournament_id)
            if previous is not None and previous[0].is_alive() and not previous[1].is_set():
                return  # idempotent: it is being played
            # a run told to stop may still be finishing its matches in flight: the new run
            # waits for it, so that a start right after a stop resumes instead of being lost
            stop = threading.Event()
            thread = threading.Thread(
                target=self._play,
                args=(tournament_id, stop, previous[0] if previous is not None else None),
                name=f"tournament-{tournament_id}",
            )
            self._runs[tournament_id] = (thread, stop)
            thread.start()

    def _play(
        self, tournament_id: str, stop: threading.Event, previous: threading.Thread | None
    ) -> None:
        from arena.tournament.executor import LocalExecutor, RefereeClient
        from arena.tournament.runner import run_tournament

        if previous is not None:
            previous.join()
        config = self.referee.config
        executor = LocalExecutor(
            workers=config.tournament_workers,
            referee=RefereeClient(self.referee.address, config.organiser_key),
        )
        try:
            summary = run_tournament(self.referee.store, tournament_id, executor, stop=stop)
            log.info(
                "tournament %s %s: %d/%d matches",
                tournament_id,
                summary.status,
                summary.finished,
                summary.total,
            )
        except Exception:
            log.exception("tournament %s failed", tournament_id)
        finally:
            executor.close()

    def stop(self, tournament_id: str) -> None:
        run = self._runs.get(tournament_id)
        if run is not None:
            run[1].set()

    def stop_all(self) -> None:
        for _, stop in self._runs.values():
            stop.set()

    def join(self, timeout_s: float) -> None:
        for thread, _ in list(self._runs.values()):
            thread.join(timeout_s)


def _check_key(given: str, expected: str) -> bool:
    return bool(expected) and hmac.compare_digest(given.encode(), expected.encode())


def _bearer(context: grpc.aio.ServicerContext) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and value.startswith("Bearer "):
            return value[len("Bearer ") :]
    return ""


#: what a BotBatch may not hold, as an error names it
_NOT_IN_A_BATCH = {"batch": "a batch", "hello": "a Hello", None: "an empty BotMessage"}


def ending_status(bot_name: str, reason: str) -> tuple[grpc.StatusCode | None, str]:
    """The status that ends a bot's stream closed for ``reason`` (None: a plain end)."""
    if reason.startswith(("flood", "not reading")):
        return grpc.StatusCode.RESOURCE_EXHAUSTED, reason
    if reason == REVOKED:
        return grpc.StatusCode.PERMISSION_DENIED, f"bot {bot_name} was revoked by the organiser"
    if reason.startswith("malformed"):
        return grpc.StatusCode.INVALID_ARGUMENT, reason
    if reason == REPLACED:
        return grpc.StatusCode.ABORTED, reason
    return None, ""


class BotService(pb_grpc.BotServiceServicer):
    def __init__(self, referee: Referee) -> None:
        self.referee = referee

    async def Connect(
        self,
        request_iterator: AsyncIterator[pb.BotMessage],
        context: grpc.aio.ServicerContext,
    ) -> None:
        referee = self.referee
        config = referee.config
        refused = referee.peer_limits.connect(peer_host(context.peer()))
        if refused:  # a reconnect loop: refused before the token is looked up, and
            await asyncio.sleep(REFUSE_AFTER_S)  # slowly: a loop waits instead of spinning
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)
        try:
            first = await asyncio.wait_for(anext(request_iterator), config.idle_timeout_s)
        except (TimeoutError, StopAsyncIteration):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "send Hello with your token first"
            )
        except Exception as exc:  # bytes that are no BotMessage at all
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"the first message is not a BotMessage ({type(exc).__name__}); send Hello",
            )
        if first.WhichOneof("kind") != "hello":
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "the first message must be Hello with your token"
            )
        # off the loop: the store may be slow or busy, and every match runs on this loop
        token = first.hello.token
        bot = await asyncio.to_thread(referee.store.bot_by_token, token) if token else None
        if bot is None:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "unknown token: register the bot and use the token it got",
            )
        if bot.revoked:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, f"bot {bot.name} is revoked")
        benched = referee.bench.left(bot.id)
        if benched > 0:  # cut for flooding a moment ago: no new budget yet, and slowly
            await asyncio.sleep(REFUSE_AFTER_S)
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"bot {bot.name} was cut for flooding: it may connect again in {benched:.0f} s",
            )
        connection = BotConnection(
            bot.id,
            bot.name,
            config.max_messages_per_s,
            context,
            batches=first.hello.batches,
            max_queued_bytes=config.max_queued_bytes,
            peer=call_peer(context.peer()),
            limits=referee.peer_limits,
        )
        welcome = pb.RefereeMessage(
            welcome=pb.Welcome(
                bot_id=bot.id,
                bot_name=bot.name,
                version=bot.version,
                max_message_bytes=config.max_message_bytes,
                batches=True,
                max_batch=MAX_BATCH,
            )
        )
        # the headers go out now, alone: a status sent later while a write is still in
        # flight must not need them (gRPC refuses two operations of one kind at once)
        await context.send_initial_metadata(())
        await referee.attach(connection, welcome)
        log.info("bot %s@%d connected (%s)", bot.name, bot.version, first.hello.client)
        await self._serve(request_iterator, context, connection)

    async def _serve(
        self,
        request_iterator: AsyncIterator[pb.BotMessage],
        context: grpc.aio.ServicerContext,
        connection: BotConnection,
    ) -> None:
        """Read and write the stream until either side ends it, then end it with the
        status that says why. The status is set, not sent by abort(): a write may still
        be in flight to a bot that does not read, and gRPC sends the status after it."""
        reader = asyncio.create_task(self._read(request_iterator, connection))
        writer = asyncio.create_task(connection.write_loop())
        closed = asyncio.create_task(connection.closed.wait())
        try:
            await asyncio.wait({reader, closed}, return_when=asyncio.FIRST_COMPLETED)
            connection.close(connection.close_reason or "the bot closed its stream")
            # let the writer flush what was queued before the close (MatchEnded, say);
            # a flood's or a bot's that does not read was dropped: nothing more goes out
            await asyncio.wait({writer}, timeout=2.0)
        finally:
            for task in (reader, writer, closed):
                task.cancel()
            self.referee.detach(connection, connection.close_reason or "stream ended")
        if connection.close_reason.startswith("flood"):
            wait = self.referee.bench.cut(connection.bot_id)
            connection.close_reason += f"; reconnect in {wait:.0f} s at the earliest"
        code, details = ending_status(connection.bot_name, connection.close_reason)
        if code is not None:
            context.set_code(code)
            context.set_details(details)

    async def _read(
        self, request_iterator: AsyncIterator[pb.BotMessage], connection: BotConnection
    ) -> None:
        clock = asyncio.get_running_loop().time
        behind = self.referee.lag.behind
        try:
            async for message in request_iterator:
                # a reply's clock stops here, not when its match wakes, and not while
                # the loop was behind and left the message unread
                arrived = clock()
                arrived -= behind(arrived)
                if message.WhichOneof("kind") == "batch":
                    items = message.batch.messages
                    if not 0 < len(items) <= MAX_BATCH:  # an empty one would dodge the flood limit
                        connection.close(
                            f"malformed message: a batch of {len(items)} messages "
                            f"(1 to {MAX_BATCH})"
                        )
                        return
                    kinds = {item.WhichOneof("kind") for item in items}
                    wrong = [what for kind, what in _NOT_IN_A_BATCH.items() if kind in kinds]
                    if wrong:  # refused whole: none of its messages is acted on
                        connection.close(f"malformed message: a batch holds {wrong[0]}")
                        return
                    for item in items:
                        if not self._handle(item, connection, arrived):
                            return
                elif not self._handle(message, connection, arrived):
                    return
            connection.close("the bot closed its stream")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a broken stream: this connection ends, nothing else
            connection.close(f"malformed message: {type(exc).__name__}: {exc}")

    @staticmethod
    def _handle(message: pb.BotMessage, connection: BotConnection, arrived: float) -> bool:
        """One message from the bot (alone or in a batch); False once it ends the
        connection (a flood, a malformed message)."""
        kind = message.WhichOneof("kind")
        solicited = kind == "action" and connection.expected(message.action)
        if not solicited and (why := connection.over_rate()):
            connection.close(why, drop=True)
            return False
        if kind is None or kind == "hello":
            connection.close(
                "malformed message: an empty BotMessage (set one of its fields)"
                if kind is None
                else "malformed message: a second Hello on a connected stream"
            )
            return False
        if kind == "action":
            connection.deliver(message.action, arrived)
        elif kind == "ping":
            connection.send_nowait(pb.RefereeMessage(pong=pb.Pong(nonce=message.ping.nonce)))
        return True


class ArenaService(pb_grpc.ArenaServiceServicer):
    def __init__(self, referee: Referee) -> None:
        from arena.referee.submit import Submissions

        self.referee = referee
        self.submissions = Submissions(referee)

    def _is_organiser(self, context: grpc.aio.ServicerContext) -> bool:
        key = self.referee.config.organiser_key
        return not key or _check_key(_bearer(context), key)

    def _replay_visible(self, match_id: str, context: grpc.aio.ServicerContext) -> bool:
        """A tournament's replays (and seeds) stay with the organiser until the whole
        tournament has ended. Each match's secrets are its own (the rotations of a deal
        share only the public start), but a replay is every move of a rotation that
        another rotation of the same deal still plays from the same board: whoever sees
        how one seat's bot met that start plays the next with hindsight."""
        if self._is_organiser(context):
            return True
        row = self.referee.store.match(match_id)
        if row is None or row.tournament_id is None:
            return True
        tournament = self.referee.store.tournament(row.tournament_id)
        return tournament is not None and tournament.status == "finished"

    async def _organiser(self, context: grpc.aio.ServicerContext) -> None:
        key = self.referee.config.organiser_key
        if key and not _check_key(_bearer(context), key):
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED,
                "this call needs the organiser key (authorization: Bearer KEY)",
            )

    async def RegisterBot(
        self,
        request: pb.RegisterBotRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.RegisterBotResponse:
        config = self.referee.config
        if not config.open_registration and not _check_key(
            request.registration_key, config.registration_key
        ):
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED,
                "registration is closed: a registration key is needed",
            )
        store = self.referee.store
        try:
            for game in request.games:
                self.referee.registry.game(game)  # ValueError naming the installed games
            latest = store.latest_bot(request.name) if request.name else None
            if latest is not None and not request.new_version:
                # never silently: a new version takes over the name, and the process
                # still running with the old token would forfeit every seat it is given
                connected = self.referee.connection(latest.id) is not None
                await context.abort(
                    grpc.StatusCode.ALREADY_EXISTS,
                    f"bot {latest.name} is registered already: version {latest.version} "
                    f"({'connected' if connected else 'not connected'}); use its token, or "
                    f"register version {latest.version + 1} with --new-version (new_version): "
                    "matches naming the bot then seat the new version",
                )
            bot, token = store.register_bot(request.name, list(request.games))
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return pb.RegisterBotResponse(
            bot_id=bot.id, name=bot.name, version=bot.version, token=token
        )

    async def SubmitBot(
        self,
        request_iterator: AsyncIterator[pb.SubmitBotChunk],
        context: grpc.aio.ServicerContext,
    ) -> pb.SubmitBotResponse:
        return await self.submissions.submit(request_iterator, context)

    async def GetBotLog(
        self,
        request: pb.GetBotLogRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.GetBotLogResponse:
        return await self.submissions.bot_log(request, context)

    async def ListBots(
        self,
        request: pb.ListBotsRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.ListBotsResponse:
        referee = self.referee

        def listing() -> tuple[list[Any], dict[str, int]]:
            bots = referee.store.bots(include_house=False)
            return bots, referee.store.code_sizes(b.digest for b in bots if b.digest)

        bots, sizes = await asyncio.to_thread(listing)
        return pb.ListBotsResponse(
            bots=[
                pb.BotInfo(
                    bot_id=b.id,
                    name=b.name,
                    version=b.version,
                    revoked=b.revoked,
                    connected=referee.connection(b.id) is not None,
                    games=b.games or [],
                    kind=b.kind,
                    digest=b.digest or "",
                    size=sizes.get(b.digest or "", 0),
                    created=as_utc(b.created).isoformat(timespec="seconds"),
                )
                for b in bots
            ]
        )

    async def RevokeBot(
        self,
        request: pb.RevokeBotRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.RevokeBotResponse:
        await self._organiser(context)
        if not self.referee.store.revoke_bot(request.bot_id):
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no bot {request.bot_id}")
        await self.referee.revoke(request.bot_id)
        return pb.RevokeBotResponse()

    async def RunMatch(
        self,
        request: pb.RunMatchRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.RunMatchResponse:
        await self._organiser(context)
        try:
            match = self.referee.create_match(request)
        except AlreadyFinished:  # a retried request: the result stands, nothing is replayed
            row = self.referee.store.match(request.match_id)
            return pb.RunMatchResponse(
                match_id=request.match_id,
                match=stored_info(self.referee.store, row) if request.wait else None,
            )
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        response = pb.RunMatchResponse(match_id=match.match_id)
        if request.wait:
            await match.done.wait()
            response.match.CopyFrom(match.info())
        return response

    async def GetMatch(
        self,
        request: pb.GetMatchRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.MatchInfo:
        match = self.referee.matches.get(request.match_id)
        if match is not None:
            info = match.info()
        else:
            row = self.referee.store.match(request.match_id)
            if row is None:
                await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id}")
            info = stored_info(self.referee.store, row)
        hides = info.replay_json or info.HasField("seed") or info.HasField("deal_seed")
        if hides and not self._replay_visible(request.match_id, context):
            hide_replay(info)
        return info

    # --- tournaments and leaderboards ------------------------------------------------

    async def _tournament(self, tournament_id: str, context: grpc.aio.ServicerContext) -> Any:
        row = self.referee.store.tournament(tournament_id) if tournament_id else None
        if row is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no tournament {tournament_id!r}")
        return row

    def _info(
        self, row: Any, context: grpc.aio.ServicerContext, standings: bool = False
    ) -> pb.TournamentInfo:
        info = tournament_info(self.referee.store, row, standings)
        if row.status != "finished" and not self._is_organiser(context):
            # the seeds of its matches derive from it: organiser only until the end
            info.ClearField("seed")
        return info

    async def CreateTournament(
        self,
        request: pb.CreateTournamentRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.TournamentInfo:
        from arena.tournament.runner import TournamentSpec, create_tournament

        await self._organiser(context)
        problem = tournament_problem(
            len(request.bots), request.seats, request.games_per_pairing or 1
        )
        if problem is not None:  # before any work: a schedule of 2^32 games is gigabytes
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        spec = TournamentSpec(
            game=request.game,
            bots=list(request.bots),
            seats=request.seats,
            games_per_pairing=request.games_per_pairing or 1,
            variants=list(request.variants),
            options=dict(request.options),
            # not given: create_tournament draws a secret one
            seed=request.seed if request.HasField("seed") else None,
            format="gauntlet" if request.challenger else "round-robin",
            challenger=request.challenger or None,
            name=request.name,
            decision_ms=request.decision_ms,
            time_bank_ms=request.time_bank_ms,
        )
        referee = self.referee
        try:
            row = await asyncio.to_thread(create_tournament, referee.store, spec, referee.registry)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        if request.start:
            referee.tournaments.start(row.id)
        return self._info(row, context)

    async def StartTournament(
        self,
        request: pb.StartTournamentRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.TournamentInfo:
        await self._organiser(context)
        row = await self._tournament(request.tournament_id, context)
        if row.status != "finished":
            self.referee.tournaments.start(row.id)
        return self._info(row, context)

    async def StopTournament(
        self,
        request: pb.StopTournamentRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.TournamentInfo:
        await self._organiser(context)
        row = await self._tournament(request.tournament_id, context)
        self.referee.tournaments.stop(row.id)
        return self._info(row, context)

    async def GetTournament(
        self,
        request: pb.GetTournamentRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.TournamentInfo:
        row = await self._tournament(request.tournament_id, context)
        return await asyncio.to_thread(self._info, row, context, request.standings)

    async def ListTournaments(
        self,
        request: pb.ListTournamentsRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.ListTournamentsResponse:
        def listing() -> pb.ListTournamentsResponse:
            rows = self.referee.store.tournaments()
            return pb.ListTournamentsResponse(
                tournaments=[self._info(row, context) for row in rows]
            )

        return await asyncio.to_thread(listing)

    async def GetLeaderboard(
        self,
        request: pb.GetLeaderboardRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.Leaderboard:
        referee = self.referee
        try:
            referee.registry.game(request.game)
            variants = [
                v.name
                for v in referee.registry.resolve_variants(request.game, list(request.variants))
            ]
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        tournament_id = None
        options = dict(request.options)
        if request.tournament_id:
            tournament = await self._tournament(request.tournament_id, context)
            tournament_id, options = tournament.id, tournament.options
        try:
            key = variant_key(variants, options, request.game)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, short(str(exc)))
        return await asyncio.to_thread(
            leaderboard_message, referee.store, request.game, key, tournament_id
        )

    # --- recurring tournaments ---------------------------------------------------------

    async def ListRecurring(
        self,
        request: pb.ListRecurringRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.ListRecurringResponse:
        rows = await asyncio.to_thread(self.referee.store.recurring)
        return pb.ListRecurringResponse(recurring=[recurring_info(row) for row in rows])

    async def PauseRecurring(
        self,
        request: pb.PauseRecurringRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.RecurringInfo:
        store = self.referee.store
        return await self._change_recurring(store.pause_recurring, request.recurring_id, context)

    async def ResumeRecurring(
        self,
        request: pb.ResumeRecurringRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.RecurringInfo:
        store = self.referee.store

        def resume(recurring_id: str) -> RecurringRow | None:
            return store.resume_recurring(recurring_id, datetime.now(UTC))

        return await self._change_recurring(resume, request.recurring_id, context)

    async def DeleteRecurring(
        self,
        request: pb.DeleteRecurringRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.RecurringInfo:
        store = self.referee.store
        return await self._change_recurring(store.delete_recurring, request.recurring_id, context)

    async def _change_recurring(
        self,
        change: Callable[[str], RecurringRow | None],
        recurring_id: str,
        context: grpc.aio.ServicerContext,
    ) -> pb.RecurringInfo:
        """An organiser's change to a recurring tournament (off the event loop: it
        writes to the store); what it is now (or was, deleted)."""
        await self._organiser(context)
        row = await asyncio.to_thread(change, recurring_id)
        if row is None:
            await context.abort(
                grpc.StatusCode.NOT_FOUND, f"no recurring tournament {recurring_id!r}"
            )
        return recurring_info(row)

    async def WatchMatch(
        self,
        request: pb.WatchMatchRequest,
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[pb.SpectatorMessage | bytes]:
        match = self.referee.matches.get(request.match_id)
        if match is None:
            row = self.referee.store.match(request.match_id)
            if row is None or row.status in ("pending", "running"):
                await context.abort(
                    grpc.StatusCode.NOT_FOUND, f"no live match {short(request.match_id, 64)}"
                )
            # ended and gone from memory: the whole record, as after any ending
            info = stored_info(self.referee.store, row)
            if request.without_replay or not self._replay_visible(request.match_id, context):
                hide_replay(info)
            yield pb.SpectatorMessage(finished=info)
            return
        if match.status != "running":
            info = match.info()
            if request.without_replay or not self._replay_visible(request.match_id, context):
                hide_replay(info)
            yield pb.SpectatorMessage(finished=info)
            return
        peer = peer_host(context.peer())
        full = self.referee.spectator_seats(match, peer)
        if full:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, full)
        watcher = Watcher(batches=request.batches, peer=peer)
        self.referee.watching[peer] += 1
        match.audience.join(watcher)  # where it stands first; every later step follows
        try:
            while (data := await watcher.queue.get()) is not None:
                if data is FINISHED:
                    hidden = request.without_replay or not self._replay_visible(
                        request.match_id, context
                    )
                    yield match.audience.end(hidden)
                    return
                yield data  # serialized once for every watcher (the response serializer)
            # dropped: it did not keep up
            context.set_code(grpc.StatusCode.RESOURCE_EXHAUSTED)
            context.set_details(watcher.dropped)
        finally:
            match.audience.leave(watcher)
            self.referee.unwatch(peer)


def tournament_info(store: Store, row: TournamentRow, standings: bool = False) -> pb.TournamentInfo:
    counts = store.progress(row.id)
    info = pb.TournamentInfo(
        tournament_id=row.id,
        name=row.name,
        game=row.game,
        variants=row.variants,
        options=row.options,
        format=row.format,
        seats=row.seats,
        games_per_pairing=row.games_per_pairing,
        seed=row.seed,
        status=row.status,
        bots=[entry.label for entry in store.entries(row.id)],
        matches=sum(counts.values()),
        finished=counts.get("finished", 0),
        pending=counts.get("pending", 0),
        running=counts.get("running", 0),
        aborted=counts.get("aborted", 0),
        failed=counts.get("failed", 0),
        created=row.created.isoformat(),
    )
    if standings:
        info.standings.CopyFrom(
            leaderboard_message(
                store,
                row.game,
                variant_key(row.variants, row.options, row.game),
                tournament_id=row.id,
            )
        )
    return info


def recurring_info(row: RecurringRow) -> pb.RecurringInfo:
    return pb.RecurringInfo(
        recurring_id=row.id,
        name=row.name,
        game=row.game,
        variants=row.variants,
        options=row.options,
        seats=row.seats,
        games_per_pairing=row.games_per_pairing,
        house_bots=row.house_bots,
        every_s=row.every_s,
        next_run=as_utc(row.next_run).isoformat(),
        runs=row.runs,
        last_tournament_id=row.last_tournament_id or "",
        paused=not row.enabled,
    )


def leaderboard_message(
    store: Store, game: str, board: str, tournament_id: str | None = None
) -> pb.Leaderboard:
    """The leaderboard of ``game`` whose key is ``board`` (``variant_key``)."""
    from arena.store.models import board_parts
    from arena.tournament.leaderboard import compute

    # a read fits and never writes: the ratings table is rewritten by the runs themselves
    rows = compute(store, game, board, tournament_id)
    variants, options = board_parts(board)
    return pb.Leaderboard(
        game=game,
        variants=sorted(variants),
        options=options,
        board=board,
        rows=[
            pb.LeaderboardRow(
                **r.figures(), bot=r.label, openskill_mu=r.mu, openskill_sigma=r.sigma
            )
            for r in rows
        ],
    )


def stored_info(store: Store, row: MatchRow) -> pb.MatchInfo:
    """A match as the store holds it (finished, aborted, or not started yet); its seed
    with its replay, once it has finished."""
    finished = row.status == "finished"
    info = pb.MatchInfo(
        match_id=row.id,
        status=row.status,
        game=row.game,
        players=row.players,
        replay_json=(store.replay(row.id) or "") if finished else "",
        seed=row.seed if finished else None,
        deal_seed=row.deal_seed if finished else None,
    )
    if row.result:
        info.result.CopyFrom(
            pb.Result(
                reason=row.result["reason"],
                places=row.result["places"],
                detail=row.result["detail"],
                forfeits=[pb.Forfeit(**f) for f in row.result.get("forfeits", [])],
            )
        )
    return info


def _add_service(servicer: Any, server: grpc.aio.Server, service: str) -> None:
    """What the generated ``add_..._to_server`` does for ``service`` (its name in the
    .proto), with a response serializer that also takes bytes: what was serialized
    once for many streams (a spectators' batch) or built as bytes (a bot's batch) is
    written as it is."""
    descriptor = pb.DESCRIPTOR.services_by_name[service]
    kinds = {
        (False, False): grpc.unary_unary_rpc_method_handler,
        (False, True): grpc.unary_stream_rpc_method_handler,
        (True, False): grpc.stream_unary_rpc_method_handler,
        (True, True): grpc.stream_stream_rpc_method_handler,
    }
    handlers = {
        method.name: kinds[method.client_streaming, method.server_streaming](
            getattr(servicer, method.name),
            request_deserializer=getattr(pb, method.input_type.name).FromString,
            response_serializer=as_bytes,
        )
        for method in descriptor.methods
    }
    name = descriptor.full_name
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
    server.add_registered_method_handlers(name, handlers)


def server_options(config: RefereeConfig, connections: int = 0) -> list[tuple[str, int]]:
    """gRPC's own limits, per connection (``connections``: the most the referee keeps;
    0: no cap of gRPC's own).

    One referee per port: port sharing (SO_REUSEPORT, on by default) would let a second
    referee start on a used port and take half of the bots. A connection that never
    finishes its HTTP/2 handshake, or carries no stream, is closed after the idle
    timeout (a stream without Hello is ended by the handler within the same time). The
    referee pings each connection every 30 s and drops one whose peer does not answer
    within 10 s (a bot gone without a word: a crash, a partition), streams or not.

    Against floods: at most ``max_streams_per_connection`` streams open at once on a
    connection (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS; streams beyond are refused);
    a peer's PINGs at most one every 5 s without data from the referee in between, and
    the third too early ends the connection (GOAWAY ENHANCE_YOUR_CALM
    ``too_many_pings``); past ``connections`` in all, gRPC closes a new one at once."""
    idle_ms = int(config.idle_timeout_s * 1000)
    options = [
        ("grpc.so_reuseport", 0),
        ("grpc.max_receive_message_length", config.max_message_bytes),
        ("grpc.max_send_message_length", 16 << 20),
        ("grpc.server_handshake_timeout_ms", idle_ms),
        ("grpc.max_connection_idle_ms", idle_ms),
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.keepalive_permit_without_calls", 1),
        # the server's side of pings: the least time between a peer's PINGs it accepts
        # (GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS), and the strikes
        ("grpc.http2.min_ping_interval_without_data_ms", 5000),
        ("grpc.http2.max_ping_strikes", 2),
        ("grpc.max_concurrent_streams", config.max_streams_per_connection),
        # a read takes at most 16 KiB: a burst of 10,000 PINGs is read (and acked) a
        # thousand at a time, and what follows the GOAWAY is never read
        ("grpc.experimental.tcp_max_read_chunk_size", 16 << 10),
    ]
    if connections > 0:
        options.append(("grpc.max_allowed_incoming_connections", connections))
    return options


def check_port_free(host: str, port: int) -> None:
    """OSError naming the port if something listens on it already (another referee):
    said before anything else is opened, in one line."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host.strip("[]") or None, port, type=socket.SOCK_STREAM)
    except OSError:
        return  # a host that does not resolve: gRPC says so itself
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gRPC binds
            try:
                probe.bind(address)
            except OSError as exc:
                raise OSError(
                    f"port {port} on {host} is in use ({exc.strerror}): "
                    "is another referee running there?"
                ) from None


async def start_server(
    referee: Referee, address: str, unix_socket: str | None = None
) -> tuple[grpc.aio.Server, int]:
    """Start serving on ``address`` (``host:port``; port 0 picks a free one), and on the
    Unix socket ``unix_socket`` too if given (what sandboxed bots connect to: the socket
    is bound into their sandbox, which has no network)."""
    config = referee.config
    # every descriptor the system allows, and connections capped below that: a flood of
    # connections must not take what the store and a registered bot need
    cap = connection_cap(config.max_connections, raise_open_files_limit())
    admission = Admission(config.max_new_streams_per_s, 2 * config.max_new_streams_per_s)
    server = grpc.aio.server(options=server_options(config, cap), interceptors=[admission])
    _add_service(BotService(referee), server, "BotService")
    _add_service(ArenaService(referee), server, "ArenaService")
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = (
        pb.DESCRIPTOR.services_by_name["BotService"].full_name,
        pb.DESCRIPTOR.services_by_name["ArenaService"].full_name,
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        reflection.SERVICE_NAME,
    )
    reflection.enable_server_reflection(names, server)
    try:
        port = server.add_insecure_port(address)
    except RuntimeError:  # gRPC could not bind: in use, or not an address of this host
        raise OSError(f"cannot listen on {address}: the port is in use or not ours") from None
    if unix_socket is not None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(unix_socket)  # a socket left by an earlier referee
        try:
            server.add_insecure_port(f"unix:{unix_socket}")
        except RuntimeError:
            raise OSError(f"cannot listen on the Unix socket {unix_socket}") from None
    try:
        return await _serving(
            referee, server, port, address, cap, admission, health_servicer, unix_socket
        )
    except BaseException:  # Ctrl-C while starting: nothing left for the collector to stop
        referee.lag.stop()
        if referee.guard is not None:
            referee.guard.stop()
        try:
            await server.stop(None)
        except Exception:  # cancelled while gRPC's own start ran: it cannot stop cleanly
            log.debug("a server stopped while it started", exc_info=True)
        raise


async def _serving(
    referee: Referee,
    server: grpc.aio.Server,
    port: int,
    address: str,
    cap: int,
    admission: Admission,
    health_servicer: Any,
    unix_socket: str | None,
) -> tuple[grpc.aio.Server, int]:
    config = referee.config
    names = (
        pb.DESCRIPTOR.services_by_name["BotService"].full_name,
        pb.DESCRIPTOR.services_by_name["ArenaService"].full_name,
    )
    await server.start()
    if unix_socket is not None:
        # a sandboxed bot runs as a user of its own: it may connect (its sandbox, not
        # the socket's mode, keeps everyone else away from it)
        os.chmod(unix_socket, 0o666)
    referee.lag.start()
    referee.guard = ConnectionGuard(
        port,
        config.max_connections_per_peer,
        cap,
        referee.bot_peers,
        streams_per_s=config.max_new_streams_per_s,
        calls=lambda: admission.calls,
        closed_per_peer=config.max_closed_per_peer,
    )
    admission.drop = referee.guard.drop
    referee.guard.start()
    host = address.rsplit(":", 1)[0]
    referee.address = f"{'127.0.0.1' if host in ('0.0.0.0', '[::]', '') else host}:{port}"
    for name in ("", *names):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return server, port


async def serve(
    address: str,
    store: Store,
    config: RefereeConfig,
    ready: asyncio.Event | None = None,
    shutdown_grace_s: float = 10.0,
    unix_socket: str | None = None,
) -> None:
    """Serve until SIGINT or SIGTERM, then shut down gracefully: matches in flight get
    ``shutdown_grace_s`` to finish, the rest are aborted cleanly (recorded as aborted,
    their bots told), and only then does the server stop."""
    import signal

    referee = Referee(store, config)
    server, port = await start_server(referee, address, unix_socket)
    # What exists now (modules, plugins, protobuf descriptors: about 90,000 objects)
    # lives as long as the process: out of the garbage collector's way, its full
    # collections walk only what the matches make (each walk of it took ~50 ms here).
    gc.collect()
    gc.freeze()
    # one line, on stdout: what a user reads, and what `arena demo` and tests wait for
    print(f"referee listening on {address.rsplit(':', 1)[0]}:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if ready is not None:
        ready.set()
    try:
        await stop.wait()
        log.info("shutting down: %d matches in flight", len(referee._tasks))
    finally:
        await referee.shutdown(grace_s=shutdown_grace_s)
        await server.stop(grace=2.0)
        log.info("referee stopped (the loop's longest stall: %.0f ms)", 1000 * referee.lag.worst)
