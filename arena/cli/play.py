"""``arena play``, ``arena replay``, ``arena odds`` and ``arena variants``: games played
here, their replays, and what the games offer."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.cli import console
from arena.cli.args import (
    ORGANISER_KEY_ENV,
    TIME_BANK_MS_HELP,
    non_negative_int,
    open_store,
    output_file,
    port_number,
    positive_float,
    positive_int,
    rule_options,
    secret_argument,
    stored_options,
)
from arena.cli.referee import arena_stub, organiser_metadata
from arena.engine.match import MatchRecord, play_match
from arena.engine.seeds import fresh_seed, house_bot_seed, seed_argument


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
        # a Stratego "strike" is a move onto an enemy piece: an attack, not an illegal move
        lines.append(f"moves: {moves + strikes} ({strikes} attacks), decisions: {len(rec.steps)}")
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


@dataclass(frozen=True)
class Conduct:
    """How a seat behaved: its strikes (a decision whose actions were refused until the
    referee played the default, or that raised), its timeouts, and why it forfeited
    (empty if it did not). A bot file in process has strikes as a remote bot does, and no
    clock; house bots have none."""

    strikes: int = 0
    timeouts: int = 0
    forfeit: str = ""


def _conduct_lines(names: Sequence[str], conduct: Sequence[Conduct]) -> list[str]:
    lines = ["strikes (illegal moves), timeouts and forfeits:"]
    for seat, (name, c) in enumerate(zip(names, conduct, strict=True)):
        forfeit = f"forfeited: {c.forfeit}" if c.forfeit else "no forfeit"
        lines.append(f"  seat {seat} {name}: {c.strikes} strikes, {c.timeouts} timeouts, {forfeit}")
    return lines


def _play_with_remote_bots(
    args: argparse.Namespace, names: list[str], options: dict[str, str], seed: int
) -> tuple[MatchRecord, list[Conduct]]:
    """Start a referee here, wait for the remote bots to connect, play, and stop."""
    import asyncio

    from arena.referee.server import Referee, RefereeConfig, check_port_free, start_server
    from arena.store import Store
    from arena.v1 import arena_pb2 as pb

    async def play() -> tuple[MatchRecord, list[Conduct]]:
        with tempfile.TemporaryDirectory() as tmp:
            config = RefereeConfig(decision_ms=args.decision_ms, time_bank_ms=args.time_bank_ms)
            referee = Referee(Store(f"{tmp}/play.db"), config)
            check_port_free("127.0.0.1", args.port)  # one line, before gRPC's own log
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
                        seed=seed,
                        options=options,
                    )
                )
                await match.done.wait()
                record = match.full_record()
                record.players = names
                record.final_state = match.state
                # a timeout is a strike too, in the referee's count
                conduct = [
                    Conduct(seat.strikes - seat.timeouts, seat.timeouts, seat.forfeit_why)
                    for seat in match.seats
                ]
                return record, conduct
            finally:
                await referee.shutdown(grace_s=1)
                await server.stop(grace=1)

    rec, conduct = asyncio.run(play())
    if rec.result is None:
        raise ValueError("the match was aborted")
    return rec, conduct


def _in_process_players(
    registry: Any,
    args: argparse.Namespace,
    names: list[str],
    seed: int,
    options: dict[str, str],
) -> tuple[list[Any], list[str]]:
    """The players of ``names`` (house bots, or bot files ``./NAME.py`` shown as
    ``file:NAME``), and their names."""
    import uuid

    from arena.sdk import MatchContext
    from arena.sdk.local import is_bot_file, load

    files = {name: load(name) for name in names if is_bot_file(name)}
    match_id = uuid.uuid4().hex  # nothing of the seed: a bot that knew it would know the dice
    shown = [files[name].name if name in files else name for name in names]
    players = []
    for seat, name in enumerate(names):
        if name in files:
            context = MatchContext(
                match_id,
                args.game,
                seat,
                shown,
                list(args.variant),
                dict(options),
            )
            players.append(files[name].player(context, console.warn))
        else:
            spec = registry.bot(args.game, name)
            players.append(spec.factory(seat, house_bot_seed(seed, seat)))
    return players, shown


def cmd_play(args: argparse.Namespace) -> int:
    from arena.engine import replay
    from arena.plugins import load_registry

    registry = load_registry()
    game = registry.game(args.game)
    names = [n.strip() for n in args.players.split(",") if n.strip()]
    variants = registry.resolve_variants(args.game, args.variant)
    options = stored_options(args)
    # printed with the result: --seed plays the same game again
    seed = fresh_seed() if args.seed is None else args.seed
    if any(name.startswith(REMOTE) for name in names):
        from arena.sdk.local import is_bot_file

        if any(is_bot_file(name) for name in names):
            raise ValueError(
                "a bot file plays in process only, not with remote: seats; run it as a "
                "process (python NAME.py --referee ... --token ...) as remote:NAME"
            )
        rec, conduct = _play_with_remote_bots(args, names, options, seed)
    else:
        players, names = _in_process_players(registry, args, names, seed, options)
        rec = play_match(game, players, seed, options, variants, names=names)
        conduct = [Conduct(c.strikes, 0, c.forfeit) for c in rec.conduct] or [Conduct()] * len(
            names
        )
    print(_summary(rec))
    print("\n".join(_conduct_lines(rec.players, conduct)))
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


def cmd_replay_export(args: argparse.Namespace) -> int:
    """Write a finished match's replay: from the store (--db, as the organiser: a running
    tournament's replays too) or from a referee (--referee: GetMatch, with its rules)."""
    from arena.engine import replay

    text = _referee_replay(args) if args.referee else _stored_replay(args)
    if args.output in (None, "-"):
        sys.stdout.write(text.rstrip("\n") + "\n")
        return 0
    size = replay.save_text(text, args.output)
    print(f"replay of {args.match_id}: {args.output} ({size:,} bytes)")
    return 0


