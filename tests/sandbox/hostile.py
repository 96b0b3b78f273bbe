"""Hostile bot files, and a short match to play each in: real files, real processes.

Each bot attacks at its first decision. An attack that fails raises (the SDK tells the
referee: a strike) or kills the bot (a forfeit); one that succeeded would print
``LEAKED`` to its stderr and play on, and the tests look for that word.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.engine.match import MatchRecord, play_match
from arena.plugins import load_registry
from arena.sandbox import Limits, python_bot_program, stdio_player
from arena.sdk import MatchContext

#: small bounds, so that each attack meets its limit quickly
LIMITS = Limits(
    memory_mb=512,
    cpu_s=4,
    processes=24,
    open_files=64,
    file_size_mb=4,
    tmp_mb=8,
    stderr_kb=8,
    line_kb=64,
    start_s=120,
)
DECISION_MS = 400
OPTIONS = {"turn-limit": "40"}

BOT = """
import os, random, signal, socket, sys, time
from arena.sdk import Bot

ATTACKED = False


def attack():
{attack}


class Hostile(Bot):
    def decide_stratego(self, observation, decision):
        global ATTACKED
        if not ATTACKED:
            ATTACKED = True
            attack()
        if decision.kind == "move":
            src, dst = random.choice(decision.options["moves"])
            return {{"type": "move", "from": src, "to": dst}}
        return self.default_setup(decision)
"""


def bot_source(attack: str) -> str:
    body = "\n".join("    " + line for line in attack.strip().splitlines())
    return BOT.format(attack=body)


def play_hostile(
    folder: Path, name: str, attack: str, limits: Limits = LIMITS, isolation: str = "sandbox"
) -> tuple[MatchRecord, Any]:
    """Play a short barrage match of the hostile bot ``name`` (seat 0) against the
    random house bot; its record and the (closed) sandboxed player."""
    path = folder / f"{name}.py"
    path.write_text(bot_source(attack))
    registry = load_registry()
    game = registry.game("stratego")
    variants = registry.resolve_variants("stratego", ["barrage"])
    context = MatchContext("m-hostile", "stratego", 0, [f"file:{name}", "random"], ["barrage"])
    player = stdio_player(
        python_bot_program(path),
        context,
        isolation=isolation,
        limits=limits,
        decision_ms=DECISION_MS,
        time_bank_ms=0,
        name=f"file:{name}",
    )
    other = registry.bot("stratego", "random").factory(1, 5)
    try:
        record = play_match(game, [player, other], 11, OPTIONS, variants)
    finally:
        player.close()
    return record, player
