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

import pytest

from arena.games.stratego.board import square_name
from arena.referee.codec import fill_action
from arena.sdk import Bot, MatchContext, _wire_action, run_bot_async
from arena.v1 import arena_pb2 as pb

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


def _wire(game: str, action: dict[str, Any]) -> bytes:
    message = pb.Action()
    fill_action(message, game, _wire_action(game, action, {"map": "classic"}))
    return message.SerializeToString(deterministic=True)


def test_every_form_an_action_may_take_is_sent_as_the_same_message() -> None:
    same = [
        ("risk", {"type": "reinforce", "armies": {0: 3, 5: 1}}),
        ("risk", {"type": "reinforce", "armies": {"Alaska": 3, "Greenland": 1}}),
        ("risk", {"type": "reinforce", "armies": [["Alaska", 3], ["Greenland", 1]]}),
        ("risk", {"type": "reinforce", "armies": [[0, 3], [5, 1]]}),
    ]
    assert len({_wire(game, action) for game, action in same}) == 1
    moves = [{"type": "move", "from": 31, "to": 41}, {"type": "move", "from": "b4", "to": "b5"}]
    assert _wire("stratego", moves[0]) == _wire("stratego", moves[1])
    setups = [{"placement": {0: "flag", 10: "bomb"}}, {"placement": [["a1", "flag"], [10, "bomb"]]}]
    assert len({_wire("stratego", {"type": "setup", **s}) for s in setups}) == 1


@pytest.mark.parametrize(
    ("answer", "shown"), [(None, "None"), ([1, 2], "a list"), ("move", "a str")]
)
def test_an_answer_that_is_no_action_says_so(answer: object, shown: str) -> None:
    """A bot that returns None (a missing return) is told in words, not with
    ``'NoneType' object has no attribute 'get'``."""
    with pytest.raises(TypeError) as caught:
        _wire_action("stratego", answer, {})  # type: ignore[arg-type]
    assert str(caught.value) == f'decide returned {shown}, not an action (a dict with a "type")'


def test_the_stratego_starter_says_squares_are_numbers() -> None:
    from arena.sdk.starter import STRATEGO

    assert 'names like "a1"' not in STRATEGO
    assert "Squares are numbers 0-99" in STRATEGO
