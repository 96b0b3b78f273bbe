"""The aggressive bot: masses its armies on one front and attacks while it has the edge.

Reinforce: everything on the frontier territory with the largest stack (next to a
target of its goal if it can). Attack: the enemy neighbour with the fewest armies from
any own territory with at least two more (one more for a goal's target), rolling until
captured or until 2 armies are left; move in all but one. Goals: the continents or the
colour of its secret mission, the opposing headquarters. Fortify: the largest interior
stack moves to a neighbouring frontier territory. Trades every set.
"""

from __future__ import annotations

import random
from typing import Any

from arena.bots._risk_common import board, frontier, priority_targets, variant_decision
from arena.engine import Decision


class AggressiveRiskBot:
    def __init__(self, seat: int = 0, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def decide(self, obs: dict[str, Any], decision: Decision) -> dict[str, Any]:
        game_map, owner, armies, seat = board(obs)
        kind = decision.kind
        opts = decision.options
        if kind == "claim":
            # Prefer territories next to ones already held, to build a compact front.
            free = opts["territories"]
            near = [t for t in free if any(owner[n] == seat for n in game_map.neighbours[t])]
            return {"type": "claim", "territory": self.rng.choice(near or free)}
        if kind == "setup_place":
            front = frontier(game_map, owner, seat) or opts["territories"]
            return {"type": "place", "territory": max(front, key=lambda t: (armies[t], -t))}
        if kind == "trade":
            return {"type": "trade", "cards": opts["sets"][0]}
        if kind == "reinforce":
            front = frontier(game_map, owner, seat) or opts["territories"]
            goals = priority_targets(game_map, obs)
            near_goal = [t for t in front if any(n in goals for n in game_map.neighbours[t])]
            best = max(near_goal or front, key=lambda t: (armies[t], -t))
            return {"type": "reinforce", "armies": {best: opts["armies"]}}
        if kind == "attack":
            best = None
            goals = priority_targets(game_map, obs)
            for a in opts["attacks"]:
                src, dst = a["from"], a["to"]
                edge = armies[src] - armies[dst]
                if dst in goals:
                    edge += 1
                if edge >= 2 and (best is None or edge > best[0]):
                    best = (edge, src, dst, a["max_dice"])
            if best is None:
                return {"type": "end_attack"}
            _, src, dst, dice = best
            return {
                "type": "attack",
                "from": src,
                "to": dst,
                "dice": dice,
                "until": min(2, armies[src] - 1),
            }
        if kind == "move_in":
            return {"type": "move_in", "armies": opts["max"]}
        if kind == "fortify":
            front = set(frontier(game_map, owner, seat))
            best = None
            for m in opts["moves"]:
                if (
                    m["from"] not in front
                    and m["to"] in front
                    and (best is None or m["max_armies"] > best["max_armies"])
                ):
                    best = m
            if best is None:
                return {"type": "end_turn"}
            return {
                "type": "fortify",
                "from": best["from"],
                "to": best["to"],
                "armies": best["max_armies"],
            }
        action = variant_decision(self.rng, obs, decision)
        if action is not None:
            return action
        raise ValueError(f"aggressive bot: unknown decision {kind!r}")


if __name__ == "__main__":  # python -m arena.bots.aggressive --referee HOST:PORT --token T
    from arena.sdk.house import main

    main("aggressive")
