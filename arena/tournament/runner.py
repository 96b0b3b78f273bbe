"""Creating, running and resuming tournaments on any :class:`Executor`.

:func:`create_tournament` resolves the bots to bot versions, computes the schedule and
writes the tournament with every match (``pending``) in one transaction.
:func:`run_tournament` plays what is not finished yet: a new tournament, or one that
was stopped (Ctrl-C, a crash, a lost worker) and is resumed. Finished matches are
never played again and a result is written once (the store is idempotent by match
id), so resuming neither replays nor double-counts a match. A match stopped half-way
is played again from its start, with a fresh seed (its deal seed stays): whoever begins
an attempt asks the store, which counts it and, from the second on, chooses its seed
(:meth:`Store.start_match`, :meth:`Store.claim_match`,
:func:`arena.engine.seeds.attempt_seed`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from sqlalchemy.exc import OperationalError

from arena.engine.seeds import check_seed, fresh_seed
from arena.plugins import Registry, Variant, load_registry
from arena.store import (
    HOUSE_PREFIX,
    BotRow,
    EntryRow,
    MatchRow,
    NewMatch,
    Outcome,
    Store,
    TournamentRow,
    variant_key,
)
from arena.store.db import lease_seconds
from arena.tournament.executor import Executor, MatchJob, SeatSpec
from arena.tournament.schedule import gauntlet, round_robin

FORMATS = ("round-robin", "gauntlet")
#: a match stopped before its end (a worker lost, a referee unreachable) is played again
#: this many times in all before the run gives up on it
MAX_ATTEMPTS = 3


@dataclass
class TournamentSpec:
    """What an organiser asks for. ``bots`` are ``name`` (a registered bot's newest
    version, or else the house bot of that name), ``name@version``, ``house:name``, or a
    bot file's path ``./NAME.py`` (the version ``file:NAME@N`` of its current content)."""

    game: str
    bots: Sequence[str]
    seats: int
    games_per_pairing: int = 1
    variants: Sequence[str] = ()
    options: dict[str, str] = field(default_factory=dict)
    #: None: a fresh secret seed (every match seed derives from it; see schedule.py)
    seed: int | None = None
    format: str = "round-robin"
    #: the gauntlet's challenger (one of ``bots``)
    challenger: str | None = None
    name: str = ""
    decision_ms: int = 0
    time_bank_ms: int = 0
    max_groups: int | None = None
    #: the tournament's id (none: a new one); a recurring run's is named when it is claimed
    tournament_id: str | None = None


def resolve_bot(store: Store, registry: Registry, game: str, spec: str) -> BotRow:
    """The bot version a name stands for in a tournament of ``game``."""
    from arena.sdk.local import FILE_PREFIX, check_file, is_bot_file

    spec = spec.strip()
    if is_bot_file(spec):
        # read, never run here (it may be anyone's code): a file that cannot start
        # forfeits its matches, saying why
        name, path, digest = check_file(spec)  # ValueError: no such file, a bad name
        # its content goes to the store: a worker on another machine (or a referee, in a
        # match with connected bots) plays it from there, never from this path
        store.put_code(digest, "py", Path(path).read_bytes())
        return store.file_bot(name, digest, path)
    if spec.startswith(FILE_PREFIX):
        row = store.find_bot(spec)
        if row is None:
            raise ValueError(f"no bot file version {spec!r} (see `arena bots list`)")
        return row
    if spec.startswith(HOUSE_PREFIX):
        name = spec[len(HOUSE_PREFIX) :]
        registry.bot(game, name)  # ValueError naming the house bots of the game
        return store.house_bot(name)
    if "@" in spec:
        row = store.find_bot(spec)
        if row is None:
            raise ValueError(f"no bot version {spec!r} (see `arena bots list`)")
        return row.check_plays(game)
    row = store.latest_bot(spec)
    if row is not None:
        return row.check_plays(game)
    if (game, spec) not in registry.bots:
        house = ", ".join(sorted(b for g, b in registry.bots if g == game)) or "none"
        raise ValueError(
            f"no registered bot and no {game} house bot named {spec!r} "
            f"(house bots of {game}: {house}; registered: `arena bots list`)"
        )
    return store.house_bot(spec)


