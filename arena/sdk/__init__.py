"""The Python bot SDK: subclass :class:`Bot`, implement a decide method, call run_bot().

A minimal bot::

    import random
    from arena.sdk import Bot, run_bot

    class Random(Bot):
        def decide_stratego(self, observation, decision):
            if decision.kind == "move":
                src, dst = random.choice(decision.options["moves"])
                return {"type": "move", "from": src, "to": dst}
            return self.default_setup(decision)

    run_bot(Random, referee="localhost:50051", token="...")

The observation and the decision are exactly what an in-process bot gets: docs/sdk.md
describes every field, decision and action, and ``risk_map()`` the Risk map. One
connection plays many matches at once, each with its own Bot instance. Decisions run in
the event loop (``threads=N`` runs them in a pool of N threads, for bots that wait on
I/O or release the GIL); in the loop, the decisions of a batch of requests are answered
with one batch of replies (or sooner, if deciding them takes over 20 ms). The SDK
reconnects with backoff and resumes its seats.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import grpc

from arena.engine.core import Decision, ordinal
from arena.engine.match import LazyObservation
from arena.referee.codec import fill_action, from_json_text, observation_from_proto
from arena.sdk.risk_map import Card, Continent, RiskMap, risk_map
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

log = logging.getLogger("arena.sdk")
#: Replies to a batch leave together, unless deciding them takes longer than this: then
#: what is decided goes at once (a slow bot must not make its first decisions late).
FLUSH_AFTER_S = 0.02
FATAL = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)


@dataclass
class MatchContext:
    """What a bot knows about its match when it starts."""

    match_id: str
    game: str
    seat: int
    players: list[str]
    variants: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class MatchEnd:
    """How a match ended, as a bot's ``on_end`` is told."""

    #: victory, turn_limit, no_moves, draw, forfeit, or aborted (nobody placed)
    reason: str
    #: by seat, 1 is best, ties share; empty for an aborted match
    places: list[int]
    #: the ending in words ("seat 1 conquered the world")
    detail: str
    #: your seat
    seat: int
    #: seats that forfeited, and why ("5 strikes (last: timeout)")
    forfeits: dict[int, str] = field(default_factory=dict)
    #: the match's events since your last decision, as your seat may see them
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def place(self) -> int | None:
        """Your place (1 is best), or None if nobody placed (an aborted match)."""
        return self.places[self.seat] if 0 <= self.seat < len(self.places) else None


class Bot:
    """One instance per match. Implement ``decide_<game>`` (or ``decide`` for any game)."""

    def __init__(self, match: MatchContext) -> None:
        self.match = match

    def on_end(self, end: MatchEnd) -> None:
        """Called once when the match ends, however it ends (aborted too): free what the
        match held (an engine process, say), or learn from it. An exception here is
        logged and changes nothing. The default does nothing."""

    def decide(self, observation: dict[str, Any], decision: Decision) -> dict[str, Any]:
        method = getattr(self, f"decide_{self.match.game}", None)
        if method is None:
            game = self.match.game
            raise NotImplementedError(
                f"{type(self).__name__} has no decide_{game}: a bot that plays {game} "
                f"implements decide_{game}(observation, decision) (see docs/sdk.md)"
            )
        return method(observation, decision)

    @staticmethod
    def default_setup(decision: Decision, rng: random.Random | None = None) -> dict[str, Any]:
        """A random Stratego setup like the referee's fallback: the flag on the back row,
        bombs next to it, the rest shuffled. Drawn from ``rng`` (pass a seeded
        ``random.Random`` to repeat a setup), else from a fresh generator."""
        from arena.games.stratego.setup import guarded_setup

        options = decision.options
        return guarded_setup(options["squares"], options["army"], rng or random.Random())


class FatalError(RuntimeError):
    """The referee refused this bot for good (a wrong or revoked token)."""


def _names_territories(action: dict[str, Any]) -> bool:
    if any(isinstance(v, str) for k, v in action.items() if k != "type"):
        return True
    armies = action.get("armies")
    if isinstance(armies, list):  # [[territory, armies], ...]
        return any(isinstance(pair[0], str) for pair in armies)
    return isinstance(armies, dict) and any(isinstance(t, str) for t in armies)


