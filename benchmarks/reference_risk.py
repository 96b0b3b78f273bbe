"""A textbook Risk engine for the blitz policy, as a reference measured in the same run.

It is what a small, straightforward Python Risk engine looks like: territories by name
in dicts, every die rolled with ``randint``, no card rules, no replay, no validation.
It plays the blitz policy of docs/benchmarks.md on the same map, so the engine's
games/s can be read as a ratio against it on whatever machine runs the benchmark.
"""

from __future__ import annotations

import random

from arena.games.risk.map import load_map


def play_blitz_game(num_players: int, seed: int) -> tuple[int, int]:
    """Play one claim-setup, no-cards blitz game; returns (winner, turns)."""
    rng = random.Random(seed)
    game_map = load_map("classic")
    names = list(game_map.territories)
    neighbours = {names[t]: [names[n] for n in game_map.neighbours[t]] for t in range(len(names))}
    continents = [
        ([names[t] for t in members], bonus)
        for members, bonus in zip(game_map.continent_members, game_map.continent_bonus, strict=True)
    ]
    owner: dict[str, int] = {}
    armies: dict[str, int] = {}
    left = [{3: 35, 4: 30, 5: 25, 6: 20}[num_players]] * num_players
    player = 0
    while len(owner) < len(names):
        free = [t for t in names if t not in owner]
        t = rng.choice(free)
        owner[t] = player
        armies[t] = 1
        left[player] -= 1
        player = (player + 1) % num_players
    while any(left):
        if left[player]:
            own = [t for t in names if owner[t] == player]
            armies[rng.choice(own)] += 1
            left[player] -= 1
        player = (player + 1) % num_players
    alive = set(range(num_players))
    player = 0
    turns = 0
    while len(alive) > 1:
        turns += 1
        own = [t for t in names if owner[t] == player]
        reinforcements = max(3, len(own) // 3)
        for members, bonus in continents:
            if all(owner[t] == player for t in members):
                reinforcements += bonus
        front = [t for t in own if any(owner[n] != player for n in neighbours[t])]
        for _ in range(reinforcements):
            armies[rng.choice(front)] += 1
        attacked = True
        while attacked and len(alive) > 1:
            attacked = False
            for src in names:
                if owner[src] != player or armies[src] < 2:
                    continue
                for dst in neighbours[src]:
                    if owner[dst] == player or armies[dst] >= armies[src]:
                        continue
                    attacked = True
                    defender = owner[dst]
                    while armies[src] > 1 and armies[dst] > 0:
                        a_dice = sorted(
                            (rng.randint(1, 6) for _ in range(min(3, armies[src] - 1))),
                            reverse=True,
                        )
                        d_dice = sorted(
                            (rng.randint(1, 6) for _ in range(min(2, armies[dst]))), reverse=True
                        )
                        for a, d in zip(a_dice, d_dice, strict=False):
                            if a > d:
                                armies[dst] -= 1
                            else:
                                armies[src] -= 1
                    if armies[dst] == 0:
                        owner[dst] = player
                        moved = armies[src] - 1
                        armies[src] -= moved
                        armies[dst] = moved
                        if not any(o == defender for o in owner.values()):
                            alive.discard(defender)
                    break
                if attacked:
                    break
        player = (player + 1) % num_players
        while player not in alive:
            player = (player + 1) % num_players
    return alive.pop(), turns
