"""What the commands share of their command lines: the parser, value types that refuse
bad input in one line, common options and their help texts, and opening the store."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.argtypes import (  # noqa: F401 - the CLI's value types, shared with bot processes
    ORGANISER_KEY_ENV,
    REGISTRATION_KEY_ENV,
    non_negative_int,
    port_number,
    positive_float,
    positive_int,
    secret_argument,
)

VARIANT_HELP = "a variant (repeatable); see `arena variants`"
OPTION_HELP = "a rule option NAME=VALUE, or a flag NAME (repeatable); see `arena variants`"
REFEREE_HELP = "the referee's address, HOST:PORT"
DECISION_MS_HELP = "milliseconds a bot has for each decision (0: the referee's default)"
TIME_BANK_MS_HELP = "milliseconds a bot may overrun its decisions by, in all, in one match"
GAMES_PER_PAIRING_HELP = "matches each pairing (each set of bots at one table) plays"
NAME_HELP = "the tournament's name (default: the game with its format, or with --every)"
TOURNAMENT_TIME_BANK_HELP = "a bot's time bank in each match, milliseconds (0: the referee's)"

TOURNAMENT_SEED_HELP = (
    "the tournament seed, from which every match seed derives (default: a fresh secret one "
    "from the operating system)"
)


def _parse_options(pairs: Sequence[str]) -> dict[str, str | None]:
    """``NAME=VALUE`` pairs; a bare ``NAME`` is a flag (None), resolved by the game."""
    options: dict[str, str | None] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not name:
            raise ValueError(f"--option {pair!r}: expected NAME=VALUE or a flag NAME")
        options[name] = value if sep else None
    return options


def output_file(text: str) -> str:
    """An argparse type: a file to write, whose directory exists (``-``: standard output),
    so that a typo stops the command before it plays, not after."""
    path = Path(text)
    if text != "-" and path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory: give a file name")
    if text != "-" and not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: the directory {path.parent} does not exist")
    return text


class DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` shows every option's default, except where there is none to show (no
    value, a switch: its help says what it turns on or off, an empty list) or its help
    already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        default = action.default
        switch = action.nargs == 0 and action.option_strings  # --x or --no-x
        if default is None or switch or default == [] or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """A usage error is one line (naming the command and where to read more), not the
    whole usage text above it. Every command's help shows its options' defaults."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def stored_options(args: argparse.Namespace) -> dict[str, str]:
    """``--option`` pairs as a replay or a tournament keeps them: every bare flag replaced
    by what it means (``name=on``, or the option it aliases), never a null, and a file an
    option names read into it (a Risk map: :meth:`Game.stored_options`). A game this
    installation does not know is left to whoever plays it (a bare flag becomes ``on``)."""
    from arena.plugins import load_registry

    options = _parse_options(args.option)
    registry = load_registry()
    try:
        game = registry.game(args.game)
        variants = registry.resolve_variants(args.game, args.variant)
    except (KeyError, ValueError):
        return {k: "on" if v is None else v for k, v in options.items()}
    registry.check_options(args.game, options, variants)
    return game.stored_options(options, variants)


def open_store(args: argparse.Namespace, create: bool = True) -> Any:
    """``create`` off for commands that only read: they make no empty database."""
    from arena.store import Store

    return Store(args.db, create=create)


def check_game(game: str, variants: Sequence[str] = ()) -> None:
    """An unknown game or variant is refused, not shown as an empty table."""
    from arena.plugins import load_registry

    registry = load_registry()
    registry.game(game)
    registry.resolve_variants(game, variants)


def json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document instead of text (its shape: docs/tournaments.md)",
    )


def default_db() -> str:
    """The store when no --db is given: $ARENA_DB, else ``arena.db`` here."""
    return os.environ.get("ARENA_DB", "arena.db")


def db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        default=default_db(),
        help="SQLite file or database URL (default: $ARENA_DB or arena.db)",
    )


def rule_options(parser: argparse.ArgumentParser) -> None:
    """--variant and --option, repeatable."""
    parser.add_argument("--variant", action="append", default=[], help=VARIANT_HELP)
    parser.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help=OPTION_HELP
    )


ISOLATION_PLAY_HELP = (
    "how bot files run: inprocess (the default: your own code, in this process, where a "
    "debugger works), process (a plain subprocess: shares no memory with the match), "
    "sandbox (a subprocess under bubblewrap: no network, no files but its own; for "
    "anyone else's code)"
)
ISOLATION_TOURNAMENT_HELP = (
    "how bot files run: sandbox (the default: under bubblewrap, since a tournament plays "
    "other people's code), process (a plain subprocess: where bubblewrap cannot run), "
    "inprocess (your own code only: it could read the match's state)"
)


def isolation_option(parser: argparse.ArgumentParser, default: str, help_text: str) -> None:
    """--isolation {inprocess,process,sandbox}: how bot files are played."""
    from arena.sandbox.limits import ISOLATIONS

    parser.add_argument("--isolation", choices=ISOLATIONS, default=default, help=help_text)


def progress_options(parser: argparse.ArgumentParser) -> None:
    """--quiet and -v, for commands that play tournaments."""
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="a line per finished game: its bots by place, how it ended, how long it went",
    )
