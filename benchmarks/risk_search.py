"""Simulations per second of the search bots at a mid-game position: Risk's (the
default) and Stratego's (``--game stratego``).

The position: a 4-player classic game (progressive cards) of the heuristic bots, at
seat 0's reinforcement in round 6, in the first game (by seed) where seat 0 then holds
8 to 14 territories. The bot searches it at ``--iterations`` samples,
best of ``--repeat`` runs; each simulation samples a full state from the observation,
plays the candidate's turn and every opponent's turn to the start of the bot's next
turn, and scores it. Printed with the engine actions a simulation applies, and against
the reference measured in the same run: the engine's own actions/s in games of blitz
bots (4 players, progressive cards, an observation built for each decision), so the
ratio is what the search costs beyond the rules. Times are the process's CPU time (the
machine is shared: wall time would count other processes' turns).

Stratego: a classic game of the heuristic bots at seat 0's move at ply 200; each
simulation is one rollout: the candidate move on a position sampled from the
observation, then the policy's plies for both sides, and the evaluation. The
reference is whole classic games of the heuristic bots (an observation built for each
move).

    .venv/bin/python benchmarks/risk_search.py            # about 30 s
    .venv/bin/python benchmarks/risk_search.py --game stratego
    .venv/bin/python benchmarks/risk_search.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.bots.risk_search import RiskSearchBot  # noqa: E402
from arena.bots.stratego_search import StrategoSearchBot  # noqa: E402
from arena.engine import play_match  # noqa: E402
from arena.games.risk.state import RiskState  # noqa: E402
from arena.games.stratego.state import StrategoState  # noqa: E402
from arena.plugins import load_registry  # noqa: E402

REGISTRY = load_registry()
RISK = REGISTRY.game("risk")
STRATEGO = REGISTRY.game("stratego")
NAMES = ["aggressive", "defensive", "blitz", "aggressive"]


def mid_game(round_: int = 6) -> tuple[dict[str, Any], Any]:
    """Seat 0's observation and decision at its reinforcement in round ``round_``."""
    for seed in range(1, 100):
        state = RISK.new_state(4, seed, {}, [])
        bots = [REGISTRY.bot("risk", n).factory(s, seed + s) for s, n in enumerate(NAMES)]
        while not state.terminal:
            decision = state.decision()
            seat = decision.player
            obs = state.observation(seat)
            if seat == 0 and decision.kind == "reinforce" and state.round >= round_:
                if 8 <= state.territory_count[0] <= 14:
                    return obs, decision
                break
            state.apply(seat, bots[seat].decide(obs, decision))
    raise SystemExit("no game of the first 99 seeds gives such a position")


def search_rate(bot: Any, obs: dict[str, Any], decision: Any) -> tuple[float, int]:
    """Simulations per second of one search of ``bot`` (a fresh search bot), and the
    simulations it ran."""
    started = time.process_time()
    bot.decide(obs, decision)
    return bot.simulations / (time.process_time() - started), bot.simulations


def steps_per_simulation(
    state_class: type, method: str, bot: Any, obs: dict[str, Any], decision: Any
) -> float:
    """Calls of ``state_class.method`` (the engine's apply or simulate) per simulation
    of one search of ``bot`` (a fresh search bot)."""
    steps = 0
    original = getattr(state_class, method)

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal steps
        steps += 1
        return original(self, *args, **kwargs)

    setattr(state_class, method, counting)
    try:
        bot.decide(obs, decision)
    finally:
        setattr(state_class, method, original)
    return steps / bot.simulations


