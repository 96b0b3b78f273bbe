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


#: fixed values: three infantry, three cavalry, three artillery, one of each
FIXED_VALUES = {0: 4, 1: 6, 2: 8}
FIXED_ONE_OF_EACH = 10


def fixed_value(game_map: RiskMap, cards: list[int]) -> int:
    """The fixed value of a set: 4, 6 or 8 for three of a design, 10 for one of each.

    A wild stands for whichever design makes the set worth most. With no cards given
    (the value of "the next set", unknown until the cards are chosen) the answer is 0.
    """
    if not cards:
        return 0
    known = [design(game_map, c) for c in cards if design(game_map, c) != WILD]
    wilds = len(cards) - len(known)
    best = 0
    for filled in _fillings(known, wilds):
        if len(set(filled)) == 3:
            best = max(best, FIXED_ONE_OF_EACH)
        elif filled[0] == filled[1] == filled[2]:
            best = max(best, FIXED_VALUES[filled[0]])
    return best


def _fillings(known: list[int], wilds: int) -> list[list[int]]:
    if wilds == 0:
        return [known]
    return [f for d in range(3) for f in _fillings([*known, d], wilds - 1)]
