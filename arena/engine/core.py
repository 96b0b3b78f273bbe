"""The contract every game implements.

A :class:`Game` is the factory (parameters, options, variants); a :class:`State` holds
one position and its rules (``decision``, ``apply``, ``observation``); a
:class:`Result` says how the game ended. Rules are pure and synchronous: all chance
comes from the seeded generators a state is created with (``SecureRandom``, see
``arena.engine.chance``), so a game is reproducible from its seeds and the actions
applied to it.
"""

from __future__ import annotations

import enum
import functools
import inspect
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from arena.engine.chance import SecureRandom

#: An action is a JSON-compatible mapping with a "type" key, e.g.
#: ``{"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": 3}``.
Action = dict[str, Any]
#: An event is a JSON-compatible mapping with an "e" key naming its kind.
Event = dict[str, Any]


class IllegalAction(ValueError):
    """An action the rules refuse, with a reason a bot author can act on.

    ``reason`` says what was wrong; ``allowed`` (optional) says what is allowed.
    """

    def __init__(self, reason: str, allowed: str | None = None) -> None:
        self.reason = reason
        self.allowed = allowed
        super().__init__(reason if allowed is None else f"{reason}; allowed: {allowed}")


def check_turn(over: bool, to_move: int, player: int, action: Any) -> None:
    """The checks every game makes first: the game goes on, it is ``player``'s turn, and
    the action is a mapping."""
    if over:
        raise IllegalAction("the game is over")
    if player != to_move:
        raise IllegalAction(f"not your turn: seat {player} acted but seat {to_move} is to move")
    if type(action) is not dict:
        raise IllegalAction(
            f"an action must be a mapping with a 'type', got {type(action).__name__}"
        )


def check_kind(action: Action, allowed: Collection[str], where: str) -> str:
    """The action's type, if it is one of ``allowed`` now (``where``: "the attack phase")."""
    kind = action.get("type")
    if type(kind) is not str or kind not in allowed:
        raise IllegalAction(
            f"action {kind!r} is not allowed in {where}", allowed=", ".join(allowed)
        )
    return kind


def copy_random(rng: random.Random) -> random.Random:
    """An independent generator in the same state as ``rng``: a match's
    :class:`~arena.engine.chance.SecureRandom`, or any ``random.Random`` (a search bot
    may give its samples a Mersenne Twister of its own)."""
    if type(rng) is SecureRandom:
        return rng.copy()
    other = type(rng).__new__(type(rng))  # skips seeding from the OS
    other.setstate(rng.getstate())
    return other


class ClonedRandom:
    """A state's ``rng`` that its clones share until one of them draws (copy on write).

    A clone made for search often never draws from the original's generator, and a
    copy costs more than nothing (a ``SecureRandom``'s about a microsecond, a Mersenne
    Twister's 625 words more than a Risk board). The state keeps ``_rng`` and
    ``_rng_shared``; ``share_rng(other)`` in ``clone()`` hands the generator over, and
    whichever of the two reads ``rng`` first gets a copy of its own. The two slots are
    this class's, so that a state's own fields stay what they were.
    """

    __slots__ = ("_rng", "_rng_shared")

    @property
    def rng(self) -> random.Random:
        if self._rng_shared:
            self._rng = copy_random(self._rng)
            self._rng_shared = False
        return self._rng

    @rng.setter
    def rng(self, value: random.Random) -> None:
        self._rng = value
        self._rng_shared = False

    def share_rng(self, other: ClonedRandom) -> None:
        other._rng = self._rng
        other._rng_shared = self._rng_shared = True


class EndReason(enum.StrEnum):
    """How a game ended."""

    VICTORY = "victory"  # one player (or side) met the winning condition
    TURN_LIMIT = "turn_limit"  # the configured limit was reached; survivors tie
    NO_MOVES = "no_moves"  # a player had no legal decision
    DRAW = "draw"  # the rules declared a draw
    FORFEIT = "forfeit"  # a player was removed by the referee


#: each way a match can end as people say it (the codes are for programs)
ENDINGS_SAID = {
    "victory": "victory",
    "turn_limit": "turn limit reached",
    "no_moves": "no legal move left",
    "draw": "draw",
    "forfeit": "forfeit",
    "aborted": "aborted",
}


def ending_said(reason: str) -> str:
    """A result's reason in words: ``turn_limit`` is "turn limit reached"."""
    return ENDINGS_SAID.get(reason, reason.replace("_", " "))


