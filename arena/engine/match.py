"""The match runner: drives a state with players and records every step."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from arena.engine.core import Action, Decision, Event, Game, IllegalAction, Result, State


class Player(Protocol):
    """Anything that can decide. In-process bots, remote connections and humans alike."""

    def decide(self, state_view: Any, decision: Decision) -> Action:
        """Return the action for ``decision``.

        ``state_view`` is the player's observation (a mapping of what it may know).
        """
        ...


class BotError(RuntimeError):
    """An in-process bot returned an illegal action: a bug in the bot, reported as such."""


@dataclass
class MatchRecord:
    """Everything needed to replay and check a match: configuration, steps, result."""

    game: str
    num_players: int
    seed: int
    players: list[str]
    options: dict[str, str] = field(default_factory=dict)
    variants: list[str] = field(default_factory=list)
    initial_events: list[Event] = field(default_factory=list)
    #: one entry per decision: [seat, action, events it caused]
    steps: list[list[Any]] = field(default_factory=list)
    result: Result | None = None

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
) -> MatchRecord:
    """Play one whole match between in-process players and return its record.

    ``variants`` are :class:`~arena.plugins.Variant` objects. With ``record=False`` only
    the result is kept (benchmarks of the rules alone).
    """
    state: State = game.new_state(len(players), seed, options, variants)
    rec = MatchRecord(
        game=game.name,
        num_players=len(players),
        seed=seed,
        players=list(names) if names is not None else [type(p).__name__ for p in players],
        options=dict(options or {}),
        variants=[v.name for v in variants],
        initial_events=list(state.initial_events),
    )
    steps = rec.steps
    while not state.terminal:
        decision = state.decision()
        seat = decision.player
        action = players[seat].decide(state.observation(seat), decision)
        try:
            events = state.apply(seat, action)
        except IllegalAction as exc:
            raise BotError(
                f"{rec.players[seat]} (seat {seat}) made an illegal {decision.kind} "
                f"decision {action!r}: {exc}"
            ) from exc
        if record:
            steps.append([seat, action, events])
    rec.result = state.result()
    return rec
