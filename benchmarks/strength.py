"""Strength of the search bots against the heuristic house bots, played by Arena's own
tournaments, with the MLE Elo table and 95% intervals that Arena's leaderboard computes.

Risk (``--game risk``, the default): 4-player round robins of classic Risk (progressive
cards, the default options) between the search bot and the heuristic bots. The target:
the search bot's Elo at least 100 above the best heuristic bot's, the intervals apart.

Stratego (``--game stratego``): a 2-seat round robin of classic Stratego between
``search`` and ``heuristic`` (the tournament plays each deal in both seat orders, so
each bot has each colour in half the games). The target: the search bot scores at
least 75% and its Elo lead is above +150 with 95% confidence (its interval's low end
more than 150 above the heuristic bot's high end).

Either way the search bot's decisions are timed at its budget, in CPU time, in a few
games of its own in this process.

    .venv/bin/python benchmarks/strength.py                   # Risk: 100 games, 2 workers
    .venv/bin/python benchmarks/strength.py --game stratego   # Stratego: 200 games
    .venv/bin/python benchmarks/strength.py --games 40 --workers 1 --db strength.db
    .venv/bin/python benchmarks/strength.py --quick           # 4 games: a smoke run

The round robin is the same as ``arena tournament run --game GAME --seats SEATS --bots
search,... --games-per-pairing GAMES --seed SEED --db DB`` (``arena leaderboard --game
GAME --db DB`` shows the table again).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.bots import risk_search, stratego_search  # noqa: E402
from arena.engine import play_match  # noqa: E402
from arena.plugins import load_registry  # noqa: E402
from arena.store import Store  # noqa: E402
from arena.tournament.executor import LocalExecutor  # noqa: E402
from arena.tournament.leaderboard import BoardRow, compute, render  # noqa: E402
from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament  # noqa: E402

SEARCH = "search"


@dataclass(frozen=True)
class Series:
    """One game's strength series: who plays, how many seats, the search bot's class and
    budget, and what its target is."""

    game: str
    title: str
    heuristics: tuple[str, ...]
    seats: int
    default_games: int
    bot: Callable[..., Any]
    budget: str
    verdict: Callable[[list[BoardRow]], str]


def risk_verdict(rows: list[BoardRow]) -> str:
    """Risk's target: the search bot's Elo at least 100 above the best heuristic bot's,
    the intervals apart."""
    target = 100
    by_name = _by_name(rows)
    search = by_name[SEARCH]
    best = max((by_name[b] for b in RISK.heuristics), key=lambda r: r.elo)
    gap = search.elo - best.elo
    apart = search.elo_low > best.elo_high
    met = gap >= target and apart
    return (
        f"search {search.elo:.0f} ({search.elo_low:.0f}..{search.elo_high:.0f}) against the "
        f"best heuristic bot, {best.label} {best.elo:.0f} ({best.elo_low:.0f}.."
        f"{best.elo_high:.0f}): {gap:+.0f} Elo, intervals "
        f"{'apart' if apart else 'overlapping'}; target (+{target}, apart) "
        f"{'met' if met else 'NOT met'} over {search.games} games"
    )


def stratego_verdict(rows: list[BoardRow]) -> str:
    """Stratego's target: a score of at least 75% and an Elo lead above +150 with 95%
    confidence (the two ratings are centred on the anchor, so the lead's interval is
    from the search bot's low end less the heuristic bot's high end, up)."""
    by_name = _by_name(rows)
    search, heuristic = by_name[SEARCH], by_name["heuristic"]
    gap = search.elo - heuristic.elo
    low, high = search.elo_low - heuristic.elo_high, search.elo_high - heuristic.elo_low
    met = search.score >= 0.75 and low > 150
    return (
        f"search scores {search.score:.3f} ({search.wins} won, {search.draws} drawn, "
        f"{search.losses} lost) over {search.games} games; Elo lead {gap:+.0f} "
        f"(95% {low:+.0f}..{high:+.0f}); target (75%, lead above +150) "
        f"{'met' if met else 'NOT met'}"
    )


def _by_name(rows: list[BoardRow]) -> dict[str, BoardRow]:
    return {row.label.removeprefix("house:").split("@")[0]: row for row in rows}


RISK = Series(
    "risk",
    "risk (classic), 4 players",
    ("aggressive", "defensive", "blitz"),
    4,
    100,
    risk_search.RiskSearchBot,
    f"{risk_search.DEFAULT_ITERATIONS} samples a decision",
    risk_verdict,
)
STRATEGO = Series(
    "stratego",
    "stratego (classic), 2 players",
    ("heuristic",),
    2,
    200,
    stratego_search.StrategoSearchBot,
    f"{stratego_search.DEFAULT_ITERATIONS} samples a move",
    stratego_verdict,
)
SERIES = {s.game: s for s in (RISK, STRATEGO)}


def play_round_robin(
    series: Series, db: str, games: int, workers: int, seed: int
) -> list[BoardRow]:
    store = Store(db)
    spec = TournamentSpec(
        game=series.game,
        bots=[f"house:{b}" for b in (SEARCH, *series.heuristics)],
        seats=series.seats,
        games_per_pairing=games,
        seed=seed,
        name="strength",
    )
    tournament = create_tournament(store, spec)
    executor = LocalExecutor(workers=workers)
    executor.start()

    def progress(p: Any) -> None:
        if p.finished % max(1, p.total // 10) == 0 or p.finished == p.total:
            print(f"  {p.finished}/{p.total} games", flush=True)

    try:
        summary = run_tournament(store, tournament.id, executor, progress)
    finally:
        executor.close()
    if summary.status != "finished":
        raise SystemExit(f"the round robin did not finish: {summary}")
    rows = compute(store, series.game, tournament_id=tournament.id)
    store.close()
    return rows


def time_decisions(series: Series, games: int, seed: int) -> str:
    """CPU milliseconds per searched decision of the search bot at its registered
    budget, in ``games`` games against the heuristic bots (its seat rotated), in this
    process (CPU time: the machine may be shared, and wall time would count others'
    turns)."""
    registry = load_registry()
    game_plugin = registry.game(series.game)
    searched: list[float] = []
    every: list[float] = []

    class Timed(series.bot):  # type: ignore[misc, name-defined]
        def decide(self, obs: Any, decision: Any) -> Any:
            before = self.simulations
            started = time.process_time()
            action = super().decide(obs, decision)
            spent = time.process_time() - started
            every.append(spent)
            if self.simulations > before:
                searched.append(spent)
            return action

    for game in range(games):
        names = list((series.heuristics * series.seats)[: series.seats - 1])
        names.insert(game % series.seats, SEARCH)
        players = [
            Timed(seat, seed + seat)
            if name == SEARCH
            else registry.bot(series.game, name).factory(seat, seed + seat)
            for seat, name in enumerate(names)
        ]
        play_match(game_plugin, players, seed + game, {}, names=names)
    searched.sort()
    p95 = searched[int(0.95 * (len(searched) - 1))]
    return (
        f"search bot at {series.budget}, {games} games, CPU time: "
        f"{len(searched)} searched decisions, mean {1000 * statistics.mean(searched):.1f} ms, "
        f"95th percentile {1000 * p95:.1f} ms, max {1000 * max(searched):.1f} ms "
        f"({len(every)} decisions in all, mean {1000 * statistics.mean(every):.1f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(SERIES), default="risk")
    parser.add_argument(
        "--games",
        type=int,
        default=None,
        help="games of the round robin (default: 100 Risk, 200 Stratego; 0: only the timing)",
    )
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db", default="", help="keep the results in this store")
    parser.add_argument("--timing-games", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="4 games, 1 timed: a smoke run")
    args = parser.parse_args()
    series = SERIES[args.game]
    games = series.default_games if args.games is None else args.games
    timing = args.timing_games
    if args.quick:
        games, timing = 4, 1
    if games:
        with tempfile.TemporaryDirectory() as tmp:
            db = args.db or str(Path(tmp) / "strength.db")
            started = time.perf_counter()
            print(
                f"round robin: {games} games of {series.title}, search against "
                f"{', '.join(series.heuristics)}, {args.workers} workers"
            )
            rows = play_round_robin(series, db, games, args.workers, args.seed)
            print(render(rows, series.title))
            print(series.verdict(rows))
            print(f"({time.perf_counter() - started:.0f} s)")
    if timing:
        print(time_decisions(series, timing, args.seed))


if __name__ == "__main__":
    main()
