"""``arena referee``, ``arena health`` and ``arena match``: a referee, whether it serves,
and matches run or watched on it."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.cli.args import (
    DECISION_MS_HELP,
    ORGANISER_KEY_ENV,
    REFEREE_HELP,
    REGISTRATION_KEY_ENV,
    TIME_BANK_MS_HELP,
    non_negative_int,
    output_file,
    port_number,
    positive_float,
    positive_int,
    rule_options,
    secret_argument,
    stored_options,
)
from arena.engine.seeds import seed_argument


def cmd_referee(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from arena.referee.server import RefereeConfig, check_port_free, serve
    from arena.store import Store

    check_port_free(args.host, args.port)  # before the store (and its log) is opened
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    # Alembic names each of its plugins at INFO on every migration: noise to an operator
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    config = RefereeConfig(
        idle_timeout_s=args.idle_timeout,
        max_queued_bytes=args.max_queued_bytes,
        decision_ms=args.decision_ms,
        time_bank_ms=args.time_bank_ms,
        grace_s=args.grace,
        max_strikes=args.max_strikes,
        open_registration=not args.registration_key,
        registration_key=args.registration_key or "",
        organiser_key=args.organiser_key or "",
        tournament_workers=args.tournament_workers,
        max_spectators_per_match=args.max_spectators_per_match,
        max_spectators_per_peer=args.max_spectators_per_peer,
        max_connections_per_peer=args.max_connections_per_peer,
        max_connections=args.max_connections,
        max_streams_per_connection=args.max_streams_per_connection,
        max_new_streams_per_s=args.max_new_streams_per_s,
        max_messages_per_peer_s=args.max_messages_per_peer,
        max_connects_per_peer_s=args.max_connects_per_peer,
        max_queued_bytes_per_peer=args.max_queued_bytes_per_peer,
        max_closed_per_peer=args.max_closed_per_peer,
        max_submission_bytes=args.max_submission_bytes,
        hosted_isolation=args.hosted_isolation,
    )
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: serve() has shut down cleanly
        asyncio.run(
            serve(
                f"{args.host}:{args.port}",
                Store(args.db),
                config,
                shutdown_grace_s=args.shutdown_grace,
                unix_socket=args.unix,
            )
        )
    return 0


def arena_stub(address: str) -> Any:
    import grpc

    from arena.v1 import arena_pb2_grpc

    return arena_pb2_grpc.ArenaServiceStub(grpc.insecure_channel(address))


def organiser_metadata(key: str | None) -> list[tuple[str, str]]:
    """The call metadata that shows a referee its organiser key (none without a key)."""
    return [("authorization", f"Bearer {key}")] if key else []


def absent_bots(stub: Any, players: Sequence[str]) -> list[str]:
    """Which of ``players`` (registered bots, ``NAME`` or ``NAME@VERSION``; house bots
    and hosted ones are always there) have no live connection to the referee of ``stub``:
    seated, each would wait out its grace period and forfeit."""
    from arena.v1 import arena_pb2 as pb

    names = [p for p in players if not p.startswith(("house:", "file:", "hosted:"))]
    if not names:
        return []
    bots = stub.ListBots(pb.ListBotsRequest(), timeout=30).bots
    newest: dict[str, Any] = {}
    exact: dict[str, Any] = {}
    for bot in bots:
        exact[f"{bot.name}@{bot.version}"] = bot
        if not bot.revoked and (bot.name not in newest or bot.version > newest[bot.name].version):
            newest[bot.name] = bot
    absent = []
    for name in names:
        bot = exact.get(name) if "@" in name else newest.get(name)
        if bot is not None and not bot.connected:
            absent.append(f"{bot.name}@{bot.version}")
    return absent  # an unknown name is the referee's to refuse, with its own reason


def cmd_match_run(args: argparse.Namespace) -> int:
    import grpc

    from arena.v1 import arena_pb2 as pb

    request = pb.RunMatchRequest(
        game=args.game,
        variants=args.variant,
        options=stored_options(args),
        players=[p.strip() for p in args.players.split(",")],
        seed=args.seed,
        wait=False,
        decision_ms=args.decision_ms,
    )
    metadata = organiser_metadata(args.organiser_key)
    stub = arena_stub(args.referee)
    try:
        absent = absent_bots(stub, request.players)
        if absent:  # before any match: seated, each would only forfeit
            raise ValueError(
                f"not connected to {args.referee}: {', '.join(absent)} (start each bot "
                "process first)"
            )
        # started first, so that its id is known while it plays (to watch it), then
        # asked again by its id, waiting for its end (the same match: nothing replayed)
        request.match_id = stub.RunMatch(request, metadata=metadata).match_id
        print(
            f"match {request.match_id} started on {args.referee}; watch it live with "
            f"`arena match watch {request.match_id} --referee {args.referee}`",
            flush=True,
        )
        request.wait = True
        reply = stub.RunMatch(request, metadata=metadata)
    except grpc.RpcError as exc:
        raise ValueError(f"{args.referee}: {exc.details()}") from None
    info = reply.match
    _print_match_info(info)
    if args.replay and info.replay_json:
        from arena.engine import replay

        size = replay.save_text(info.replay_json, args.replay)
        print(f"replay: {args.replay} ({size:,} bytes)")
    # a script must see a match that did not finish (aborted: no result, nothing rated)
    return 0 if info.status == "finished" else 1


def _print_match_info(info: Any) -> None:
    """How a match ended (a ``MatchInfo``): result, seed if shown, places, forfeits."""
    from arena.engine.core import ending_said

    if info.status == "finished":
        how = ending_said(info.result.reason)
        print(f"match {info.match_id}: finished, {how}: {info.result.detail}")
    else:  # aborted (or failed): no result, nothing rated
        print(f"match {info.match_id}: {info.status}: no result ({info.result.detail})")
    if info.HasField("seed"):  # the organiser's, once the match has ended
        print(f"  seed {info.seed}")
    for seat, name in enumerate(info.players):
        place = info.result.places[seat] if seat < len(info.result.places) else "-"
        print(f"  seat {seat}: {name} place {place}")
    for forfeit in info.result.forfeits:
        print(f"  seat {forfeit.seat} forfeited: {forfeit.why}")


#: event fields that hold a seat
SEAT_FIELDS = ("p", "by")


def event_line(event: dict[str, Any], players: Sequence[str]) -> str:
    """One public event as a line: who, what, and its fields (seats named)."""
    import json

    def seat(value: Any) -> str:
        if isinstance(value, int) and 0 <= value < len(players):
            return f"{players[value]} (seat {value})"
        return str(value)

    fields = {k: v for k, v in event.items() if k not in ("e", "p")}
    details = " ".join(
        f"{k}={seat(v) if k in SEAT_FIELDS else json.dumps(v, separators=(',', ':'))}"
        for k, v in fields.items()
    )
    who = f"{seat(event['p'])}: " if "p" in event else ""
    return f"{who}{event.get('e', '?')} {details}".rstrip()


def cmd_match_watch(args: argparse.Namespace) -> int:
    """Print a live match's public events as they happen, then how it ended."""
    import json

    import grpc

    from arena.v1 import arena_pb2 as pb

    metadata = organiser_metadata(args.organiser_key)
    stub = arena_stub(args.referee)
    try:
        info = stub.GetMatch(pb.GetMatchRequest(match_id=args.match_id), timeout=30)
        players = list(info.players)
        seats = ", ".join(f"{seat}:{name}" for seat, name in enumerate(players))
        print(f"match {args.match_id}: {info.game}, seats {seats}", flush=True)
        stream = stub.WatchMatch(pb.WatchMatchRequest(match_id=args.match_id), metadata=metadata)
        for message in stream:
            if message.HasField("finished"):
                _print_match_info(message.finished)
                return 0
            for text in message.events.events_json:
                print(event_line(json.loads(text), players), flush=True)
    except grpc.RpcError as exc:
        raise ValueError(f"{args.referee}: {exc.details()}") from None
    except KeyboardInterrupt:
        return 130  # the watcher's choice: no traceback, no message
    raise ValueError(f"{args.referee}: the stream of match {args.match_id} ended before the match")