def _territory_indices(
    game: str, action: dict[str, Any], observation: dict[str, Any]
) -> dict[str, Any]:
    """Risk actions may name territories; the wire carries their indices."""
    if game != "risk" or not _names_territories(action):
        return action  # indices already: nothing to look up (nor any observation to read)
    from arena.games.risk.map import load_map

    game_map = load_map(observation["map"])

    def index(ref: Any) -> Any:
        return game_map.territory(ref) if isinstance(ref, str) else ref

    out = dict(action)
    for key in ("territory", "from", "to", "bonus", "neutral"):
        if key in out and out[key] is not None:
            out[key] = index(out[key])
    armies = out.get("armies")
    if isinstance(armies, dict | list):
        pairs = armies.items() if isinstance(armies, dict) else armies
        out["armies"] = {index(t): n for t, n in pairs}
    return out


def _square_indices(action: dict[str, Any]) -> dict[str, Any]:
    """Stratego actions may name squares (``"c5"``) and give a placement as pairs, as
    the rules accept them; the wire carries square numbers, and a placement as a map."""
    placement = action.get("placement")
    named = [k for k in ("from", "to", "square") if isinstance(action.get(k), str)]
    if placement is None and not named:
        return action  # numbers already: the usual move
    from arena.games.stratego.board import parse_square

    out = dict(action)
    for key in named:
        out[key] = parse_square(out[key])
    if placement is not None:
        pairs = placement.items() if isinstance(placement, dict) else placement
        out["placement"] = {parse_square(square): name for square, name in pairs}
    return out


def _wire_action(game: str, action: dict[str, Any], observation: dict[str, Any]) -> dict[str, Any]:
    """The action with every territory or square as the number the wire carries; a
    TypeError naming what the bot returned if it is not an action at all."""
    if type(action) is not dict:
        what = "None" if action is None else f"a {type(action).__name__}"
        raise TypeError(f'decide returned {what}, not an action (a dict with a "type")')
    if game == "stratego":
        return _square_indices(action)
    return _territory_indices(game, action, observation)


