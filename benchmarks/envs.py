"""Environment benchmark: steps/s of the PettingZoo environments (arena.envs) with a
masked random agent, beside the engine's decisions/s in the same run (CPU time, one
core).

* engine: ``play_match`` with the uniform random house bot in every seat, as
  benchmarks/engine.py measures it: decisions/s.
* env, mask only: ``env()`` (the wrapped AEC environment) driven by a masked random
  agent that reads the mask from ``infos`` (``last(observe=False)``): steps/s, each
  part of a factored decision being one step. Also the engine decisions it completes a
  second. The target: steps/s at least 0.5 of the engine's decisions/s.
* env, observations: the same agent reading the whole observation at every step (what
  a learning agent pays): steps/s.
* raw env: ``raw_env`` (no order-enforcing wrapper), mask only.

Each line is the best of 3 rounds, the rounds interleaved so that the machine's drift
hits every line alike.

    .venv/bin/python benchmarks/envs.py            # the figures in docs/benchmarks.md
    .venv/bin/python benchmarks/envs.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.engine import play_match
from arena.envs import risk_v0, stratego_v0
from arena.plugins import load_registry

REGISTRY = load_registry()
TARGET = 0.5


@dataclass
class Config:
    name: str
    game: str
    players: int
    variants: list[str]
    options: dict[str, str]
    make: Callable[..., Any]  # the env module's env or raw_env, given the rules
    games: int
    best: dict[str, tuple[float, float]] = field(default_factory=dict)  # line -> (rate, per)


def engine_rate(config: Config) -> tuple[float, float]:
    """Engine decisions/s with house random bots; and decisions a game."""
    game = REGISTRY.game(config.game)
    variants = REGISTRY.resolve_variants(config.game, config.variants)
    decisions = 0
    start = time.process_time()
    for seed in range(config.games):
        bots = [
            REGISTRY.bot(config.game, "random").factory(s, seed * 100 + s)
            for s in range(config.players)
        ]
        decisions += len(play_match(game, bots, seed, config.options, variants).steps)
    return decisions / (time.process_time() - start), decisions / config.games


def env_rate(env: Any, games: int, observe: bool) -> tuple[float, float]:
    """Steps/s of a masked random agent; and engine decisions/s completed through it."""
    rng = random.Random(1)
    steps = decisions = 0
    start = time.process_time()
    for seed in range(games):
        env.reset(seed=seed)
        table = env.unwrapped.table
        applied = table.applied
        for _ in env.agent_iter():
            if observe:
                obs, _, terminated, truncated, _ = env.last()
                mask = obs["action_mask"]
            else:
                _, _, terminated, truncated, info = env.last(observe=False)
                mask = info.get("action_mask")
            if terminated or truncated:
                env.step(None)
                continue
            legal = mask.view(bool).nonzero()[0]  # ~8x faster on booleans than on int8
            env.step(int(legal[rng.randrange(len(legal))]))
            steps += 1
        decisions += table.applied - applied
    elapsed = time.process_time() - start
    return steps / elapsed, decisions / elapsed


def configs(quick: bool) -> list[Config]:
    risk_games, stratego_games = (2, 3) if quick else (12, 30)
    limit = {"turn-limit": "40"}
    return [
        Config(
            "risk classic, 3 players",
            "risk",
            3,
            [],
            limit,
            lambda make, c: make(num_players=c.players, options=c.options),
            risk_games,
        ),
        Config(
            "risk missions, 4 players",
            "risk",
            4,
            ["missions"],
            limit,
            lambda make, c: make(num_players=c.players, variants=c.variants, options=c.options),
            risk_games,
        ),
        Config(
            "stratego classic",
            "stratego",
            2,
            [],
            {},
            lambda make, c: make(),
            stratego_games,
        ),
        Config(
            "stratego barrage",
            "stratego",
            2,
            ["barrage"],
            {},
            lambda make, c: make(rules="barrage"),
            stratego_games,
        ),
    ]


def measure(config: Config) -> None:
    module = risk_v0 if config.game == "risk" else stratego_v0
    lines = {
        "engine": lambda: engine_rate(config),
        "env": lambda: env_rate(config.make(module.env, config), config.games, False),
        "env+obs": lambda: env_rate(
            config.make(module.env, config), max(1, config.games // 4), True
        ),
        "raw": lambda: env_rate(config.make(module.raw_env, config), config.games, False),
    }
    for line, run in lines.items():
        rate, per = run()
        if rate > config.best.get(line, (0.0, 0.0))[0]:
            config.best[line] = (rate, per)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few games only (smoke run)")
    args = parser.parse_args()
    chosen = configs(args.quick)
    rounds = 1 if args.quick else 3
    for _ in range(rounds):
        for config in chosen:
            measure(config)
    print(
        f"{'rules':<26} {'engine dec/s':>12} {'env steps/s':>12} {'ratio':>6} "
        f"{'env dec/s':>10} {'+obs steps/s':>13} {'raw steps/s':>12} {'steps/dec':>9}"
    )
    worst = None
    for c in chosen:
        engine, _ = c.best["engine"]
        env, env_decisions = c.best["env"]
        ratio = env / engine
        worst = ratio if worst is None else min(worst, ratio)
        print(
            f"{c.name:<26} {engine:>12.0f} {env:>12.0f} {ratio:>6.2f} {env_decisions:>10.0f} "
            f"{c.best['env+obs'][0]:>13.0f} {c.best['raw'][0]:>12.0f} "
            f"{env / env_decisions:>9.2f}"
        )
    assert worst is not None
    verdict = "meets" if worst >= TARGET else "misses"
    print(
        f"env steps/s over engine decisions/s: at worst {worst:.2f} ({verdict} the target "
        f"of {TARGET}: the environment costs at most {1 / TARGET:.0f}x)"
    )


if __name__ == "__main__":
    main()