def cmd_health(args: argparse.Namespace) -> int:
    """Exit 0 when the referee's gRPC health service says SERVING."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    try:
        with grpc.insecure_channel(args.referee) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=args.timeout
            )
    except grpc.RpcError as exc:
        print(f"{args.referee}: {exc.code().name}", file=sys.stderr)
        return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(f"{args.referee}: {status}")
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1


def proto_file() -> Path:
    """The wire contract, shipped in the package: ``arena/v1/arena.proto`` under its
    import root (``arena/proto``)."""
    from importlib import resources

    return Path(str(resources.files("arena") / "proto" / "arena" / "v1" / "arena.proto"))


def cmd_proto(args: argparse.Namespace) -> int:
    """The .proto of the protocol, for bots in other languages: its path, the directory
    protoc imports it from, or its text."""
    path = proto_file()
    if not path.is_file():
        raise OSError(f"{path}: missing from this installation of Arena (reinstall it)")
    if args.path:
        print(path)
    elif args.include:
        print(path.parents[2])
    else:
        sys.stdout.write(path.read_text())
    return 0


def add_parsers(sub: Any) -> None:
    ref = sub.add_parser("referee", help="run a referee that bots connect to")
    ref.add_argument("--host", default="127.0.0.1", help="address to listen on")
    ref.add_argument("--port", type=port_number, default=50051, help="port to listen on")
    ref.add_argument(
        "--unix",
        metavar="PATH",
        help="also listen on this Unix socket: sandboxed bots connect there (it is bound "
        "into their sandbox, which has no network; docs/hosting.md)",
    )
    ref.add_argument("--db", default="arena.db", help="SQLite file or database URL")
    ref.add_argument(
        "--decision-ms",
        type=positive_int,
        default=5000,
        help="milliseconds a bot has for each decision, unless a match says otherwise",
    )
    ref.add_argument("--time-bank-ms", type=non_negative_int, default=30000, help=TIME_BANK_MS_HELP)
    ref.add_argument(
        "--grace",
        type=positive_float,
        default=10.0,
        help="seconds a disconnected bot has to come back",
    )
    ref.add_argument(
        "--max-strikes",
        type=positive_int,
        default=5,
        help="timeouts and refused actions after which a bot forfeits its match",
    )
    ref.add_argument(
        "--idle-timeout",
        type=positive_float,
        default=10.0,
        help="seconds a connection may carry no stream, or a stream no Hello (default 10)",
    )
    ref.add_argument(
        "--max-queued-bytes",
        type=positive_int,
        default=8 << 20,
        help="bytes that may wait for a bot that does not read before its stream ends "
        "(default 8 MiB)",
    )
    ref.add_argument(
        "--max-submission-bytes",
        type=positive_int,
        default=16 << 20,
        help="bytes a submitted bot (SubmitBot) may have, refused past it as they arrive "
        "(default 16 MiB)",
    )
    ref.add_argument(
        "--hosted-isolation",
        choices=("sandbox", "process"),
        default="sandbox",
        help="how submitted bots run: sandbox (bubblewrap, the default), or process where "
        "bubblewrap cannot run (a plain subprocess: shares no memory, but can read your "
        "files and reach the network; trusted code only)",
    )
    ref.add_argument(
        "--max-spectators-per-match",
        type=positive_int,
        default=64,
        help="WatchMatch streams one match may have (default 64)",
    )
    ref.add_argument(
        "--max-spectators-per-peer",
        type=positive_int,
        default=32,
        help="WatchMatch streams from one address, over all matches (default 32)",
    )
    ref.add_argument(
        "--max-connections-per-peer",
        type=positive_int,
        default=128,
        help="TCP connections from one address (default 128)",
    )
    ref.add_argument(
        "--max-connections",
        type=non_negative_int,
        default=0,
        help="TCP connections in all (default 0: the open-files limit less 256)",
    )
    ref.add_argument(
        "--max-streams-per-connection",
        type=positive_int,
        default=100,
        help="calls open at once on one connection (default 100)",
    )
    ref.add_argument(
        "--max-new-streams-per-s",
        type=positive_float,
        default=200.0,
        help="calls one connection may open a second before it is closed (default 200)",
    )
    ref.add_argument(
        "--max-messages-per-peer",
        type=positive_int,
        default=400,
        help="unsolicited messages (pings, stale replies) a second from all the bots of one "
        "address (default 400)",
    )
    ref.add_argument(
        "--max-connects-per-peer",
        type=positive_float,
        default=5.0,
        help="new bot streams a second from one address, ten times as many at once (default 5)",
    )
    ref.add_argument(
        "--max-queued-bytes-per-peer",
        type=positive_int,
        default=32 << 20,
        help="bytes that may wait for all the bots of one address that do not read "
        "(default 32 MiB)",
    )
    ref.add_argument(
        "--max-closed-per-peer",
        type=non_negative_int,
        default=16,
        help="connections of one address the referee may close in a minute (GOAWAY, idle) "
        "before the address is banned for a minute (default 16; 0: never)",
    )
    ref.add_argument(
        "--shutdown-grace",
        type=positive_float,
        default=10.0,
        help="on SIGTERM/SIGINT, seconds matches in flight get to finish",
    )
    secret_argument(
        ref, "--registration-key", REGISTRATION_KEY_ENV, "close registration: bots need this key"
    )
    secret_argument(
        ref, "--organiser-key", ORGANISER_KEY_ENV, "needed to run matches and revoke bots"
    )
    ref.add_argument(
        "--tournament-workers",
        type=positive_int,
        default=1,
        help="processes for the house-bot matches of tournaments it plays (default 1)",
    )
    ref.set_defaults(func=cmd_referee)

    match = sub.add_parser("match", help="matches on a referee")
    match_sub = match.add_subparsers(dest="match_command", required=True)
    mrun = match_sub.add_parser("run", help="run one match and wait for its result")
    mrun.add_argument("game")
    mrun.add_argument(
        "--players", required=True, help="registered bot names or house:NAME, in seat order"
    )
    mrun.add_argument("--referee", default="127.0.0.1:50051", help=REFEREE_HELP)
    mrun.add_argument(
        "--seed",
        type=seed_argument,
        default=None,
        help="the match seed (default: the referee draws a secret one)",
    )
    rule_options(mrun)
    mrun.add_argument("--decision-ms", type=non_negative_int, default=0, help=DECISION_MS_HELP)
    secret_argument(
        mrun, "--organiser-key", ORGANISER_KEY_ENV, "the referee's organiser key, if it has one"
    )
    mrun.add_argument(
        "--replay", type=output_file, help="write the replay to this file (.gz compresses)"
    )
    mrun.set_defaults(func=cmd_match_run)
    mwatch = match_sub.add_parser(
        "watch", help="print a live match's public events as they happen, then its result"
    )
    mwatch.add_argument("match_id")
    mwatch.add_argument("--referee", default="127.0.0.1:50051", help=REFEREE_HELP)
    secret_argument(
        mwatch, "--organiser-key", ORGANISER_KEY_ENV, "shows the replay and seed at the end"
    )
    mwatch.set_defaults(func=cmd_match_watch)

    proto = sub.add_parser(
        "proto", help="the protocol's .proto, to generate a bot's stubs in another language"
    )
    shown = proto.add_mutually_exclusive_group()
    shown.add_argument("--path", action="store_true", help="print its path instead of its text")
    shown.add_argument(
        "--include",
        action="store_true",
        help="print the directory to import it from (protoc -I DIR arena/v1/arena.proto)",
    )
    proto.set_defaults(func=cmd_proto)

    health = sub.add_parser("health", help="is a referee serving? (exit status 0 if so)")
    health.add_argument("--referee", default="127.0.0.1:50051", help=REFEREE_HELP)
    health.add_argument(
        "--timeout", type=positive_float, default=5.0, help="seconds to wait for an answer"
    )
    health.set_defaults(func=cmd_health)
