"""Engine benchmark: whole games in one process, on one core (CPU time).

Risk: games/s, turns/s and decisions/s for the uniform random bot and the blitz bot at
3, 4 and 6 players, with the card rules on and with the "no cards" option; the cost of
``State.clone()``; the replay size per game; and, as the reference measured in the same
run, a textbook engine playing the same blitz policy (benchmarks/reference_risk.py).

Stratego: random-vs-random plies/s and games/s per rule set, against a textbook random
game measured in the same run (benchmarks/reference_stratego.py).

Chance: the blitz bot's 4-player no-cards games/s with the match's secure generator
(``SecureRandom``) against the generator it replaced, a Mersenne Twister, in the same
run (the Risk state made with ``random.Random`` instead; everything else the same).

    .venv/bin/python benchmarks/engine.py            # the figures in docs/benchmarks.md
    .venv/bin/python benchmarks/engine.py --quick    # a smoke run
    .venv/bin/python benchmarks/engine.py --game chance   # the generators alone
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import arena.games.risk.state as risk_state
from arena.engine import play_match
from arena.engine.replay import dumps
from arena.plugins import load_registry
from benchmarks.reference_risk import play_blitz_game
from benchmarks.reference_stratego import play_random_game

REGISTRY = load_registry()
RISK = REGISTRY.game("risk")
STRATEGO = REGISTRY.game("stratego")


def bench_games(
    bot: str, players: int, cards: str, games: int, repeats: int = 1
) -> dict[str, float]:
    """Best of ``repeats`` runs, in CPU time (this machine is a noisy VM)."""
    options = {"cards": cards}
    best = None
    for _ in range(repeats):
        turns = decisions = 0
        start = time.process_time()
        for seed in range(games):
            bots = [REGISTRY.bot("risk", bot).factory(s, seed * 100 + s) for s in range(players)]
            rec = play_match(RISK, bots, seed, options)
            decisions += len(rec.steps)
            turns += rec.final_state.turn
        elapsed = time.process_time() - start
        if best is None or elapsed < best[0]:
            best = (elapsed, turns, decisions)
    elapsed, turns, decisions = best
    sizes = []
    for seed in range(min(games, 5)):  # replay sizes, outside the timing
        bots = [REGISTRY.bot("risk", bot).factory(s, seed * 100 + s) for s in range(players)]
        text = dumps(play_match(RISK, bots, seed, options)).encode()
        sizes.append((len(text), len(gzip.compress(text))))
    return {
        "games_s": games / elapsed,
        "turns_s": turns / elapsed,
        "decisions_s": decisions / elapsed,
        "turns_game": turns / games,
        "replay_kb": statistics.mean(s[0] for s in sizes) / 1024,
        "replay_gz_kb": statistics.mean(s[1] for s in sizes) / 1024,
    }


def bench_variant(
    variants: list[str], players: int, options: dict[str, str], games: int
) -> dict[str, float]:
    chosen = REGISTRY.resolve_variants("risk", variants)
    decisions = 0
    start = time.process_time()
    for seed in range(games):
        bots = [REGISTRY.bot("risk", "blitz").factory(s, seed * 100 + s) for s in range(players)]
        decisions += len(play_match(RISK, bots, seed, options, chosen).steps)
    elapsed = time.process_time() - start
    return {"decisions_s": decisions / elapsed, "games_s": games / elapsed}


#: (label, variants, players, options, the case it is compared with)
VARIANT_CASES = (
    ("classic claim", [], 4, {}, "classic claim"),
    ("classic deal", [], 4, {"setup": "deal"}, "classic deal"),
    ("missions", ["missions"], 4, {}, "classic deal"),
    ("capital", ["capital"], 4, {}, "classic deal"),
    ("capital short", ["capital"], 4, {"short-capital": "on"}, "classic deal"),
    ("fixed cards", [], 4, {"cards": "fixed"}, "classic claim"),
    ("defender chooses", [], 4, {"defender-dice": "choose"}, "classic claim"),
    ("classic 3p deal", [], 3, {"setup": "deal"}, "classic 3p deal"),
    ("neutral (2p)", ["neutral"], 2, {}, "classic 3p deal"),
)


def main_variants(quick: bool) -> None:
    """Decisions/s per variant, CPU time, best of 3 interleaved rounds."""
    games = 4 if quick else 60
    best: dict[str, dict[str, float]] = {}
    for _ in range(1 if quick else 3):
        for label, variants, players, options, _ in VARIANT_CASES:
            r = bench_variant(variants, players, options, games)
            if label not in best or r["decisions_s"] > best[label]["decisions_s"]:
                best[label] = r
    print(
        f"\n{'risk variant (blitz bots)':22} {'players':>7} {'decisions/s':>12} {'games/s':>8} "
        f"{'vs':>16}"
    )
    for label, _, players, _, base in VARIANT_CASES:
        r = best[label]
        ratio = r["decisions_s"] / best[base]["decisions_s"]
        print(
            f"{label:22} {players:>7} {r['decisions_s']:>12.0f} {r['games_s']:>8.1f} "
            f"{ratio:>5.2f}x {base}",
            flush=True,
        )


def bench_clone(samples: int) -> tuple[float, float]:
    """Mean microseconds per clone() of mid-game 4-player states, and per clone() with
    the clone's first draw from the generator (which copies the generator it shares)."""
    state = RISK.new_state(4, seed=3)
    bots = [REGISTRY.bot("risk", "blitz").factory(s, s) for s in range(4)]
    snapshots = []
    while not state.terminal and len(snapshots) < 50:
        decision = state.decision()
        state.apply(
            decision.player,
            bots[decision.player].decide(state.observation(decision.player), decision),
        )
        if decision.kind == "attack":
            snapshots.append(state.clone())
    start = time.process_time()
    for i in range(samples):
        snapshots[i % len(snapshots)].clone()
    clone_us = (time.process_time() - start) / samples * 1e6
    start = time.process_time()
    for i in range(samples):
        snapshots[i % len(snapshots)].clone().rng.random()
    return clone_us, (time.process_time() - start) / samples * 1e6


