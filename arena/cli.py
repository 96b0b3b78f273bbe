"""The ``arena`` command line."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena.engine.core import IllegalAction
from arena.engine.match import BotError, MatchRecord, play_match
from arena.engine.seeds import HOUSE_SEED_HELP, fresh_seed, house_bot_seed, seed_argument

VARIANT_HELP = "a variant (repeatable); see `arena variants`"
OPTION_HELP = "a rule option NAME=VALUE, or a flag NAME (repeatable); see `arena variants`"
REFEREE_HELP = "the referee's address, HOST:PORT"
DECISION_MS_HELP = "milliseconds a bot has for each decision (0: the referee's default)"
TIME_BANK_MS_HELP = "milliseconds a bot may overrun its decisions by, in all, in one match"
GAMES_PER_PAIRING_HELP = "matches each pairing (each set of bots at one table) plays"
NAME_HELP = "the tournament's name (default: the game with its format, or with --every)"
TOURNAMENT_TIME_BANK_HELP = "a bot's time bank in each match, milliseconds (0: the referee's)"
#: `arena compare` shows an Elo difference beyond this as "> +1000" (or "< -1000")
ELO_SHOWN = 1000
TOURNAMENT_SEED_HELP = (
    "the tournament seed, from which every match seed derives (default: a fresh secret one "
    "from the operating system)"
)


def _parse_options(pairs: Sequence[str]) -> dict[str, str | None]:
    """``NAME=VALUE`` pairs; a bare ``NAME`` is a flag (None), resolved by the game."""
    options: dict[str, str | None] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not name:
            raise ValueError(f"--option {pair!r}: expected NAME=VALUE or a flag NAME")
        options[name] = value if sep else None
    return options


def _number(kind: type, least: float, most: float | None, expected: str) -> Callable[[str], Any]:
    """An argparse type: a number from ``least`` (to ``most``), else one clear line."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or value < least or (most is not None and value > most):
            raise argparse.ArgumentTypeError(f"{text!r}: expected {expected}")
        return value

    return parse


