"""The benchmark's "blitz" bot, exactly as specified in docs/benchmarks.md.

Setup: claim a uniformly random free territory; put each further army on a uniformly
random own territory. Reinforce: each army on a uniformly random own territory that
borders an enemy. Attack from every own territory to every enemy neighbour holding
fewer armies, with the most dice allowed, until captured or until 1 army is left.
Move in the most armies allowed. Trade whenever a set is held. Never fortify.
"""

from __future__ import annotations

import random
from typing import Any

from arena.bots._risk_common import frontier, spread, variant_decision
from arena.engine import Decision
from arena.games.risk.map import load_map


class BlitzRiskBot:
    def __init__(self, seat: int = 0, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def decide(self, obs: dict[str, Any], decision: Decision) -> dict[str, Any]:
        kind = decision.kind
        rng = self.rng
        if kind == "attack":
            seat = obs["seat"]
            owner = obs["owner"]
            neighbours = load_map(obs["map"]).neighbours
            armies = obs["armies"]
            for t, o in enumerate(owner):
                if o != seat:
                    continue
                a = armies[t]
                if a < 2:
                    continue
                for n in neighbours[t]:
                    if owner[n] != seat and armies[n] < a:
                        return {
                            "type": "attack",
                            "from": t,
                            "to": n,
                            "dice": 3 if a > 3 else a - 1,
                            "until": 1,
                        }
            return {"type": "end_attack"}
        if kind == "move_in":
            return {"type": "move_in", "armies": decision.options["max"]}
        if kind == "fortify":
            return {"type": "end_turn"}
        if kind == "trade":
            return {"type": "trade", "cards": decision.options["sets"][0]}
        seat = obs["seat"]
        owner = obs["owner"]
        if kind == "reinforce":
            game_map = load_map(obs["map"])
            targets = frontier(game_map, owner, seat)
            return {"type": "reinforce", "armies": spread(rng, obs["reinforcements_left"], targets)}
        if kind == "claim":
            free = [t for t, o in enumerate(owner) if o < 0]
            return {"type": "claim", "territory": free[int(rng.random() * len(free))]}
        if kind == "setup_place":
            own = [t for t, o in enumerate(owner) if o == seat]
            return {"type": "place", "territory": own[int(rng.random() * len(own))]}
        action = variant_decision(rng, obs, decision)
        if action is not None:
            return action
        raise ValueError(f"blitz bot: unknown decision {kind!r}")


if __name__ == "__main__":  # python -m arena.bots.blitz --referee HOST:PORT --token T
    from arena.sdk.house import main

    main("blitz")
