"""``arena play`` reports each seat's strikes, timeouts and forfeits after the result, and
the SDK's log says which place the bot took: a remote bot that answers late once and
then only with illegal moves, through the real ``arena`` command and a bot process."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from .conftest import Process, wait_until

WAITING = re.compile(r"waiting for (\S+): run it with --referee (\S+) --token (\S+)")

UNRULY = '''
import time

from arena.sdk import Bot, main


class Unruly(Bot):
    """Its first decision comes too late; every later one is illegal (no turn to end)."""

    answered = 0

    def decide_risk(self, observation, decision):
        self.answered += 1
        if self.answered == 1:
            time.sleep(2.5)  # past the 1 s deadline (even stretched by a busy referee's stalls)
        return {"type": "end_turn"}


if __name__ == "__main__":
    main(Unruly)
'''


def _arena(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena.cli", *args]


def test_play_reports_strikes_timeouts_and_forfeits_and_the_bot_logs_its_place(tmp_path: Path):
    bot_file = tmp_path / "unruly.py"
    bot_file.write_text(UNRULY)
    play = Process(
        "play",
        _arena(
            *("play", "risk", "--players", "random,remote:unruly,aggressive", "--seed", "5"),
            *("--port", "0", "--wait", "60", "--decision-ms", "1000", "--time-bank-ms", "0"),
        ),
        tmp_path,
    )
    bot = None
    try:
        found = wait_until(lambda: WAITING.search(play.stdout()), 30, "the connect line")
        _, address, token = found.groups()
        command = [sys.executable, str(bot_file), "--referee", address, "--token", token]
        bot = Process("bot", command, tmp_path)
        assert play.wait(timeout=120) == 0, play.stderr()
        # the bot hears how its match ended (then it would play on: it is stopped)
        ended = wait_until(
            lambda: re.search(r"match (\w+) ended: (.*)$", bot.stderr(), re.M), 30, "its log"
        )
    finally:
        play.stop()
        if bot is not None:
            bot.stop()
    out = play.stdout()
    lines = out.splitlines()
    report = lines.index("strikes (illegal moves), timeouts and forfeits:")
    assert lines[report + 1] == "  seat 0 random: 0 strikes, 0 timeouts, no forfeit"
    assert lines[report + 3] == "  seat 2 aggressive: 0 strikes, 0 timeouts, no forfeit"
    unruly = re.fullmatch(
        r"  seat 1 remote:unruly: (\d+) strikes, (\d+) timeouts, forfeited: 5 strikes "
        r"\(last: illegal actions\)",
        lines[report + 2],
    )
    assert unruly, lines[report + 2]
    # 5 strikes forfeit (the referee's default): the late answer's timeout (and any
    # decision asked while it slept), then illegal moves up to the fifth
    strikes, timeouts = int(unruly.group(1)), int(unruly.group(2))
    assert strikes + timeouts == 5 and strikes >= 1 and timeouts >= 1, lines[report + 2]
    place = re.search(r"ranking: .*(\d)\. remote:unruly \(seat 1\)", out)
    assert place, out
    ordinal = {"1": "1st", "2": "2nd", "3": "3rd"}[place.group(1)]
    assert ended.group(2).startswith(f"you took {ordinal} of 3 ("), ended.group(0)
    winner = re.search(r"^winner: .*, by (\w+)$", out, re.M)
    assert winner, out
    assert f"({winner.group(1)}" in ended.group(2)
