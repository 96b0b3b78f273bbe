"""The ``arena`` command line."""

from __future__ import annotations

import argparse
import contextlib
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


REMOTE = "remote:"


def _play_with_remote_bots(
    args: argparse.Namespace, names: list[str], options: dict[str, str | None]
) -> MatchRecord:
    """Start a referee here, wait for the remote bots to connect, play, and stop."""
    import asyncio
    import tempfile

    from arena.referee.server import Referee, RefereeConfig, start_server
    from arena.store import Store
    from arena.v1 import arena_pb2 as pb

    async def play() -> MatchRecord:
        with tempfile.TemporaryDirectory() as tmp:
            referee = Referee(Store(f"{tmp}/play.db"), RefereeConfig(decision_ms=args.decision_ms))
            server, port = await start_server(referee, f"127.0.0.1:{args.port}")
            try:
                players = []
                for name in names:
                    if not name.startswith(REMOTE):
                        players.append(f"house:{name}")
                        continue
                    bot, token = referee.store.register_bot(name[len(REMOTE) :])
                    print(
                        f"waiting for {bot.name}: run it with --referee 127.0.0.1:{port} "
                        f"--token {token}",
                        flush=True,
                    )
                    if await referee.wait_for_bot(bot.id, args.wait) is None:
                        raise ValueError(f"{bot.name} did not connect within {args.wait:.0f} s")
                    players.append(bot.name)
                match = referee.create_match(
                    pb.RunMatchRequest(
                        game=args.game,
                        variants=args.variant,
                        players=players,
                        seed=args.seed,
                        options={k: "on" if v is None else v for k, v in options.items()},
                    )
                )
                await match.done.wait()
                match.record.players = names
                match.record.final_state = match.state
                return match.record
            finally:
                await referee.shutdown(grace_s=1)
                await server.stop(grace=1)

    rec = asyncio.run(play())
    if rec.result is None:
        raise ValueError("the match was aborted")
    return rec


def cmd_play(args: argparse.Namespace) -> int:
    from arena.engine import replay
    from arena.plugins import load_registry

    registry = load_registry()
    game = registry.game(args.game)
    names = [n.strip() for n in args.players.split(",") if n.strip()]
    variants = registry.resolve_variants(args.game, args.variant)
    options = _parse_options(args.option)
    registry.check_options(args.game, options, variants)
    if any(name.startswith(REMOTE) for name in names):
        rec = _play_with_remote_bots(args, names, options)
    else:
        specs = [registry.bot(args.game, name) for name in names]
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