def report(
    make_bot: Callable[[], Any],
    step: tuple[type, str],
    position: tuple[dict[str, Any], Any],
    repeat: int,
    reference_rate: Callable[[], float],
    words: tuple[str, str],
) -> None:
    """Print a search's simulations/s at ``position`` (best of ``repeat`` searches of
    fresh bots), the engine ``step`` calls a simulation makes, and the engine's own
    rate in whole games (the reference, best of ``repeat``); ``words``: the unit of an
    engine step and the bots of the reference games."""
    obs, decision = position
    unit, bots = words
    best, sims = max(search_rate(make_bot(), obs, decision) for _ in range(repeat))
    per_sim = steps_per_simulation(*step, make_bot(), obs, decision)
    reference = max(reference_rate() for _ in range(repeat))
    inside = best * per_sim
    print(f"search: {best:8.0f} simulations/s ({sims} simulations a search, best of {repeat})")
    print(f"        {per_sim:8.1f} engine {unit} a simulation: {inside:,.0f} {unit}/s")
    print(f"engine: {reference:8,.0f} {unit}/s in whole games of {bots} bots (reference)")
    print(f"ratio:  {inside / reference:8.2f} of the engine's {unit}/s inside the search")


def engine_rate(games: int) -> float:
    """Actions per second of whole games of blitz bots (the reference)."""
    steps = 0
    started = time.process_time()
    for seed in range(games):
        bots = [REGISTRY.bot("risk", "blitz").factory(s, seed * 10 + s) for s in range(4)]
        steps += len(play_match(RISK, bots, seed, {}).steps)
    return steps / (time.process_time() - started)


def stratego_mid_game(ply: int = 200) -> tuple[dict[str, Any], Any]:
    """Seat 0's observation and decision at its move at ``ply`` of a classic game of
    the heuristic bots (the first seed whose game gets there)."""
    for seed in range(1, 100):
        state = STRATEGO.new_state(2, seed, {}, [])
        bots = [REGISTRY.bot("stratego", "heuristic").factory(s, seed + s) for s in (0, 1)]
        while not state.terminal:
            decision = state.decision()
            seat = decision.player
            obs = state.observation(seat)
            if seat == 0 and decision.kind == "move" and state.ply >= ply:
                return obs, decision
            state.apply(seat, bots[seat].decide(obs, decision))
    raise SystemExit("no game of the first 99 seeds gets that far")


def stratego_engine_rate(games: int) -> float:
    """Plies per second of whole classic games of the heuristic bots (the reference)."""
    steps = 0
    started = time.process_time()
    for seed in range(games):
        bots = [REGISTRY.bot("stratego", "heuristic").factory(s, seed * 10 + s) for s in (0, 1)]
        steps += len(play_match(STRATEGO, bots, seed, {"turn-limit": "1000"}).steps)
    return steps / (time.process_time() - started)


def stratego_main(iterations: int, repeat: int, games: int) -> None:
    obs, decision = stratego_mid_game()
    pieces = [sum(1 for p in obs["board"] if p and p["owner"] == seat) for seat in (0, 1)]
    print(
        f"position: classic Stratego, seat 0 to move at ply {obs['ply']}, pieces "
        f"{pieces[0]} against {pieces[1]}, {len(decision.options['moves'])} legal moves"
    )
    report(
        lambda: StrategoSearchBot(0, 1, iterations=iterations),
        (StrategoState, "simulate"),
        (obs, decision),
        repeat,
        lambda: stratego_engine_rate(games),
        ("plies", "heuristic"),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=("risk", "stratego"), default="risk")
    parser.add_argument("--iterations", type=int, default=None, help="400 Risk, 100 Stratego")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    args = parser.parse_args()
    if args.game == "stratego":
        iterations = 100 if args.iterations is None else args.iterations
        quick = (10, 1, 2)
        stratego_main(*(quick if args.quick else (iterations, args.repeat, 10)))
        return
    iterations = 400 if args.iterations is None else args.iterations
    iterations, repeat, games = (40, 1, 3) if args.quick else (iterations, args.repeat, 30)
    obs, decision = mid_game()
    mine = sum(1 for o in obs["owner"] if o == 0)
    print(
        f"position: seat 0 to reinforce {obs['reinforcements_left']} armies, round "
        f"{obs['round']}, {mine} of 42 territories, cards in hand {obs['hand_sizes']}"
    )
    report(
        lambda: RiskSearchBot(0, 1, iterations=iterations),
        (RiskState, "apply"),
        (obs, decision),
        repeat,
        lambda: engine_rate(games),
        ("actions", "blitz"),
    )


if __name__ == "__main__":
    main()
