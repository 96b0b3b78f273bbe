"""Strength of the Risk house bots: 4-player round robins of classic Risk (progressive
cards, the default options) between the search bot and the heuristic bots, played by
Arena's own tournaments, and the MLE Elo table with 95% intervals that Arena's
leaderboard computes from them. It says whether the search bot's target holds (its
Elo at least 100 above the best heuristic bot's, the intervals apart), and times the
search bot's decisions at its budget in a few games of its own.

    .venv/bin/python benchmarks/strength.py                   # 100 games, 2 workers
    .venv/bin/python benchmarks/strength.py --games 40 --workers 1 --db strength.db
    .venv/bin/python benchmarks/strength.py --quick           # 4 games: a smoke run

The round robin is the same as ``arena tournament run --game risk --seats 4 --bots
search,aggressive,defensive,blitz --games-per-pairing GAMES --seed SEED --db DB``
(``arena leaderboard --game risk --db DB`` shows the table again).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.bots.risk_search import DEFAULT_ITERATIONS, RiskSearchBot  # noqa: E402
from arena.engine import play_match  # noqa: E402
from arena.plugins import load_registry  # noqa: E402
from arena.store import Store  # noqa: E402
from arena.tournament.executor import LocalExecutor  # noqa: E402
from arena.tournament.leaderboard import BoardRow, compute, render  # noqa: E402
from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament  # noqa: E402

SEARCH = "search"
HEURISTICS = ("aggressive", "defensive", "blitz")
TARGET_ELO = 100


def play_round_robin(db: str, games: int, workers: int, seed: int) -> list[BoardRow]:
    store = Store(db)
    spec = TournamentSpec(
        game="risk",
        bots=[f"house:{b}" for b in (SEARCH, *HEURISTICS)],
        seats=4,
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
    rows = compute(store, "risk", tournament_id=tournament.id)
    store.close()
    return rows


def verdict(rows: list[BoardRow]) -> str:
    by_name = {row.label.removeprefix("house:").split("@")[0]: row for row in rows}
    search = by_name[SEARCH]
    best = max((by_name[b] for b in HEURISTICS), key=lambda r: r.elo)
    gap = search.elo - best.elo
    apart = search.elo_low > best.elo_high
    met = gap >= TARGET_ELO and apart
    return (
        f"search {search.elo:.0f} ({search.elo_low:.0f}..{search.elo_high:.0f}) against the "
        f"best heuristic bot, {best.label} {best.elo:.0f} ({best.elo_low:.0f}.."
        f"{best.elo_high:.0f}): {gap:+.0f} Elo, intervals "
        f"{'apart' if apart else 'overlapping'}; target (+{TARGET_ELO}, apart) "
        f"{'met' if met else 'NOT met'} over {search.games} games"
    )


def time_decisions(games: int, seed: int) -> str:
    """CPU seconds per decision of the search bot at its registered budget, in ``games``
    4-player games against the heuristic bots (its seat rotated), in this process (CPU
    time: the machine may be shared, and wall time would count others' turns)."""
    registry = load_registry()
    risk = registry.game("risk")
    searched: list[float] = []
    every: list[float] = []

    class Timed(RiskSearchBot):
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
        names = [*HEURISTICS]
        names.insert(game % 4, SEARCH)
        players = [
            Timed(seat, seed + seat)
            if name == SEARCH
            else registry.bot("risk", name).factory(seat, seed + seat)
            for seat, name in enumerate(names)
        ]
        play_match(risk, players, seed + game, {}, names=names)
    searched.sort()
    p95 = searched[int(0.95 * (len(searched) - 1))]
    return (
        f"search bot at {DEFAULT_ITERATIONS} samples a decision, {games} games, CPU time: "
        f"{len(searched)} searched decisions, mean {statistics.mean(searched):.3f} s, "
        f"95th percentile {p95:.3f} s, max {max(searched):.3f} s "
        f"({len(every)} decisions in all, mean {statistics.mean(every):.3f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--games", type=int, default=100, help="games of the round robin (0: only the timing)"
    )
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db", default="", help="keep the results in this store")
    parser.add_argument("--timing-games", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="4 games, 1 timed: a smoke run")
    args = parser.parse_args()
    games, timing = (4, 1) if args.quick else (args.games, args.timing_games)
    if games:
        with tempfile.TemporaryDirectory() as tmp:
            db = args.db or str(Path(tmp) / "strength.db")
            started = time.perf_counter()
            print(f"round robin: {games} games of 4-player classic Risk, {args.workers} workers")
            rows = play_round_robin(db, games, args.workers, args.seed)
            print(render(rows, "risk (classic), 4 players"))
            print(verdict(rows))
            print(f"({time.perf_counter() - started:.0f} s)")
    if timing:
        print(time_decisions(timing, args.seed))


if __name__ == "__main__":
    main()