def check_spec(
    spec: TournamentSpec, registry: Registry | None = None
) -> tuple[list[Variant], dict[str, str], int]:
    """What can be checked without the store (the command line does it before opening
    one, so a refused tournament leaves no database behind): its variants, options, seed."""
    registry = registry or load_registry()
    game = registry.game(spec.game)
    variants = registry.resolve_variants(spec.game, list(spec.variants))
    options = dict(spec.options)
    registry.check_options(spec.game, options, variants)
    game.parse_options(options, variants)
    game.check_players(spec.seats)
    if len(spec.bots) < spec.seats:  # the schedule says so too, but after the store
        raise ValueError(
            f"{spec.seats} seats need at least {spec.seats} bots, got {len(spec.bots)}: "
            f"{', '.join(spec.bots) or 'none'} (every seat of a match has a bot of its own)"
        )
    if spec.decision_ms < 0 or spec.time_bank_ms < 0:
        raise ValueError(
            f"decision {spec.decision_ms} ms, time bank {spec.time_bank_ms} ms: "
            "0 (the referee's default) or more"
        )
    seed = fresh_seed() if spec.seed is None else check_seed(spec.seed)
    # a trial deal runs the checks that depend on the variants as well (two-player Risk
    # needs --variant neutral): a tournament whose every match would fail is refused here
    game.new_state(spec.seats, seed, options, variants)
    if spec.format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {spec.format!r}")
    return variants, options, seed


def create_tournament(
    store: Store, spec: TournamentSpec, registry: Registry | None = None
) -> TournamentRow:
    """Check everything, then write the tournament and its whole schedule."""
    registry = registry or load_registry()
    variants, options, seed = check_spec(spec, registry)
    rows: dict[str, BotRow] = {}
    for name in spec.bots:
        row = resolve_bot(store, registry, spec.game, name)
        if row.id in rows:
            raise ValueError(f"{row.label} is in the tournament twice ({name!r})")
        if row.revoked:
            raise ValueError(f"{row.label} is revoked")
        rows[row.id] = row
    by_label = {row.label: row for row in rows.values()}
    if spec.format == "gauntlet":
        if spec.challenger is None:
            raise ValueError("a gauntlet needs a challenger")
        challenger = resolve_bot(store, registry, spec.game, spec.challenger)
        if challenger.id not in rows:
            raise ValueError(f"the challenger {challenger.label} must be one of the bots")
        field_labels = [label for label in by_label if label != challenger.label]
        schedule = gauntlet(
            challenger.label,
            field_labels,
            spec.seats,
            spec.games_per_pairing,
            seed,
            spec.max_groups,
        )
    else:
        challenger = None
        schedule = round_robin(
            list(by_label), spec.seats, spec.games_per_pairing, seed, spec.max_groups
        )
    tournament_id = spec.tournament_id or uuid.uuid4().hex[:12]
    tournament = TournamentRow(
        id=tournament_id,
        name=spec.name or f"{spec.game} {spec.format}",
        game=spec.game,
        variants=[v.name for v in variants],
        options=options,
        format=spec.format,
        seats=spec.seats,
        games_per_pairing=spec.games_per_pairing,
        seed=seed,
        decision_ms=spec.decision_ms,
        time_bank_ms=spec.time_bank_ms,
        status="created",
    )
    entries = [
        EntryRow(
            tournament_id=tournament_id,
            bot_id=row.id,
            label=row.label,
            challenger=challenger is not None and row.id == challenger.id,
        )
        for row in rows.values()
    ]
    matches = [
        NewMatch(
            match_id=f"{tournament_id}-{m.match_key}",
            match_key=m.match_key,
            round=m.round,
            group=m.group,
            seed=m.seed,
            bot_ids=[by_label[label].id for label in m.players],
            deal_seed=m.deal_seed,
        )
        for m in schedule
    ]
    labels = {row.id: row.label for row in rows.values()}
    return store.create_tournament(tournament, entries, matches, labels)


def jobs(
    store: Store,
    tournament: TournamentRow,
    matches: Sequence[MatchRow],
    isolation: str = "sandbox",
) -> list[MatchJob]:
    """The matches as executor jobs, with each seat's bot version (only their bots are
    read: a worker builds one job a match); ``isolation``: how bot files are played
    (arena.sandbox.ISOLATIONS)."""
    seats = store.match_seats([m.id for m in matches])
    bots = store.bots_of(seat.bot_id for rows in seats.values() for seat in rows)
    out = []
    for match in matches:
        specs = []
        for seat in seats[match.id]:
            bot = bots[seat.bot_id]
            house = bot.name[len(HOUSE_PREFIX) :] if bot.kind == "house" else None
            hosted = bot.kind == "hosted"
            specs.append(
                SeatSpec(bot.label, house, None if hosted else bot.path, bot.digest, hosted)
            )
        out.append(
            MatchJob(
                match_id=match.id,
                game=match.game,
                variants=tuple(match.variants),
                options=dict(match.options),
                seed=match.seed,
                seats=tuple(specs),
                decision_ms=tournament.decision_ms,
                time_bank_ms=tournament.time_bank_ms,
                deal_seed=match.deal_seed,
                isolation=isolation,
                db=store.url,
            )
        )
    return out


def start_attempt(
    store: Store, job: MatchJob, in_play: set[str] | None = None, owner: str = ""
) -> MatchJob:
    """Begin an in-process attempt at ``job``'s match: the store counts it and tells its
    seeds (an attempt after the first plays a fresh seed, never one whose consequences a
    bot has seen); the job to play. ``in_play`` collects the match ids begun; ``owner``
    holds the match's lease (renewed by the run: :class:`Leases`)."""
    started = store.start_match(
        job.match_id, job.game, [s.label for s in job.seats], owner=owner or local_owner()
    )
    if in_play is not None:
        in_play.add(job.match_id)
    if started is None:  # finished meanwhile (another writer): the same job, its write a no-op
        return job
    return replace(job, seed=started.seed, deal_seed=started.deal_seed)


def local_owner() -> str:
    """This process's name on the matches it plays in process (``matches.worker``)."""
    return f"local {socket.gethostname()} pid {os.getpid()}"


class Leases:
    """Renews, from a thread, the leases of the matches a local run plays in process
    (every third of ``ARENA_LEASE_S``): a run killed whole leaves matches whose lease
    lapses, and a sweep or a resume takes them back."""

    def __init__(self, store: Store, owner: str, in_play: set[str]) -> None:
        self.store, self.owner, self.in_play = store, owner, in_play
        self.lease_s = lease_seconds()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew, name="leases", daemon=True)

    def __enter__(self) -> Leases:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _renew(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            with contextlib.suppress(OperationalError):  # the store away: next time
                self.store.renew_owned(self.owner, list(self.in_play), self.lease_s)


def wait_for_leases(
    store: Store,
    tournament_id: str,
    say: Callable[[str], None],
    stop: threading.Event,
    poll_s: float = 1.0,
) -> None:
    """Wait until nobody else plays a match of the tournament: each running match with a
    live lease (a Celery worker's, a referee's, another run's) ends or its lease lapses.
    A run that does not claim its matches would otherwise play them twice at once."""
    told = False
    while not stop.is_set():
        live = store.live_leases(tournament_id)
        if not live:
            return
        if not told:
            holders = sorted({m.worker or "?" for m in live})
            say(
                f"waiting for {len(live)} match{'es' if len(live) != 1 else ''} still "
                f"played elsewhere ({', '.join(holders)}) to end or lapse"
            )
            told = True
        stop.wait(poll_s)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass
class Progress:
    """What a progress display needs, after every result."""

    tournament_id: str
    total: int
    finished: int
    #: matches that could not be played (yet): aborted and failed, this run
    problems: int
    #: the last outcome and its match
    job: MatchJob | None = None
    outcome: Outcome | None = None
    #: this tournament's finished matches so far, as (labels in seat order, places)
    results: list[tuple[tuple[str, ...], tuple[int, ...]]] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def leader(self) -> tuple[str, float] | None:
        """The bot at the top of the standings so far, and its Elo: ranked as the
        tournament's leaderboard ranks (:func:`arena.tournament.leaderboard.ranking`),
        so the last one shown is the final table's first. None before any result."""
        from arena.tournament.leaderboard import ranking

        board = ranking(self.results)
        if board is None:
            return None
        return str(board.rows[0].player), board.rows[0].rating


@dataclass
class RunSummary:
    tournament_id: str
    status: str
    total: int
    finished: int
    #: finished by this run (the rest had been played before a resume)
    played: int
    #: match id -> why it could not be played
    errors: dict[str, str] = field(default_factory=dict)


def run_tournament(
    store: Store,
    tournament_id: str,
    executor: Executor,
    progress: Callable[[Progress], None] | None = None,
    stop: threading.Event | None = None,
    max_attempts: int = MAX_ATTEMPTS,
    backoff_s: float = 1.0,
    isolation: str = "sandbox",
    say: Callable[[str], None] = _stderr,
) -> RunSummary:
    """Play every match of the tournament that has not finished, then rate.

    A match that ends ``aborted`` (lost worker, unreachable referee, a bot's crash) is
    played again, after a pause that doubles, up to ``max_attempts`` attempts in all;
    a ``failed`` one (it cannot be played as asked) is not. Interrupting (Ctrl-C, or
    ``stop``) leaves the tournament ``stopped``: run it again to resume.

    An executor that does not claim its matches (the local one) first waits for the
    matches that others still play (a stopped Celery run's workers) to end or lapse:
    a match is never played twice at once. ``say``: lines for the operator.
    """
    from arena.tournament.leaderboard import refresh

    tournament = store.tournament(tournament_id)
    if tournament is None:
        raise KeyError(f"no tournament {tournament_id!r}")
    tournament_id = tournament.id
    all_matches = store.tournament_matches(tournament_id)
    total = len(all_matches)
    todo = [m for m in all_matches if m.status != "finished"]
    already = total - len(todo)
    attempts = {m.id: m.attempts for m in todo}
    store.set_tournament_status(tournament_id, "running")
    state = Progress(tournament_id, total, already, 0)
    labels = {row.id: row.label for row in store.bots()}  # one query, not one a seat
    for game in store.played(tournament.game, tournament_id=tournament_id):
        state.results.append((tuple(labels[b] for b in game.bot_ids), tuple(game.places)))
    summary = RunSummary(tournament_id, "running", total, already, 0)
    pending = jobs(store, tournament, todo, isolation)
    stop = stop or threading.Event()

    counted: set[str] = set()  # matches this run has counted as finished
    in_play: set[str] = set()  # in-process matches started by this run, without outcome
    owner = local_owner()

    def on_start(job: MatchJob) -> MatchJob | None:
        # a referee marks the matches it plays itself (attempts, running, their seeds)
        # and writes their results to its store, even after this run is gone;
        # in-process matches are marked here
        if job.remote:
            return None
        return start_attempt(store, job, in_play, owner)

    def on_outcome(job: MatchJob, outcome: Outcome) -> None:
        if job.match_id in counted:
            return  # a duplicated delivery of a result counted already: it counts once
        attempts[job.match_id] = attempts.get(job.match_id, 0) + 1
        in_play.discard(job.match_id)
        # a referee that shares the store has written a result already: this write is
        # then a no-op (idempotent by match id), and a finished job is never re-run
        store.record_result(outcome, owner=owner)
        if outcome.status == "finished":
            counted.add(job.match_id)
            state.finished += 1
            summary.played += 1
            summary.errors.pop(job.match_id, None)
            state.results.append((tuple(s.label for s in job.seats), tuple(outcome.places)))
        else:
            state.problems += 1
            summary.errors[job.match_id] = outcome.error or outcome.detail or outcome.status
            again = outcome.status == "aborted" and attempts[job.match_id] < max_attempts
            if again and all(j.match_id != job.match_id for j in retry):
                retry.append(job)
        state.job, state.outcome = job, outcome
        if progress is not None:
            progress(state)

    interrupted = False
    pause = backoff_s
    try:
        if not executor.claims:
            wait_for_leases(store, tournament_id, say, stop)
        with Leases(store, owner, in_play):
            while pending and not stop.is_set():
                retry: list[MatchJob] = []
                executor.run(pending, on_outcome, stop, on_start=on_start)
                pending = retry
                if pending and not stop.is_set():
                    stop.wait(pause)
                    pause = min(pause * 2, 60.0)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        # this run's processes die with it: their matches are not "running" any more
        _settle(store, summary, in_play, owner, total)
    if summary.finished:
        refresh(
            store,
            tournament.game,
            variant_key(tournament.variants, tournament.options, tournament.game),
        )
    if interrupted:
        raise KeyboardInterrupt
    return summary


#: how long a run's end waits for a store that is away before it gives up
SETTLE_S = 60.0


def _settle(store: Store, summary: RunSummary, in_play: set[str], owner: str, total: int) -> None:
    """The end of a run, in the store: its in-process matches aborted, the tournament
    finished or stopped. A store that is away is waited for (``SETTLE_S``); after
    that :class:`StoreAway` says so in one line (the matches' own state is sound: a
    sweep or a resume finishes the job)."""
    deadline = time.monotonic() + SETTLE_S
    pause = 0.5
    while True:
        try:
            for match_id in list(in_play):
                store.record_result(
                    Outcome(match_id, "aborted", error="stopped before its end"), owner=owner
                )
                in_play.discard(match_id)
            left = store.progress(summary.tournament_id)
            complete = left.get("finished", 0) == total
            summary.finished = left.get("finished", 0)
            summary.status = "finished" if complete else "stopped"
            store.set_tournament_status(summary.tournament_id, summary.status)
            return
        except OperationalError as exc:
            if time.monotonic() + pause > deadline:
                raise StoreAway(
                    f"the store is away ({str(exc).splitlines()[0]}): tournament "
                    f"{summary.tournament_id} could not be marked {summary.status} "
                    f"(see `arena tournament show {summary.tournament_id}` once it is back)"
                ) from exc
            time.sleep(pause)
            pause = min(pause * 2, 5.0)


class StoreAway(RuntimeError):
    """The store stayed away at the end of a run (the message says what to do)."""