class _Session:
    """One connection to one referee.

    Decisions run in the event loop by default (Python threads give CPU-bound bots no
    parallelism, and the hand-off costs a round trip's worth of latency); with
    ``threads`` > 0 they run in a pool, for bots that wait on I/O or release the GIL.
    """

    def __init__(
        self, factory: Callable[[MatchContext], Any], token: str, max_matches: int, threads: int
    ) -> None:
        self.factory = factory
        self.token = token
        self.max_matches = max_matches
        self.bots: dict[tuple[str, int], Any] = {}
        self.contexts: dict[tuple[str, int], MatchContext] = {}
        self.finished = 0
        self.tasks: set[asyncio.Task[None]] = set()
        self.pool = ThreadPoolExecutor(threads) if threads > 0 else None
        self.write_lock = asyncio.Lock()
        self.welcomed = False  # the referee said Welcome: the address is right
        self.max_batch = 0  # from the Welcome: > 0 if the referee reads BotBatch
        self.max_bytes = 1 << 20  # from the Welcome: the largest message the referee reads
        self.flush_after_s = FLUSH_AFTER_S

    async def run(self, channel: grpc.aio.Channel, stop_after: int | None) -> None:
        call = pb_grpc.BotServiceStub(channel).Connect()
        try:
            await call.write(
                pb.BotMessage(
                    hello=pb.Hello(
                        token=self.token,
                        client="arena-sdk-python/0.1",
                        max_matches=self.max_matches,
                        batches=True,
                    )
                )
            )
            while (message := await call.read()) is not grpc.aio.EOF:
                if await self._answer(call, message, stop_after):
                    return
        finally:
            call.cancel()
            if self.pool is not None:
                self.pool.shutdown(wait=False, cancel_futures=True)

    async def _answer(self, call: Any, message: pb.RefereeMessage, stop_after: int | None) -> bool:
        """Handle a message from the referee (a batch's messages in turn) and write the
        replies decided in the loop; True when the session is done."""
        replies: list[pb.BotMessage] = []
        if message.WhichOneof("kind") != "batch":
            done = self._handle(call, message, stop_after, replies)
        else:
            done = False
            clock = asyncio.get_running_loop().time
            started = clock()
            for item in message.batch.messages:
                if self._handle(call, item, stop_after, replies):
                    done = True
                    break
                if replies and clock() - started > self.flush_after_s:
                    await self._send(call, replies)
                    replies = []
                    started = clock()
        if replies:
            await self._send(call, replies)
        return done

    def _handle(
        self,
        call: Any,
        message: pb.RefereeMessage,
        stop_after: int | None,
        replies: list[pb.BotMessage],
    ) -> bool:
        """Handle one message (alone or from a batch), adding the replies decided in the
        loop to ``replies``; True when the session is done."""
        kind = message.WhichOneof("kind")
        if kind == "decision":
            if self.pool is None:
                reply = self._decide(message.decision)
                if reply is not None:
                    replies.append(reply)
            else:
                task = asyncio.create_task(self._decide_in_pool(call, message.decision))
                self.tasks.add(task)  # keep a reference until it is done
                task.add_done_callback(self.tasks.discard)
        elif kind == "welcome":
            welcome = message.welcome
            self.welcomed = True
            self.max_batch = welcome.max_batch if welcome.batches else 0
            self.max_bytes = welcome.max_message_bytes or self.max_bytes
            log.info("connected as %s (version %d)", welcome.bot_name, welcome.version)
        elif kind == "match_started":
            self._start(message.match_started)
        elif kind == "rejected":
            r = message.rejected
            log.warning(
                "match %s: action rejected: %s (allowed: %s; strikes %d)",
                r.match_id,
                r.reason,
                r.allowed or "-",
                r.strikes,
            )
        elif kind == "match_ended":
            ended = message.match_ended
            bot = self.bots.pop((ended.match_id, ended.seat), None)
            self.contexts.pop((ended.match_id, ended.seat), None)
            self.finished += 1
            log.info("match %s ended: %s", ended.match_id, _your_place(ended))
            if bot is not None:
                tell_end(bot, match_end(ended), ended.match_id)
            if stop_after is not None and self.finished >= stop_after:
                return True
        return False

    async def _send(self, call: Any, replies: list[pb.BotMessage]) -> None:
        """Write the replies decided in the loop; several go as BotBatches (at most
        ``max_batch`` replies, and under the referee's message size) if the referee reads
        them. No lock: without a pool only the loop writes, one write at a time."""
        if self.max_batch <= 1 or len(replies) == 1:
            for reply in replies:
                await call.write(reply)
            return
        room = self.max_bytes - 64  # the batch's own framing
        chunk: list[pb.BotMessage] = []
        size = 0
        for reply in replies:
            need = reply.ByteSize() + 6  # a field tag and a length
            if chunk and (len(chunk) == self.max_batch or size + need > room):
                await self._write_batch(call, chunk)
                chunk, size = [], 0
            chunk.append(reply)
            size += need
        await self._write_batch(call, chunk)

    @staticmethod
    async def _write_batch(call: Any, replies: list[pb.BotMessage]) -> None:
        if len(replies) == 1:
            await call.write(replies[0])
            return
        batch = pb.BotMessage()
        batch.batch.messages.extend(replies)
        await call.write(batch)

    async def _write(self, call: Any, message: pb.BotMessage) -> None:
        async with self.write_lock:  # one write in flight at a time
            await call.write(message)

    def _start(self, started: pb.MatchStarted) -> None:
        key = (started.match_id, started.seat)
        if key in self.bots:  # a resumed seat keeps its bot
            return
        context = MatchContext(
            started.match_id,
            started.game,
            started.seat,
            list(started.players),
            list(started.variants),
            dict(started.options),
        )
        self.contexts[key] = context
        self.bots[key] = self.factory(context)

    def _decide(self, request: pb.DecisionRequest) -> pb.BotMessage | None:
        key = (request.match_id, request.seat)
        bot = self.bots.get(key)
        context = self.contexts.get(key)
        if bot is None or context is None:
            log.warning("decision for unknown match %s seat %d", request.match_id, request.seat)
            return None
        reply = pb.BotMessage()
        answer = reply.action  # built in place: no copy of the action
        answer.match_id = request.match_id
        answer.request_id = request.request_id
        try:
            wire = request.observation
            observation = LazyObservation(lambda: observation_from_proto(wire))
            options_json = request.options_json
            events_json = request.events_json
            # decoded only if the bot reads them, like the observation
            decision = Decision(
                request.seat,
                request.kind,
                lambda: from_json_text(options_json),
                lambda: [from_json_text(e) for e in events_json],
            )
            action = bot.decide(observation, decision)
            fill_action(
                answer.action, context.game, _wire_action(context.game, action, observation)
            )
        except Exception as exc:
            # the referee is told at once (a strike, and it plays its default): it must
            # not wait out the deadline and the time bank for an answer that never comes
            answer.ClearField("action")
            answer.error = failure(exc)
            log.exception(
                "match %s: the bot raised %s deciding %s; the referee was told (a strike)",
                request.match_id,
                type(exc).__name__,
                request.kind,
            )
        return reply

    async def _decide_in_pool(self, call: Any, request: pb.DecisionRequest) -> None:
        loop = asyncio.get_running_loop()
        reply = await loop.run_in_executor(self.pool, self._decide, request)
        if reply is not None:
            await self._write(call, reply)


