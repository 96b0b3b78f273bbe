"""Risk cards: ids, designs, sets and the classic progressive values.

Card ``i`` for ``i < map.size`` shows territory ``i``; the two cards after those are
wild. Ids are stable for the whole game and appear in observations and events.
"""

from __future__ import annotations

from itertools import combinations

from arena.games.risk.map import DESIGNS, WILD, RiskMap

NUM_WILDS = 2
PROGRESSIVE = (4, 6, 8, 10, 12, 15)


def deck_size(game_map: RiskMap) -> int:
    return game_map.size + NUM_WILDS


def design(game_map: RiskMap, card: int) -> int:
    return game_map.card_design[card] if card < game_map.size else WILD


def design_name(game_map: RiskMap, card: int) -> str:
    return "wild" if card >= game_map.size else DESIGNS[game_map.card_design[card]]


def is_set(game_map: RiskMap, cards: tuple[int, ...] | list[int]) -> bool:
    """Three of one design, one of each, or any two plus a wild."""
    if len(cards) != 3:
        return False
    d = [design(game_map, c) for c in cards]
    if WILD in d:
        return True
    return d[0] == d[1] == d[2] or len(set(d)) == 3


def sets_in(game_map: RiskMap, hand: list[int]) -> list[tuple[int, int, int]]:
    """Every tradable set in ``hand`` (a hand holds at most a handful of cards)."""
    return [combo for combo in combinations(sorted(hand), 3) if is_set(game_map, combo)]


def has_set(game_map: RiskMap, hand: list[int]) -> bool:
    if len(hand) < 3:
        return False
    if len(hand) >= 5:  # pigeonhole: five cards over three designs always hold a set
        return True
    return any(is_set(game_map, combo) for combo in combinations(hand, 3))


def progressive_value(sets_traded: int) -> int:
    """Armies for the set traded after ``sets_traded`` earlier sets: 4, 6, 8, 10, 12, 15, 20..."""
    if sets_traded < len(PROGRESSIVE):
        return PROGRESSIVE[sets_traded]
    return PROGRESSIVE[-1] + 5 * (sets_traded - len(PROGRESSIVE) + 1)
