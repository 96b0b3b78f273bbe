"""What a Bot subclass that lacks its game's method is told."""

from __future__ import annotations

import pytest

from arena.plugins import load_registry
from arena.sdk import Bot, MatchContext


class StrategoOnly(Bot):
    def decide_stratego(self, observation, decision):
        return self.default_setup(decision)


def test_a_bot_without_decide_risk_is_told_what_to_implement_and_where_to_read() -> None:
    state = load_registry().game("risk").new_state(3, 1, {}, [])
    bot = StrategoOnly(MatchContext("m", "risk", 0, ["a", "b", "c"]))
    with pytest.raises(NotImplementedError, match=r"implements decide_risk\(observation, "):
        bot.decide(state.observation(0), state.decision())


def test_decide_calls_the_method_of_the_matchs_game() -> None:
    state = load_registry().game("stratego").new_state(2, 1, {}, [])
    bot = StrategoOnly(MatchContext("m", "stratego", 0, ["a", "b"]))
    action = bot.decide(state.observation(0), state.decision())
    assert action["type"] == "setup" and len(action["placement"]) == 40


def test_the_sdk_stands_below_the_command_line() -> None:
    """What bot authors import never imports ``arena.cli`` (the command line imports
    the SDK, never the reverse): every module of arena.sdk, and a built-in bot's."""
    import pkgutil
    import subprocess
    import sys

    import arena.sdk

    modules = [
        "arena.sdk",
        *(f"arena.sdk.{m.name}" for m in pkgutil.iter_modules(arena.sdk.__path__)),
    ]
    modules += ["arena.bots.random_bot", "arena.bots.stratego_search"]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.startswith('arena.cli')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert "arena.sdk.process" in modules and len(modules) > 6