@dataclass(frozen=True, slots=True)
class Result:
    """The end of a game.

    ``places[seat]`` is 1 for the best place; tied seats share a place.
    """

    reason: EndReason
    places: tuple[int, ...]
    detail: str = ""

    @property
    def winners(self) -> tuple[int, ...]:
        return tuple(seat for seat, place in enumerate(self.places) if place == 1)

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.reason.value, "places": list(self.places), "detail": self.detail}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Result:
        return cls(EndReason(data["reason"]), tuple(data["places"]), data.get("detail", ""))


def ordinal(place: int) -> str:
    """A place as it is said: 1st, 2nd, 3rd, 4th, ... 11th, 12th, 13th, ... 21st."""
    suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
    return f"{place}{suffix}"


class Decision:
    """What the player to move must decide now, with its legal options.

    ``options`` is computed on first access: a bot that does not need the list pays
    nothing for it. ``events`` are the match's events since this seat's last decision, as
    this seat may see them, oldest first (what the others did meanwhile; JSON objects,
    each with an ``"e"`` naming its kind): given by whoever plays the match for a bot
    (the SDK, a bot file played in process), decoded on first access, else empty.
    """

    __slots__ = ("_events", "_events_fn", "_options", "_options_fn", "kind", "player")

    def __init__(
        self,
        player: int,
        kind: str,
        options_fn: Callable[[], dict[str, Any]],
        events_fn: Callable[[], list[Event]] | None = None,
    ) -> None:
        self.player = player
        self.kind = kind
        self._options_fn = options_fn
        self._options: dict[str, Any] | None = None
        self._events_fn = events_fn
        self._events: list[Event] | None = None

    @property
    def options(self) -> dict[str, Any]:
        if self._options is None:
            self._options = self._options_fn()
        return self._options

    @property
    def events(self) -> list[Event]:
        if self._events is None:
            self._events = [] if self._events_fn is None else self._events_fn()
        return self._events

    def set_events(self, events_fn: Callable[[], list[Event]]) -> None:
        """Give the decision its events (decoded by ``events_fn`` on first access)."""
        self._events_fn = events_fn
        self._events = None

    def to_json(self) -> dict[str, Any]:
        return {"player": self.player, "kind": self.kind, "options": self.options}

    def __repr__(self) -> str:
        return f"Decision(player={self.player}, kind={self.kind!r})"


def non_negative_int(value: str) -> int:
    """An option value that is a whole number of at least 0 (a turn limit, say)."""
    number = int(value)
    if number < 0:
        raise ValueError("expected a whole number of at least 0")
    return number


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """A named rule switch of a game: ``--option name=value``."""

    name: str
    description: str
    default: str
    choices: tuple[str, ...] | None = None  # None: any value ``parse`` accepts
    parse: Callable[[str], Any] = str
    #: bare flags that set this option: ``--option fixed-cards`` means ``cards=fixed``
    aliases: tuple[tuple[str, str], ...] = ()
    #: what a command stores for a value given on its command line (Risk's ``map``: a
    #: file's content for its path, read there and nowhere else); None: the value itself
    stored: Callable[[str], str] | None = None
    #: whether the option changes how the game is played, so that results under another
    #: value go on a leaderboard of their own (a Risk game without cards is another
    #: game); False for one that changes only what is recorded (Risk's ``dice``)
    splits_board: bool = True
    #: the option's value as a board's key holds it (short, in ``[A-Za-z0-9._-]``: a
    #: Risk map's name and the start of its digest, not its whole content); None: the
    #: typed value as text
    board_value: Callable[[str], str] | None = None

    def convert(self, value: str) -> Any:
        if self.choices is not None and value not in self.choices:
            raise ValueError(
                f"option {self.name}={value!r}: expected one of {', '.join(self.choices)}"
            )
        try:
            return self.parse(value)
        except ValueError as exc:
            raise ValueError(f"option {self.name}={value!r}: {exc}") from None


class SpectatorTracker(Protocol):
    """:meth:`State.spectator_view` followed step by step (:meth:`State.spectator_tracker`).

    ``view`` is what ``spectator_view`` returned when the tracker was made, then after
    each call of :meth:`changes`, made after each step: it moves the view on and returns
    what changed, just as ``arena.web.frames.delta(before, after)`` would. A view is a
    dict of its own whose lists are never changed in place (a changed one is replaced),
    so an earlier view stays as it was."""

    view: dict[str, Any]

    def changes(self) -> dict[str, Any]: ...