def _stored_replay(args: argparse.Namespace) -> str:
    store = open_store(args)
    row = store.match(args.match_id)
    if row is None:
        raise ValueError(f"no match {args.match_id!r} in {args.db}")
    text = store.replay(row.id) if row.status == "finished" else None
    if text is None:
        raise ValueError(f"match {row.id} is {row.status}: it has a replay once it has finished")
    return text


def _referee_replay(args: argparse.Namespace) -> str:
    import grpc

    from arena.v1 import arena_pb2 as pb

    metadata = organiser_metadata(args.organiser_key)
    try:
        info = arena_stub(args.referee).GetMatch(
            pb.GetMatchRequest(match_id=args.match_id), metadata=metadata, timeout=30
        )
    except grpc.RpcError as exc:
        raise ValueError(f"{args.referee}: {exc.details()}") from None
    if info.status != "finished":
        raise ValueError(
            f"match {args.match_id} is {info.status}: it has a replay once it has finished"
        )
    if not info.replay_json:
        raise ValueError(
            f"match {args.match_id}: its tournament has not ended, and its replay would tell "
            "the deals of its other matches (the organiser key shows it)"
        )
    return info.replay_json


def cmd_odds(args: argparse.Namespace) -> int:
    from arena.games.risk.dice import outcome_table
    from arena.games.risk.odds import attack_chance

    p = attack_chance(args.attackers, args.defenders)
    print(
        f"{args.attackers} attacking armies against {args.defenders} defending: "
        f"P(capture) = {p:.4f}"
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


def add_parsers(sub: Any) -> None:
    play = sub.add_parser("play", help="play one match between in-process bots")
    play.add_argument("game", help="the game, e.g. risk")
    play.add_argument(
        "--players", required=True, help="comma-separated bot names in seat (turn) order"
    )
    play.add_argument(
        "--seed",
        type=seed_argument,
        default=None,
        help="the match seed (default: a fresh secret one from the operating system, "
        "printed with the result, so that --seed plays the same game again)",
    )
    play.add_argument("--board", action="store_true", help="print the final position")
    play.add_argument(
        "--port",
        type=port_number,
        default=50051,
        help="with remote:NAME players: the port of the referee started here",
    )
    play.add_argument(
        "--wait",
        type=positive_float,
        default=300.0,
        help="with remote:NAME players: seconds to wait for them to connect",
    )
    play.add_argument(
        "--decision-ms",
        type=positive_int,
        default=5000,
        help="with remote:NAME players: the per-decision deadline",
    )
    play.add_argument(
        "--time-bank-ms",
        type=non_negative_int,
        default=30000,
        help="with remote:NAME players: " + TIME_BANK_MS_HELP,
    )
    play.add_argument(
        "--replay", type=output_file, help="write the replay to this file (.gz compresses)"
    )
    rule_options(play)
    play.set_defaults(func=cmd_play)

    rep = sub.add_parser("replay", help="work with replays")
    rep_sub = rep.add_subparsers(dest="replay_command", required=True)
    verify = rep_sub.add_parser("verify", help="re-simulate a replay and check every event")
    verify.add_argument("file")
    verify.set_defaults(func=cmd_replay_verify)
    export = rep_sub.add_parser(
        "export", help="write a finished match's replay (from the store, or a referee)"
    )
    export.add_argument("match_id")
    export.add_argument(
        "-o",
        "--output",
        type=output_file,
        help="the file to write (.gz compresses; default: standard output)",
    )
    export.add_argument(
        "--db",
        default=os.environ.get("ARENA_DB", "arena.db"),
        help="read the store directly, as its organiser (default $ARENA_DB or arena.db)",
    )
    export.add_argument("--referee", help="HOST:PORT: ask this referee instead (GetMatch)")
    secret_argument(
        export, "--organiser-key", ORGANISER_KEY_ENV, "with --referee: the referee's organiser key"
    )
    export.set_defaults(func=cmd_replay_export)

    odds = sub.add_parser("odds", help="exact Risk battle odds")
    odds.add_argument(
        "attackers", type=int, help="attacking armies (not counting the one left behind)"
    )
    odds.add_argument("defenders", type=int, help="defending armies")
    odds.set_defaults(func=cmd_odds)

    variants = sub.add_parser("variants", help="list games, variants, options and bots")
    variants.set_defaults(func=cmd_variants)
