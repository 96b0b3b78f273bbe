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
    return [
        t
        for t, o in enumerate(owner)
        if o == seat and any(owner[n] != seat for n in game_map.neighbours[t])
    ]
