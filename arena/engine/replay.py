"""Replays: a match's seed, configuration, decisions and events, as JSON.

The format is described in ``docs/replay-format.md``. A file whose name ends in
``.gz`` is gzip-compressed. :func:`verify` re-simulates a replay from its seeds and
decisions and stops at the first event that differs; when the replay was made under
another version of the game's or a variant's rules, the difference says so first.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.engine.core import IllegalAction, Result
from arena.engine.match import MatchRecord, rules_versions

FORMAT = "arena-replay"
VERSION = 1


class ReplayMismatch(Exception):
    """Re-simulation disagrees with the replay; ``step`` is the first differing step."""

    def __init__(self, step: int, message: str) -> None:
        self.step = step
        super().__init__(message)


def to_json(rec: MatchRecord) -> dict[str, Any]:
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "game": rec.game,
        "num_players": rec.num_players,
        "seed": rec.seed,
        **({} if rec.deal_seed is None else {"deal_seed": rec.deal_seed}),
        "players": rec.players,
        "options": rec.options,
        "variants": rec.variants,
    }
    rules = rec.rules if rec.rules is not None else _installed_rules(rec.game, rec.variants)
    if rules:  # left out while every rule is at version 1, as before versions existed
        data["rules"] = rules
    data["initial_events"] = rec.initial_events
    data["steps"] = rec.steps
    data["result"] = rec.result.to_json() if rec.result else None
    return data


@functools.cache
def _installed() -> Any:
    from arena.plugins import load_registry

    return load_registry()


def _installed_rules(game: str, names: Sequence[str]) -> dict[str, int]:
    """The rules versions of this arena's ``game`` and its variants ``names`` (a record
    made without them)."""
    registry = _installed()
    variants = registry.variants
    return rules_versions(
        [variants[(game, n)] for n in names if (game, n) in variants], registry.games.get(game)
    )


def _rules(data: dict[str, Any]) -> dict[str, int]:
    rules = data.get("rules", {})
    if not isinstance(rules, dict) or not all(
        isinstance(k, str) and type(v) is int for k, v in rules.items()
    ):
        raise ValueError(
            "replay field 'rules' must map the game's and variants' names to rules "
            f"versions, got {rules!r}"
        )
    return rules


def _deal_seed(data: dict[str, Any]) -> int | None:
    deal_seed = data.get("deal_seed")
    if deal_seed is not None and (isinstance(deal_seed, bool) or not isinstance(deal_seed, int)):
        raise ValueError(f"replay field 'deal_seed' must be an integer, got {deal_seed!r}")
    return deal_seed


def from_json(data: dict[str, Any]) -> MatchRecord:
    if not isinstance(data, dict):
        raise ValueError(f"not an arena replay: a JSON {type(data).__name__}, not an object")
    if data.get("format") != FORMAT:
        raise ValueError(f"not an arena replay: format {data.get('format')!r}, not {FORMAT!r}")
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
            rules=_rules(data),
            initial_events=data.get("initial_events", []),
            steps=data["steps"],
            result=Result.from_json(data["result"]) if data.get("result") else None,
            deal_seed=_deal_seed(data),
        )
    except KeyError as exc:
        raise ValueError(f"replay is missing the field {exc}") from None


def dumps(rec: MatchRecord) -> str:
    return json.dumps(to_json(rec), separators=(",", ":"))


def save(rec: MatchRecord, path: str | Path) -> int:
    """Write the replay; returns its size in bytes."""
    return save_text(dumps(rec), path)


def save_text(text: str, path: str | Path) -> int:
    """Write a replay's JSON text, gzipped if ``path`` ends in ``.gz``; its size in bytes."""
    data = text.encode()
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
    try:
        return from_json(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


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


def rules_changes(rec: MatchRecord, variants: Sequence[Any], game: Any = None) -> list[str]:
    """How the rules ``rec`` was recorded under differ from those of ``game`` (its own
    rules, recorded under its name) and ``variants``."""
    recorded = rec.rules if rec.rules is not None else rules_versions(variants, game)
    changes = []
    for ruled in ([game] if game is not None else []) + list(variants):
        then = recorded.get(ruled.name, 1)
        if then != ruled.rules_version:
            changes.append(
                f"the replay was recorded under version {then} of the {ruled.name} rules "
                f"and this arena plays version {ruled.rules_version}"
            )
    return changes


def verify(rec: MatchRecord, registry: Any = None) -> int:
    """Re-simulate ``rec``; returns the number of steps checked.

    Raises :class:`ReplayMismatch` naming the first step and event that differ, after
    the rules versions that differ from the replay's, if any.
    """
    from arena.plugins import load_registry

    registry = registry or load_registry()
    game = registry.game(rec.game)
    variants = registry.resolve_variants(rec.game, rec.variants)
    try:
        return _resimulate(rec, game, variants)
    except ReplayMismatch as exc:
        changes = rules_changes(rec, variants, game)
        if not changes:
            raise
        raise ReplayMismatch(
            exc.step,
            f"the rules changed since this replay was made ({'; '.join(changes)}), so the "
            f"game can go differently now: {exc}",
        ) from None


def _resimulate(rec: MatchRecord, game: Any, variants: Sequence[Any]) -> int:
    state = game.start_state(rec.num_players, rec.seed, rec.options, variants, rec.deal_seed)
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
