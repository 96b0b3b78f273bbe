"""The game-agnostic core: games, states, decisions, results, matches and replays."""

from arena.engine.core import (
    Decision,
    EndReason,
    Game,
    IllegalAction,
    OptionSpec,
    Result,
    State,
)
from arena.engine.match import MatchRecord, Player, play_match

__all__ = [
    "Decision",
    "EndReason",
    "Game",
    "IllegalAction",
    "MatchRecord",
    "OptionSpec",
    "Player",
    "Result",
    "State",
    "play_match",
]
