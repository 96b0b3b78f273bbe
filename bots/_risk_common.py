"""Small helpers shared by the Risk example bots."""

from __future__ import annotations

from typing import Any

from arena.games.risk.map import RiskMap, load_map


def board(obs: dict[str, Any]) -> tuple[RiskMap, list[int], list[int], int]:
    return load_map(obs["map"]), obs["owner"], obs["armies"], obs["seat"]


def spread(rng: Any, armies: int, territories: list[int]) -> dict[int, int]:
    """Each army on a uniformly random territory of ``territories``."""
    out: dict[int, int] = {}
    n = len(territories)
    for _ in range(armies):
        t = territories[int(rng.random() * n)]
        out[t] = out.get(t, 0) + 1
    return out


def frontier(game_map: RiskMap, owner: list[int], seat: int) -> list[int]:
    """Own territories that border an enemy."""
    out = []
    neighbours = game_map.neighbours
    for t, o in enumerate(owner):
        if o != seat:
            continue
        for n in neighbours[t]:
            if owner[n] != seat:
                out.append(t)
                break
    return out


def variant_decision(rng: Any, obs: dict[str, Any], decision: Any) -> dict[str, Any] | None:
    """A plain answer to the decisions variants add, or None for a classic decision.

    Strategic bots override these where it matters; this is the sensible default:
    own armies and the neutral army on random territories, a headquarters on the own
    territory with the most armies, and the most defence dice allowed.
    """
    kind = decision.kind
    opts = decision.options
    if kind == "neutral_place":
        action: dict[str, Any] = {
            "type": "place",
            "armies": spread(rng, opts["armies"], opts["territories"]),
        }
        if opts["neutral"]:
            action["neutral"] = rng.choice(opts["neutral_territories"])
        return action
    if kind == "headquarters":
        armies = obs["armies"]
        return {
            "type": "headquarters",
            "territory": max(opts["territories"], key=lambda t: (armies[t], -t)),
        }
    if kind == "defend":
        return {"type": "defend", "dice": opts["max_dice"]}
    return None


def mission_continents(game_map: RiskMap, obs: dict[str, Any]) -> list[int]:
    """The continents the bot's secret mission asks for (none without a mission)."""
    mission = obs.get("mission")
    if not mission or not mission["continents"]:
        return []
    return [game_map.continents.index(name) for name in mission["continents"]]


def priority_targets(game_map: RiskMap, obs: dict[str, Any]) -> set[int]:
    """Enemy territories whose capture serves the bot's goal in the variant played.

    Missions: the territories of the continents to conquer, or of the colour to destroy.
    Capital: the opposing headquarters once revealed. Classic: none.
    """
    owner = obs["owner"]
    seat = obs["seat"]
    targets: set[int] = set()
    for c in mission_continents(game_map, obs):
        targets.update(t for t in game_map.continent_members[c] if owner[t] != seat)
    mission = obs.get("mission")
    if mission and mission["destroy"]:
        victim = (
            obs["colours"].index(mission["destroy"])
            if mission["destroy"] in obs.get("colours", [])
            else -1
        )
        targets.update(t for t, o in enumerate(owner) if o == victim)
    for other, t in enumerate(obs.get("headquarters") or []):
        if t is not None and other != seat and owner[t] != seat:
            targets.add(t)
    return targets
