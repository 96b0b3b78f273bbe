"""``arena bot``: register a bot, run one as a process against referees, or write a
starter bot file. A bot process's options and play are the SDK's (``arena.sdk.process``):
``arena.sdk.main`` runs bot files as processes with the same options."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from arena.cli.args import REFEREE_HELP, REGISTRATION_KEY_ENV, json_option, secret_argument
from arena.cli.referee import arena_stub
from arena.engine.seeds import HOUSE_SEED_HELP, seed_argument
from arena.sdk.process import bot_connection_arguments, play_as_process

#: where `arena bot submit` and `arena bot log` read a bot's token when not given
TOKEN_ENV = "ARENA_BOT_TOKEN"


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


#: bytes a chunk of a submission (under the referee's 1 MiB message limit)
CHUNK = 256 << 10


def cmd_bot_submit(args: argparse.Namespace) -> int:
    """Send a bot's code (a .py file or an archive with arena-bot.toml) for the referee
    to keep and run: a new version for new content, the same version for the same."""
    import grpc

    from arena.hosting.archive import Refused, format_of
    from arena.sdk.tokens import keep_secret
    from arena.v1 import arena_pb2 as pb

    path = Path(args.path).expanduser()
    try:
        format_of(path.name)
    except Refused as exc:
        raise ValueError(str(exc)) from None
    if not path.is_file():
        raise ValueError(f"{args.path}: no such file")
    token = args.token or ""
    token_file = Path(args.token_file).expanduser() if args.token_file else None
    if not token and token_file is not None and token_file.exists():
        token = token_file.read_text().strip()
    size = path.stat().st_size

    def chunks():
        yield pb.SubmitBotChunk(
            header=pb.SubmitBotHeader(
                name=args.name,
                token=token,
                registration_key=args.key or "",
                filename=path.name,
                size=size,
                games=args.game,
            )
        )
        with path.open("rb") as source:
            while chunk := source.read(CHUNK):
                yield pb.SubmitBotChunk(data=chunk)

    try:
        reply = arena_stub(args.referee).SubmitBot(chunks(), timeout=args.timeout)
    except grpc.RpcError as exc:
        raise ValueError(f"{args.referee}: {exc.details()}") from None
    what = "a new version" if reply.new_version else "the same content as before: no new version"
    print(
        f"submitted {reply.name} version {reply.version} ({what}; sha256 {reply.digest[:12]}, "
        f"{size} bytes; plays {', '.join(reply.games) or 'every game'})"
    )
    if reply.token:
        if token_file is not None:
            keep_secret(token_file, lambda: reply.token)
            print(f"token kept in {token_file} (readable by you only): submit again with it")
        else:
            print(f"token (shown once, keep it secret: it submits new versions): {reply.token}")
    return 0


def cmd_bot_list(args: argparse.Namespace) -> int:
    """The referee's bots (ListBots): connected, hosted (with their code's digest and
    size) and the files of tournaments."""
    import grpc

    from arena.cli.console import print_json
    from arena.v1 import arena_pb2 as pb

    try:
        reply = arena_stub(args.referee).ListBots(pb.ListBotsRequest(), timeout=10)
    except grpc.RpcError as exc:
        raise ValueError(f"{args.referee}: {exc.details()}") from None
    rows = [
        {
            "bot_id": b.bot_id,
            "name": b.name,
            "version": b.version,
            "kind": b.kind,
            "connected": b.connected,
            "revoked": b.revoked,
            "games": list(b.games),
            "digest": b.digest or None,
            "size": b.size if b.digest else None,
            "created": b.created,
        }
        for b in reply.bots
    ]
    if args.json:
        return print_json({"bots": rows})
    if not rows:
        print(f"no bots on {args.referee} yet: `arena bot register NAME` or `arena bot submit`")
    for row in rows:
        label = f"{row['name']}@{row['version']}"
        if row["kind"] == "hosted":
            how = f"hosted sha256 {row['digest'][:12]} {row['size']} bytes"
        else:
            how = "connected" if row["connected"] else "not connected"
        state = " (revoked)" if row["revoked"] else ""
        print(f"{label:<32} {how:<40} {row['created'][:16].replace('T', ' ')}{state}")
    return 0


def cmd_bot_log(args: argparse.Namespace) -> int:
    """A hosted bot's stderr of one match, for its owner."""
    import grpc

    from arena.v1 import arena_pb2 as pb

    token = args.token or ""
    if not token and args.token_file:
        token = Path(args.token_file).expanduser().read_text().strip()
    if not token:
        raise ValueError("give the bot's token: --token-file PATH (or $ARENA_BOT_TOKEN)")
    try:
        reply = arena_stub(args.referee).GetBotLog(
            pb.GetBotLogRequest(token=token, match_id=args.match_id, seat=args.seat), timeout=10
        )
    except grpc.RpcError as exc:
        raise ValueError(f"{args.referee}: {exc.details()}") from None
    sys.stdout.buffer.write(reply.stderr)
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
    submit = bot_sub.add_parser(
        "submit",
        help="send a bot's code for the referee to keep and run (a hosted bot: no process "
        "of yours needed)",
    )
    submit.add_argument("name", help="the bot's name (a new one, or one whose token you have)")
    submit.add_argument(
        "path", help="a bot file NAME.py, or an archive (.zip, .tar.gz) with arena-bot.toml"
    )
    submit.add_argument("--referee", default="127.0.0.1:50051", help=REFEREE_HELP)
    secret_argument(submit, "--token", TOKEN_ENV, "a token of the bot: a new version of it")
    submit.add_argument(
        "--token-file",
        metavar="PATH",
        help="read the token from PATH; for a new name, where its token is kept",
    )
    secret_argument(
        submit, "--key", REGISTRATION_KEY_ENV, "the registration key, for a new name if closed"
    )
    submit.add_argument(
        "--game", action="append", default=[], help="a game it plays (repeat; each is checked)"
    )
    submit.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for the check"
    )
    submit.set_defaults(func=cmd_bot_submit)
    listing = bot_sub.add_parser(
        "list", help="a referee's bots: connected, hosted (digest, size), versions"
    )
    listing.add_argument("--referee", default="127.0.0.1:50051", help=REFEREE_HELP)
    json_option(listing)
    listing.set_defaults(func=cmd_bot_list)
    logs = bot_sub.add_parser("log", help="your hosted bot's stderr of one match")
    logs.add_argument("match_id")
    logs.add_argument("seat", type=int)
    logs.add_argument("--referee", default="127.0.0.1:50051", help=REFEREE_HELP)
    secret_argument(logs, "--token", TOKEN_ENV, "a token of the bot")
    logs.add_argument("--token-file", metavar="PATH", help="read the token from PATH")
    logs.set_defaults(func=cmd_bot_log)
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
