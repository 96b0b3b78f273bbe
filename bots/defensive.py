"""The defensive continent-holder: takes one continent, holds its borders, grows slowly.

It targets the continent where it holds the largest share (small continents break
ties), or the first continent its secret mission asks for that it does not hold yet,
keeps reinforcements on that continent's threatened borders (and on its headquarters
when threatened), attacks only with a clear advantage (at least twice the defenders,
or 1.5 times to complete its continent or take a goal), moves in half, and fortifies
toward the most threatened border. Its headquarters is its safest territory. It trades
only when it must or when the set is worth at least 8.
"""

from __future__ import annotations

import random
from typing import Any

from arena.bots._risk_common import (
    board,
    frontier,
    mission_continents,
    priority_targets,
    variant_decision,
)
from arena.engine import Decision
from arena.games.risk.map import RiskMap


def target_continent(
    game_map: RiskMap, owner: list[int], seat: int, obs: dict[str, Any] | None = None
) -> int:
    if obs is not None:
        for c in mission_continents(game_map, obs):
            if any(owner[t] != seat for t in game_map.continent_members[c]):
                return c

    def score(c: int) -> tuple[float, int]:
        members = game_map.continent_members[c]
        share = sum(1 for t in members if owner[t] == seat) / len(members)
        return (share, -len(members))

    return max(range(len(game_map.continents)), key=score)


def threat(game_map: RiskMap, owner: list[int], armies: list[int], t: int) -> int:
    return sum(armies[n] for n in game_map.neighbours[t] if owner[n] != owner[t])


class DefensiveRiskBot:
    def __init__(self, seat: int = 0, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def decide(self, obs: dict[str, Any], decision: Decision) -> dict[str, Any]:
        game_map, owner, armies, seat = board(obs)
        kind = decision.kind
        opts = decision.options
        if kind == "claim":
            target = target_continent(game_map, owner, seat, obs)
            free = opts["territories"]
            inside = [t for t in free if game_map.territory_continent[t] == target]
            return {"type": "claim", "territory": self.rng.choice(inside or free)}
        if kind in ("setup_place", "reinforce"):
            target = target_continent(game_map, owner, seat, obs)
            front = frontier(game_map, owner, seat) or opts["territories"]
            guarded = [t for t in front if game_map.territory_continent[t] == target] or front
            hq = (obs.get("headquarters") or [None] * (seat + 1))[seat]
            if (
                hq is not None
                and owner[hq] == seat
                and threat(game_map, owner, armies, hq) >= armies[hq]
            ):
                guarded = [hq]
            best = max(guarded, key=lambda t: (threat(game_map, owner, armies, t) - armies[t], -t))
            if kind == "setup_place":
                return {"type": "place", "territory": best}
            return {"type": "reinforce", "armies": {best: opts["armies"]}}
        if kind == "trade":
            if opts["must_trade"] or opts["next_set_value"] >= 8:
                return {"type": "trade", "cards": opts["sets"][0]}
            return {"type": "no_trade"}
        if kind == "attack":
            target = target_continent(game_map, owner, seat, obs)
            goals = priority_targets(game_map, obs)
            best = None
            for a in opts["attacks"]:
                src, dst = a["from"], a["to"]
                ratio = armies[src] / armies[dst]
                inside = game_map.territory_continent[dst] == target or dst in goals
                if (
                    (ratio >= 2 or (inside and ratio >= 1.5))
                    and armies[src] >= 4
                    and (best is None or ratio > best[0])
                ):
                    best = (ratio, src, dst, a["max_dice"])
            if best is None:
                return {"type": "end_attack"}
            _, src, dst, dice = best
            return {
                "type": "attack",
                "from": src,
                "to": dst,
                "dice": dice,
                "until": max(1, armies[src] // 2),
            }
        if kind == "move_in":
            return {"type": "move_in", "armies": max(opts["min"], (opts["min"] + opts["max"]) // 2)}
        if kind == "fortify":
            best = None
            for m in opts["moves"]:
                need = threat(game_map, owner, armies, m["to"]) - armies[m["to"]]
                spare_from_interior = threat(game_map, owner, armies, m["from"]) == 0
                if spare_from_interior and need > 0 and (best is None or need > best[0]):
                    best = (need, m)
            if best is None:
                return {"type": "end_turn"}
            m = best[1]
            return {"type": "fortify", "from": m["from"], "to": m["to"], "armies": m["max_armies"]}
        if kind == "headquarters":  # the safest territory: least threat for its armies
            return {
                "type": "headquarters",
                "territory": min(
                    opts["territories"],
                    key=lambda t: (threat(game_map, owner, armies, t) - armies[t], t),
                ),
            }
        action = variant_decision(self.rng, obs, decision)
        if action is not None:
            return action
        raise ValueError(f"defensive bot: unknown decision {kind!r}")


if __name__ == "__main__":  # python -m arena.bots.defensive --referee HOST:PORT --token T
    from arena.sdk.house import main

    main("defensive")
