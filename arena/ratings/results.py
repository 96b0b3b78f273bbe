"""The input form of every rating method: a game's result as a ranking, and its pairs.

A game result is a *ranking*: one place per seat (1 is best; tied seats share a place)
and the player (bot) id in that seat. Risk has 2 to 6 seats and Stratego 2, so a ranking
is the one shape both games can report.

Pairwise methods (Elo, Bradley-Terry) see a ranking of ``n`` players as the ``n(n-1)/2``
games between every two of them: better place wins (1.0), equal place draws (0.5), worse
place loses (0.0). Those pairs are not independent (one bad game for a bot counts against
it once per opponent), so intervals fitted on many-player games are somewhat too narrow;
two-player games are exact.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from numbers import Integral

#: A player (bot) id: any hashable value, usually a string.
Player = Hashable
#: One pairwise result ``(a, b, score_a)``: 1.0 a won, 0.5 a draw, 0.0 a lost.
PairResult = tuple[Player, Player, float]


def check_ranking(players: Sequence[Player], places: Sequence[int]) -> None:
    """Raise ``ValueError`` (or ``TypeError``) naming the first bad seat of a ranking."""
    if isinstance(players, (str, bytes)) or isinstance(places, (str, bytes)):
        raise TypeError("players and places must be sequences, not strings")
    if len(players) != len(places):
        raise ValueError(
            f"players and places must have the same length, got {len(players)} players "
            f"{list(players)!r} and {len(places)} places {list(places)!r}"
        )
    if len(players) < 2:
        raise ValueError(f"a ranking needs at least 2 players, got {list(players)!r}")
    for seat, place in enumerate(places):
        if isinstance(place, bool) or not isinstance(place, Integral):
            raise TypeError(
                f"places[{seat}] must be an integer, got {place!r} ({type(place).__name__})"
            )
        if place < 1:
            raise ValueError(f"places[{seat}] must be >= 1 (1 is best), got {place}")
    seen: dict[Player, int] = {}
    for seat, player in enumerate(players):
        if not isinstance(player, Hashable):
            raise TypeError(f"players[{seat}] must be hashable, got {player!r}")
        if player in seen:
            # A bot against itself says nothing about its strength; seat two copies
            # under distinct ids ("random#1", "random#2") to rate them separately.
            raise ValueError(
                f"player {player!r} sits in seats {seen[player]} and {seat}; "
                "each seat needs a distinct player id"
            )
        seen[player] = seat


def pairwise(players: Sequence[Player], places: Sequence[int]) -> list[PairResult]:
    """Every pair of seats of one ranking as ``(a, b, score_a)``, in seat order.

    >>> pairwise(["x", "y", "z"], [2, 1, 2])
    [('x', 'y', 0.0), ('x', 'z', 0.5), ('y', 'z', 1.0)]
    """
    check_ranking(players, places)
    pairs: list[PairResult] = []
    for i in range(len(players)):
        for j in range(i + 1, len(players)):
            if places[i] < places[j]:
                score = 1.0
            elif places[i] == places[j]:
                score = 0.5
            else:
                score = 0.0
            pairs.append((players[i], players[j], score))
    return pairs


@dataclass(frozen=True)
class Ranking:
    """One finished game: ``players[i]`` finished in ``places[i]`` (1 is best)."""

    players: tuple[Player, ...]
    places: tuple[int, ...]

    def __init__(self, players: Sequence[Player], places: Sequence[int]) -> None:
        check_ranking(players, places)
        object.__setattr__(self, "players", tuple(players))
        object.__setattr__(self, "places", tuple(places))

    def __iter__(self) -> Iterator[tuple[Player, ...] | tuple[int, ...]]:
        # so a Ranking unpacks like the (players, places) pair it stands for
        return iter((self.players, self.places))

    def pairs(self) -> list[PairResult]:
        return pairwise(self.players, self.places)


def rankings(games: Iterable[Ranking | tuple[Sequence[Player], Sequence[int]]]) -> list[Ranking]:
    """Check many games, each a :class:`Ranking` or a ``(players, places)`` pair.

    Errors name the game by its position, so a bad row in a long list is easy to find.
    """
    checked: list[Ranking] = []
    for number, game in enumerate(games):
        if isinstance(game, Ranking):
            checked.append(game)
            continue
        try:
            players, places = game
        except (TypeError, ValueError):
            raise TypeError(
                f"game {number} must be a Ranking or a (players, places) pair, got {game!r}"
            ) from None
        try:
            checked.append(Ranking(players, places))
        except (TypeError, ValueError) as error:
            raise type(error)(f"game {number}: {error}") from None
    return checked


def pairwise_all(
    games: Iterable[Ranking | tuple[Sequence[Player], Sequence[int]]],
) -> list[PairResult]:
    """The pairwise results of many games, game after game (the order online Elo sees)."""
    return [pair for game in rankings(games) for pair in game.pairs()]
