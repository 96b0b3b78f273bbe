"""The match runner: drives a state with players and records every step."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from arena.engine.core import Action, Decision, Event, Game, IllegalAction, Result, State


class Player(Protocol):
    """Anything that can decide. In-process bots, remote connections and humans alike."""

    def decide(self, state_view: Any, decision: Decision) -> Action:
        """Return the action for ``decision``.

        ``state_view`` is the player's observation: a read-only mapping of what it may
        know, built on first access (see :class:`LazyObservation`).
        """
        ...


class _Loader:
    """The whole observation from a function (the SDK's, read from the wire)."""

    __slots__ = ("load",)

    def __init__(self, load: Callable[[], dict[str, Any]]) -> None:
        self.load = load

    def observation(self, seat: int) -> dict[str, Any]:
        return self.load()


_new_dict = dict.__new__


class LazyObservation(dict[str, Any]):
    """A player's observation, built only as far as the bot reads it.

    It is a dict that fills itself on access. Reading an entry by key (``obs["owner"]``,
    ``obs.get("owner")``) that belongs to a part the state can build alone
    (``State.observation_parts``) builds that part; any other access (another key,
    ``in``, iteration, ``len``, ``dict(obs)``, equality) builds the whole observation,
    in the order ``State.observation`` gives, keeping the entries already read. After
    that, reads are plain dict reads. Valid while ``decide`` runs: afterwards the state
    moves on, so reading what was not built during ``decide`` raises (keep a copy with
    ``dict(obs)`` if you need one).
    """

    # _parts: the part builders until the whole is built, then None;
    # _state: where it comes from (anything with .observation(seat)), None once expired
    __slots__ = ("_parts", "_seat", "_state")

    def __init__(self, load: Callable[[], dict[str, Any]]) -> None:  # the dict starts empty
        self._state: Any = _Loader(load)
        self._seat = -1
        self._parts: Mapping[str, Callable[[Any, int], dict[str, Any]]] | None = {}

    @classmethod
    def of(cls, state: State, seat: int) -> LazyObservation:
        obs = _new_dict(cls)  # once per decision: no __init__ call
        obs._state = state
        obs._seat = seat
        obs._parts = state.observation_parts()
        return obs

    def _load(self) -> None:
        if self._parts is None:
            return
        if self._state is None:
            raise RuntimeError(
                "observation read after decide() returned; keep a copy with dict(obs)"
            )
        full = self._state.observation(self._seat)
        if dict.__len__(self):  # parts read: they stay the same objects, in full's order
            for key, value in dict.items(self):
                full[key] = value
            dict.clear(self)
        dict.update(self, full)
        self._parts = None

    def expire(self) -> None:
        self._state = None

    def __missing__(self, key: str) -> Any:
        parts = self._parts
        if parts is None:
            raise KeyError(key)
        build = parts.get(key)
        if build is None or self._state is None:
            self._load()
        else:  # a part not read yet (parts do not overlap)
            dict.update(self, build(self._state, self._seat))
        return dict.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        if self._parts and key in self._parts:
            return self.__missing__(key)
        self._load()
        return dict.get(self, key, default)

    def __contains__(self, key: object) -> bool:
        self._load()
        return dict.__contains__(self, key)

    def __iter__(self) -> Iterator[str]:
        self._load()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._load()
        return dict.__len__(self)

    def keys(self) -> Any:
        self._load()
        return dict.keys(self)

    def values(self) -> Any:
        self._load()
        return dict.values(self)

    def items(self) -> Any:
        self._load()
        return dict.items(self)

    def copy(self) -> dict[str, Any]:
        self._load()
        return dict(dict.items(self))

    def __eq__(self, other: object) -> bool:
        self._load()
        return dict.__eq__(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = dict.__repr__(self) if self._parts is None else "..."
        return f"LazyObservation({shown})"


class BotError(RuntimeError):
    """An in-process bot returned an illegal action: a bug in the bot, reported as such."""


#: The referee's limits, the same in process: actions refused before the default is
#: played (a strike), and strikes before the seat forfeits.
MAX_ATTEMPTS = 3
MAX_STRIKES = 5


class BotFailed(Exception):
    """A refereed player could not decide (its code raised, it ran out of time, its
    answer could not be read): a strike, with ``reason``; ``why`` is the strike's own
    words (default ``bot raised REASON``; ``timeout`` for a clock that ran out)."""

    def __init__(self, reason: str, why: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.why = why if why is not None else f"bot raised {reason}"


class BotGone(Exception):
    """A refereed player can play no more (its process ended, it broke its protocol
    beyond repair): the seat forfeits at once, ``why`` saying why."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class Refereed(Player, Protocol):
    """A player held to the referee's rules in process (a bot file: someone's own code,
    which the referee would treat so): an illegal action is refused (``rejected``) and
    asked again, up to MAX_ATTEMPTS; then the safe default is played and counted as a
    strike, as is a decision that raised :class:`BotFailed`; MAX_STRIKES strikes forfeit
    the seat, as does a decision that raised :class:`BotGone`. Its decisions carry the
    events since its last one, as its seat may see them, and ``ended`` tells it the
    result with the last events."""

    refereed: bool  # True

    def rejected(self, reason: str, allowed: str, strikes: int) -> None: ...

    def ended(
        self, result: Result | None, events: list[Event], forfeits: dict[int, str]
    ) -> None: ...


@dataclass
class SeatConduct:
    """How a refereed seat behaved: strikes, and why it forfeited (empty if it did not)."""

    strikes: int = 0
    forfeit: str = ""


def rules_versions(variants: Sequence[Any], game: Game | None = None) -> dict[str, int]:
    """What a replay records of the rules of ``game`` and ``variants`` (Variant objects):
    the version of each one whose rules changed since the first, the game's under its
    own name (replays made before rules had versions carry none: version 1)."""
    versions = {game.name: game.rules_version} if game is not None else {}
    versions.update({v.name: v.rules_version for v in variants})
    return {name: version for name, version in versions.items() if version != 1}


@dataclass
class MatchRecord:
    """Everything needed to replay and check a match: configuration, steps, result."""

    game: str
    num_players: int
    #: the match's secret seed: everything private or still to come
    seed: int
    players: list[str]
    options: dict[str, str] = field(default_factory=dict)
    variants: list[str] = field(default_factory=list)
    #: the rules version of each variant whose rules changed since version 1, by name
    #: (see ``arena.plugins.Variant.rules_version``); None: this arena's versions
    rules: dict[str, int] | None = None
    initial_events: list[Event] = field(default_factory=list)
    #: one entry per decision: [seat, action, events it caused]
    steps: list[list[Any]] = field(default_factory=list)
    result: Result | None = None
    #: the seed of the public start, shared by the rotations of a tournament's deal
    #: (``Game.new_state``); None: the same as ``seed``
    deal_seed: int | None = None
    #: the state at the end (not part of the replay; for printing the final position)
    final_state: State | None = field(default=None, repr=False, compare=False)
    #: per seat, how a refereed player behaved (empty when none was refereed)
    conduct: list[SeatConduct] = field(default_factory=list, repr=False, compare=False)

    @property
    def events(self) -> list[Event]:
        out = list(self.initial_events)
        for step in self.steps:
            out.extend(step[2])
        return out


def play_match(
    game: Game,
    players: Sequence[Player],
    seed: int,
    options: Mapping[str, str] | None = None,
    variants: Sequence[Any] = (),
    names: Sequence[str] | None = None,
    record: bool = True,
    deal_seed: int | None = None,
) -> MatchRecord:
    """Play one whole match between in-process players and return its record.

    ``variants`` are :class:`~arena.plugins.Variant` objects. With ``record=False`` only
    the result and the final state are kept, and the actions are applied with
    ``State.simulate`` (no events): the same game, faster, for benchmarks and search.
    ``deal_seed``: the seed of the public start (``Game.new_state``).
    """
    state: State = game.start_state(len(players), seed, options, variants, deal_seed)
    rec = MatchRecord(
        game=game.name,
        num_players=len(players),
        seed=seed,
        players=list(names) if names is not None else [type(p).__name__ for p in players],
        options=dict(options or {}),
        variants=[v.name for v in variants],
        rules=rules_versions(variants, game),
        initial_events=list(state.initial_events),
        deal_seed=deal_seed,
    )
    if any(getattr(player, "refereed", False) for player in players):
        return _play_refereed(game, state, players, rec, record)
    steps = rec.steps
    decide = [player.decide for player in players]
    observe = LazyObservation.of
    step = state.apply if record else state.simulate
    while not state.terminal:
        decision = state.decision()
        seat = decision.player
        observation = observe(state, seat)
        action = decide[seat](observation, decision)
        observation.expire()
        try:
            events = step(seat, action)
        except IllegalAction as exc:
            raise BotError(
                f"{rec.players[seat]} (seat {seat}) made an illegal {decision.kind} "
                f"decision {action!r}: {exc}"
            ) from exc
        if record:
            steps.append([seat, action, events])
    rec.result = state.result()
    rec.final_state = state
    return rec


def _play_refereed(
    game: Game, state: State, players: Sequence[Any], rec: MatchRecord, record: bool
) -> MatchRecord:
    """``play_match`` where some players are :class:`Refereed`: the referee's rules for
    those (refusals, strikes, forfeits, events), the plain loop's for the others. The
    events are made even with ``record=False`` (the refereed seats are given them)."""
    refereed = [bool(getattr(player, "refereed", False)) for player in players]
    conduct = rec.conduct = [SeatConduct() for _ in players]
    # the events each refereed seat has not been given yet, as that seat may see them
    unseen: list[list[Event]] = [[] for _ in players]

    def show(events: list[Event]) -> None:
        for seat, keep in enumerate(refereed):
            if keep:
                unseen[seat].extend(
                    e for event in events if (e := game.public_event(event, seat)) is not None
                )

    def forfeit(seat: int, why: str) -> None:
        conduct[seat].forfeit = why
        events = state.forfeit(seat)
        if events:
            rec.steps.append([seat, {"type": "forfeit", "why": why}, events])
            show(events)

    def strike(seat: int, why: str) -> None:
        conduct[seat].strikes += 1
        if conduct[seat].strikes >= MAX_STRIKES:
            forfeit(seat, f"{conduct[seat].strikes} strikes (last: {why})")

    show(state.initial_events)
    step = state.apply  # a refereed seat is given the events: they are made
    while not state.terminal:
        decision = state.decision()
        seat = decision.player
        player = players[seat]
        action: Action | None = None
        events: list[Event] | None = None
        if conduct[seat].forfeit:  # a forfeited seat's turns play the default
            action = state.default_action()
            events = step(seat, action)
        elif not refereed[seat]:
            observation = LazyObservation.of(state, seat)
            action = player.decide(observation, decision)
            observation.expire()
            try:
                events = step(seat, action)
            except IllegalAction as exc:
                raise BotError(
                    f"{rec.players[seat]} (seat {seat}) made an illegal {decision.kind} "
                    f"decision {action!r}: {exc}"
                ) from exc
        else:
            given, unseen[seat] = unseen[seat], []
            decision.set_events(lambda given=given: _as_sent(given))
            for _ in range(MAX_ATTEMPTS):
                observation = LazyObservation.of(state, seat)
                try:
                    action = player.decide(observation, decision)
                except BotFailed as exc:
                    strike(seat, exc.why)
                    break
                except BotGone as exc:
                    forfeit(seat, exc.why)
                    break
                finally:
                    observation.expire()
                try:
                    events = step(seat, action)
                    break
                except IllegalAction as exc:
                    player.rejected(exc.reason, exc.allowed or "", conduct[seat].strikes)
                    action = None
                    decision = state.decision()  # the same decision, its events given
                    decision.set_events(list)
            else:
                strike(seat, "illegal actions")
            if events is None:  # no legal answer: the default, unless a forfeit ended it
                if state.terminal:
                    continue
                action = state.default_action()
                events = step(seat, action)
        if record:
            rec.steps.append([seat, action, events])
            show(events)
    rec.result = state.result()
    rec.final_state = state
    forfeits = {seat: c.forfeit for seat, c in enumerate(conduct) if c.forfeit}
    for seat, player in enumerate(players):
        if refereed[seat]:
            player.ended(rec.result, _as_sent(unseen[seat]), forfeits)
    return rec


def _as_sent(events: list[Event]) -> list[Event]:
    """Events as a bot over the wire gets them (their JSON read back): its own copies, so
    that a bot changing them changes nothing of the match's record."""
    return json.loads(json.dumps(events)) if events else []
