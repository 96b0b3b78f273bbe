"""A bot file played as its own process, under bubblewrap and as a plain process:
whole matches through the real stdio protocol, refereed like a connected bot."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.engine.match import play_match
from arena.plugins import load_registry
from arena.sandbox import Limits, python_bot_program, sandbox_problem, stdio_player
from arena.sdk import MatchContext

RANDOM_STRATEGO = """
import random
from arena.sdk import Bot


class Rnd(Bot):
    def decide_stratego(self, observation, decision):
        print("thinking", decision.kind)  # a print goes to stderr, not the protocol
        if decision.kind == "move":
            src, dst = random.choice(decision.options["moves"])
            return {"type": "move", "from": src, "to": dst}
        return self.default_setup(decision)
"""


def test_bubblewrap_works_here() -> None:
    assert sandbox_problem() is None


@pytest.mark.parametrize("isolation", ["sandbox", "process"])
def test_a_bot_file_plays_a_whole_stratego_match_as_a_process(
    tmp_path: Path, isolation: str
) -> None:
    path = tmp_path / "rnd.py"
    path.write_text(RANDOM_STRATEGO)
    registry = load_registry()
    context = MatchContext("m-1", "stratego", 0, ["file:rnd", "heuristic"])
    player = stdio_player(
        python_bot_program(path), context, isolation=isolation, limits=Limits(cpu_s=60)
    )
    other = registry.bot("stratego", "heuristic").factory(1, 7)
    try:
        record = play_match(registry.game("stratego"), [player, other], seed=3)
    finally:
        player.close()
    assert record.result is not None
    assert record.conduct[0].strikes == 0 and not record.conduct[0].forfeit
    moves = [step for step in record.steps if step[0] == 0]
    assert len(moves) > 5
    assert b"thinking move" in player.stderr()
    assert player.process.poll() is not None  # ended with its match
