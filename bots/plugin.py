"""Registers the example bots (entry point ``arena: bots``)."""

from __future__ import annotations

from collections.abc import Callable

from arena import hookimpl
from arena.bots.aggressive import AggressiveRiskBot
from arena.bots.blitz import BlitzRiskBot
from arena.bots.defensive import DefensiveRiskBot
from arena.bots.random_bot import RandomRiskBot, RandomStrategoBot
from arena.bots.risk_search import DEFAULT_ITERATIONS, RiskSearchBot
from arena.bots.stratego_heuristic import HeuristicStrategoBot
from arena.bots.stratego_search import DEFAULT_ITERATIONS as STRATEGO_ITERATIONS
from arena.bots.stratego_search import StrategoSearchBot
from arena.plugins import BotSpec


@hookimpl
def arena_register_bots(register: Callable[[BotSpec], None]) -> None:
    register(BotSpec("risk", "random", "uniform over the legal options", RandomRiskBot))
    register(
        BotSpec(
            "risk", "aggressive", "masses on one front and attacks with the edge", AggressiveRiskBot
        )
    )
    register(BotSpec("risk", "defensive", "takes and holds one continent", DefensiveRiskBot))
    register(BotSpec("risk", "blitz", "the benchmark policy: attack anything weaker", BlitzRiskBot))
    register(
        BotSpec(
            "risk",
            "search",
            f"searches turn plans on sampled states ({DEFAULT_ITERATIONS} samples a decision)",
            RiskSearchBot,
        )
    )
    register(BotSpec("stratego", "random", "random legal setup and moves", RandomStrategoBot))
    register(
        BotSpec(
            "stratego",
            "heuristic",
            "guards its flag, probes with Scouts, strikes what it knows it beats",
            HeuristicStrategoBot,
        )
    )
    register(
        BotSpec(
            "stratego",
            "search",
            f"plays out sampled positions ({STRATEGO_ITERATIONS} samples a move)",
            StrategoSearchBot,
        )
    )
