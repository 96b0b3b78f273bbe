"""The Risk map for bot authors, by territory name, from the data the rules engine reads.

``risk_map(observation["map"])`` gives the map of the game being played: a bot needs no
copy of its own. Territory ``i`` of the observation's per-territory lists (``owner``,
``armies``) is ``territories[i]``; ``neighbour_indices[i]`` are its neighbours' indices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

from arena.games.risk import cards
from arena.games.risk.map import load_map, map_option


@dataclass(frozen=True)
class Continent:
    name: str
    bonus: int  # armies a turn for holding every territory of it at the turn's start
    territories: tuple[str, ...]


@dataclass(frozen=True)
class Card:
    """A Risk card, as the observation's ``hand`` and ``discard`` number them."""

    index: int
    #: the territory it shows (card ``i`` shows territory ``i``); None for a wild card
    territory: str | None
    #: "infantry", "cavalry", "artillery", or "wild" (a wild card completes any set)
    design: str


@dataclass(frozen=True, eq=False)
class RiskMap:
    """A Risk map: its territories in index order, their neighbours and continents, and
    its cards (``cards[i]`` is card ``i``: the territory cards, then the wilds)."""

    name: str
    territories: tuple[str, ...]
    neighbours: Mapping[str, tuple[str, ...]]
    continents: tuple[Continent, ...]
    #: by index, as the observation numbers territories: ``neighbour_indices[i]``
    neighbour_indices: tuple[tuple[int, ...], ...]
    cards: tuple[Card, ...] = ()

    def is_set(self, cards: Sequence[int]) -> bool:
        """Do these three cards make a set (three of a design, one of each, or any two
        and a wild), as the rules count them?"""
        if len(cards) != 3 or not all(0 <= c < len(self.cards) for c in cards):
            return False
        designs = [self.cards[c].design for c in cards]
        return "wild" in designs or len(set(designs)) in (1, 3)

    def index(self, territory: str) -> int:
        """The index of ``territory`` in the observation's lists; ValueError if unknown."""
        try:
            return self.territories.index(territory)
        except ValueError:
            raise ValueError(f"unknown territory {territory!r} on map {self.name!r}") from None

    def continent_of(self, territory: str) -> Continent:
        for continent in self.continents:
            if territory in continent.territories:
                return continent
        raise ValueError(f"unknown territory {territory!r} on map {self.name!r}")

    def are_neighbours(self, a: str, b: str) -> bool:
        return b in self.neighbours[a]


@cache
def risk_map(name_or_path: str = "classic") -> RiskMap:
    """The map the engine plays: a built-in one by name (``classic``, the observation's
    ``map``) or a map file by path. ValueError for an unknown map."""
    data = load_map(map_option(name_or_path))  # a file of yours: read here
    names = data.territories
    return RiskMap(
        name=data.name,
        territories=names,
        neighbours=MappingProxyType(
            {names[i]: tuple(names[j] for j in data.neighbours[i]) for i in range(len(names))}
        ),
        continents=tuple(
            Continent(name, bonus, tuple(names[i] for i in members))
            for name, bonus, members in zip(
                data.continents, data.continent_bonus, data.continent_members, strict=True
            )
        ),
        neighbour_indices=data.neighbours,
        cards=tuple(
            Card(i, names[i] if i < len(names) else None, cards.design_name(data, i))
            for i in range(cards.deck_size(data))
        ),
    )
