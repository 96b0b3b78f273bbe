"""A Python bot may name Stratego squares (``"c5"``) and give its setup as pairs, as the
rules and docs/stratego.md allow: the SDK sends them as the numbers the wire carries.
Played over real gRPC against ``arena play``'s referee, its own process."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from arena.games.stratego.board import square_name
from arena.sdk import Bot, MatchContext, run_bot_async

ROOT = Path(__file__).resolve().parents[2]
WAITING = re.compile(r"waiting for (\S+): run it with --referee (\S+) --token (\S+)")


class ByName(Bot):
    """Names every square, and sets up with a list of [square, piece] pairs."""

    def __init__(self, match: MatchContext) -> None:
        super().__init__(match)
        self.sent: list[dict[str, Any]] = []

    def decide_stratego(self, observation, decision):
        if decision.kind == "setup":
            placement = self.default_setup(decision)["placement"]
            action = {
                "type": "setup",
                "placement": [[square_name(int(s)), n] for s, n in placement.items()],
            }
        else:
            src, dst = min(decision.options["moves"])
            action = {"type": "move", "from": square_name(src), "to": square_name(dst)}
        self.sent.append(action)
        return action


def _connect_line(play: subprocess.Popen[str], out: Path) -> re.Match[str]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = WAITING.search(out.read_text())
        if found:
            return found
        assert play.poll() is None, out.read_text()
        time.sleep(0.1)
    raise AssertionError(f"no connect line: {out.read_text()}")


def test_square_names_and_placement_pairs_reach_the_referee_as_sent(tmp_path: Path) -> None:
    replay, out = tmp_path / "replay.json", tmp_path / "play.out"
    command = [sys.executable, "-m", "arena.cli", "play", "stratego", "--variant", "barrage"]
    command += ["--players", "remote:mine,random", "--seed", "4", "--port", "0"]
    command += ["--wait", "60", "--replay", str(replay)]
    bots: list[ByName] = []

    def factory(match: MatchContext) -> ByName:
        bots.append(ByName(match))
        return bots[-1]

    with open(out, "w") as sink:
        play = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
        try:
            _, address, token = _connect_line(play, out).groups()
            asyncio.run(run_bot_async(factory, address, token, stop_after=1, reconnect=False))
            assert play.wait(timeout=120) == 0, out.read_text()
        finally:
            if play.poll() is None:
                play.kill()
                play.wait()
    (bot,) = bots
    data = json.loads(replay.read_text())
    played = [action for seat, action, _ in data["steps"] if seat == 0]
    assert data["result"]["reason"] != "forfeit"  # no timeouts, no strikes
    setup, *moves = played
    assert {square_name(int(s)): n for s, n in setup["placement"].items()} == dict(
        bot.sent[0]["placement"]
    )
    assert moves, "the bot moved"
    assert [(square_name(m["from"]), square_name(m["to"])) for m in moves] == [
        (a["from"], a["to"]) for a in bot.sent[1:]
    ]
