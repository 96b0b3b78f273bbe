"""Replays: a match's seed, configuration, decisions and events, as JSON.

The format is described in ``docs/replay-format.md``. A file whose name ends in
``.gz`` is gzip-compressed. :func:`verify` re-simulates a replay from its seed and
decisions and stops at the first event that differs.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from arena.engine.core import IllegalAction, Result
from arena.engine.match import MatchRecord

FORMAT = "arena-replay"
VERSION = 1


class ReplayMismatch(Exception):
    """Re-simulation disagrees with the replay; ``step`` is the first differing step."""

    def __init__(self, step: int, message: str) -> None:
        self.step = step
        super().__init__(message)


def to_json(rec: MatchRecord) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "game": rec.game,
        "num_players": rec.num_players,
        "seed": rec.seed,
        "players": rec.players,
        "options": rec.options,
        "variants": rec.variants,
        "initial_events": rec.initial_events,
        "steps": rec.steps,
        "result": rec.result.to_json() if rec.result else None,
    }


def from_json(data: dict[str, Any]) -> MatchRecord:
    if data.get("format") != FORMAT:
        raise ValueError(f"not an arena replay: format is {data.get('format')!r}")
    if data.get("version") != VERSION:
        raise ValueError(f"replay version {data.get('version')!r}; this arena reads {VERSION}")
    try:
        return MatchRecord(
            game=data["game"],
            num_players=data["num_players"],
            seed=data["seed"],
            players=data["players"],
            options=data.get("options", {}),
            variants=data.get("variants", []),
            initial_events=data.get("initial_events", []),
            steps=data["steps"],
            result=Result.from_json(data["result"]) if data.get("result") else None,
        )
    except KeyError as exc:
        raise ValueError(f"replay is missing the field {exc}") from None


def dumps(rec: MatchRecord) -> str:
    return json.dumps(to_json(rec), separators=(",", ":"))


def save(rec: MatchRecord, path: str | Path) -> int:
    """Write the replay; returns its size in bytes."""
    data = dumps(rec).encode()
    if str(path).endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    Path(path).write_bytes(data)
    return len(data)


def load(path: str | Path) -> MatchRecord:
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    return from_json(data)


def _normal(value: Any) -> Any:
    """The value as JSON would give it back (tuples become lists)."""
    return json.loads(json.dumps(value))


def _first_difference(expected: list[Any], got: list[Any]) -> str:
    for i, (e, g) in enumerate(zip(expected, got, strict=False)):
        if e != g:
            return f"event {i}: the replay has {json.dumps(e)} but the rules give {json.dumps(g)}"
    if len(expected) != len(got):
        return f"the replay has {len(expected)} events but the rules give {len(got)}"
    return "no difference"


def verify(rec: MatchRecord, registry: Any = None) -> int:
    """Re-simulate ``rec``; returns the number of steps checked.

    Raises :class:`ReplayMismatch` naming the first step and event that differ.
    """
    from arena.plugins import load_registry

    registry = registry or load_registry()
    game = registry.game(rec.game)
    variants = registry.resolve_variants(rec.game, rec.variants)
    state = game.new_state(rec.num_players, rec.seed, rec.options, variants)
    initial = _normal(state.initial_events)
    if initial != rec.initial_events:
        raise ReplayMismatch(-1, "setup: " + _first_difference(rec.initial_events, initial))
    for i, step in enumerate(rec.steps):
        try:
            seat, action, events = step
        except (TypeError, ValueError):
            raise ReplayMismatch(i, f"step {i} is malformed: {step!r}") from None
        if state.terminal:
            raise ReplayMismatch(i, f"step {i}: the game was already over")
        try:
            if isinstance(action, dict) and action.get("type") == "forfeit":
                got = _normal(state.forfeit(seat))  # the referee removed this seat
            else:
                got = _normal(state.apply(seat, action))
        except IllegalAction as exc:
            raise ReplayMismatch(
                i, f"step {i}: seat {seat}'s action {action!r} is illegal here: {exc}"
            ) from None
        if got != events:
            raise ReplayMismatch(
                i,
                f"step {i} (seat {seat}, {action.get('type')}): " + _first_difference(events, got),
            )
    result = state.result()
    if (result.to_json() if result else None) != (rec.result.to_json() if rec.result else None):
        raise ReplayMismatch(
            len(rec.steps),
            f"the replay's result {rec.result} differs from the re-simulated {result}",
        )
    return len(rec.steps)
