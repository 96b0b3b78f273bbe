"""Engine benchmark: whole Risk games in one process, on one core.

Prints games/s, turns/s and decisions/s for the uniform random bot and the blitz bot at
3, 4 and 6 players, with the card rules on and with the "no cards" option; the cost of
``State.clone()``; the replay size per game; and, as the reference measured in the same
run, a textbook engine playing the same blitz policy (benchmarks/reference_risk.py).

    .venv/bin/python benchmarks/engine.py            # the figures in docs/benchmarks.md
    .venv/bin/python benchmarks/engine.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.engine import play_match
from arena.engine.replay import dumps
from arena.plugins import load_registry
from benchmarks.reference_risk import play_blitz_game

REGISTRY = load_registry()
RISK = REGISTRY.game("risk")


def bench_games(bot: str, players: int, cards: str, games: int) -> dict[str, float]:
    options = {"cards": cards}
    turns = decisions = 0
    sizes = []
    start = time.perf_counter()
    for seed in range(games):
        bots = [REGISTRY.bot("risk", bot).factory(s, seed * 100 + s) for s in range(players)]
        rec = play_match(RISK, bots, seed, options)
        decisions += len(rec.steps)
        turns += sum(1 for step in rec.steps for e in step[2] if e["e"] == "turn")
    elapsed = time.perf_counter() - start
    for seed in range(min(games, 5)):  # replay sizes, outside the timing
        bots = [REGISTRY.bot("risk", bot).factory(s, seed * 100 + s) for s in range(players)]
        text = dumps(play_match(RISK, bots, seed, options)).encode()
        sizes.append((len(text), len(gzip.compress(text))))
    return {
        "games_s": games / elapsed,
        "turns_s": turns / elapsed,
        "decisions_s": decisions / elapsed,
        "turns_game": turns / games,
        "replay_kb": statistics.mean(s[0] for s in sizes) / 1024,
        "replay_gz_kb": statistics.mean(s[1] for s in sizes) / 1024,
    }


def bench_clone(samples: int) -> float:
    """Mean microseconds per clone() of mid-game 4-player states."""
    state = RISK.new_state(4, seed=3)
    bots = [REGISTRY.bot("risk", "blitz").factory(s, s) for s in range(4)]
    snapshots = []
    while not state.terminal and len(snapshots) < 50:
        decision = state.decision()
        state.apply(
            decision.player,
            bots[decision.player].decide(state.observation(decision.player), decision),
        )
        if decision.kind == "attack":
            snapshots.append(state.clone())
    start = time.perf_counter()
    for i in range(samples):
        snapshots[i % len(snapshots)].clone()
    return (time.perf_counter() - start) / samples * 1e6


def bench_reference(games: int) -> float:
    start = time.perf_counter()
    for seed in range(games):
        play_blitz_game(4, seed)
    return games / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few games only (smoke run)")
    args = parser.parse_args()
    blitz_games = 4 if args.quick else 300
    random_games = 1 if args.quick else 12

    print(
        f"{'bot':7} {'players':>7} {'cards':>11} {'games/s':>9} {'turns/s':>9} "
        f"{'decisions/s':>12} {'turns/game':>10} {'replay KB':>9} {'gz KB':>7}"
    )
    results = {}
    for bot, games in (("blitz", blitz_games), ("random", random_games)):
        for players in (3, 4, 6):
            for cards in ("progressive", "none"):
                r = bench_games(bot, players, cards, games)
                results[(bot, players, cards)] = r
                print(
                    f"{bot:7} {players:>7} {cards:>11} {r['games_s']:>9.1f} "
                    f"{r['turns_s']:>9.0f} {r['decisions_s']:>12.0f} {r['turns_game']:>10.1f} "
                    f"{r['replay_kb']:>9.1f} {r['replay_gz_kb']:>7.1f}",
                    flush=True,
                )
    clone_us = bench_clone(2000 if args.quick else 50_000)
    print(f"\nclone(): {clone_us:.1f} µs per call (4 players, mid-game)")

    reference = bench_reference(blitz_games)
    ours = results[("blitz", 4, "none")]["games_s"]
    print(f"\nreference textbook engine, blitz, 4 players, no cards: {reference:.1f} games/s")
    print(
        f"arena engine,             blitz, 4 players, no cards: {ours:.1f} games/s "
        f"(ratio {ours / reference:.2f}x the reference; target 170 games/s)"
    )


if __name__ == "__main__":
    main()