def blitz_rate(games: int, record: bool) -> float:
    """Games/s of the blitz bot, 4 players, no cards; ``record=False``: the fast mode."""
    start = time.process_time()
    for seed in range(games):
        bots = [REGISTRY.bot("risk", "blitz").factory(s, seed * 100 + s) for s in range(4)]
        play_match(RISK, bots, seed, {"cards": "none"}, record=record)
    return games / (time.process_time() - start)


def reference_blitz_rate(games: int) -> float:
    start = time.process_time()
    for seed in range(games):
        play_blitz_game(4, seed)
    return games / (time.process_time() - start)


def bench_stratego(rule_set: str, games: int, record: bool = True) -> dict[str, float]:
    variants = REGISTRY.resolve_variants("stratego", [] if rule_set == "classic" else [rule_set])
    plies = 0
    start = time.process_time()
    for seed in range(games):
        bots = [REGISTRY.bot("stratego", "random").factory(s, seed * 100 + s) for s in (0, 1)]
        plies += play_match(STRATEGO, bots, seed, variants=variants, record=record).final_state.ply
    elapsed = time.process_time() - start
    return {"plies_s": plies / elapsed, "games_s": games / elapsed, "plies_game": plies / games}


def bench_stratego_reference(games: int) -> dict[str, float]:
    start = time.process_time()
    plies = sum(play_random_game(seed) for seed in range(games))
    elapsed = time.process_time() - start
    return {"plies_s": plies / elapsed, "games_s": games / elapsed, "plies_game": plies / games}


def compare(
    title: str, rounds: int, rate: Callable[[bool], float], reference: Callable[[], float]
) -> None:
    """The engine against the reference, in rounds: each round measures the same seeds
    recorded (the normal mode), in the fast mode (``play_match(record=False)``: no events,
    no replay) and on the reference, one after the other, and their ratios; then the
    median ratios over the rounds."""
    print(f"\n{title}")
    print(f"{'round':>5} {'recorded':>9} {'fast':>9} {'reference':>9} {'ratio':>7} {'fast':>7}")
    recorded, fast = [], []
    for i in range(rounds):
        normal, quick, ref = rate(True), rate(False), reference()
        recorded.append(normal / ref)
        fast.append(quick / ref)
        print(
            f"{i + 1:>5} {normal:>9.1f} {quick:>9.1f} {ref:>9.1f} "
            f"{recorded[-1]:>6.2f}x {fast[-1]:>6.2f}x",
            flush=True,
        )
    print(
        f"median ratio to the reference: recorded {statistics.median(recorded):.2f}x, "
        f"fast {statistics.median(fast):.2f}x"
    )


def mersenne_twister(seed: int, domain: str = "match") -> random.Random:
    """The generator a Risk state had before ``SecureRandom``: ``random.Random(seed)``
    (the deal's, which a claim game never draws from, a Mersenne Twister of its own)."""
    return random.Random(seed) if domain == "match" else random.Random(f"{domain}/{seed}")


@contextlib.contextmanager
def old_generator() -> Iterator[None]:
    """Risk states made meanwhile draw from a Mersenne Twister, as before."""
    secure = risk_state.SecureRandom
    risk_state.SecureRandom = mersenne_twister  # type: ignore[assignment,misc]
    try:
        yield
    finally:
        risk_state.SecureRandom = secure  # type: ignore[misc]


def chance_rate(games: int, record: bool, old: bool) -> tuple[float, float]:
    """Games/s of :func:`blitz_rate`'s games, with the secure generator or (``old``) the
    Mersenne Twister, and decisions/s (recorded; 0 in the fast mode, which keeps no
    steps to count)."""
    with old_generator() if old else contextlib.nullcontext():
        decisions = 0
        start = time.process_time()
        for seed in range(games):
            bots = [REGISTRY.bot("risk", "blitz").factory(s, seed * 100 + s) for s in range(4)]
            decisions += len(play_match(RISK, bots, seed, {"cards": "none"}, record=record).steps)
        elapsed = time.process_time() - start
    return games / elapsed, decisions / elapsed


