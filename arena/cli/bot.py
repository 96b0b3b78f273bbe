"""``arena bot``: register a bot, run one as a process against referees, or write a
starter bot file. ``arena.sdk.main`` runs bot files as processes with the same options."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena.cli.args import REFEREE_HELP, positive_int
from arena.cli.referee import arena_stub
from arena.engine.seeds import HOUSE_SEED_HELP, seed_argument
from arena.sdk.tokens import keep_secret


def cmd_bot_register(args: argparse.Namespace) -> int:
    import grpc

    from arena.v1 import arena_pb2 as pb

    try:
        reply = arena_stub(args.referee).RegisterBot(
            pb.RegisterBotRequest(name=args.name, registration_key=args.key or "", games=args.game),
            timeout=10,
        )
    except grpc.RpcError as exc:
        raise ValueError(f"{args.referee}: {exc.details()}") from None
    print(f"registered {reply.name} version {reply.version} (id {reply.bot_id})")
    print(f"token (shown once, keep it secret): {reply.token}")
    return 0


def _register_when_up(address: str, name: str, key: str, games: list[str]) -> str:
    """Register ``name`` on the referee at ``address``, waiting up to two minutes for it."""
    import time

    import grpc

    from arena.v1 import arena_pb2 as pb
    from arena.v1 import arena_pb2_grpc

    deadline = time.monotonic() + 120
    with grpc.insecure_channel(address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        while True:
            try:
                reply = stub.RegisterBot(
                    pb.RegisterBotRequest(name=name, registration_key=key, games=games),
                    timeout=10,
                )
                print(f"registered {reply.name} version {reply.version}", flush=True)
                return reply.token
            except grpc.RpcError as exc:
                if exc.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                    raise ValueError(f"{address}: {exc.details()}") from None
                time.sleep(1.0)


def _bot_token(args: argparse.Namespace, games: Sequence[str] | None = None) -> tuple[str, bool]:
    """The token ``arena bot run`` connects with, and whether it was read from the
    --token-file: --token; else the file's; else a new registration as --register-as
    (playing ``games``; None: the built-in bot ``args.name``'s), kept in the file (if
    given) so that the next start is the same bot version."""
    from arena.plugins import load_registry

    if args.token:
        return args.token, False
    path = Path(args.token_file) if args.token_file else None
    if path is not None and path.exists():
        token = path.read_text().strip()
        if token:
            return token, True
    if not args.register_as:
        raise ValueError(
            "give --token, --token-file holding one, or --register-as NAME to register first"
        )
    if games is None:
        games = sorted({game for game, bot in load_registry().bots if bot == args.name})

    def register() -> str:  # one registration, on the first referee: they share a store
        return _register_when_up(
            args.referee.split(",")[0], args.register_as, args.key or "", list(games)
        )

    return (register() if path is None else keep_secret(path, register)), False


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


def play_as_process(
    factory: Callable[[Any], Any], args: argparse.Namespace, games: Sequence[str] | None
) -> int:
    """Connect to the referee(s) of ``args`` and play as ``factory`` (``arena bot run``
    and ``arena.sdk.main``): ``games`` is what a --register-as registration plays."""
    from arena.sdk import FatalError, run_bot

    token, from_file = _bot_token(args, games)
    try:
        run_bot(
            factory,
            args.referee.split(","),
            token,
            max_matches=args.max_matches,
            stop_after=args.matches,
        )
    except FatalError as exc:
        if from_file:
            then = (
                "remove the file to register a new version"
                if args.register_as
                else "give it a token that this referee accepts"
            )
            raise FatalError(
                f"{exc}; the token in {args.token_file} was refused (revoked, or issued by "
                f"a referee with another store): {then}"
            ) from None
        raise
    return 0


def bot_connection_arguments(parser: argparse.ArgumentParser) -> None:
    """How a bot process finds its referee and proves who it is (``arena bot run`` and
    ``arena.sdk.main``)."""
    parser.add_argument(
        "--referee", default="127.0.0.1:50051", help="HOST:PORT, or several separated by commas"
    )
    parser.add_argument("--token", help="from `arena bot register` (or use --register-as)")
    parser.add_argument(
        "--register-as",
        metavar="NAME",
        help="no token: register as NAME first, waiting for the referee to come up; for "
        "containers that start bots unattended (with --token-file, once: later starts "
        "reuse the token; without, each start is a new version)",
    )
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        help="read the token from PATH (kept off the command line); with --register-as, "
        "where the first start keeps the token it registered (readable by its owner only)",
    )
    parser.add_argument("--key", help="the registration key, with --register-as")
    parser.add_argument(
        "--max-matches", type=positive_int, default=16, help="matches to play at once, at most"
    )
    parser.add_argument("--matches", type=positive_int, default=None, help="stop after this many")


def add_parsers(sub: Any) -> None:
    bot = sub.add_parser("bot", help="register or run bots")
    bot_sub = bot.add_subparsers(dest="bot_command", required=True)
    register = bot_sub.add_parser("register", help="register a bot; prints its token once")
    register.add_argument("name")
    register.add_argument("--referee", default="127.0.0.1:50051", help=REFEREE_HELP)
    register.add_argument("--key", help="the registration key, if registration is closed")
    register.add_argument(
        "--game", action="append", default=[], help="a game it plays (repeat; none: all)"
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
