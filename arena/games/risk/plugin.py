"""Registers the Risk game (entry point ``arena: risk``)."""

from __future__ import annotations

from collections.abc import Callable

from arena import hookimpl
from arena.engine.core import Game
from arena.games.risk.game import RiskGame


@hookimpl
def arena_register_games(register: Callable[[Game], None]) -> None:
    register(RiskGame())