class State(ABC):
    """One position of a game, with its rules."""

    num_players: int
    #: events the game's creation caused (a deal, say), before any decision
    initial_events: list[Event]

    @property
    @abstractmethod
    def terminal(self) -> bool:
        """True once the game is over."""

    @property
    @abstractmethod
    def current_player(self) -> int:
        """The seat that must decide now (undefined once terminal)."""

    @abstractmethod
    def decision(self) -> Decision:
        """The decision the current player faces, with its legal options."""

    @abstractmethod
    def apply(self, player: int, action: Action) -> list[Event]:
        """Apply ``player``'s action and return the events it caused.

        Raises :class:`IllegalAction` (and changes nothing) if the action is refused.
        """

    @abstractmethod
    def observation(self, player: int) -> dict[str, Any]:
        """Everything ``player`` may know, as a JSON-compatible mapping, and nothing else."""

    def observation_parts(self) -> Mapping[str, Callable[[Any, int], dict[str, Any]]]:
        """Parts of an observation this state can build alone, for a bot that reads a
        few entries: key -> ``function(state, player)`` returning the entries of the
        part that holds that key, each equal to its entry in ``observation(player)``
        (parts do not overlap, and every observation has their entries). A bot's
        observation (``LazyObservation``) builds only the parts the bot reads by key;
        anything else builds the whole observation. Empty (the default): the whole
        observation on the first read."""
        return {}

    def simulate(self, player: int, action: Action) -> None:
        """Apply ``player``'s action exactly as :meth:`apply` does (the same checks, the
        same state afterwards) but without making the events: for search and
        benchmarks, where nobody reads them. A game may override it with a faster path."""
        self.apply(player, action)

    @abstractmethod
    def result(self) -> Result | None:
        """The result once terminal, else None."""

    @abstractmethod
    def clone(self) -> State:
        """An independent copy (including the random generator's state)."""

    def spectator_view(self, reveal: bool = False) -> dict[str, Any]:
        """The position as a spectator may see it, JSON-ready: what every seat may know
        and nothing more (the web's replay viewer and the referee's spectators draw from
        it). With ``reveal``, the position's secrets too (hands, hidden ranks): only for
        a match that has ended, whose replay is public. A game without one shows
        nothing."""
        return {}

    def spectator_tracker(self, reveal: bool = False) -> SpectatorTracker | None:
        """A faster way to follow :meth:`spectator_view` after every step, for a game
        that has one (the web's replay viewer re-simulates tens of thousands of steps
        when it first shows a long match): None here, and the caller makes the whole
        view after each step and compares."""
        return None

    def default_action(self) -> Action:
        """A safe legal action for the current decision, played for a seat that timed
        out, kept sending illegal actions, or forfeited (the referee's fallback)."""
        raise NotImplementedError(f"{type(self).__name__} has no default action")

    def forfeit(self, seat: int) -> list[Event]:
        """Remove ``seat`` from play: it ranks below everyone still in; the game goes on
        for the others (its pieces passive) or ends if too few are left."""
        raise NotImplementedError(f"{type(self).__name__} does not support forfeits")


