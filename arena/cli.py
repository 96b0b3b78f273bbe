"""The ``arena`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from arena.engine.core import IllegalAction
from arena.engine.match import BotError, MatchRecord, play_match


def _parse_options(pairs: Sequence[str]) -> dict[str, str | None]:
    """``NAME=VALUE`` pairs; a bare ``NAME`` is a flag (None), resolved by the game."""
    options: dict[str, str | None] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not name:
            raise ValueError(f"--option {pair!r}: expected NAME=VALUE or a flag NAME")
        options[name] = value if sep else None
    return options


def _summary(rec: MatchRecord) -> str:
    """A readable account of a finished match."""
    lines = [f"{rec.game}: {rec.num_players} players, seed {rec.seed}"]
    if rec.variants:
        lines.append(f"variants: {', '.join(rec.variants)}")
    if rec.options:
        lines.append(
            "options: "
            + ", ".join(k if v is None else f"{k}={v}" for k, v in sorted(rec.options.items()))
        )
    lines.append(
        "seats (turn order): "
        + ", ".join(f"{seat}:{name}" for seat, name in enumerate(rec.players))
    )
    turns = moves = strikes = 0
    eliminations = []
    for event in rec.events:
        kind = event["e"]
        if kind == "turn":
            turns = event["turn"]
        elif kind == "move":
            moves += 1
        elif kind == "strike":
            strikes += 1
        elif kind == "eliminate":
            eliminations.append(
                f"  turn {turns}: {rec.players[event['p']]} (seat {event['p']}) eliminated by "
                f"{rec.players[event['by']]} (seat {event['by']})"
            )
    if turns:
        lines.append(f"turns: {turns}, decisions: {len(rec.steps)}")
    else:
        lines.append(f"moves: {moves + strikes} ({strikes} strikes), decisions: {len(rec.steps)}")
    if eliminations:
        lines.append("eliminations, in order:")
        lines.extend(eliminations)
    result = rec.result
    if result is not None:
        winners = result.winners
        if len(winners) == 1:
            lines.append(
                f"winner: {rec.players[winners[0]]} (seat {winners[0]}), by {result.reason.value}"
            )
        else:
            lines.append(
                "tie between "
                + ", ".join(f"{rec.players[w]} (seat {w})" for w in winners)
                + f": {result.detail}"
            )
        order = sorted(range(rec.num_players), key=lambda s: result.places[s])
        lines.append(
            "ranking: "
            + ", ".join(f"{result.places[s]}. {rec.players[s]} (seat {s})" for s in order)
        )
    return "\n".join(lines)


def cmd_play(args: argparse.Namespace) -> int:
    from arena.engine import replay
    from arena.plugins import load_registry

    registry = load_registry()
    game = registry.game(args.game)
    names = [n.strip() for n in args.players.split(",") if n.strip()]
    specs = [registry.bot(args.game, name) for name in names]
    variants = registry.resolve_variants(args.game, args.variant)
    options = _parse_options(args.option)
    registry.check_options(args.game, options, variants)
    players = [spec.factory(seat, args.seed * 1000 + seat) for seat, spec in enumerate(specs)]
    rec = play_match(game, players, args.seed, options, variants, names=names)
    print(_summary(rec))
    if args.board:
        picture = game.render(rec.final_state)
        print(picture if picture else f"({args.game} has no board picture)")
    if args.replay:
        size = replay.save(rec, args.replay)
        print(f"replay: {args.replay} ({size:,} bytes)")
    return 0


def cmd_replay_verify(args: argparse.Namespace) -> int:
    from arena.engine import replay

    rec = replay.load(args.file)
    try:
        steps = replay.verify(rec)
    except replay.ReplayMismatch as exc:
        print(f"{args.file}: MISMATCH: {exc}", file=sys.stderr)
        return 1
    print(f"{args.file}: OK ({steps} decisions, {len(rec.events)} events re-simulated)")
    return 0


def cmd_odds(args: argparse.Namespace) -> int:
    from arena.games.risk.dice import outcome_table
    from arena.games.risk.odds import attack_probability

    p = attack_probability(args.attackers, args.defenders)
    print(
        f"{args.attackers} attacking armies against {args.defenders} defending: "
        f"P(capture) = {float(p):.4f}"
    )
    print("(attacking armies exclude the one that must stay behind; most dice every roll)")
    print()
    print("one roll: attacker dice v defender dice -> outcome probabilities")
    labels = {
        (0, 1): "defender loses 1",
        (0, 2): "defender loses 2",
        (1, 1): "each loses 1",
        (1, 0): "attacker loses 1",
        (2, 0): "attacker loses 2",
    }
    for a in (3, 2, 1):
        for d in (2, 1):
            table = outcome_table(a, d)
            denom = 6 ** (a + d)
            cells = ", ".join(
                f"{labels[k]} {v * denom}/{denom} ({float(v):.4f})" for k, v in table.items()
            )
            print(f"  {a}v{d}: {cells}")
    return 0


def _describe_option(spec: Any) -> str:
    values = "|".join(spec.choices) if spec.choices else "VALUE"
    text = f"--option {spec.name}={values} (default {spec.default}): {spec.description}"
    for alias, value in spec.aliases:
        text += f"; --option {alias} means {spec.name}={value}"
    return text


def cmd_variants(args: argparse.Namespace) -> int:
    from arena.plugins import load_registry

    registry = load_registry()
    for name, game in sorted(registry.games.items()):
        print(f"{name}: {game.description} ({game.min_players}-{game.max_players} players)")
        variants = sorted(
            (v for (g, _), v in registry.variants.items() if g == name), key=lambda v: v.name
        )
        for v in variants:
            print(f"  --variant {v.name}: {v.description}")
            for spec in v.options:
                print("    " + _describe_option(spec))
        for spec in game.option_specs:
            print("  " + _describe_option(spec))
        bots = sorted(b for (g, b) in registry.bots if g == name)
        print(f"  bots: {', '.join(bots)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description="AI bots play Risk and Stratego")
    sub = parser.add_subparsers(dest="command", required=True)

    play = sub.add_parser("play", help="play one match between in-process bots")
    play.add_argument("game", help="the game, e.g. risk")
    play.add_argument(
        "--players", required=True, help="comma-separated bot names in seat (turn) order"
    )
    play.add_argument("--seed", type=int, default=0, help="the match seed (default 0)")
    play.add_argument("--board", action="store_true", help="print the final position")
    play.add_argument("--replay", help="write the replay to this file (.gz compresses)")
    play.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a rule option (repeatable); see `arena variants`",
    )
    play.add_argument(
        "--variant",
        action="append",
        default=[],
        help="a variant (repeatable); see `arena variants`",
    )
    play.set_defaults(func=cmd_play)

    rep = sub.add_parser("replay", help="work with replays")
    rep_sub = rep.add_subparsers(dest="replay_command", required=True)
    verify = rep_sub.add_parser("verify", help="re-simulate a replay and check every event")
    verify.add_argument("file")
    verify.set_defaults(func=cmd_replay_verify)

    odds = sub.add_parser("odds", help="exact Risk battle odds")
    odds.add_argument(
        "attackers", type=int, help="attacking armies (not counting the one left behind)"
    )
    odds.add_argument("defenders", type=int, help="defending armies")
    odds.set_defaults(func=cmd_odds)

    variants = sub.add_parser("variants", help="list games, variants, options and bots")
    variants.set_defaults(func=cmd_variants)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (ValueError, IllegalAction, BotError, OSError) as exc:
        print(f"arena: error: {exc}", file=sys.stderr)
        return 2


def run() -> Any:  # pragma: no cover - console entry
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
