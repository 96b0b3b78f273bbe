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
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.ratings import Leaderboard, fit, online, pairwise, rate
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
    store: Store, game: str, variants: str = "", tournament_id: str | None = None
) -> list[BoardRow]:
    """The leaderboard, best first (an empty list when nothing has finished)."""
    played = [
        g for g in store.played(game, variants, tournament_id=tournament_id) if counts(g.bot_ids)
    ]
    if not played:
        return []
    return _rate(store, played)


def counts(players: Sequence[str]) -> bool:
    """Whether a game counts: not when one bot version holds two seats."""
    return len(set(players)) == len(players)


def ranking(games: Iterable[tuple[Sequence[str], Sequence[int]]]) -> Leaderboard | None:
    """The fit that orders a leaderboard, best first, of games given as (players in seat
    order, places): the table's order, and the leader a progress display shows while a
    tournament plays. None while no game counts."""
    pairs = [
        pair for players, places in games if counts(players) for pair in pairwise(players, places)
    ]
    return fit(pairs) if pairs else None


def _rate(store: Store, played: list[PlayedGame]) -> list[BoardRow]:
    board = ranking((g.bot_ids, g.places) for g in played)
    assert board is not None  # played holds games that count
    pairs = [pair for g in played for pair in pairwise(g.bot_ids, g.places)]
    live = online(pairs)
    skills = rate((g.bot_ids, g.places) for g in played)
    games: Counter[str] = Counter()
    wins: Counter[str] = Counter()
    draws: Counter[str] = Counter()
    for g in played:
        firsts = [b for b, p in zip(g.bot_ids, g.places, strict=True) if p == 1]
        for bot in g.bot_ids:
            games[bot] += 1
        for bot in firsts:
            if len(firsts) == 1:
                wins[bot] += 1
            else:
                draws[bot] += 1
    labels = {row.id: row.label for row in store.bots()}
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
            online_elo=live[row.player],
            mu=skills[row.player].mu,
            sigma=skills[row.player].sigma,
        )
        for rank, row in enumerate(board, start=1)
    ]


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


def board_title(game: str, variants: str) -> str:
    """A board's title: its game and variant set (``risk (missions, neutral)``)."""
    return f"{game} ({variants.replace('+', ', ') if variants else 'classic'})"


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