@dataclass(frozen=True)
class Game(ABC):
    """A game plugin: its name, player counts, options, and a factory for states."""

    name: str
    description: str
    min_players: int
    max_players: int
    option_specs: tuple[OptionSpec, ...] = field(default=())
    #: raised whenever a rule of the game itself changes so that a recorded game can go
    #: differently (its chance, say); replays record it beside the variants' versions
    rules_version: int = 1

    def _specs(self, variants: Sequence[Any]) -> dict[str, OptionSpec]:
        specs = {spec.name: spec for spec in self.option_specs}
        for variant in variants:
            specs.update({spec.name: spec for spec in getattr(variant, "options", ())})
        return specs

    def resolve_flags(
        self, options: Mapping[str, str | None], variants: Sequence[Any] = ()
    ) -> dict[str, str]:
        """The options as given, each bare flag (None) replaced by what it means:
        ``name=on``, or the option and value it aliases. This is what a replay and a
        tournament store (never a null); :meth:`parse_options` checks and types them."""
        specs = self._specs(variants)
        aliases = {
            alias: (spec.name, value) for spec in specs.values() for alias, value in spec.aliases
        }
        given: dict[str, str] = {}
        for name, value in options.items():
            if value is None:
                if name in aliases:
                    name, value = aliases[name]
                elif name in specs and "on" in (specs[name].choices or ()):
                    value = "on"
                elif name in specs:
                    raise ValueError(f"option {name} needs a value: {name}=VALUE")
                else:
                    value = "on"  # unknown: parse_options names it
            if name in given and given[name] != value:
                raise ValueError(f"option {name} given twice: {given[name]} and {value}")
            given[name] = value
        return given

    def stored_options(
        self, options: Mapping[str, str | None], variants: Sequence[Any] = ()
    ) -> dict[str, str]:
        """What a command stores for options given on its command line:
        :meth:`resolve_flags`, then each value as its option's ``stored`` makes it (a
        Risk map file read into the option). Only a command line's options go through
        this: an option that reaches the referee or the web is never read as a path."""
        specs = self._specs(variants)
        given = self.resolve_flags(options, variants)
        for name, value in given.items():
            spec = specs.get(name)
            if spec is not None and spec.stored is not None:
                given[name] = spec.stored(value)
        return given

    def board_options(
        self, options: Mapping[str, str | None], variants: Sequence[Any] = ()
    ) -> dict[str, str]:
        """The options that put a match on a leaderboard of its own: those given that
        change play (``splits_board``) with a value other than the default, each as its
        board key holds it, by name. ValueError for options that do not parse."""
        specs = self._specs(variants)
        given = self.resolve_flags(options, variants)
        out = {}
        for name, value in sorted(given.items()):
            spec = specs.get(name)
            if spec is None:
                raise ValueError(f"unknown option {name!r} for {self.name}")
            if not spec.splits_board or spec.convert(value) == spec.convert(spec.default):
                continue
            out[name] = spec.board_value(value) if spec.board_value else str(spec.convert(value))
        return out

    def parse_options(
        self, options: Mapping[str, str | None], variants: Sequence[Any] = ()
    ) -> dict[str, Any]:
        """Turn ``name=value`` strings into typed values, refusing unknown names.

        The game's own options and those of the chosen ``variants`` are known. A value of
        None is a bare flag: ``name`` alone means ``name=on``, or the option it aliases.
        """
        specs = self._specs(variants)
        given = self.resolve_flags(options, variants)
        unknown = sorted(set(given) - set(specs))
        if unknown:
            raise ValueError(
                f"unknown option(s) for {self.name}: {', '.join(unknown)}; "
                f"known: {', '.join(sorted(specs)) or 'none'}"
            )
        merged = {name: spec.default for name, spec in specs.items()}
        merged.update(given)
        return {name: specs[name].convert(value) for name, value in merged.items()}

    def check_players(self, num_players: int) -> None:
        if not self.min_players <= num_players <= self.max_players:
            takes = (
                f"{self.min_players}"
                if self.min_players == self.max_players
                else f"{self.min_players} to {self.max_players}"
            )
            raise ValueError(f"{self.name} takes {takes} players, not {num_players}")

    def public_event(self, event: Event, seat: int | None) -> Event | None:
        """``event`` as ``seat`` may see it during the match (None: a spectator), or None
        if it may not see it at all. Events marked ``"private": s`` go to seat s only."""
        private = event.get("private")
        if private is not None and private != seat:
            return None
        return event

    def render(self, state: State) -> str:
        """A text picture of the position, for people (``arena play --board``)."""
        return ""

    @abstractmethod
    def new_state(
        self,
        num_players: int,
        seed: int,
        options: Mapping[str, str] | None = None,
        variants: Sequence[str] = (),
        deal_seed: int | None = None,
    ) -> State:
        """A fresh game. Raises ValueError for a configuration that makes no sense.

        ``seed`` is the match's secret: everything private or still to come (hidden
        cards, missions, the draw pile, dice, a fallback setup) follows from it.
        ``deal_seed`` (None: the same as ``seed``) is the seed of the public start
        only: what every seat sees before the first decision (Risk's territory deal).
        The rotations of a tournament's deal share it, so that a lucky start is every
        bot's in turn, while each has a seed of its own; so nothing hidden may follow
        from it. Draw the two from different streams (``SecureRandom(seed, "match")``
        and ``SecureRandom(deal_seed, "deal")``), so they share no number even when the
        seeds are the same. A game that takes no ``deal_seed`` shares nothing: each
        rotation then starts from a deal of its own (see :meth:`start_state`).
        """

    def start_state(
        self,
        num_players: int,
        seed: int,
        options: Mapping[str, str] | None = None,
        variants: Sequence[Any] = (),
        deal_seed: int | None = None,
    ) -> State:
        """:meth:`new_state`, with ``deal_seed`` if this game takes one: what the match
        runners call, so that a game written before deal seeds existed still plays (its
        rotations then share no deal, and no secret)."""
        if deal_seed is not None and _takes_deal_seed(type(self)):
            return self.new_state(num_players, seed, options, variants, deal_seed=deal_seed)
        return self.new_state(num_players, seed, options, variants)


@functools.cache
def _takes_deal_seed(game: type[Game]) -> bool:
    parameters = inspect.signature(game.new_state).parameters
    return "deal_seed" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )
