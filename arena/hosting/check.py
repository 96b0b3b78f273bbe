"""A submission's check before it is kept: its bytes (``arena.hosting.archive``), then
its code, started in the sandbox and asked the first decision of each game it plays.
A bot that cannot start, raises, times out, answers nonsense or an illegal action is
refused with the reason and the end of its stderr."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.engine.core import IllegalAction
from arena.engine.match import BotFailed, BotGone, LazyObservation
from arena.engine.seeds import fresh_seed
from arena.hosting.archive import Bounds, Code, Refused, format_of, inspect, unpack
from arena.hosting.cache import program_in, readable

#: the end of a refused bot's stderr shown with the reason (bytes)
STDERR_TAIL = 2000


@dataclass(frozen=True)
class Checked:
    """A submission that passed: its format, what it unpacked to, the games checked."""

    format: str
    code: Code
    games: tuple[str, ...]


def check_submission(
    data: bytes,
    filename: str,
    games: Sequence[str],
    registry: Any,
    *,
    bounds: Bounds | None = None,
    isolation: str = "sandbox",
    limits: Any = None,
    decision_ms: int = 5000,
) -> Checked:
    """Check a submission completely; Refused (one line, then its stderr's end) if not."""
    format = format_of(filename)
    bounds = bounds or Bounds()
    code = inspect(data, format, bounds)
    chosen = tuple(dict.fromkeys(games or code.manifest.games))
    if not chosen:
        raise Refused(
            "say which games it plays (arena bot submit --game GAME, or games = [...] in "
            "its arena-bot.toml): each is checked"
        )
    for game in chosen:
        try:
            registry.game(game)
        except ValueError as exc:
            raise Refused(str(exc)) from None
    folder = Path(tempfile.mkdtemp(prefix="arena-check-"))
    try:
        unpack(data, format, folder, bounds)
        readable(folder)
        program = program_in(folder)
        for game in chosen:
            first_decision(program, registry.game(game), isolation, limits, decision_ms)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return Checked(format, code, chosen)


def smallest_table(game: Any) -> int:
    """The fewest seats ``game`` starts with, with no variant (Risk: 3)."""
    for seats in range(game.min_players, game.max_players + 1):
        try:
            game.new_state(seats, 1, {}, [])
        except ValueError:
            continue
        return seats
    return game.max_players


def first_decision(
    program: Any, game: Any, isolation: str, limits: Any, decision_ms: int = 5000
) -> None:
    """Start ``program`` in the sandbox for a fresh match of ``game`` and ask it the
    first decision; Refused says what went wrong."""
    from arena.sandbox import Limits, SandboxError, stdio_player
    from arena.sdk import MatchContext

    seats = smallest_table(game)
    state = game.start_state(seats, fresh_seed(), {}, [])
    decision = state.decision()
    seat = decision.player
    labels = ["submitted" if s == seat else f"seat{s}" for s in range(seats)]
    context = MatchContext(f"check-{game.name}", game.name, seat, labels, [], {})
    try:
        player = stdio_player(program, context, isolation=isolation, limits=limits or Limits())
    except SandboxError as exc:
        raise Refused(f"{game.name}: it could not start: {exc.reason}") from None
    problem = ""
    try:
        observation = LazyObservation.of(state, seat)
        try:
            action = player.decide(observation, decision)
        except BotFailed as exc:
            problem = f"{game.name}: its first decision ({decision.kind}) failed: {exc.why}"
        except BotGone as exc:
            problem = f"{game.name}: at its first decision ({decision.kind}): {exc.why}"
        else:
            try:
                state.apply(seat, action)
            except IllegalAction as exc:
                problem = (
                    f"{game.name}: its first decision ({decision.kind}) is illegal: {exc.reason}"
                )
    except SandboxError as exc:
        problem = f"{game.name}: {exc.reason}"
    finally:
        player.close()
    if problem:
        tail = player.stderr()[-STDERR_TAIL:].decode("utf-8", "replace").strip()
        raise Refused(problem + (f"\nits stderr ends with:\n{tail}" if tail else ""))