positive_int = _number(int, 1, None, "a whole number, 1 or more")
non_negative_int = _number(int, 0, None, "a whole number, 0 or more")
positive_float = _number(float, 1e-9, None, "a number of seconds above 0")
port_number = _number(int, 0, 65535, "a port number from 0 (any free port) to 65535")


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` shows every option's default, except where there is none to show (no
    value, a switch that is off, an empty list) or its help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        default = action.default
        if default is None or default is False or default == [] or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """A usage error is one line (naming the command and where to read more), not the
    whole usage text above it. Every command's help shows its options' defaults."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _DefaultsFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _stored_options(args: argparse.Namespace) -> dict[str, str]:
    """``--option`` pairs as a replay or a tournament keeps them: every bare flag replaced
    by what it means (``name=on``, or the option it aliases), never a null. A game this
    installation does not know is left to whoever plays it (a bare flag becomes ``on``)."""
    from arena.plugins import load_registry

    options = _parse_options(args.option)
    registry = load_registry()
    try:
        game = registry.game(args.game)
        variants = registry.resolve_variants(args.game, args.variant)
    except (KeyError, ValueError):
        return {k: "on" if v is None else v for k, v in options.items()}
    registry.check_options(args.game, options, variants)
    return game.resolve_flags(options, variants)


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
    args: argparse.Namespace, names: list[str], options: dict[str, str], seed: int
) -> MatchRecord:
    """Start a referee here, wait for the remote bots to connect, play, and stop."""
    import asyncio

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
                        seed=seed,
                        options=options,
                    )
                )
                await match.done.wait()
                record = match.full_record()
                record.players = names
                record.final_state = match.state
                return record
            finally:
                await referee.shutdown(grace_s=1)
                await server.stop(grace=1)

    rec = asyncio.run(play())
    if rec.result is None:
        raise ValueError("the match was aborted")
    return rec


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
            players.append(files[name].player(context))
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
    options = _stored_options(args)
    # printed with the result: --seed plays the same game again
    seed = fresh_seed() if args.seed is None else args.seed
    if any(name.startswith(REMOTE) for name in names):
        from arena.sdk.local import is_bot_file

        if any(is_bot_file(name) for name in names):
            raise ValueError(
                "a bot file plays in process only, not with remote: seats; run it as a "
                "process (python NAME.py --referee ... --token ...) as remote:NAME"
            )
        rec = _play_with_remote_bots(args, names, options, seed)
    else:
        players, names = _in_process_players(registry, args, names, seed, options)
        rec = play_match(game, players, seed, options, variants, names=names)
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


def cmd_replay_export(args: argparse.Namespace) -> int:
    """Write a finished match's replay: from the store (--db, as the organiser: a running
    tournament's replays too) or from a referee (--referee: GetMatch, with its rules)."""
    import gzip

    text = _referee_replay(args) if args.referee else _stored_replay(args)
    if args.output in (None, "-"):
        sys.stdout.write(text.rstrip("\n") + "\n")
        return 0
    data = text.encode()
    if args.output.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    Path(args.output).write_bytes(data)
    print(f"replay of {args.match_id}: {args.output} ({len(data):,} bytes)")
    return 0


def _stored_replay(args: argparse.Namespace) -> str:
    store = _store(args)
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

    metadata = [("authorization", f"Bearer {args.organiser_key}")] if args.organiser_key else []
    try:
        info = _arena_stub(args.referee).GetMatch(
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


def keep_secret(path: Path, make: Callable[[], str]) -> str:
    """``make()`` a secret and keep it in ``path``: readable by its owner only, written
    whole or not at all (a crash leaves no half token for the next start to read).

    The file is created before ``make`` runs, so that a path that cannot be written
    fails before a bot version exists (a container restarting in a loop would register
    one at every start). It is a new file (never one planted at a known name), renamed
    into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            secret = make()
            out.write(secret + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
    return secret


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


def cmd_match_run(args: argparse.Namespace) -> int:
    import grpc

    from arena.v1 import arena_pb2 as pb

    request = pb.RunMatchRequest(
        game=args.game,
        variants=args.variant,
        options=_stored_options(args),
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
    _print_match_info(info)
    if args.replay and info.replay_json:
        with open(args.replay, "w") as f:
            f.write(info.replay_json)
        print(f"replay: {args.replay}")
    return 0


def _print_match_info(info: Any) -> None:
    """How a match ended (a ``MatchInfo``): result, seed if shown, places, forfeits."""
    print(f"match {info.match_id}: {info.status}, {info.result.reason}: {info.result.detail}")
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

    metadata = [("authorization", f"Bearer {args.organiser_key}")] if args.organiser_key else []
    stub = _arena_stub(args.referee)
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


# --- tournaments, leaderboards, bots -----------------------------------------------------


def _store(args: argparse.Namespace, create: bool = True) -> Any:
    """``create`` off for commands that only read: they make no empty database."""
    from arena.store import Store

    return Store(args.db, create=create)


def _check_game(game: str, variants: Sequence[str] = ()) -> None:
    """An unknown game or variant is refused, not shown as an empty table."""
    from arena.plugins import load_registry

    registry = load_registry()
    registry.game(game)
    registry.resolve_variants(game, variants)


def _board_title(game: str, variants: str) -> str:
    return f"{game} ({variants.replace('+', ', ') if variants else 'classic'})"


class ProgressBar:
    """One line redrawn in place on a terminal; a line now and then in a log."""

    def __init__(self, stream: Any = None, width: int = 30) -> None:
        import time

        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.width = width
        self._last = 0.0
        self._clock = time.monotonic

    def __call__(self, progress: Any) -> None:
        now = self._clock()
        done = progress.finished >= progress.total
        if not self.tty and not done and now - self._last < 5.0:
            return
        self._last = now
        filled = self.width * progress.finished // max(progress.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = now - progress.started
        rate = (progress.finished or 1) / max(elapsed, 1e-9)
        left = (progress.total - progress.finished) / rate if progress.finished else 0
        leader = ""
        if progress.live:
            best = max(progress.live, key=progress.live.__getitem__)
            leader = f"  leader {best} ({progress.live[best]:.0f})"
        problems = f"  {progress.problems} retried/failed" if progress.problems else ""
        line = (
            f"[{bar}] {progress.finished}/{progress.total} matches"
            f"  {elapsed:.0f}s elapsed, ~{left:.0f}s left{problems}{leader}"
        )
        if self.tty:
            self.stream.write("\r" + line[:160].ljust(160) + ("\n" if done else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def _executor(args: argparse.Namespace, store: Any) -> Any:
    from arena.tournament.executor import LocalExecutor, RefereeClient

    if args.executor == "celery":
        from arena.tournament.distributed import CeleryExecutor, Settings

        # the client follows the matches in the store it was given (--db)
        return CeleryExecutor(Settings.from_env(), store=store)
    referee = RefereeClient(args.referee, args.organiser_key or "") if args.referee else None
    return LocalExecutor(workers=args.workers, referee=referee)


def parse_duration(text: str) -> int:
    """Seconds in ``90``, ``90s``, ``10m``, ``6h`` or ``1d``."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    text = text.strip().lower()
    number, unit = (text[:-1], text[-1]) if text and text[-1] in units else (text, "s")
    try:
        seconds = float(number) * units[unit]
    except ValueError:
        raise ValueError(f"--every {text!r}: expected e.g. 90s, 10m, 6h or 1d") from None
    if seconds < 1:
        raise ValueError(f"--every {text!r}: at least one second")
    return int(seconds)


def cmd_tournament_create(args: argparse.Namespace) -> int:
    """A recurring tournament (``--every``), or one tournament queued for the workers."""
    import uuid
    from datetime import UTC, datetime, timedelta

    from arena.plugins import load_registry
    from arena.store import RecurringRow
    from arena.tournament.runner import TournamentSpec, check_spec, create_tournament

    options = _stored_options(args)
    bots = [b.strip() for b in (args.bots or "").split(",") if b.strip()]
    if args.every:
        if args.seed is not None:
            raise ValueError(
                f"--seed {args.seed} with --every: every run draws its own secret seed"
            )
        every = parse_duration(args.every)
        registry = load_registry()
        game = registry.game(args.game)
        variants = registry.resolve_variants(args.game, args.variant)
        registry.check_options(args.game, options, variants)
        game.parse_options(options, variants)
        game.new_state(args.seats, 0, options, variants)  # the seats fit the game
        house = []
        for bot in bots:
            name = bot.removeprefix("house:")
            registry.bot(args.game, name)  # recurring runs add house bots only by name
            house.append(name)
        first = datetime.now(UTC) + timedelta(seconds=0 if args.now else every)
        extra = f", plus house bots {', '.join(house)}" if house else ""
        row = _store(args).add_recurring(
            RecurringRow(
                id=uuid.uuid4().hex[:12],
                name=args.name or f"{args.game} every {args.every}",
                game=args.game,
                variants=[v.name for v in variants],
                options=options,
                seats=args.seats,
                games_per_pairing=args.games_per_pairing,
                house_bots=house,
                decision_ms=args.decision_ms,
                time_bank_ms=args.time_bank_ms,
                every_s=every,
                next_run=first,
                runs=0,
                enabled=True,
                created=datetime.now(UTC),
            )
        )
        print(
            f"recurring tournament {row.id}: {row.name}, every {every} s, first run at "
            f"{first:%Y-%m-%d %H:%M:%S} UTC (Celery beat creates each run: every registered "
            f"bot that plays {args.game}, newest version{extra})"
        )
        return 0
    if not bots:
        raise ValueError("--bots is needed (or --every for a recurring tournament)")
    spec = TournamentSpec(
        game=args.game,
        bots=bots,
        seats=args.seats,
        games_per_pairing=args.games_per_pairing,
        variants=args.variant,
        options=options,
        seed=args.seed,
        name=args.name or "",
        decision_ms=args.decision_ms,
        time_bank_ms=args.time_bank_ms,
    )
    check_spec(spec)  # before the store: a refused tournament leaves no database behind
    store = _store(args)
    tournament = create_tournament(store, spec)
    from arena.tournament.distributed import CeleryExecutor, queue_tournament

    app = CeleryExecutor().app
    queue_tournament(
        store, tournament.id, lambda tid: app.send_task("arena.schedule_tournament", args=[tid])
    )
    print(f"tournament {tournament.id}: queued for the workers")
    print(f"follow it with: arena tournament show {tournament.id}")
    return 0


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


def _run_and_report(args: argparse.Namespace, store: Any, tournament: Any) -> int:
    from arena.store import variant_key
    from arena.tournament.leaderboard import compute, render
    from arena.tournament.runner import run_tournament

    progress = None if args.quiet else ProgressBar()
    _remember_run(args, store, tournament)
    resume = f"`arena tournament resume {tournament.id}`"
    if args.organiser_key:  # never stored: the resume needs it again
        resume = (
            f"`arena tournament resume {tournament.id} --organiser-key KEY` "
            "(the key is not stored; ARENA_ORGANISER_KEY in the environment will do too)"
        )
    executor = _executor(args, store)
    try:
        summary = run_tournament(store, tournament.id, executor, progress=progress)
    except KeyboardInterrupt:
        print(f"\nstopped: resume with {resume}", file=sys.stderr)
        return 130
    finally:
        executor.close()
    print(
        f"tournament {summary.tournament_id}: {summary.status}, {summary.finished}/"
        f"{summary.total} matches finished ({summary.played} in this run)"
    )
    for match_id, why in sorted(summary.errors.items())[:10]:
        print(f"  not played: {match_id}: {why.splitlines()[0] if why else '?'}")
    if summary.status != "finished":
        print(f"resume with: {resume}")
    variants = variant_key(tournament.variants)
    rows = compute(store, tournament.game, variants, tournament_id=tournament.id)
    title = _board_title(tournament.game, variants)
    print()
    print(render(rows, f"tournament {tournament.id}: {title}"))
    return 0 if summary.status == "finished" else 1


def _remember_run(args: argparse.Namespace, store: Any, tournament: Any) -> None:
    """Settle how the tournament is played and store it (the key only as a yes or no):
    what a resume does not name is played as the last run played it."""
    if tournament.executor:
        args.executor = args.executor or tournament.executor
        args.workers = tournament.workers if args.workers is None else args.workers
        args.referee = args.referee or tournament.referee
    args.executor = args.executor or ("celery" if os.environ.get("ARENA_BROKER_URL") else "local")
    args.workers = (os.cpu_count() or 1) if args.workers is None else args.workers
    args.organiser_key = args.organiser_key or os.environ.get("ARENA_ORGANISER_KEY", "")
    keyed = tournament.organiser_key and args.referee == tournament.referee
    if keyed and not args.organiser_key:
        raise ValueError(
            f"tournament {tournament.id} plays through the referee {args.referee}, which "
            "needs the organiser key: give it with --organiser-key KEY or ARENA_ORGANISER_KEY "
            "(it is never stored)"
        )
    store.set_tournament_run(
        tournament.id, args.executor, args.workers, args.referee, bool(args.organiser_key)
    )


def cmd_tournament_run(args: argparse.Namespace) -> int:
    from arena.tournament.runner import TournamentSpec, check_spec, create_tournament

    if args.resume:
        return cmd_tournament_resume(args)
    if not args.game or not args.bots:
        raise ValueError("--game and --bots are needed (or --resume ID)")
    options = _stored_options(args)
    spec = TournamentSpec(
        game=args.game,
        bots=[b.strip() for b in args.bots.split(",") if b.strip()],
        seats=args.seats,
        games_per_pairing=args.games_per_pairing,
        variants=args.variant,
        options=options,
        seed=args.seed,
        format="gauntlet" if args.challenger else "round-robin",
        challenger=args.challenger,
        name=args.name or "",
        decision_ms=args.decision_ms,
        time_bank_ms=args.time_bank_ms,
    )
    check_spec(spec)  # before the store: a refused tournament leaves no database behind
    store = _store(args)
    tournament = create_tournament(store, spec)
    total = sum(store.progress(tournament.id).values())
    print(f"tournament {tournament.id}: {tournament.name}, {total} matches")
    return _run_and_report(args, store, tournament)


def cmd_tournament_resume(args: argparse.Namespace) -> int:
    store = _store(args, create=False)
    tournament_id = args.resume if getattr(args, "resume", None) else args.id
    tournament = store.tournament(tournament_id)
    if tournament is None:
        raise ValueError(f"no tournament {tournament_id!r} in {args.db}")
    left = sum(n for status, n in store.progress(tournament.id).items() if status != "finished")
    print(f"tournament {tournament.id}: resuming, {left} matches to play")
    return _run_and_report(args, store, tournament)


def cmd_tournament_show(args: argparse.Namespace) -> int:
    from arena.store import variant_key
    from arena.tournament.leaderboard import compute, render

    store = _store(args, create=False)
    t = store.tournament(args.id)
    if t is None:
        raise ValueError(f"no tournament {args.id!r} in {args.db}")
    if args.json:
        return _tournament_json(store, t)
    counts = store.progress(t.id)
    total = sum(counts.values())
    print(f"tournament {t.id}: {t.name}")
    print(f"  game: {_board_title(t.game, variant_key(t.variants))}")
    if t.options:
        print("  options: " + ", ".join(f"{k}={v}" for k, v in sorted(t.options.items())))
    print(f"  {t.format}, {t.seats} seats, {t.games_per_pairing} games per pairing, seed {t.seed}")
    print(
        f"  status: {t.status}; matches: "
        + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        + f" (of {total})"
    )
    entries = store.entries(t.id)
    print(
        "  bots: " + ", ".join(e.label + (" (challenger)" if e.challenger else "") for e in entries)
    )
    running = store.tournament_matches(t.id, statuses=["running"])
    if running:
        # what an operator needs to see a stall: how long, who plays it, where
        print("  running now:")
        for m in running:
            print("    " + _running_line(m))
    if args.matches:
        print()
        for m in store.tournament_matches(t.id):
            places = m.result["places"] if m.result and m.status == "finished" else []
            seated = ", ".join(
                f"{p}" + (f" ({places[i]})" if places else "") for i, p in enumerate(m.players)
            )
            extra = f"  [{m.error.splitlines()[0]}]" if m.error and m.status != "finished" else ""
            print(f"  {m.id}  {m.status:<8}  {seated}{extra}")
    print()
    rows = compute(store, t.game, variant_key(t.variants), tournament_id=t.id)
    print(render(rows, "standings in this tournament:"))
    return 0


def _print_json(document: Any) -> int:
    """``--json``: one JSON document on stdout (infinite numbers, which JSON lacks, as null)."""
    import orjson

    print(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())
    return 0


def _tournament_json(store: Any, t: Any) -> int:
    """The web API's dict of the tournament (arena.web.data), and its seed: the text shows
    it to whoever reads the store, where the web hides it until the tournament ends."""
    from arena.web import data

    return _print_json({**data.tournament(store, t.id), "seed": str(t.seed)})


def _recurring_dict(r: Any) -> dict[str, Any]:
    from arena.store.db import as_utc

    return {
        "recurring_id": r.id,
        "name": r.name,
        "every_s": r.every_s,
        "next_run": as_utc(r.next_run).isoformat(timespec="seconds"),
        "runs": r.runs,
        "last_tournament_id": r.last_tournament_id,
        "enabled": r.enabled,
    }


def _recurring_line(r: Any) -> str:
    state = "" if r.enabled else " (paused)"
    return (
        f"recurring {r.id}  every {r.every_s} s  next {r.next_run:%Y-%m-%d %H:%M}  "
        f"{r.name}  ({r.runs} runs, last {r.last_tournament_id or '-'}){state}"
    )


def _running_line(match: Any) -> str:
    """A running match: its age, attempt, worker, referee and lease."""
    from arena.store.db import as_utc
    from arena.store.models import now

    moment = now()
    age = f"{(moment - as_utc(match.started)).total_seconds():.0f} s" if match.started else "?"
    line = f"{match.id}  for {age} (attempt {match.attempts})"
    line += f"  worker {match.worker or '-'}  referee {match.referee or 'in-process'}"
    if match.lease_until is not None:
        left = (as_utc(match.lease_until) - moment).total_seconds()
        line += f"  lease {left:.0f} s left" if left >= 0 else f"  lease lapsed {-left:.0f} s ago"
    return line


def cmd_tournament_list(args: argparse.Namespace) -> int:
    store = _store(args, create=False)
    if args.json:
        from arena.web import data

        recurring = [_recurring_dict(r) for r in store.recurring()]
        return _print_json({"recurring": recurring, "tournaments": data.tournaments(store)})
    for r in store.recurring():
        print(_recurring_line(r))
    rows = store.tournaments()
    if not rows:
        print("no tournaments yet")
    for t in rows:
        counts = store.progress(t.id)
        print(
            f"{t.id}  {t.status:<8}  {t.created:%Y-%m-%d %H:%M}  {t.name}  "
            f"({counts.get('finished', 0)}/{sum(counts.values())} matches)"
        )
    return 0


def cmd_recurring(args: argparse.Namespace) -> int:
    """Pause, resume or delete a recurring tournament (the store's own calls say how)."""
    from datetime import UTC, datetime

    store = _store(args, create=False)
    action = args.recurring_command
    if action == "pause":
        row = store.pause_recurring(args.id)
    elif action == "resume":
        row = store.resume_recurring(args.id, datetime.now(UTC))
    else:
        row = store.delete_recurring(args.id)
    if row is None:
        raise ValueError(
            f"no recurring tournament {args.id!r} in {args.db} (see `arena tournament list`)"
        )
    if action == "delete":
        print(f"deleted recurring {row.id} ({row.name}): no more runs; its {row.runs} runs stay")
    else:
        print(_recurring_line(row))
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from arena.store import variant_key
    from arena.tournament.leaderboard import refresh, render

    if args.game:
        _check_game(args.game, args.variant)
    store = _store(args, create=False)
    boards = store.boards()
    if args.game:
        wanted = variant_key(args.variant) if args.variant or not args.all_variants else None
        boards = [(g, v) for g, v in boards if g == args.game and (wanted is None or v == wanted)]
        if not boards and not args.json:
            print(render([], _board_title(args.game, variant_key(args.variant))))
            return 0
    if args.json:
        return _leaderboards_json(store, boards)
    if not boards:
        print(f"no finished matches in {args.db} yet")
    for index, (game, variants) in enumerate(boards):
        if index:
            print()
        print(render(refresh(store, game, variants), _board_title(game, variants)))
    return 0


def _leaderboards_json(store: Any, boards: Sequence[tuple[str, str]]) -> int:
    """The web API's leaderboard dicts (arena.web.data), stored as the text's are."""
    from arena.tournament.leaderboard import refresh
    from arena.web import data

    for game, variants in boards:
        refresh(store, game, variants)
    return _print_json({"boards": [data.leaderboard(store, g, v) for g, v in boards]})


def _elo_shown(elo: float) -> str:
    """An Elo difference for the text: beyond +-ELO_SHOWN (a perfect score's bound is
    infinite) it reads "> +1000", never "inf"."""
    if elo > ELO_SHOWN:
        return f"> +{ELO_SHOWN}"
    if elo < -ELO_SHOWN:
        return f"< -{ELO_SHOWN}"
    return f"{elo:+.0f}"


def cmd_compare(args: argparse.Namespace) -> int:
    from arena.plugins import load_registry
    from arena.ratings import head_to_head
    from arena.store import variant_key
    from arena.tournament.runner import resolve_bot

    _check_game(args.game, args.variant)
    store = _store(args, create=False)
    registry = load_registry()
    a = resolve_bot(store, registry, args.game, args.a)
    b = resolve_bot(store, registry, args.game, args.b)
    wins = draws = losses = games = 0
    for g in store.played(args.game, variant_key(args.variant)):
        if a.id in g.bot_ids and b.id in g.bot_ids:
            games += 1
            pa = g.places[g.bot_ids.index(a.id)]
            pb = g.places[g.bot_ids.index(b.id)]
            wins += pa < pb
            draws += pa == pb
            losses += pa > pb
    if args.json:
        return _compare_json(args, a.label, b.label, (wins, draws, losses))
    print(f"{a.label} against {b.label} in {_board_title(args.game, variant_key(args.variant))}:")
    if not games:
        print("  they have not met in a finished match yet")
        return 0
    h = head_to_head(wins, draws, losses, elo0=args.elo0, elo1=args.elo1)
    print(
        f"  {games} matches together; {a.label} placed ahead {wins}, level {draws}, behind {losses}"
    )
    print(
        f"  Elo difference: {_elo_shown(h.elo)} "
        f"(95% interval {_elo_shown(h.elo_low)} .. {_elo_shown(h.elo_high)})"
    )
    print(f"  likelihood of superiority: {h.los:.1%} that {a.label} is the stronger")
    s = h.sprt
    print(
        f"  SPRT elo0={s.elo0:g} elo1={s.elo1:g}: LLR {s.llr:+.2f} in ({s.lower:.2f}, "
        f"{s.upper:.2f}): {s.verdict}"
    )
    return 0


def _compare_json(args: argparse.Namespace, a: str, b: str, results: tuple[int, int, int]) -> int:
    """What `arena compare` prints, as numbers; null where there is none (no match yet, or
    an infinite Elo bound)."""
    import dataclasses

    from arena.ratings import head_to_head
    from arena.store import variant_key

    wins, draws, losses = results
    h = head_to_head(wins, draws, losses, elo0=args.elo0, elo1=args.elo1) if sum(results) else None
    return _print_json(
        {
            "a": a,
            "b": b,
            "game": args.game,
            "variants": variant_key(args.variant),
            "matches": sum(results),
            "wins": wins,
            "draws": draws,
            "losses": losses,
            "elo": h.elo if h else None,
            "elo_low": h.elo_low if h else None,
            "elo_high": h.elo_high if h else None,
            "los": h.los if h else None,
            "sprt": dataclasses.asdict(h.sprt) if h else None,
        }
    )


def cmd_bots_list(args: argparse.Namespace) -> int:
    store = _store(args, create=False)
    if args.json:
        from arena.web.data import bot_versions

        return _print_json({"bots": bot_versions(store)})
    rows = store.bots()
    if not rows:
        print(f"no bots in {args.db} yet: `arena bot register NAME` on a referee")
    for bot in rows:
        state = " (revoked)" if bot.revoked else ""
        print(f"{bot.label:<32} {bot.kind:<6} {bot.created:%Y-%m-%d %H:%M}  {bot.id}{state}")
    return 0


def cmd_web(args: argparse.Namespace) -> int:
    """Serve the web app (uvicorn) on the store, read-only, until interrupted."""
    import uvicorn

    from arena.web import create_app

    app = create_app(args.db, referee=args.referee)  # a bad store fails here, in one line
    print(f"arena web: http://{args.host}:{args.port}/ (store {args.db}, read-only)", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from arena import demo

    return demo.run(
        db=args.db,
        risk_games=args.risk_games,
        stratego_games=args.stratego_games,
        workers=args.workers,
        quiet=args.quiet,
    )


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


def _installed_version() -> str:
    """The installed package's version (its metadata), as pip shows it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("arena")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document instead of text (its shape: docs/tournaments.md)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="arena", description="AI bots play Risk and Stratego")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_installed_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

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
    export = rep_sub.add_parser(
        "export", help="write a finished match's replay (from the store, or a referee)"
    )
    export.add_argument("match_id")
    export.add_argument(
        "-o", "--output", help="the file to write (.gz compresses; default: standard output)"
    )
    export.add_argument(
        "--db",
        default=os.environ.get("ARENA_DB", "arena.db"),
        help="read the store directly, as its organiser (default $ARENA_DB or arena.db)",
    )
    export.add_argument("--referee", help="HOST:PORT: ask this referee instead (GetMatch)")
    export.add_argument("--organiser-key", help="with --referee: the referee's organiser key")
    export.set_defaults(func=cmd_replay_export)

    odds = sub.add_parser("odds", help="exact Risk battle odds")
    odds.add_argument(
        "attackers", type=int, help="attacking armies (not counting the one left behind)"
    )
    odds.add_argument("defenders", type=int, help="defending armies")
    odds.set_defaults(func=cmd_odds)

    variants = sub.add_parser("variants", help="list games, variants, options and bots")
    variants.set_defaults(func=cmd_variants)

    ref = sub.add_parser("referee", help="run a referee that bots connect to")
    ref.add_argument("--host", default="127.0.0.1", help="address to listen on")
    ref.add_argument("--port", type=port_number, default=50051, help="port to listen on")
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
        "--shutdown-grace",
        type=positive_float,
        default=10.0,
        help="on SIGTERM/SIGINT, seconds matches in flight get to finish",
    )
    ref.add_argument("--registration-key", help="close registration: bots need this key")
    ref.add_argument("--organiser-key", help="needed to run matches and revoke bots")
    ref.add_argument(
        "--tournament-workers",
        type=positive_int,
        default=1,
        help="processes for the house-bot matches of tournaments it plays (default 1)",
    )
    ref.set_defaults(func=cmd_referee)

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
    new.add_argument("name", help="the bot's name (letters, digits, '-', '_'); writes NAME.py")
    new.add_argument("--game", required=True, help="risk or stratego")
    new.set_defaults(func=cmd_bot_new)

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
    mrun.add_argument("--variant", action="append", default=[], help=VARIANT_HELP)
    mrun.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help=OPTION_HELP
    )
    mrun.add_argument("--decision-ms", type=non_negative_int, default=0, help=DECISION_MS_HELP)
    mrun.add_argument("--organiser-key", help="the referee's organiser key, if it has one")
    mrun.add_argument("--replay", help="write the replay to this file (.gz compresses)")
    mrun.set_defaults(func=cmd_match_run)
    mwatch = match_sub.add_parser(
        "watch", help="print a live match's public events as they happen, then its result"
    )
    mwatch.add_argument("match_id")
    mwatch.add_argument("--referee", default="127.0.0.1:50051", help=REFEREE_HELP)
    mwatch.add_argument("--organiser-key", help="shows the replay and seed at the end")
    mwatch.set_defaults(func=cmd_match_watch)

    def db_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--db",
            default=os.environ.get("ARENA_DB", "arena.db"),
            help="SQLite file or database URL (default: $ARENA_DB or arena.db)",
        )

    def run_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--workers",
            type=non_negative_int,
            default=None,
            help="worker processes for matches of house bots (default: one a core, or on "
            "a resume as many as the last run; 0: in this process)",
        )
        p.add_argument(
            "--referee",
            help="HOST:PORT of the referee where the registered bots connect "
            "(default on a resume: the last run's)",
        )
        p.add_argument(
            "--organiser-key",
            help="the referee's organiser key, if it has one (default: $ARENA_ORGANISER_KEY; "
            "never stored, so a resume needs it again)",
        )
        p.add_argument(
            "--executor",
            choices=("local", "celery"),
            default=None,
            help="local: worker processes here (default); celery: the Celery workers "
            "(default when ARENA_BROKER_URL is set); on a resume: the last run's",
        )
        p.add_argument("--quiet", action="store_true", help="no progress bar")
        db_option(p)

    tour = sub.add_parser("tournament", help="run, resume and show tournaments")
    tour_sub = tour.add_subparsers(dest="tournament_command", required=True)
    trun = tour_sub.add_parser("run", help="create a tournament and play it")
    trun.add_argument("--game", help="the game, e.g. risk (not with --resume)")
    trun.add_argument("--variant", action="append", default=[], help=VARIANT_HELP)
    trun.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help=OPTION_HELP
    )
    trun.add_argument(
        "--bots",
        help="comma-separated: registered NAME or NAME@VERSION, house:NAME, or a house "
        "bot's NAME when no registered bot has it",
    )
    trun.add_argument("--seats", type=positive_int, default=2, help="players a match (default 2)")
    trun.add_argument(
        "--games-per-pairing", type=positive_int, default=1, help=GAMES_PER_PAIRING_HELP
    )
    trun.add_argument("--seed", type=seed_argument, default=None, help=TOURNAMENT_SEED_HELP)
    trun.add_argument("--challenger", help="play a gauntlet: this bot against the others")
    trun.add_argument("--name", help=NAME_HELP)
    trun.add_argument(
        "--decision-ms", type=non_negative_int, default=0, help="0: the referee's default"
    )
    trun.add_argument(
        "--time-bank-ms", type=non_negative_int, default=0, help=TOURNAMENT_TIME_BANK_HELP
    )
    trun.add_argument("--resume", metavar="ID", help="resume this stopped tournament instead")
    run_options(trun)
    trun.set_defaults(func=cmd_tournament_run)
    tres = tour_sub.add_parser("resume", help="play what a stopped tournament has left")
    tres.add_argument("id")
    run_options(tres)
    tres.set_defaults(func=cmd_tournament_resume)
    tcreate = tour_sub.add_parser(
        "create",
        help="a recurring tournament (--every 6h, run by Celery beat), or one queued for "
        "the Celery workers",
    )
    tcreate.add_argument("--game", required=True, help="the game, e.g. risk")
    tcreate.add_argument("--variant", action="append", default=[], help=VARIANT_HELP)
    tcreate.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help=OPTION_HELP
    )
    tcreate.add_argument(
        "--bots",
        help="the bots; with --every, house bots to add to every registered bot of the game",
    )
    tcreate.add_argument("--seats", type=positive_int, default=2, help="players a match")
    tcreate.add_argument(
        "--games-per-pairing", type=positive_int, default=1, help=GAMES_PER_PAIRING_HELP
    )
    tcreate.add_argument("--seed", type=seed_argument, default=None, help=TOURNAMENT_SEED_HELP)
    tcreate.add_argument("--name", help=NAME_HELP)
    tcreate.add_argument("--decision-ms", type=non_negative_int, default=0, help=DECISION_MS_HELP)
    tcreate.add_argument(
        "--time-bank-ms", type=non_negative_int, default=0, help=TOURNAMENT_TIME_BANK_HELP
    )
    tcreate.add_argument("--every", help="run again and again: 90s, 10m, 6h, 1d")
    tcreate.add_argument("--now", action="store_true", help="with --every: first run at once")
    db_option(tcreate)
    tcreate.set_defaults(func=cmd_tournament_create)
    tshow = tour_sub.add_parser("show", help="a tournament's state and standings")
    tshow.add_argument("id", help="the tournament id (a unique prefix will do)")
    tshow.add_argument("--matches", action="store_true", help="list every match")
    json_option(tshow)
    db_option(tshow)
    tshow.set_defaults(func=cmd_tournament_show)
    tlist = tour_sub.add_parser("list", help="every tournament")
    db_option(tlist)
    json_option(tlist)
    tlist.set_defaults(func=cmd_tournament_list)
    trec = tour_sub.add_parser(
        "recurring", help="pause, resume or delete a recurring tournament (--every)"
    )
    trec_sub = trec.add_subparsers(dest="recurring_command", required=True)
    for action, what in (
        ("pause", "make no more runs until resumed (a run going on plays to its end)"),
        ("resume", "make runs again from its next time on (missed runs are not made up)"),
        ("delete", "never run it again (its runs stay, with their results)"),
    ):
        p = trec_sub.add_parser(action, help=what)
        p.add_argument("id", help="the recurring tournament's id (a unique prefix will do)")
        db_option(p)
        p.set_defaults(func=cmd_recurring)

    board = sub.add_parser("leaderboard", help="ratings with 95%% intervals, per game/variants")
    board.add_argument("--game", help="one game (default: every game with results)")
    board.add_argument("--variant", action="append", default=[], help=VARIANT_HELP)
    board.add_argument("--all-variants", action="store_true", help="every variant set of --game")
    db_option(board)
    json_option(board)
    board.set_defaults(func=cmd_leaderboard)

    compare = sub.add_parser("compare", help="two bots head to head: Elo, LOS, SPRT")
    compare.add_argument("a", help="a bot, NAME or NAME@VERSION")
    compare.add_argument("b", help="the bot it is compared with")
    compare.add_argument("--game", required=True, help="the game, e.g. risk")
    compare.add_argument("--variant", action="append", default=[], help=VARIANT_HELP)
    compare.add_argument("--elo0", type=float, default=0.0, help="SPRT H0 (default 0)")
    compare.add_argument("--elo1", type=float, default=10.0, help="SPRT H1 (default 10)")
    db_option(compare)
    json_option(compare)
    compare.set_defaults(func=cmd_compare)

    demo = sub.add_parser(
        "demo",
        help="the main job: a referee, the example bots as processes, Risk and Stratego "
        "round robins, leaderboards",
    )
    demo.add_argument("--risk-games", type=positive_int, default=6, help="games per Risk pairing")
    demo.add_argument(
        "--stratego-games", type=positive_int, default=6, help="games per Stratego pairing"
    )
    demo.add_argument(
        "--workers", type=positive_int, default=2, help="processes for house-bot matches"
    )
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    db_option(demo)
    demo.set_defaults(func=cmd_demo)

    health = sub.add_parser("health", help="is a referee serving? (exit status 0 if so)")
    health.add_argument("--referee", default="127.0.0.1:50051", help=REFEREE_HELP)
    health.add_argument(
        "--timeout", type=positive_float, default=5.0, help="seconds to wait for an answer"
    )
    health.set_defaults(func=cmd_health)

    bots = sub.add_parser("bots", help="bots in the store")
    bots_sub = bots.add_subparsers(dest="bots_command", required=True)
    blist = bots_sub.add_parser("list", help="every bot version, registered and house")
    db_option(blist)
    json_option(blist)
    blist.set_defaults(func=cmd_bots_list)

    web = sub.add_parser("web", help="the leaderboards, bots, tournaments and matches in a browser")
    web.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    web.add_argument("--port", type=port_number, default=8000, help="port (default 8000)")
    web.add_argument("--referee", help="HOST:PORT of a referee whose health the home page shows")
    db_option(web)
    web.set_defaults(func=cmd_web)
    return parser


def _stdout_gone() -> int:
    """The reader of our output went away (``arena ... | head -1``): stop quietly, the way
    Python's documentation says to (its note on SIGPIPE): point stdout at devnull, so the
    flush at exit does not fail again, and exit as a process killed by SIGPIPE would."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 128 + 13


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows here, where it is handled
        return code
    except BrokenPipeError:
        return _stdout_gone()
    except KeyboardInterrupt:  # Ctrl-C: the user knows why; no traceback
        return 130
    except (ValueError, KeyError, RuntimeError, IllegalAction, BotError, OSError) as exc:
        print(f"arena: error: {exc}", file=sys.stderr)
        return 2


def run() -> Any:  # pragma: no cover - console entry
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