async def run_bot_async(
    factory: Callable[[MatchContext], Any],
    referee: str | Sequence[str],
    token: str,
    *,
    max_matches: int = 16,
    reconnect: bool = True,
    stop_after: int | None = None,
    max_backoff_s: float = 30.0,
    threads: int = 0,
) -> None:
    """Connect to each referee address and play until stopped (or ``stop_after`` matches
    per referee). Reconnects with exponential backoff; a refused token is fatal."""
    addresses = [referee] if isinstance(referee, str) else list(referee)
    for address in addresses:
        check_address(address)
    await asyncio.gather(
        *(
            _one_referee(
                factory, address, token, max_matches, reconnect, stop_after, max_backoff_s, threads
            )
            for address in addresses
        )
    )


async def _one_referee(
    factory: Callable[[MatchContext], Any],
    address: str,
    token: str,
    max_matches: int,
    reconnect: bool,
    stop_after: int | None,
    max_backoff_s: float,
    threads: int,
) -> None:
    backoff = 0.2
    played = 0
    tries = 0  # failed connections in a row
    welcomed = False  # the referee has answered once: from then on, retry for ever
    while True:
        session = _Session(factory, token, max_matches, threads)
        left = None if stop_after is None else stop_after - played
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                await session.run(channel, left)
            played += session.finished
            welcomed = welcomed or session.welcomed
            if stop_after is not None and played >= stop_after:
                return
            backoff = 0.2
            tries = 0
        except grpc.aio.AioRpcError as exc:
            played += session.finished
            welcomed = welcomed or session.welcomed
            if exc.code() in FATAL:
                raise FatalError(f"{address}: {exc.details()}") from None
            if not welcomed and tries + 1 >= START_TRIES:
                raise FatalError(unreachable(address, exc, tries + 1)) from None
            if (
                exc.code() == grpc.StatusCode.CANCELLED
                and stop_after is not None
                and played >= stop_after
            ):
                return
            if not reconnect:
                return
            tries += 1
            _log_retry(address, exc, tries, backoff, max_backoff_s, welcomed)
        if not reconnect:
            return
        await asyncio.sleep(backoff * (0.5 + random.random()))
        backoff = min(max_backoff_s, backoff * 2)


#: failed connections in a row before a bot that never reached its referee gives up (a
#: wrong address must not retry for ever): about 3 s
START_TRIES = 5


def check_address(address: str) -> None:
    """ValueError in one line unless ``address`` is ``HOST:PORT`` (or ``unix:PATH``)."""
    if address.startswith(("unix:", "unix-abstract:")):
        return
    host, colon, port = address.rpartition(":")
    if not colon or not host or host.endswith(":"):
        raise ValueError(f"referee {address!r} has no port: give HOST:PORT (e.g. {address}:50051)")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"referee {address!r}: the port must be a number from 1 to 65535")


def unreachable(address: str, exc: grpc.aio.AioRpcError, tries: int) -> str:
    """Why a referee could not be reached, in one line."""
    details = exc.details() or ""
    if "refused" in details.lower():
        why = "connection refused (is a referee running there?)"
    elif "dns" in details.lower() or "resolve" in details.lower():
        why = "its host name does not resolve"
    else:
        why = f"{exc.code().name} ({details.split(';')[0][:80]})"
    return f"{address}: {why}; gave up after {tries} tries"


