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
