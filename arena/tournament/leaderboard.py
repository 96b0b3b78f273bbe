"""Leaderboards: the store's finished matches of one game and variant set, rated.

Every finished match counts, in or out of a tournament, once. A game of ``k`` seats is
scored as its ``k (k - 1) / 2`` pairs of placements (a win, a loss, or a tie when two
seats share a place); those pairs feed

* the maximum-likelihood Elo (Bradley-Terry with draws, :func:`arena.ratings.fit`):
  order-independent, with a 95% interval, which is what the table is sorted by;
* the online Elo (K = 16, in the order the matches finished), the live figure;
* OpenSkill (Plackett-Luce) on the whole rankings, the second column for free-for-all
  games: ``mu`` and ``sigma`` (its own scale, 25 +- 8.3 for a newcomer).

Games, wins, draws and losses count *matches*: a win is a sole first place, a draw a
shared first place, a loss anything else. The score is the share of pairwise points.
A match in which one bot version holds two seats says nothing about its strength and
is left out.

The figures are kept in two parts that more results only add to, so a reader that keeps
them (the web app's cache, :mod:`arena.web.cache`) stays exact without reading every
match again: :class:`Totals`, the sums that do not depend on the order of the matches
(W/D/L, pairwise counts, and the MLE fitted from those counts, its players in the order
of their ids), and :class:`Running`, the figures that do (online Elo, OpenSkill).
:func:`compute` builds both from scratch, with the same code.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.ratings import (
    Leaderboard,
    Skills,
    fit,
    one_blas_thread,
    online,
    pairwise,
    tabulate_counts,
)
from arena.store import PlayedGame, RatingRow, Store


@dataclass(frozen=True)
class BoardRow:
    rank: int
    bot_id: str
    label: str
    games: int
    wins: int
    draws: int
    losses: int
    score: float
    elo: float
    elo_low: float
    elo_high: float
    online_elo: float
    mu: float
    sigma: float

    def figures(self) -> dict[str, object]:
        """The fields every form of a leaderboard row shares (the stored row, the gRPC
        message), by the same names."""
        figures = dataclasses.asdict(self)
        for own in ("label", "mu", "sigma"):
            del figures[own]
        return figures


def compute(
    store: Store, game: str, variants: str | None = None, tournament_id: str | None = None
) -> list[BoardRow]:
    """The leaderboard of the board ``variants`` (its key; None: the classic game's), or
    of a tournament's matches (one board: the tournament's own, whatever ``variants``
    says), best first (an empty list when nothing has finished)."""
    if tournament_id is not None:
        variants = None
    elif variants is None:
        variants = ""
    played = rated(store.played(game, variants, tournament_id=tournament_id))
    if not played:
        return []
    return board_rows(Totals().add(played), Running().add(played), _labels(store))


def rated(played: Iterable[PlayedGame]) -> list[PlayedGame]:
    """The games a leaderboard counts: every seat placed, no bot version in two seats."""
    return [
        g for g in played if len(set(g.bot_ids)) == len(g.bot_ids) and all(p > 0 for p in g.places)
    ]


def ranking(games: Iterable[tuple[Sequence[str], Sequence[int]]]) -> Leaderboard | None:
    """The fit that orders a leaderboard, best first, of games given as (players in seat
    order, places): the table's order, and the leader a progress display shows while a
    tournament plays. None while no game counts."""
    played = rated(PlayedGame("", list(players), list(places)) for players, places in games)
    return Totals().add(played).fit() if played else None


class Totals:
    """What a board sums over its games, in any order: matches, wins and draws per bot,
    and pairwise wins and draws per pair of bots. More games only add to it; the
    maximum-likelihood fit is made from the pairwise counts (players in the order of
    their ids, so that the fit depends on the results alone, never on their order) and
    kept until more games come."""

    def __init__(self) -> None:
        self.matches = 0
        self.games: Counter[str] = Counter()
        self.wins: Counter[str] = Counter()
        self.draws: Counter[str] = Counter()
        #: (a, b) with a < b -> [wins of a, draws, wins of b]
        self.pairs: dict[tuple[str, str], list[int]] = {}
        #: bot -> opponent -> [wins, draws, losses] of the bot (views of ``pairs``)
        self.against: dict[str, dict[str, tuple[list[int], bool]]] = defaultdict(dict)
        self._fit: Leaderboard | None = None

    def add(self, played: Iterable[PlayedGame]) -> Totals:
        """Count more rated games (see :func:`rated`)."""
        for g in played:
            self.matches += 1
            firsts = [b for b, p in zip(g.bot_ids, g.places, strict=True) if p == 1]
            for bot in g.bot_ids:
                self.games[bot] += 1
            for bot in firsts:
                if len(firsts) == 1:
                    self.wins[bot] += 1
                else:
                    self.draws[bot] += 1
            for a, b, score in pairwise(g.bot_ids, g.places):
                if b < a:
                    a, b, score = b, a, 1.0 - score
                row = self.pairs.get((a, b))
                if row is None:
                    row = self.pairs[a, b] = [0, 0, 0]
                    self.against[a][b] = (row, False)
                    self.against[b][a] = (row, True)
                row[0 if score == 1.0 else 1 if score == 0.5 else 2] += 1
            self._fit = None
        return self

    def head_to_head(self, bot: str) -> dict[str, tuple[int, int, int]]:
        """Each opponent of ``bot``: the pairs it placed ahead of, level with, behind."""
        return {
            other: (row[2], row[1], row[0]) if flipped else (row[0], row[1], row[2])
            for other, (row, flipped) in self.against.get(bot, {}).items()
        }

    def fit(self) -> Leaderboard:
        """The maximum-likelihood Elo of the games so far (fitted once per change)."""
        if self._fit is None:
            with one_blas_thread():
                self._fit = fit(tabulate_counts(self.pairs, sorted(self.games)))
        return self._fit


class Running:
    """What a board's games give in the order they finished: the online Elo and
    OpenSkill. More games go on from where it stands; :meth:`copy` goes on apart."""

    def __init__(self) -> None:
        self.online: dict[str, float] = {}
        self.skills = Skills()

    def add(self, played: Sequence[PlayedGame]) -> Running:
        """Rate more rated games, in the order they finished, after the others."""
        pairs = [pair for g in played for pair in pairwise(g.bot_ids, g.places)]
        self.online = online(pairs, start=self.online)
        self.skills.add((g.bot_ids, g.places) for g in played)
        return self

    def copy(self) -> Running:
        other = Running()
        other.online = dict(self.online)
        other.skills = self.skills.copy()
        return other


def board_rows(totals: Totals, running: Running, labels: dict[str, str]) -> list[BoardRow]:
    """The leaderboard of these games, best first; ``labels``: bot id -> label."""
    if not totals.matches:
        return []
    skills = running.skills.current()
    games, wins, draws = totals.games, totals.wins, totals.draws
    return [
        BoardRow(
            rank=rank,
            bot_id=row.player,
            label=labels.get(row.player, row.player),
            games=games[row.player],
            wins=wins[row.player],
            draws=draws[row.player],
            losses=games[row.player] - wins[row.player] - draws[row.player],
            score=row.score,
            elo=row.rating,
            elo_low=row.low,
            elo_high=row.high,
            online_elo=running.online[row.player],
            mu=skills[row.player].mu,
            sigma=skills[row.player].sigma,
        )
        for rank, row in enumerate(totals.fit(), start=1)
    ]


def _labels(store: Store) -> dict[str, str]:
    return {row.id: row.label for row in store.bots()}


def refresh(store: Store, game: str, variants: str = "") -> list[BoardRow]:
    """Compute the leaderboard and store it (the ``ratings`` table) for quick reading."""
    rows = compute(store, game, variants)
    store.save_ratings(
        game,
        variants,
        [
            RatingRow(game=game, variants=variants, **r.figures(), mu=r.mu, sigma=r.sigma)
            for r in rows
        ],
    )
    return rows


def render(rows: list[BoardRow], title: str) -> str:
    """The leaderboard as a fixed-width table."""
    if not rows:
        return f"{title}\n  (no finished matches yet)"
    width = max(12, *(len(r.label) for r in rows))
    header = (
        f"{'#':>3}  {'bot':<{width}}  {'games':>5}  {'W':>4} {'D':>4} {'L':>4}  {'score':>5}  "
        f"{'Elo':>5}  {'95% interval':>13}  {'OpenSkill':>12}"
    )
    lines = [title, header, "-" * len(header)]
    for r in rows:
        interval = f"{r.elo_low:.0f}..{r.elo_high:.0f}"
        lines.append(
            f"{r.rank:>3}  {r.label:<{width}}  {r.games:>5}  {r.wins:>4} {r.draws:>4} "
            f"{r.losses:>4}  {r.score:>5.3f}  {r.elo:>5.0f}  {interval:>13}  "
            f"{r.mu:>6.1f} ±{r.sigma:>4.1f}"
        )
    return "\n".join(lines)


def board_title(game: str, variants: str) -> str:
    """A board's title: its game, variant set and the options that make it a game of its
    own (``risk (missions, neutral)``, ``risk (classic; cards=none)``)."""
    from arena.store.models import board_parts

    names, options = board_parts(variants)
    shown = ", ".join(names) if names else "classic"
    return f"{game} ({'; '.join([shown, *(f'{k}={v}' for k, v in options.items())])})"
