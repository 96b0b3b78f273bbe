"""A bot from a local Python file, played in process: no referee, no registration.

``arena play risk --players ./mybot.py,aggressive`` and ``arena tournament run --bots
./mybot.py,...`` import the file and play the one :class:`~arena.sdk.Bot` subclass it
defines. The same file runs unchanged as a process (``python mybot.py --token T``, see
:func:`arena.sdk.main`): importing it here does not run its ``__main__`` block.

Its actions take the path they take over the wire (territory names to indices, the
action message and back), and it is held to the referee's rules (``Refereed``): an
illegal action is refused and asked again, then the default is played and counted as a
strike, an exception is a strike at once ("bot raised ..."), 5 strikes forfeit the seat;
its decisions carry the events since its last one and ``Bot.on_end`` is called at the
end. So a bot that plays in process plays the same remotely. There is no clock in
process: a debugger may stop it for as long as it likes.

In tournaments the bot is ``file:STEM`` (the file's name without ``.py``); its version
is its content: the store keeps the file's SHA-256 with each version, so an edited file
is a new version and an unchanged one is the same version again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from arena.engine.core import Decision, Event, Result
from arena.engine.match import BotError, BotFailed
from arena.sdk import Bot, MatchContext, MatchEnd, _wire_action, failure, tell_end

log = logging.getLogger("arena.sdk")

FILE_PREFIX = "file:"


def is_bot_file(spec: str) -> bool:
    """True when a player name is a path (``./mybot.py``): bot names have no ``/`` or ``.``."""
    return "/" in spec or spec.endswith(".py")


@dataclass(frozen=True)
class LocalBot:
    """A loaded bot file: ``name`` is ``file:STEM``, ``digest`` its content's SHA-256."""

    name: str
    path: str
    digest: str
    cls: type[Bot]

    def player(
        self, context: MatchContext, warn: Callable[[str], None] | None = None
    ) -> FilePlayer:
        return FilePlayer(self, context, warn)


class FilePlayer:
    """One match's instance of a file's bot, as an in-process engine player held to the
    referee's rules (:class:`arena.engine.match.Refereed`). ``warn`` says what went wrong
    (a refused action, an exception with its file and line); default: the log."""

    refereed = True

    def __init__(
        self, bot: LocalBot, context: MatchContext, warn: Callable[[str], None] | None = None
    ) -> None:
        self.path = bot.path
        self.name = bot.name
        self.context = context
        self.game = context.game
        self.warn = warn or log.warning
        self.bot = _call(bot.path, bot.cls, context)

    def decide(self, observation: Any, decision: Decision) -> dict[str, Any]:
        from arena.referee.codec import action_from_proto, action_to_proto

        try:
            action = self.bot.decide(observation, decision)
            # the path to the wire: what the SDK would fail to send fails here too
            wire = action_to_proto(self.game, _wire_action(self.game, action, observation))
        except Exception as exc:
            reason = failure(exc)
            self.warn(
                f"{self.name} (seat {self.context.seat}) failed its {decision.kind} decision: "
                f"{_where(self.path, exc)}: {reason} (a strike; the default is played)"
            )
            raise BotFailed(reason) from exc
        return action_from_proto(self.game, wire)

    def rejected(self, reason: str, allowed: str, strikes: int) -> None:
        self.warn(
            f"{self.name} (seat {self.context.seat}): action rejected: {reason} "
            f"(allowed: {allowed or '-'}; strikes {strikes})"
        )

    def ended(self, result: Result | None, events: list[Event], forfeits: dict[int, str]) -> None:
        end = MatchEnd(
            reason="aborted" if result is None else result.reason.value,
            places=[] if result is None else list(result.places),
            detail="the match was aborted" if result is None else result.detail,
            seat=self.context.seat,
            forfeits=dict(forfeits),
            events=list(events),
        )
        tell_end(self.bot, end, self.context.match_id)


def _call(path: str, func: Any, *args: Any) -> Any:
    """``func(*args)``; an exception names the file and the line it came from."""
    try:
        return func(*args)
    except Exception as exc:
        raise BotError(f"{_where(path, exc)}: {type(exc).__name__}: {exc}") from exc


def _where(path: str, exc: BaseException) -> str:
    """``path, line N``: the deepest line of ``path`` in the exception's traceback."""
    if isinstance(exc, SyntaxError) and exc.filename == path and exc.lineno:
        return f"{path}, line {exc.lineno}"
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    return f"{path}, line {lines[-1]}" if lines else path


def load(spec: str) -> LocalBot:
    """The bot defined in the file ``spec``; ValueError (one line) if there is none.
    Importing it runs its code in this process: only for your own code (a file played
    sandboxed is checked with :func:`check_file`, never imported here)."""
    name, absolute, digest = check_file(spec)
    return LocalBot(name, absolute, digest, _bot_class(absolute, digest))


def check_file(spec: str) -> tuple[str, str, str]:
    """A bot file's name (``file:STEM``), absolute path and content's SHA-256, without
    running it; ValueError (one line) if it cannot be a bot file."""
    from arena.store.db import BOT_NAME_RULE, check_bot_name

    path = Path(spec).expanduser()
    if path.suffix != ".py":
        raise ValueError(f"{spec}: not a Python file (expected a path ending in .py)")
    if not path.is_file():
        raise ValueError(f"{spec}: no such file")
    try:
        check_bot_name(path.stem)
    except ValueError:
        raise ValueError(
            f"{spec}: the file name {path.stem!r} names the bot file:{path.stem}: use "
            f"{BOT_NAME_RULE}"
        ) from None
    absolute = str(path.resolve())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return FILE_PREFIX + path.stem, absolute, digest


@cache
def _bot_class(path: str, digest: str) -> type[Bot]:
    """Import ``path`` once per content (a worker process plays many matches of it)."""
    module_name = f"arena_bot_file_{digest[:16]}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module  # dataclasses and pickling look modules up here
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        raise ValueError(
            f"{_where(path, exc)}: importing it failed: {type(exc).__name__}: {exc}"
        ) from None
    found = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Bot)
        and value is not Bot
        and value.__module__ == module_name
    ]
    if not found:
        raise ValueError(f"{path}: defines no subclass of arena.sdk.Bot")
    if len(found) > 1:
        names = ", ".join(sorted(c.__name__ for c in found))
        raise ValueError(f"{path}: defines {len(found)} Bot subclasses ({names}); keep one")
    return found[0]


def load_checked(path: str, digest: str) -> LocalBot:
    """The bot at ``path``, if its content is still ``digest`` (a tournament's version)."""
    bot = load(path)
    if bot.digest != digest:
        raise ValueError(
            f"{path} changed since the tournament was created: that version of {bot.name} "
            "is gone (restore the file, or start a new tournament)"
        )
    return bot
