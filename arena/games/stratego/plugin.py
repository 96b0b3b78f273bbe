"""Registers the Stratego game (entry point ``arena: stratego``)."""

from __future__ import annotations

from collections.abc import Callable

from arena import hookimpl
from arena.engine.core import Game
from arena.games.stratego.game import StrategoGame


@hookimpl
def arena_register_games(register: Callable[[Game], None]) -> None:
    register(StrategoGame())
