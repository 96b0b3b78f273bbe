"""``arena bot``: register a bot, run one as a process against referees, or write a
starter bot file. A bot process's options and play are the SDK's (``arena.sdk.process``):
``arena.sdk.main`` runs bot files as processes with the same options."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from arena.cli.args import REFEREE_HELP, REGISTRATION_KEY_ENV, secret_argument
from arena.cli.referee import arena_stub
from arena.engine.seeds import HOUSE_SEED_HELP, seed_argument
from arena.sdk.process import bot_connection_arguments, play_as_process


def cmd_bot_register(args: argparse.Namespace) -> int:
    import grpc

    from arena.v1 import arena_pb2 as pb

    try:
        reply = arena_stub(args.referee).RegisterBot(
            pb.RegisterBotRequest(
                name=args.name,
                registration_key=args.key or "",
                games=args.game,
                new_version=args.new_version,
            ),
            timeout=10,
        )
    except grpc.RpcError as exc:
        raise ValueError(f"{args.referee}: {exc.details()}") from None
    print(f"registered {reply.name} version {reply.version} (id {reply.bot_id})")
    print(f"token (shown once, keep it secret): {reply.token}")
    return 0


def cmd_bot_run(args: argparse.Namespace) -> int:
    """Run a built-in bot, or the bot of a local file, as its own process against a referee."""
    from arena.sdk import games_of
    from arena.sdk.house import house_factory
    from arena.sdk.local import is_bot_file, load

    if is_bot_file(args.name):
        cls = load(args.name).cls
        return play_as_process(cls, args, games_of(cls))
    return play_as_process(house_factory(args.name, args.seed), args, None)


def cmd_bot_new(args: argparse.Namespace) -> int:
    """Write a starter bot file that plays legal moves, runnable in process and remotely."""
    from arena.sdk.starter import GAMES, write_starter

    path = write_starter(args.name, args.game)
    opponents = GAMES[args.game][2]
    shown = path if path.is_absolute() or path.parent != Path(".") else f"./{path}"
    print(f"wrote {path}: a {args.game} bot that plays legal moves; its strategy is yours")
    print(f"play it:  arena play {args.game} --players {shown},{opponents}")
    print(f"run it:   python {path} --referee HOST:PORT --token TOKEN")
    return 0


def add_parsers(sub: Any) -> None:
    bot = sub.add_parser("bot", help="register or run bots")
    bot_sub = bot.add_subparsers(dest="bot_command", required=True)
    register = bot_sub.add_parser("register", help="register a bot; prints its token once")
    register.add_argument("name")
    register.add_argument("--referee", default="127.0.0.1:50051", help=REFEREE_HELP)
    secret_argument(
        register, "--key", REGISTRATION_KEY_ENV, "the registration key, if registration is closed"
    )
    register.add_argument(
        "--game", action="append", default=[], help="a game it plays (repeat; none: all)"
    )
    register.add_argument(
        "--new-version",
        action="store_true",
        help="the name is registered already: register a new version of it (matches naming "
        "the bot then seat the new version; restart its process with the new token)",
    )
    register.set_defaults(func=cmd_bot_register)
    run = bot_sub.add_parser("run", help="run a built-in bot against a referee")
    run.add_argument(
        "name", help="a built-in bot (e.g. random, aggressive, heuristic) or a file ./NAME.py"
    )
    bot_connection_arguments(run)
    run.add_argument("--seed", type=seed_argument, default=None, help=HOUSE_SEED_HELP)
    run.set_defaults(func=cmd_bot_run)
    new = bot_sub.add_parser("new", help="write a starter bot file NAME.py to build on")
    new.add_argument(
        "name", help="the bot's name (ASCII letters, digits, '-', '_', '.'); writes NAME.py"
    )
    new.add_argument("--game", required=True, help="risk or stratego")
    new.set_defaults(func=cmd_bot_new)