def _log_retry(
    address: str,
    exc: grpc.aio.AioRpcError,
    tries: int,
    wait_s: float,
    max_wait_s: float,
    welcomed: bool,
) -> None:
    """One short line a retry (gRPC's details run to hundreds of characters: only the
    first failure shows them), and once, how long the bot keeps trying."""
    if tries == 1:
        details = (exc.details() or "").split(";")[0][:80]
        how = (
            f"retrying until it answers, waits growing to {max_wait_s:.0f} s"
            if welcomed
            else f"retrying; {START_TRIES} tries before giving up"
        )
        log.warning("%s: %s (%s); %s", address, exc.code().name, details, how)
    else:
        log.info("%s: %s, try %d; next in %.1f s", address, exc.code().name, tries, wait_s)


def run_bot(
    bot: type[Bot] | Callable[[MatchContext], Any],
    referee: str | Sequence[str],
    token: str,
    **kwargs: Any,
) -> None:
    """Play as ``bot`` (a Bot subclass, or a factory of objects with ``decide``)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    asyncio.run(run_bot_async(bot, referee, token, **kwargs))


#: the most of a bot's exception that goes to the referee
ERROR_CHARS = 200


def failure(exc: BaseException) -> str:
    """A bot's exception in a few words, as the referee is told it: ``ValueError: ...``."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 3] + "..."


def match_end(ended: pb.MatchEnded) -> MatchEnd:
    """The MatchEnd a bot is told, from the referee's MatchEnded."""
    result = ended.result
    return MatchEnd(
        reason=result.reason,
        places=list(result.places),
        detail=result.detail,
        seat=ended.seat,
        forfeits={f.seat: f.why for f in result.forfeits},
        events=[from_json_text(e) for e in ended.events_json],
    )


def tell_end(bot: Any, end: MatchEnd, match_id: str) -> None:
    """Call the bot's ``on_end`` if it has one; its exception is logged, nothing more."""
    hook = getattr(bot, "on_end", None)
    if hook is None:
        return
    try:
        hook(end)
    except Exception:
        log.exception("match %s: the bot's on_end raised", match_id)


def _your_place(ended: pb.MatchEnded) -> str:
    """Which place the bot took, of how many, and how the match ended: "you took 2nd of
    4 (victory: seat 1 conquered the world)"."""
    result = ended.result
    how = result.reason.replace("_", " ") + (f": {result.detail}" if result.detail else "")
    places = list(result.places)
    if not 0 <= ended.seat < len(places):  # aborted: nobody placed
        return f"no place ({how})"
    place = places[ended.seat]
    shared = " (shared)" if places.count(place) > 1 else ""
    return f"you took {ordinal(place)}{shared} of {len(places)} ({how})"


def games_of(bot: Any) -> list[str]:
    """The games a Bot subclass plays: one per ``decide_<game>`` method, none (every game)
    when it implements ``decide`` itself."""
    if not isinstance(bot, type) or not issubclass(bot, Bot) or bot.decide is not Bot.decide:
        return []
    return sorted(name.removeprefix("decide_") for name in dir(bot) if name.startswith("decide_"))


def main(bot: type[Bot] | Callable[[MatchContext], Any], argv: Sequence[str] | None = None) -> None:
    """Run ``bot`` as a process with the options of ``arena bot run`` (--referee, --token,
    --token-file, --register-as, --key, --max-matches, --matches, --threads): end a bot
    file with ``if __name__ == "__main__": main(MyBot)``. Exits 2 with one line on bad
    input, 130 on Ctrl-C."""
    import argparse

    from arena.sdk.process import bot_connection_arguments, run_as_process

    name = getattr(bot, "__name__", "bot")
    parser = argparse.ArgumentParser(description=f"run {name} against an arena referee")
    bot_connection_arguments(parser)
    args = parser.parse_args(argv)
    run_as_process(parser.prog, bot, args, games_of(bot))


__all__ = [
    "Bot",
    "Card",
    "Continent",
    "FatalError",
    "MatchContext",
    "MatchEnd",
    "RiskMap",
    "games_of",
    "main",
    "risk_map",
    "run_bot",
    "run_bot_async",
]
