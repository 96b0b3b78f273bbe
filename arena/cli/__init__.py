"""The ``arena`` command line: one module per command group, each adding its commands to
the parser (``add_parsers``), and one module that prints what they share (``console``).

======================  ==============================================================
``arena.cli.play``       play, replay (verify, export), odds, variants
``arena.cli.referee``    referee, health, match (run, watch)
``arena.cli.bot``        bot (register, run, new); bot processes for ``arena.sdk.main``
``arena.cli.tournament`` tournament (run, resume, create, show, list, recurring)
``arena.cli.leaderboard`` leaderboard, compare, bots
``arena.cli.web``        web, demo
``arena.cli.args``       the parser, value types, shared options, opening the store
``arena.cli.console``    progress, JSON documents, error lines
======================  ==============================================================
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

# gRPC's C core writes its INFO lines to stderr unless told otherwise (a referee's GOAWAY
# of an idle connection: "Got goaway [2] ... connection idle"), and it reads the setting
# once, as `grpc` is imported (the commands below import it): a terminal shows only
# Arena's own lines, and a GRPC_VERBOSITY of the user's own still wins
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

from arena.cli import bot, console, leaderboard, play, referee, tournament, web
from arena.cli.args import Parser
from arena.engine.core import IllegalAction
from arena.engine.match import BotError

#: the command groups, in the order ``arena --help`` lists them
GROUPS = (play, referee, bot, tournament, leaderboard, web)


def _installed_version() -> str:
    """The installed package's version (its metadata), as pip shows it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("arena")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="arena", description="AI bots play Risk and Stratego")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_installed_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows here, where it is handled
        return code
    except BrokenPipeError:
        return console.stdout_gone()
    except KeyboardInterrupt:  # Ctrl-C: the user knows why; no traceback
        return 130
    except OSError as exc:
        console.error(console.os_error(exc))
        return 2
    except (ValueError, KeyError, RuntimeError, IllegalAction, BotError) as exc:
        console.error(exc)
        return 2


def run() -> Any:  # pragma: no cover - console entry
    sys.exit(main())
