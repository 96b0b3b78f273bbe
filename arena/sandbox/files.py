"""A bot file as a match's player, in each isolation: ``arena play`` and tournaments.

- ``inprocess``: imported and played in this process (``arena.sdk.local``): your own
  code, where a debugger works. It can read everything this process can, the match's
  state included.
- ``process``: a plain subprocess over the stdio protocol: it shares no memory with the
  match (no state to find), but sees the machine as your user does.
- ``sandbox``: the same process under bubblewrap (``arena.sandbox.bwrap``).

Under ``process`` and ``sandbox`` the file is never imported here. A bot that cannot
start (a syntax error, no Bot subclass) forfeits its seat with the reason, and the
match goes on; where bubblewrap cannot run, ``sandbox`` refuses in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.engine.core import Decision, Event, Result
from arena.engine.match import BotGone
from arena.sandbox.bwrap import sandbox_problem
from arena.sandbox.limits import ISOLATIONS, Limits
from arena.sandbox.player import SandboxError


def refuse_without_sandbox(isolation: str) -> None:
    """ValueError in one line if ``isolation`` is sandbox and bubblewrap cannot run."""
    if isolation not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}")
    if isolation != "sandbox":
        return
    problem = sandbox_problem()
    if problem is not None:
        raise ValueError(
            f"{problem}; bot files are not run unsandboxed unless you say --isolation "
            "process (a plain process: it shares no memory, but sees the machine as you)"
        )


class NotStarted:
    """The player of a bot that could not start: its seat forfeits at its first
    decision, saying why, and the match goes on."""

    refereed = True

    def __init__(self, why: str) -> None:
        self.why = why

    def decide(self, view: Any, decision: Decision) -> dict[str, Any]:
        raise BotGone(self.why)

    def rejected(self, reason: str, allowed: str, strikes: int) -> None:
        return None

    def ended(self, result: Result | None, events: list[Event], forfeits: dict[int, str]) -> None:
        return None

    def stderr(self) -> bytes:
        return b""

    def close(self) -> None:
        return None


def file_player(
    path: str,
    context: Any,
    isolation: str,
    *,
    digest: str | None = None,
    limits: Limits | None = None,
    decision_ms: int = 0,
    time_bank_ms: int = 0,
    warn: Callable[[str], None] | None = None,
) -> Any:
    """The player of the bot file ``path`` for the match of ``context``. ``digest``: the
    content it must still have (a tournament's version). ValueError (one line) for a
    file that cannot be a bot file, or a sandbox that cannot run here."""
    from arena.sdk.local import check_file, load, load_checked

    if isolation == "inprocess":
        bot = load(path) if digest is None else load_checked(path, digest)
        return bot.player(context, warn)
    refuse_without_sandbox(isolation)
    name, absolute, found = check_file(path)
    from arena.sandbox import python_bot_program, stdio_player

    program = python_bot_program(Path(absolute), digest or found)
    options: dict[str, Any] = {"name": name}
    if decision_ms:
        options["decision_ms"] = decision_ms
    if time_bank_ms:
        options["time_bank_ms"] = time_bank_ms
    try:
        limits = limits or Limits()
        return stdio_player(program, context, isolation=isolation, limits=limits, **options)
    except SandboxError as exc:
        if warn is not None:
            warn(f"{name} (seat {context.seat}) forfeits: {exc.reason}")
        return NotStarted(exc.reason)


def close_players(players: list[Any]) -> None:
    """End the processes of a match's players (those that have any)."""
    for player in players:
        close = getattr(player, "close", None)
        if close is not None:
            close()
