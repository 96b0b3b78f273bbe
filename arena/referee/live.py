"""A match played in the referee: connected bots, hosted bots and house bots, time
controls, strikes.

A hosted seat (a submitted bot, or a tournament's bot file, its code from the store) is
a sandboxed process started when the match starts (``arena.sandbox.stdio_player``),
asked in a worker thread, and refereed as a connected bot is: a refused action is asked
again, then a strike; its own failures are strikes with their reason; its process tree
ends with the match, and the end of its stderr is kept with the seat's result.

Each decision of a connected bot is a DecisionRequest with a request id, a per-decision
deadline and the seat's remaining time bank. An illegal action is answered with the
reason and asked again (up to ``max_attempts``), then replaced by the state's safe
default and counted as a strike; a timeout is a strike too. ``max_strikes`` strikes, a
disconnection that outlasts the grace period, or a revocation (with no grace) forfeit
the match: the seat ranks below everyone still in and the others play on with its
pieces passive.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from arena.engine.core import Decision, Game, IllegalAction, Result, State
from arena.engine.match import BotFailed, BotGone, LazyObservation, MatchRecord
from arena.engine.replay import to_json as replay_to_json
from arena.referee.clock import Deadline
from arena.referee.codec import (
    CodecError,
    action_from_proto,
    fill_observation,
    from_json_text,
    to_json_text,
)
from arena.referee.connection import ConnectionLost
from arena.referee.limits import short
from arena.referee.spectators import SPECTATOR_BATCH_S, Spectators
from arena.v1 import arena_pb2 as pb

if TYPE_CHECKING:
    from arena.referee.server import Referee

log = logging.getLogger("arena.referee")
#: characters of what a rejection says is allowed (the rules' own text)
MAX_ALLOWED = 2000


class BotRaised(Exception):
    """The bot answered with an error instead of an action (its code raised)."""


#: the most of a bot's error that the referee keeps (logs, the strike's reason)
ERROR_CHARS = 200


class Gone(Exception):
    """A connected bot did not come back within the grace period, or was revoked
    (``why``: the forfeit's reason)."""

    def __init__(self, why: str = "disconnected") -> None:
        super().__init__(why)
        self.why = why


@dataclass
class Seat:
    """Who plays a seat: a registered bot (by id), a house bot (an in-process player), or
    stored code (``program``, a function giving its ``arena.sandbox.BotProgram``, called
    in a thread as the match starts: its code comes from the store; the sandboxed player,
    ``hosted``, is started then)."""

    label: str
    bot_id: str | None = None
    house: Any = None
    program: Any = None
    hosted: Any = None
    #: decisions replaced by the default (refused actions or a timeout): a strike each
    strikes: int = 0
    #: of those, the timeouts
    timeouts: int = 0
    bank_ms: int = 0
    forfeit_why: str = ""


def new_request_id() -> int:
    """A fresh request id: random, so that it tells a bot nothing of the requests sent to
    other seats (a counter would show, say, how many tries the first seat's Stratego setup
    took); below 2**53, so that clients reading numbers as doubles (JavaScript) keep it
    exact, and never 0 (unset on the wire)."""
    return secrets.randbits(53) or 1


@dataclass
class LiveMatch:
    referee: Referee
    match_id: str
    game: Game
    variants: list[Any]
    options: dict[str, str]
    seats: list[Seat]
    seed: int
    decision_ms: int
    time_bank_ms: int
    #: the seed of the public start, shared by the rotations of a tournament's deal
    deal_seed: int | None = None
    record: MatchRecord = field(init=False)
    state: State | None = None
    status: str = "running"
    done: asyncio.Event = field(default_factory=asyncio.Event)
    #: the id of the last request sent (random: see ``new_request_id``)
    _last_request: int = 0
    #: the steps of the replay, each as its JSON text: strings are not tracked by the
    #: garbage collector, whose full collections otherwise walk every step of every
    #: match in memory (200 ms pauses of the whole referee, seen with 16 matches), and
    #: they take a fraction of the memory. ``record`` holds the rest of the replay.
    _steps: list[str] = field(default_factory=list)
    _replay_text: str | None = None
    #: per seat index: events not yet sent to that seat's bot (JSON text)
    _unsent: dict[int, list[str]] = field(default_factory=dict)
    #: answers the rules raised on (other than IllegalAction): logged once a match
    _rules_errors: int = 0

    def __post_init__(self) -> None:
        #: WatchMatch's watchers, served off the decision path (arena.referee.spectators)
        self.audience = Spectators(self)
        self.record = MatchRecord(
            game=self.game.name,
            num_players=len(self.seats),
            seed=self.seed,
            players=[s.label for s in self.seats],
            options=dict(self.options),
            variants=[v.name for v in self.variants],
            deal_seed=self.deal_seed,
        )
        for seat in self.seats:
            seat.bank_ms = self.time_bank_ms

    # --- the loop -----------------------------------------------------------------------

    async def play(self) -> None:
        config = self.referee.config
        try:
            state = self.state = self.game.start_state(
                len(self.seats), self.seed, self.options, self.variants, self.deal_seed
            )
            self.record.initial_events = list(state.initial_events)
            self._broadcast(state.initial_events)
            for seat_index in range(len(self.seats)):
                await self._announce(seat_index, resumed=False)
            await self._start_hosted()
            while not state.terminal:
                decision = state.decision()
                seat_index = decision.player
                seat = self.seats[seat_index]
                if seat.forfeit_why:
                    action = state.default_action()
                    events = state.apply(seat_index, action)
                elif seat.house is not None:
                    action, events = await self._house_turn(state, seat, decision)
                elif seat.program is not None:
                    turn = await self._hosted_turn(state, seat_index, decision, config.max_attempts)
                    if turn is None:
                        continue
                    action, events = turn
                else:
                    turn = await self._remote_turn(state, seat_index, decision, config.max_attempts)
                    if turn is None:  # the seat forfeited and that ended the game
                        continue
                    action, events = turn
                self._steps.append(to_json_text([seat_index, action, events]))
                self._broadcast(events, seat_index)
            self.record.result = state.result()
            self.status = "finished"
        except asyncio.CancelledError:
            self.status = "aborted"
            raise
        except Exception:  # a bug must not take the referee down: abort this match only
            log.exception("match %s aborted", self.match_id)
            self.status = "aborted"
        finally:
            await self._finish()

    async def _house_turn(
        self, state: State, seat: Seat, decision: Decision
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        observation = LazyObservation.of(state, decision.player)
        # house bots are trusted Python code, but their thinking must not block the loop
        action = await asyncio.to_thread(seat.house.decide, observation, decision)
        observation.expire()
        return action, state.apply(decision.player, action)

    async def _start_hosted(self) -> None:
        """Start every hosted seat's sandboxed process (in threads: each is a process
        start); a seat whose code cannot start forfeits with the reason."""
        if all(seat.program is None for seat in self.seats):
            return
        from arena.sandbox import Limits, SandboxError, stdio_player
        from arena.sdk import MatchContext

        labels = [s.label for s in self.seats]
        isolation = self.referee.config.hosted_isolation

        def start(index: int, seat: Seat) -> None:
            context = MatchContext(
                self.match_id,
                self.game.name,
                index,
                labels,
                [v.name for v in self.variants],
                dict(self.options),
            )
            program = seat.program()
            seat.hosted = stdio_player(
                program,
                context,
                isolation=isolation,
                limits=Limits(),
                decision_ms=self.decision_ms,
                time_bank_ms=self.time_bank_ms,
                name=seat.label,
            )

        for index, seat in enumerate(self.seats):
            if seat.program is None:
                continue
            try:
                await asyncio.to_thread(start, index, seat)
            except SandboxError as exc:
                self._forfeit(index, f"its code could not start: {exc.reason}")
            except (OSError, LookupError, ValueError) as exc:
                self._forfeit(index, f"its code could not start: {exc}")

    async def _hosted_turn(
        self, state: State, seat_index: int, decision: Decision, max_attempts: int
    ) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """A hosted seat's decision: its process is asked in a thread, with the events
        since its last decision; refused answers are asked again, then a strike."""
        seat = self.seats[seat_index]
        player = seat.hosted
        given = [from_json_text(e) for e in self._unsent.pop(seat_index, [])]
        decision.set_events(lambda: given)
        for _ in range(max_attempts):
            observation = LazyObservation.of(state, seat_index)
            try:
                action = await asyncio.to_thread(player.decide, observation, decision)
            except BotFailed as exc:
                if exc.why == "timeout":
                    seat.timeouts += 1
                self._strike(seat_index, exc.why)
                break
            except BotGone as exc:
                self._forfeit(seat_index, exc.why)
                break
            finally:
                observation.expire()
            try:
                return action, state.apply(seat_index, action)
            except IllegalAction as exc:
                await asyncio.to_thread(
                    player.rejected, exc.reason, exc.allowed or "", seat.strikes
                )
                decision = state.decision()  # the same decision, its events given
                decision.set_events(list)
            except Exception as exc:  # the rules did not foresee this answer
                self._rules_failed(seat_index, decision, exc)
                decision = state.decision()
                decision.set_events(list)
        else:
            self._strike(seat_index, "illegal actions")
        if state.terminal:
            return None
        action = state.default_action()
        return action, state.apply(seat_index, action)

    def hosted_logs(self) -> dict[int, str]:
        """The end of each hosted seat's stderr (for its owner: ``GetBotLog``)."""
        return {
            index: seat.hosted.stderr().decode("utf-8", "replace")
            for index, seat in enumerate(self.seats)
            if seat.hosted is not None
        }

    async def _end_hosted(self, result: Result | None) -> None:
        """Tell each hosted seat the end, then end its process tree."""
        forfeits = {i: s.forfeit_why for i, s in enumerate(self.seats) if s.forfeit_why}

        def end(index: int, seat: Seat) -> None:
            try:
                events = [from_json_text(e) for e in self._unsent.pop(index, [])]
                seat.hosted.ended(result, events, forfeits)
            except Exception as exc:  # its end is its own: the match is over
                log.info("match %s: seat %d's end: %s", self.match_id, index, exc)
            finally:
                seat.hosted.close()

        for index, seat in enumerate(self.seats):
            if seat.hosted is not None:
                await asyncio.to_thread(end, index, seat)

    async def _remote_turn(
        self, state: State, seat_index: int, decision: Decision, max_attempts: int
    ) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """A connected bot's decision. Whatever is wrong with its answer (it cannot be
        read, the rules refuse it, or applying it raised) is refused with a short reason
        and asked again, then a strike: never an abort of the match, which would have it
        played again from the start."""
        for attempt in range(1, max_attempts + 1):
            try:
                action = await self._ask(state, seat_index, decision, attempt)
            except TimeoutError:
                self.seats[seat_index].timeouts += 1
                self._strike(seat_index, "timeout")
                break
            except Gone as exc:
                self._forfeit(seat_index, exc.why)
                break
            except BotRaised as exc:  # at once: it will not answer this decision
                self._strike(seat_index, f"bot raised {exc}")
                break
            except CodecError as exc:
                await self._reject(seat_index, decision, str(exc), "")
                continue
            try:
                return action, state.apply(seat_index, action)
            except IllegalAction as exc:
                await self._reject(seat_index, decision, exc.reason, exc.allowed or "")
            except Exception as exc:  # the rules did not foresee this answer: a bug of ours
                self._rules_failed(seat_index, decision, exc)
                await self._reject(
                    seat_index,
                    decision,
                    f"the rules could not apply this {decision.kind} action "
                    f"({type(exc).__name__}); send one of the legal options",
                    "",
                )
        else:
            self._strike(seat_index, "illegal actions")
        if state.terminal:  # a forfeit ended the game (its step is recorded already)
            return None
        action = state.default_action()
        return action, state.apply(seat_index, action)

    def _rules_failed(self, seat_index: int, decision: Decision, exc: Exception) -> None:
        """A game's ``apply`` raised something other than IllegalAction on a bot's answer:
        the bot is refused, and the bug in the rules is logged with its traceback, once
        a match (a bot could otherwise fill the log)."""
        if self._rules_errors == 0:
            log.warning(
                "match %s: the %s rules raised %s on seat %d's %s action (refused; a bug "
                "in the rules: they should raise IllegalAction)",
                self.match_id,
                self.game.name,
                type(exc).__name__,
                seat_index,
                decision.kind,
                exc_info=exc,
            )
        self._rules_errors += 1

    # --- asking a connected bot ----------------------------------------------------------

    async def _ask(
        self, state: State, seat_index: int, decision: Decision, attempt: int
    ) -> dict[str, Any]:
        seat = self.seats[seat_index]
        config = self.referee.config
        observation = state.observation(seat_index)
        options = to_json_text(decision.options)
        loop = asyncio.get_running_loop()
        while True:
            connection = self.referee.connection(seat.bot_id)  # the common case: no wait
            if connection is None:
                connection = await self.referee.wait_for_bot(seat.bot_id, config.grace_s)
                if connection is None:
                    raise Gone("revoked" if seat.bot_id in self.referee.revoked else "disconnected")
            message, events = self.decision_message(
                seat_index, decision, observation, options, attempt
            )
            request_id = message.decision.request_id
            future = connection.expect(self.match_id, request_id)
            connection.send_nowait(message)
            started = loop.time()
            budget = (self.decision_ms + seat.bank_ms) / 1000
            deadline = Deadline(loop, future, budget, self.referee.lag)
            try:
                reply, arrived = await future
            except TimeoutError:
                connection.forget(self.match_id, request_id)
                seat.bank_ms = 0
                raise
            except ConnectionLost:
                # the events may have died with the stream: send them again
                self._unsent[seat_index] = events + self._unsent.get(seat_index, [])
                used = loop.time() - started
                seat.bank_ms = max(0, seat.bank_ms - self._overrun(used))
                continue  # wait for the bot to come back, then ask again
            finally:
                deadline.cancel()
            # the bot's clock stopped when its reply arrived (the stream's reader
            # stamps it, less the time the loop was behind then: a reply read late is
            # not the bot's time), not when this match got to it
            used = arrived - started
            seat.bank_ms = max(0, seat.bank_ms - self._overrun(used))
            if reply.error:
                raise BotRaised(short(" ".join(reply.error.split()), ERROR_CHARS))
            return action_from_proto(self.game.name, reply.action)

    def decision_message(
        self,
        seat_index: int,
        decision: Decision,
        observation: dict[str, Any],
        options_json: str,
        attempt: int,
    ) -> tuple[pb.RefereeMessage, list[str]]:
        """The next DecisionRequest for ``seat_index`` (a new request id, the seat's clock,
        the events it has not seen yet), and those events (to send again if the stream
        dies with them)."""
        seat = self.seats[seat_index]
        # built in place, field by field: cheaper than nested keyword arguments,
        # which copy the observation into the request
        message = pb.RefereeMessage()
        request = message.decision
        fill_observation(request.observation, self.game.name, observation)
        request.match_id = self.match_id
        request.seat = seat_index
        request.kind = decision.kind
        request.options_json = options_json
        request.deadline_ms = self.decision_ms
        request.time_bank_ms = seat.bank_ms
        request.attempt = attempt
        self._last_request = request.request_id = new_request_id()
        events = self._unsent.pop(seat_index, [])
        if events:
            request.events_json.extend(events)
        return message, events

    def _overrun(self, elapsed_s: float) -> int:
        return max(0, int(elapsed_s * 1000) - self.decision_ms)

    async def _reject(self, seat_index: int, decision: Decision, reason: str, allowed: str) -> None:
        seat = self.seats[seat_index]
        connection = self.referee.connection(seat.bot_id)
        if connection is not None:
            await connection.send(
                pb.RefereeMessage(
                    rejected=pb.ActionRejected(
                        match_id=self.match_id,
                        request_id=self._last_request,
                        # the rules' reasons may quote what the bot sent: kept short
                        reason=short(reason),
                        allowed=short(allowed, MAX_ALLOWED),
                        strikes=seat.strikes,
                    )
                )
            )

    def _strike(self, seat_index: int, why: str) -> None:
        seat = self.seats[seat_index]
        seat.strikes += 1
        log.info(
            "match %s: seat %d (%s) strike %d: %s",
            self.match_id,
            seat_index,
            seat.label,
            seat.strikes,
            why,
        )
        if seat.strikes >= self.referee.config.max_strikes:
            self._forfeit(seat_index, f"{seat.strikes} strikes (last: {why})")

    def _forfeit(self, seat_index: int, why: str) -> None:
        seat = self.seats[seat_index]
        if seat.forfeit_why:
            return
        seat.forfeit_why = why
        log.info("match %s: seat %d (%s) forfeits: %s", self.match_id, seat_index, seat.label, why)
        assert self.state is not None
        events = self.state.forfeit(seat_index)
        if events:
            forfeit = {"type": "forfeit", "why": why}
            self._steps.append(to_json_text([seat_index, forfeit, events]))
            self._broadcast(events, seat_index)

    # --- telling everyone --------------------------------------------------------------

    async def _announce(self, seat_index: int, resumed: bool) -> None:
        seat = self.seats[seat_index]
        connection = self.referee.connection(seat.bot_id) if seat.bot_id else None
        if connection is None:
            return
        await connection.send(
            pb.RefereeMessage(
                match_started=pb.MatchStarted(
                    match_id=self.match_id,
                    game=self.game.name,
                    variants=[v.name for v in self.variants],
                    options={k: "" if v is None else str(v) for k, v in self.options.items()},
                    seat=seat_index,
                    players=[s.label for s in self.seats],
                    decision_ms=self.decision_ms,
                    time_bank_ms=seat.bank_ms,
                    resumed=resumed,
                )
            )
        )

    async def reconnected(self, bot_id: str) -> None:
        """The bot of some seats came back: tell it which seats it plays again."""
        if self.status != "running":
            return
        for index, seat in enumerate(self.seats):
            if seat.bot_id == bot_id and not seat.forfeit_why:
                await self._announce(index, resumed=True)

    def _broadcast(self, events: list[dict[str, Any]], seat: int | None = None) -> None:
        """Queue the step's events for each connected seat, as that seat may see them
        (they travel with its next decision, or its MatchEnded), and note the step for
        the spectators, if any (``seat``: whose step it was; None for the events of the
        match's creation). An event every seat sees alike is encoded once. Spectators
        cost the step no more than a tuple: their messages are made apart, a few times
        a second (``Spectators.flush``)."""
        if self.audience.watchers:
            self.audience.note(seat, len(self._steps), events)
        if not events:
            return
        game = self.game
        encoded: dict[int, str] = {}

        def text(event: dict[str, Any]) -> str:
            key = id(event)
            if key not in encoded:
                encoded[key] = to_json_text(event)
            return encoded[key]

        for index, player in enumerate(self.seats):
            if player.bot_id is None and player.program is None:
                continue
            shown = [
                text(e) for event in events if (e := game.public_event(event, index)) is not None
            ]
            if shown:
                self._unsent.setdefault(index, []).extend(shown)

    def steps_played(self) -> int:
        """How many steps have been played (the ``steps`` of the last MatchEvents)."""
        return len(self._steps)

    def spectator_view(self) -> str:
        """The position now as a spectator may see it (JSON: public facts only)."""
        assert self.state is not None
        return to_json_text(self.state.spectator_view())

    def result_message(self) -> pb.Result:
        result = self.record.result
        forfeits = [
            pb.Forfeit(seat=i, why=s.forfeit_why) for i, s in enumerate(self.seats) if s.forfeit_why
        ]
        if result is None:
            return pb.Result(reason="aborted", detail="the match was aborted", forfeits=forfeits)
        return pb.Result(
            reason=result.reason.value,
            places=list(result.places),
            detail=result.detail,
            forfeits=forfeits,
        )

    def info(self) -> pb.MatchInfo:
        info = pb.MatchInfo(
            match_id=self.match_id,
            status=self.status,
            game=self.game.name,
            players=[s.label for s in self.seats],
        )
        if self.status != "running":
            info.result.CopyFrom(self.result_message())
            replay = self.replay_text()
            if replay is not None:
                info.replay_json = replay
                info.seed = self.seed  # the replay holds it anyway: never while running
                if self.deal_seed is not None:
                    info.deal_seed = self.deal_seed
        return info

    def replay_text(self) -> str | None:
        """The replay's JSON text once the match has a result (made once: the store, the
        spectators and every GetMatch share it), else None."""
        if self._replay_text is None and self.record.result is not None:
            replay = replay_to_json(self.record)  # its steps are kept apart, as text
            result = replay.pop("result")
            del replay["steps"]
            # compact JSON is the texts of its parts joined: the text of the whole,
            # with the keys in the same order ("steps" then "result" last)
            self._replay_text = (
                f'{to_json_text(replay)[:-1]},"steps":[{",".join(self._steps)}],'
                f'"result":{to_json_text(result)}}}'
            )
        return self._replay_text

    def full_record(self) -> MatchRecord:
        """The match's record with its steps (read back from their text)."""
        return replace(self.record, steps=[from_json_text(s) for s in self._steps])

    async def _finish(self) -> None:
        await self._end_hosted(self.record.result)
        result = self.result_message()
        for index, seat in enumerate(self.seats):
            connection = self.referee.connection(seat.bot_id) if seat.bot_id else None
            if connection is not None:
                await connection.send(
                    pb.RefereeMessage(
                        match_ended=pb.MatchEnded(
                            match_id=self.match_id,
                            result=result,
                            seat=index,
                            events_json=self._unsent.pop(index, ()),
                        )
                    )
                )
        self.audience.finish(self.info())
        try:
            await self.referee.match_finished(self)  # RunMatch answers once it is stored
        except Exception:  # the store failed: the others play on, the waiters are freed
            log.exception("match %s: its result could not be stored", self.match_id)
        finally:
            self.done.set()


def house_seat(label: str, factory: Callable[[int, int], Any], seat: int, seed: int) -> Seat:
    return Seat(label=label, house=factory(seat, seed))


__all__ = ["SPECTATOR_BATCH_S", "Gone", "LiveMatch", "Result", "Seat", "house_seat"]
