"""``arena tournament``: run, resume, create (queued or recurring), show and list
tournaments, and pause, resume or delete recurring ones."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any

from arena.cli.args import (
    DECISION_MS_HELP,
    GAMES_PER_PAIRING_HELP,
    ISOLATION_TOURNAMENT_HELP,
    NAME_HELP,
    TOURNAMENT_SEED_HELP,
    TOURNAMENT_TIME_BANK_HELP,
    db_option,
    isolation_option,
    json_option,
    non_negative_int,
    open_store,
    positive_int,
    progress_options,
    rule_options,
    stored_options,
)
from arena.cli.console import print_json, tournament_display
from arena.engine.seeds import seed_argument
from arena.sdk.local import FILE_PREFIX, is_bot_file


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

    options = stored_options(args)
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
        row = open_store(args).add_recurring(
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
    store, tournament = _create(args, bots, options)
    from arena.tournament.distributed import CeleryExecutor, queue_tournament

    app = CeleryExecutor().app
    queue_tournament(
        store, tournament.id, lambda tid: app.send_task("arena.schedule_tournament", args=[tid])
    )
    print(f"tournament {tournament.id}: queued for the workers")
    print(f"follow it with: arena tournament show {tournament.id}")
    return 0


def resume_command(args: argparse.Namespace, tournament_id: str) -> str:
    """The command that resumes the tournament: on the same store (``--db`` if it is not
    the default), which is where it is."""
    import shlex

    from arena.cli.args import default_db

    db = "" if args.db == default_db() else f" --db {shlex.quote(args.db)}"
    return f"arena tournament resume {tournament_id}{db}"


def wait_for_bots(referee: str, store: Any, tournament_id: str) -> None:
    """Before any match: wait until every registered bot of the tournament is connected
    to ``referee``, saying who is missing (a bot seated while away forfeits its match)."""
    import time

    import grpc

    from arena.cli.referee import absent_bots, arena_stub

    ids = {entry.bot_id for entry in store.entries(tournament_id)}
    remote = [
        b.label for b in store.bots(include_house=False) if b.id in ids and b.kind == "remote"
    ]
    if not remote:
        return
    stub = arena_stub(referee)
    said: list[str] = []
    try:
        while absent := absent_bots(stub, remote):
            if absent != said:
                print(
                    f"waiting for {len(absent)} of its bots to connect to {referee}: "
                    f"{', '.join(absent)} (Ctrl-C stops; resume it later)",
                    flush=True,
                )
                said = absent
            time.sleep(1.0)
    except grpc.RpcError as exc:
        raise ValueError(f"{referee}: {exc.details()}") from None
    if said:
        print(f"all {len(remote)} of its registered bots are connected: playing", flush=True)


def _progress_so_far(store: Any, tournament_id: str) -> Any:
    """The tournament's count before this run plays (what a resume finds done)."""
    from arena.tournament.runner import Progress

    matches = store.tournament_matches(tournament_id)
    finished = sum(m.status == "finished" for m in matches)
    return Progress(tournament_id, len(matches), finished, 0)


def _run_and_report(args: argparse.Namespace, store: Any, tournament: Any) -> int:
    from arena.store import variant_key
    from arena.tournament.leaderboard import board_title, compute, render
    from arena.tournament.runner import StoreAway, run_tournament

    _remember_run(args, store, tournament)
    resume = f"`{resume_command(args, tournament.id)}`"
    if args.organiser_key:  # never stored: the resume needs it again
        resume = (
            f"`{resume_command(args, tournament.id)} --organiser-key KEY` "
            "(the key is not stored; ARENA_ORGANISER_KEY in the environment will do too)"
        )
    executor = _executor(args, store)
    display = tournament_display(args)
    try:
        if args.referee and args.executor != "celery":
            wait_for_bots(args.referee, store, tournament.id)
        with display or contextlib.nullcontext():
            if display is not None:
                display.start(_progress_so_far(store, tournament.id))
            summary = run_tournament(
                store, tournament.id, executor, progress=display, isolation=args.isolation
            )
    except KeyboardInterrupt:
        print(f"\nstopped: resume with {resume}", file=sys.stderr)
        return 130
    except StoreAway as exc:
        print(f"error: {exc}; resume with {resume}", file=sys.stderr)
        return 1
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
    variants = variant_key(tournament.variants, tournament.options, tournament.game)
    rows = compute(store, tournament.game, variants, tournament_id=tournament.id)
    title = board_title(tournament.game, variants)
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


def _create(args: argparse.Namespace, bots: list[str], options: dict[str, str]) -> Any:
    """The tournament ``run`` or ``create`` asks for, in the store (and the store). It is
    checked before the store opens: a refused tournament leaves no database behind."""
    from arena.tournament.runner import TournamentSpec, check_spec, create_tournament

    challenger = getattr(args, "challenger", None)  # `create` plays round robins only
    spec = TournamentSpec(
        game=args.game,
        bots=bots,
        seats=args.seats,
        games_per_pairing=args.games_per_pairing,
        variants=args.variant,
        options=options,
        seed=args.seed,
        format="gauntlet" if challenger else "round-robin",
        challenger=challenger,
        name=args.name or "",
        decision_ms=args.decision_ms,
        time_bank_ms=args.time_bank_ms,
    )
    check_spec(spec)
    store = open_store(args)
    return store, create_tournament(store, spec)


def cmd_tournament_run(args: argparse.Namespace) -> int:
    if args.resume:
        return cmd_tournament_resume(args)
    if not args.game or not args.bots:
        raise ValueError("--game and --bots are needed (or --resume ID)")
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    _check_isolation(args, any(is_bot_file(b) for b in bots))
    store, tournament = _create(args, bots, stored_options(args))
    total = sum(store.progress(tournament.id).values())
    print(f"tournament {tournament.id}: {tournament.name}, {total} matches")
    return _run_and_report(args, store, tournament)


def _check_isolation(args: argparse.Namespace, files: bool) -> None:
    """Refuse, before anything is written, to play bot files in a sandbox that cannot
    run here (one line: why, and that --isolation process would play them)."""
    from arena.sandbox.files import refuse_without_sandbox

    if files:
        refuse_without_sandbox(args.isolation)


def cmd_tournament_resume(args: argparse.Namespace) -> int:
    store = open_store(args, create=False)
    tournament_id = args.resume if getattr(args, "resume", None) else args.id
    tournament = store.tournament(tournament_id)
    if tournament is None:
        raise ValueError(f"no tournament {tournament_id!r} in {args.db}")
    files = any(e.label.startswith(FILE_PREFIX) for e in store.entries(tournament.id))
    _check_isolation(args, files)
    left = sum(n for status, n in store.progress(tournament.id).items() if status != "finished")
    print(f"tournament {tournament.id}: resuming, {left} matches to play")
    return _run_and_report(args, store, tournament)


def cmd_tournament_show(args: argparse.Namespace) -> int:
    from arena.store import variant_key
    from arena.tournament.leaderboard import board_title, compute, render

    store = open_store(args, create=False)
    t = store.tournament(args.id)
    if t is None:
        raise ValueError(f"no tournament {args.id!r} in {args.db}")
    if args.json:
        return _tournament_json(store, t)
    counts = store.progress(t.id)
    total = sum(counts.values())
    print(f"tournament {t.id}: {t.name}")
    print(f"  game: {board_title(t.game, variant_key(t.variants, t.options, t.game))}")
    if t.options:
        print("  options: " + ", ".join(f"{k}={v}" for k, v in sorted(t.options.items())))
    games = f"{t.games_per_pairing} game{'' if t.games_per_pairing == 1 else 's'}"
    print(f"  {t.format}, {t.seats} seats, {games} per pairing, seed {t.seed}")
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
    rows = compute(store, t.game, variant_key(t.variants, t.options, t.game), tournament_id=t.id)
    print(render(rows, "standings in this tournament:"))
    return 0


def _tournament_json(store: Any, t: Any) -> int:
    """The web API's dict of the tournament (arena.web.data), and its seed: the text shows
    it to whoever reads the store, where the web hides it until the tournament ends."""
    from arena.web import data

    return print_json({**data.tournament(store, t.id), "seed": str(t.seed)})


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
    store = open_store(args, create=False)
    if args.json:
        from arena.web import data

        recurring = [_recurring_dict(r) for r in store.recurring()]
        return print_json({"recurring": recurring, "tournaments": data.tournaments(store)})
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


def cmd_tournament_stop(args: argparse.Namespace) -> int:
    """Stop a tournament wherever it is played: no match of it is claimed any more, and
    with a broker its queued tasks are taken out of the queue. Matches being played
    end as they would (a resume plays the rest)."""
    store = open_store(args, create=False)
    t = store.tournament(args.id)
    if t is None:
        raise ValueError(f"no tournament {args.id!r} in {args.db} (see `arena tournament list`)")
    if not store.stop_tournament(t.id):
        print(f"tournament {t.id}: {t.status}, nothing to stop")
        return 0
    withdrawn = None
    if os.environ.get("ARENA_BROKER_URL"):
        from arena.tournament.distributed import CeleryExecutor, withdraw

        client = CeleryExecutor(store=store)
        try:
            waiting = [m.id for m in store.tournament_matches(t.id) if m.status != "finished"]
            withdrawn = withdraw(client.app, waiting)
        except Exception as exc:  # the broker away: the workers' claims refuse them
            print(f"warning: the queue cannot be reached ({exc}); its tasks will do nothing")
        finally:
            client.close()
    live = len(store.live_leases(t.id))
    queued = "" if withdrawn is None else f", {withdrawn} queued tasks withdrawn"
    print(
        f"tournament {t.id}: stopped{queued}; {live} match{'es' if live != 1 else ''} in "
        f"play end as they would; resume with `arena tournament resume {t.id}`"
    )
    return 0


def cmd_recurring(args: argparse.Namespace) -> int:
    """Pause, resume or delete a recurring tournament (the store's own calls say how)."""
    from datetime import UTC, datetime

    store = open_store(args, create=False)
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


def add_parsers(sub: Any) -> None:
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
        isolation_option(p, "sandbox", ISOLATION_TOURNAMENT_HELP)
        progress_options(p)
        db_option(p)

    tour = sub.add_parser("tournament", help="run, resume and show tournaments")
    tour_sub = tour.add_subparsers(dest="tournament_command", required=True)
    trun = tour_sub.add_parser("run", help="create a tournament and play it")
    trun.add_argument("--game", help="the game, e.g. risk (not with --resume)")
    rule_options(trun)
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
    rule_options(tcreate)
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
    tstop = tour_sub.add_parser(
        "stop", help="stop a tournament: no further match starts (a resume plays the rest)"
    )
    tstop.add_argument("id", help="the tournament id (a unique prefix will do)")
    db_option(tstop)
    tstop.set_defaults(func=cmd_tournament_stop)
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
