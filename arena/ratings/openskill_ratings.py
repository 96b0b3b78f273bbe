"""OpenSkill ratings (Weng-Lin Bayesian updates, Plackett-Luce model) for many-player games.

Where Elo breaks a Risk game of six into fifteen pairwise games, Plackett-Luce rates the
whole finishing order at once, ties included, and keeps an uncertainty ``sigma`` per
player. This module is a thin wrapper over the ``openskill`` package: each game is handed
to its ``rate`` in order, one team of one per seat, ``ranks`` = places.

``ordinal`` is ``mu - 3 sigma`` (openskill's default), a conservative skill estimate to
sort a leaderboard by: a bot needs both skill and many games to rise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from openskill.models import PlackettLuce

from arena.ratings.results import Player, Ranking, rankings


class Skill(NamedTuple):
    """An openskill rating: mean ``mu``, uncertainty ``sigma``, and ``mu - 3 sigma``."""

    mu: float
    sigma: float
    ordinal: float


def rate(
    games: Iterable[Ranking | tuple[Sequence[Player], Sequence[int]]],
    model: Any = None,
) -> dict[Player, Skill]:
    """Skills after rating ``games`` (rankings) in order, from the model's default prior.

    ``model`` is any openskill model (``PlackettLuce()`` by default; e.g.
    ``PlackettLuce(mu=1500, sigma=500, beta=250)`` for an Elo-like scale).
    """
    return Skills(model).add(games).current()


class Skills:
    """OpenSkill ratings kept game by game, to go on with more games later: ``rate(a +
    b)`` is ``Skills().add(a).add(b).current()``, to the last bit."""

    def __init__(self, model: Any = None) -> None:
        self.model = PlackettLuce() if model is None else model
        self._ratings: dict[Player, Any] = {}

    def add(self, games: Iterable[Ranking | tuple[Sequence[Player], Sequence[int]]]) -> Skills:
        """Rate more games, in order, after those already rated."""
        model, current = self.model, self._ratings
        for game in rankings(games):
            teams = [
                [current[player] if player in current else model.rating(name=str(player))]
                for player in game.players
            ]
            updated = model.rate(teams, ranks=[float(place) for place in game.places])
            for player, (rating,) in zip(game.players, updated, strict=True):
                current[player] = rating
        return self

    def copy(self) -> Skills:
        """Another book of the same ratings, to go on apart (openskill's ``rate`` makes
        new rating objects: the two never share a change)."""
        other = Skills(self.model)
        other._ratings = dict(self._ratings)
        return other

    def current(self) -> dict[Player, Skill]:
        return {
            player: Skill(float(rating.mu), float(rating.sigma), float(rating.ordinal()))
            for player, rating in self._ratings.items()
        }
