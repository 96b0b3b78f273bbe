"""The match runner: drives a state with players and records every step."""

from __future__ import annotations

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
