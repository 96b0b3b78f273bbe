"""Command-line value types and options shared by ``arena`` (the CLI) and the bot
processes of the SDK (``arena.sdk.main``, ``python -m arena.bots.NAME``): a bad value is
one clear line naming it and what was expected."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any


def _number(kind: type, least: float, most: float | None, expected: str) -> Callable[[str], Any]:
    """An argparse type: a number from ``least`` (to ``most``), else one clear line."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or value < least or (most is not None and value > most):
            raise argparse.ArgumentTypeError(f"{text!r}: expected {expected}")
        return value

    return parse


positive_int = _number(int, 1, None, "a whole number, 1 or more")
non_negative_int = _number(int, 0, None, "a whole number, 0 or more")
positive_float = _number(float, 1e-9, None, "a number of seconds above 0")
port_number = _number(int, 0, 65535, "a port number from 0 (any free port) to 65535")


#: the environment variables the secret options read when not given (a command line is
#: visible to every user of the machine in ``ps``; the environment is not)
ORGANISER_KEY_ENV = "ARENA_ORGANISER_KEY"
REGISTRATION_KEY_ENV = "ARENA_REGISTRATION_KEY"


def secret_argument(parser: Any, flag: str, env: str, help: str) -> None:
    """An option holding a secret, read from ``$env`` when not given (say so in --help)."""
    parser.add_argument(
        flag,
        default=os.environ.get(env) or None,
        help=f"{help} (default: ${env}; the environment keeps it out of `ps`)",
    )
