"""The Node.js example as a stdio bot (bots/node/stdio_bot.js: Node alone, no npm
package) plays a whole match of Risk and of Stratego in the sandbox, against Python
house bots, through the real JSON-lines protocol."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from arena.engine.match import play_match
from arena.engine.replay import verify
from arena.plugins import load_registry
from arena.sandbox import BotProgram, stage_code, stdio_player
from arena.sdk import MatchContext

NODE_DIR = Path(__file__).resolve().parents[2] / "bots" / "node"
FILES = ("stdio_bot.js", "decide.js")


def node_program() -> BotProgram:
    files = {name: (NODE_DIR / name).read_bytes() for name in FILES}
    digest = hashlib.sha256(b"".join(files[name] for name in FILES)).hexdigest()
    return BotProgram(stage_code(files, digest), ("node", "stdio_bot.js"))


@pytest.mark.parametrize(
    ("game", "others", "options"),
    [
        ("risk", ["aggressive", "defensive"], {"turn-limit": "60"}),
        ("stratego", ["random"], {}),
    ],
)
def test_the_node_stdio_bot_plays_a_whole_match(
    game: str, others: list[str], options: dict[str, str]
) -> None:
    assert shutil.which("node"), "Node.js is installed here (make node)"
    registry = load_registry()
    names = ["node", *others]
    context = MatchContext("m-node", game, 0, names, [], options)
    player = stdio_player(node_program(), context, name="node")
    players = [player] + [
        registry.bot(game, name).factory(seat, 3 + seat) for seat, name in enumerate(others, 1)
    ]
    try:
        record = play_match(registry.game(game), players, 17, options, names=names)
    finally:
        player.close()
    assert record.result is not None
    assert record.conduct[0].strikes == 0 and not record.conduct[0].forfeit, player.stderr()
    assert sum(1 for step in record.steps if step[0] == 0) > 10
    assert b"ended: " in player.stderr()  # it was told how the match ended
    assert verify(record) > 0  # the replay re-simulates step for step
