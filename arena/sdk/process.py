"""A bot as its own process: the options every bot process takes (``arena bot run``,
``arena.sdk.main`` for a bot file, ``python -m arena.bots.NAME`` for a built-in bot), its
token (given, read from a file, or registered), and the play until it stops.

The SDK's own: the CLI's ``arena bot run`` uses it, never the reverse (the SDK is what bot
authors import, and stands below the command line).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena.argtypes import REGISTRATION_KEY_ENV, non_negative_int, positive_int, secret_argument
from arena.sdk.tokens import keep_secret


def register_when_up(address: str, name: str, key: str, games: list[str]) -> str:
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
                # --register-as registers each start that has no token to reuse: a new
                # version each time, as its help says
                reply = stub.RegisterBot(
                    pb.RegisterBotRequest(
                        name=name, registration_key=key, games=games, new_version=True
                    ),
                    timeout=10,
                )
                print(f"registered {reply.name} version {reply.version}", flush=True)
                return reply.token
            except grpc.RpcError as exc:
                if exc.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                    raise ValueError(f"{address}: {exc.details()}") from None
                time.sleep(1.0)


def bot_token(args: argparse.Namespace, games: Sequence[str] | None = None) -> tuple[str, bool]:
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
        return register_when_up(
            args.referee.split(",")[0], args.register_as, args.key or "", list(games)
        )

    return (register() if path is None else keep_secret(path, register)), False


def play_as_process(
    factory: Callable[[Any], Any], args: argparse.Namespace, games: Sequence[str] | None
) -> int:
    """Connect to the referee(s) of ``args`` and play as ``factory`` (``arena bot run``
    and ``arena.sdk.main``): ``games`` is what a --register-as registration plays."""
    from arena.sdk import FatalError, run_bot

    token, from_file = bot_token(args, games)
    try:
        run_bot(
            factory,
            args.referee.split(","),
            token,
            max_matches=args.max_matches,
            stop_after=args.matches,
            threads=args.threads,
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
    secret_argument(
        parser, "--key", REGISTRATION_KEY_ENV, "the registration key, with --register-as"
    )
    parser.add_argument(
        "--max-matches", type=positive_int, default=16, help="matches to play at once, at most"
    )
    parser.add_argument("--matches", type=positive_int, default=None, help="stop after this many")
    parser.add_argument(
        "--threads",
        type=non_negative_int,
        default=0,
        help="decide in a pool of N threads (a bot that waits on an engine process or on "
        "I/O, or releases the GIL: its matches do not wait for each other); 0, the default: "
        "in the event loop, fastest for a bot whose decisions are quick",
    )


def run_as_process(
    prog: str,
    factory: Callable[[Any], Any],
    args: argparse.Namespace,
    games: Sequence[str] | None,
) -> None:
    """:func:`play_as_process` as a program's whole life: bad input, a refused token or
    an unreachable referee exit 2 with one line ``PROG: error: ...``; Ctrl-C exits 130."""
    from arena.sdk import FatalError

    try:
        play_as_process(factory, args, games)
    except (ValueError, FatalError, OSError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