def main_chance(quick: bool) -> None:
    """Blitz, 4 players, no cards: games/s with the secure generator and with the old
    one, recorded and in the fast mode, in interleaved rounds of the same seeds (CPU
    time; each the faster of two runs, this machine being a noisy VM). The two
    generators roll other dice, so the same seeds play other games; 300 of them a round
    keep their lengths close, and decisions/s (recorded) takes the lengths out."""
    games = 4 if quick else 300
    rounds = 1 if quick else 5
    with old_generator():
        assert type(RISK.new_state(4, 1).rng) is random.Random, "the old generator is not used"
    assert type(RISK.new_state(4, 1).rng) is not random.Random
    print(
        f"\nchance: blitz, 4 players, no cards, {games} games a round: the secure generator "
        "against the Mersenne Twister (target: games/s at least 0.95x)"
    )
    print(
        f"{'round':>5} {'mode':>8} {'games/s':>8} {'old':>8} {'ratio':>7} "
        f"{'decisions/s':>11} {'old':>8} {'ratio':>7}"
    )
    ratios: dict[str, list[tuple[float, float]]] = {"recorded": [], "fast": []}
    for i in range(rounds):
        for mode, record in (("recorded", True), ("fast", False)):
            # each measured twice, in the order secure, old, old, secure (a drift of the
            # machine's speed within the round falls on both alike), the faster kept
            secure, old = chance_rate(games, record, False), chance_rate(games, record, True)
            old = max(old, chance_rate(games, record, True))
            secure = max(secure, chance_rate(games, record, False))
            per_decision = secure[1] / old[1] if record else float("nan")
            ratios[mode].append((secure[0] / old[0], per_decision))
            counts = f"{secure[1]:>11.0f} {old[1]:>8.0f} {per_decision:>6.3f}x" if record else ""
            print(
                f"{i + 1:>5} {mode:>8} {secure[0]:>8.1f} {old[0]:>8.1f} "
                f"{ratios[mode][-1][0]:>6.3f}x {counts}".rstrip(),
                flush=True,
            )
    for mode, pairs in ratios.items():
        line = f"median ratio to the Mersenne Twister, {mode}: games/s "
        line += f"{statistics.median(g for g, _ in pairs):.3f}x"
        if mode == "recorded":
            line += f", decisions/s {statistics.median(d for _, d in pairs):.3f}x"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few games only (smoke run)")
    parser.add_argument(
        "--game", choices=("risk", "variants", "stratego", "chance", "all"), default="all"
    )
    args = parser.parse_args()
    if args.game in ("risk", "all"):
        main_risk(args.quick)
    if args.game in ("chance", "all"):
        main_chance(args.quick)
    if args.game in ("variants", "all"):
        main_variants(args.quick)
    if args.game in ("stratego", "all"):
        main_stratego(args.quick)


def main_risk(quick: bool) -> None:
    blitz_games = 4 if quick else 300
    random_games = 1 if quick else 12

    print(
        f"{'bot':7} {'players':>7} {'cards':>11} {'games/s':>9} {'turns/s':>9} "
        f"{'decisions/s':>12} {'turns/game':>10} {'replay KB':>9} {'gz KB':>7}"
    )
    for bot, games in (("blitz", blitz_games), ("random", random_games)):
        for players in (3, 4, 6):
            for cards in ("progressive", "none"):
                repeats = 3 if bot == "blitz" and not quick else 1
                r = bench_games(bot, players, cards, games, repeats)
                print(
                    f"{bot:7} {players:>7} {cards:>11} {r['games_s']:>9.1f} "
                    f"{r['turns_s']:>9.0f} {r['decisions_s']:>12.0f} {r['turns_game']:>10.1f} "
                    f"{r['replay_kb']:>9.1f} {r['replay_gz_kb']:>7.1f}",
                    flush=True,
                )
    clone_us, drawn_us = bench_clone(2000 if quick else 50_000)
    print(
        f"\nclone(): {clone_us:.1f} µs per call (4 players, mid-game; target at most 5 µs); "
        f"{drawn_us:.1f} µs with the clone's first draw"
    )
    games = 4 if quick else 100
    compare(
        f"blitz, 4 players, no cards, {games} games a round: games/s (target: at least 0.8x)",
        1 if quick else 5,
        lambda record: blitz_rate(games, record),
        lambda: reference_blitz_rate(games),
    )


def main_stratego(quick: bool) -> None:
    games = 3 if quick else 60
    print(f"\n{'stratego':9} {'plies/s':>9} {'games/s':>8} {'plies/game':>10}")
    for rule_set in ("classic", "isf", "barrage"):
        r = bench_stratego(rule_set, games)
        print(
            f"{rule_set:9} {r['plies_s']:>9.0f} {r['games_s']:>8.1f} {r['plies_game']:>10.0f}",
            flush=True,
        )
    games = 3 if quick else 30
    compare(
        f"stratego classic, random against random, {games} games a round: plies/s "
        "(target: at least 1.5x)",
        1 if quick else 5,
        lambda record: bench_stratego("classic", games, record)["plies_s"],
        lambda: bench_stratego_reference(games)["plies_s"],
    )


if __name__ == "__main__":
    main()
