"""A third-party plugin for the distributed tests: the example Risk bots, each thinking
for ``ARENA_TEST_THINK_MS`` (default 10) before every decision.

A match between them lasts seconds instead of a fraction of one, long enough to kill a
worker or a referee in its middle. conftest.py installs this module as pip would (a
module plus a dist-info declaring the ``arena`` entry point) and puts it on the
``PYTHONPATH`` of every process it starts, so workers, referees and bot processes load
it through the ordinary plugin mechanism. With ``ARENA_TEST_PLAY_LOG`` set, every bot
made for a match adds a line to that file: the tests count plays with it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from arena import hookimpl
from arena.bots.aggressive import AggressiveRiskBot
from arena.bots.blitz import BlitzRiskBot
from arena.bots.defensive import DefensiveRiskBot
from arena.plugins import BotSpec

THINK_S = float(os.environ.get("ARENA_TEST_THINK_MS", "10")) / 1000
#: a file that gets one line per bot made for a match (a count of plays, whoever plays)
PLAY_LOG = os.environ.get("ARENA_TEST_PLAY_LOG")


class Thoughtful:
    """Plays like ``inner``, after a pause."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def decide(self, observation: Any, decision: Any) -> Any:
        time.sleep(THINK_S)
        return self.inner.decide(observation, decision)


def _factory(cls: type) -> Callable[[int, int], Thoughtful]:
    def make(seat: int, seed: int) -> Thoughtful:
        if PLAY_LOG:
            with open(PLAY_LOG, "a") as log:  # one short append: whole lines, any process
                log.write(f"{cls.__name__} seat {seat} seed {seed}\n")
        return Thoughtful(cls(seat, seed))

    return make


@hookimpl
def arena_register_bots(register: Callable[[BotSpec], None]) -> None:
    for name, cls in (
        ("aggressive", AggressiveRiskBot),
        ("defensive", DefensiveRiskBot),
        ("blitz", BlitzRiskBot),
    ):
        register(
            BotSpec("risk", f"slow-{name}", f"{name}, thinking before each move", _factory(cls))
        )