def cmd_referee(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from arena.referee.server import RefereeConfig, serve
    from arena.store import Store

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    config = RefereeConfig(
        decision_ms=args.decision_ms,
        time_bank_ms=args.time_bank_ms,
        grace_s=args.grace,
        max_strikes=args.max_strikes,
        open_registration=not args.registration_key,
        registration_key=args.registration_key or "",
        organiser_key=args.organiser_key or "",
    )
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: serve() has shut down cleanly
        asyncio.run(
            serve(
                f"{args.host}:{args.port}",
                Store(args.db),
                config,
                shutdown_grace_s=args.shutdown_grace,
            )
        )
    return 0


def _arena_stub(address: str) -> Any:
    import grpc

    from arena.v1 import arena_pb2_grpc

    return arena_pb2_grpc.ArenaServiceStub(grpc.insecure_channel(address))


def cmd_bot_register(args: argparse.Namespace) -> int:
    import grpc

    from arena.v1 import arena_pb2 as pb

    try:
        reply = _arena_stub(args.referee).RegisterBot(
            pb.RegisterBotRequest(name=args.name, registration_key=args.key or ""), timeout=10
        )
    except grpc.RpcError as exc:
        raise ValueError(f"{args.referee}: {exc.details()}") from None
    print(f"registered {reply.name} version {reply.version} (id {reply.bot_id})")
    print(f"token (shown once, keep it secret): {reply.token}")
    return 0


def cmd_bot_run(args: argparse.Namespace) -> int:
    """Run a built-in bot as its own process against a referee."""
    from arena.sdk import run_bot
    from arena.sdk.house import house_factory

    run_bot(
        house_factory(args.name),
        args.referee.split(","),
        args.token,
        max_matches=args.max_matches,
        stop_after=args.matches,
    )
    return 0


def cmd_match_run(args: argparse.Namespace) -> int:
    import grpc

    from arena.v1 import arena_pb2 as pb

    request = pb.RunMatchRequest(
        game=args.game,
        variants=args.variant,
        options=_parse_options(args.option)
        and {k: ("on" if v is None else v) for k, v in _parse_options(args.option).items()},
        players=[p.strip() for p in args.players.split(",")],
        seed=args.seed,
        wait=True,
        decision_ms=args.decision_ms,
    )
    metadata = [("authorization", f"Bearer {args.organiser_key}")] if args.organiser_key else []
    try:
        reply = _arena_stub(args.referee).RunMatch(request, metadata=metadata)
    except grpc.RpcError as exc:
        raise ValueError(f"{args.referee}: {exc.details()}") from None
    info = reply.match
    print(f"match {info.match_id}: {info.status}, {info.result.reason}: {info.result.detail}")
    for seat, name in enumerate(info.players):
        print(f"  seat {seat}: {name} place {info.result.places[seat]}")
    for forfeit in info.result.forfeits:
        print(f"  seat {forfeit.seat} forfeited: {forfeit.why}")
    if args.replay and info.replay_json:
        with open(args.replay, "w") as f:
            f.write(info.replay_json)
        print(f"replay: {args.replay}")
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
    play.add_argument(
        "--port",
        type=int,
        default=50051,
        help="with remote:NAME players: the port of the referee started here",
    )
    play.add_argument(
        "--wait",
        type=float,
        default=300.0,
        help="with remote:NAME players: seconds to wait for them to connect",
    )
    play.add_argument(
        "--decision-ms",
        type=int,
        default=5000,
        help="with remote:NAME players: the per-decision deadline",
    )
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

    ref = sub.add_parser("referee", help="run a referee that bots connect to")
    ref.add_argument("--host", default="127.0.0.1")
    ref.add_argument("--port", type=int, default=50051)
    ref.add_argument("--db", default="arena.db", help="SQLite file or database URL")
    ref.add_argument("--decision-ms", type=int, default=5000)
    ref.add_argument("--time-bank-ms", type=int, default=30000)
    ref.add_argument(
        "--grace", type=float, default=10.0, help="seconds a disconnected bot has to come back"
    )
    ref.add_argument("--max-strikes", type=int, default=5)
    ref.add_argument(
        "--shutdown-grace",
        type=float,
        default=10.0,
        help="on SIGTERM/SIGINT, seconds matches in flight get to finish",
    )
    ref.add_argument("--registration-key", help="close registration: bots need this key")
    ref.add_argument("--organiser-key", help="needed to run matches and revoke bots")
    ref.set_defaults(func=cmd_referee)

    bot = sub.add_parser("bot", help="register or run bots")
    bot_sub = bot.add_subparsers(dest="bot_command", required=True)
    register = bot_sub.add_parser("register", help="register a bot; prints its token once")
    register.add_argument("name")
    register.add_argument("--referee", default="127.0.0.1:50051")
    register.add_argument("--key", help="the registration key, if registration is closed")
    register.set_defaults(func=cmd_bot_register)
    run = bot_sub.add_parser("run", help="run a built-in bot against a referee")
    run.add_argument("name", help="a built-in bot, e.g. random, aggressive, heuristic")
    run.add_argument(
        "--referee", default="127.0.0.1:50051", help="HOST:PORT, or several separated by commas"
    )
    run.add_argument("--token", required=True)
    run.add_argument("--max-matches", type=int, default=16)
    run.add_argument("--matches", type=int, default=None, help="stop after this many")
    run.set_defaults(func=cmd_bot_run)

    match = sub.add_parser("match", help="matches on a referee")
    match_sub = match.add_subparsers(dest="match_command", required=True)
    mrun = match_sub.add_parser("run", help="run one match and wait for its result")
    mrun.add_argument("game")
    mrun.add_argument(
        "--players", required=True, help="registered bot names or house:NAME, in seat order"
    )
    mrun.add_argument("--referee", default="127.0.0.1:50051")
    mrun.add_argument("--seed", type=int, default=0)
    mrun.add_argument("--variant", action="append", default=[])
    mrun.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    mrun.add_argument("--decision-ms", type=int, default=0)
    mrun.add_argument("--organiser-key")
    mrun.add_argument("--replay")
    mrun.set_defaults(func=cmd_match_run)
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
