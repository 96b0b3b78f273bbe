"""Celery tasks: each takes ids, does one thing, and leaves the rules to ``arena``.

* ``arena.schedule_tournament(tournament_id)``: send every unfinished match to the queue.
* ``arena.play_match(match_id)``: play it (in this worker if every seat is a house bot,
  else on a referee where all its connected bots are), record the result, return it.
* ``arena.record_result(outcome)``: write a result (idempotent by match id), and finish
  the tournament when it was its last match (which refits its leaderboard).
* ``arena.update_ratings(game, variants)``, ``arena.finish_tournament(tournament_id)``.
* ``arena.fire_due_tournaments()``: beat's periodic task; creates and schedules the runs
  of recurring tournaments that are due.

* ``arena.sweep_matches()``: beat's other periodic task: sends again the matches whose
  worker died, whose retry is due, or whose task was lost (``distributed.sweep``).

A match is claimed (a guarded UPDATE with an attempt number, the fencing token) before
it is played, and the claim is a lease that the worker renews while it plays. The claim
also chooses the attempt's seed: after the first, never one whose consequences a bot has
seen (``arena.engine.seeds.attempt_seed``).
Transient trouble before playing (a referee unreachable, a bot not connected yet) puts
the match off on its row with a growing pause, and a sweep sends it again to whichever
worker is free; a store that is away is waited for, and a played result is kept (in
the spool if need be) until it is written. What cannot succeed ends in a clear state: a
match that cannot be played as asked is ``failed``, and a bot that never connects is
played anyway after ``ARENA_BOT_WAIT_S``, so the referee scores it as forfeiting.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from celery.signals import beat_init, worker_process_init
from celery.worker.request import Request
from sqlalchemy.exc import OperationalError

from arena.engine.seeds import fresh_seed
from arena.store import Outcome, Store, variant_key
from arena.store.db import WAITING, as_utc
from arena.store.models import now
from arena.tournament.distributed import (
    NEW,
    URGENT,
    outcome_from_dict,
    outcome_of_row,
    outcome_to_dict,
    queue_tournament,
    queued_tasks,
    sweep,
)
from arena.tournament.executor import MatchJob, RefereeClient, play_local
from arena.tournament.runner import TournamentSpec, create_tournament, jobs
from arena.workers.app import app, settings

T = TypeVar("T")
log = logging.getLogger("arena.workers")
_store: Store | None = None
#: retries of transient trouble: the pause doubles from 1 s up to 30 s
MAX_RETRIES = 40


def store() -> Store:
    """This process's store (opened once, after the fork)."""
    global _store
    if _store is None:
        _store = Store(settings.db)
    return _store


@worker_process_init.connect
def _warm_up(**_: Any) -> None:
    """Each pool process opens the store and loads the plugins as it starts, so its
    first match does not pay for them. A store that cannot be opened yet (the database
    still starting) is opened by the first task instead, which retries."""
    from arena.tournament.executor import _preload

    _preload()
    try:
        store()
        flush_spool()
    except OperationalError:
        log.warning("the store is not reachable yet; the first task will open it")


def _backoff(retries: int) -> float:
    return min(30.0, 2.0**retries) * (0.75 + random.random() / 2)


# --- choosing a referee ------------------------------------------------------------------


def connected_bots(address: str) -> set[str] | None:
    """``name@version`` of the bots connected to a referee; None if it is unreachable."""
    import grpc

    from arena.v1 import arena_pb2 as pb
    from arena.v1 import arena_pb2_grpc as pb_grpc

    try:
        with grpc.insecure_channel(address) as channel:
            reply = pb_grpc.ArenaServiceStub(channel).ListBots(pb.ListBotsRequest(), timeout=5)
    except grpc.RpcError:
        return None
    return {f"{b.name}@{b.version}" for b in reply.bots if b.connected}


def choose_referee(job: MatchJob, referees: tuple[str, ...]) -> tuple[str | None, bool]:
    """Where to play the job, and whether every connected-bot seat of it is there: a
    referee that has them all (at random among those, to spread the load), else the
    reachable one that has the most of them; None when no referee answers."""
    wanted = {seat.label for seat in job.seats if not seat.in_process}
    complete, best, best_count = [], None, -1
    for address in referees:
        present = connected_bots(address)
        if present is None:
            continue
        if wanted <= present:
            complete.append(address)
        elif len(wanted & present) > best_count:
            best, best_count = address, len(wanted & present)
    if complete:
        return random.choice(complete), True
    return best, False


# --- tasks -------------------------------------------------------------------------------


@app.task(name="arena.schedule_tournament", autoretry_for=(OperationalError,), retry_backoff=True)
def schedule_tournament(tournament_id: str) -> int:
    """Queue every match of the tournament that has not finished; how many."""
    s = store()
    tournament = s.tournament(tournament_id)
    if tournament is None:
        log.error("schedule_tournament: no tournament %s", tournament_id)
        return 0
    todo = [m for m in s.tournament_matches(tournament.id) if m.status != "finished"]
    if not todo:
        finish_tournament.apply_async((tournament.id,), priority=URGENT)
        return 0
    s.set_tournament_status(tournament.id, "running")
    s.mark_sent([m.id for m in todo])
    for match in todo:
        play_match.apply_async((match.id,), priority=NEW)
    return len(todo)


def sweep_all(s: Store) -> dict[str, list[str]]:
    """The sweep of every running tournament (the same as a tournament client's): send
    again, ahead of new work, the matches whose worker died, whose retry is due, or
    whose task was lost with the queue; finish the tournaments whose every match is
    finished (and refit their leaderboards). A run nobody watches never stalls."""
    swept = sweep(s, settings, _send_again, _queued, finish=lambda tid: _refit(s, tid))
    for line in swept.notices():
        log.warning("%s", line)
    return {"stale": swept.stale, "due": swept.due, "lost": swept.lost, "finished": swept.finished}


@app.task(name="arena.sweep_matches")
def sweep_matches() -> dict[str, list[str]]:
    """:func:`sweep_all` as a task (beat sweeps in its own process: :func:`_beat_sweeps`;
    this one is for an operator, or a beat of an older version)."""
    return sweep_all(_db(store))


def _send_again(match_id: str) -> Any:
    return play_match.apply_async((match_id,), priority=URGENT)


def _queued() -> int | None:
    return queued_tasks(app)


@beat_init.connect
def _beat_sweeps(**_: Any) -> None:
    """Beat sweeps in its own process, from a thread, every ``ARENA_BEAT_INTERVAL_S``:
    never behind the matches queued for the workers (a task in their queue would wait
    for the whole backlog), and while every worker is busy or dead."""
    threading.Thread(target=_sweep_forever, name="arena-sweeps", daemon=True).start()


def _sweep_forever() -> None:
    beat_store: Store | None = None
    while True:
        try:
            if beat_store is None:
                beat_store = Store(settings.db)
            sweep_all(beat_store)
        except Exception as exc:  # the store or the broker away: the next round tries
            log.warning("sweep: %s", str(exc).splitlines()[0] if str(exc) else repr(exc))
        time.sleep(settings.beat_interval_s)


def _cut_off() -> None:
    """No referee answers this worker (a cut route): it takes no further match until
    one does, instead of taking each one only to put it off. It waits here, asking the
    referees again with a growing pause (1 s to 10 s), for ``ARENA_LEASE_S`` at most;
    meanwhile the other workers take the queue."""
    deadline = time.monotonic() + settings.lease_s
    pause = 1.0
    while time.monotonic() + pause < deadline:
        time.sleep(pause)
        if any(connected_bots(address) is not None for address in settings.referees):
            return
        pause = min(10.0, pause * 2)


class MatchRequest(Request):  # type: ignore[misc]
    """A match task's request in the worker's main process: a pool process killed under
    it (``WorkerLostError``: out of memory, a SIGKILL) gives its match back at once,
    instead of after its lease; the task given back to the queue then claims it."""

    def on_failure(
        self, exc_info: Any, send_failed_event: bool = True, return_ok: bool = False
    ) -> Any:
        from billiard.exceptions import WorkerLostError

        if isinstance(getattr(exc_info, "exception", None), WorkerLostError):
            _released_lost(self)
        return super().on_failure(exc_info, send_failed_event, return_ok)


def _released_lost(request: Any) -> None:
    try:
        match_id = request.args[0]
        worker = f"{request.hostname or 'worker'} pid {request.worker_pid}"
        if store().release_lost(match_id, worker):
            log.warning("match %s: %s died; its match is given back now", match_id, worker)
    except Exception as exc:  # the store away: the lease lapses as before
        log.warning("a lost pool process's match stays claimed until its lease lapses: %s", exc)


@app.task(name="arena.play_match", bind=True, Request=MatchRequest)
def play_match(self: Any, match_id: str, first_try: float | None = None) -> dict[str, Any]:
    """Claim the match, play it, record it. A delivery that cannot claim it (another
    worker plays it, it is finished, its retry is not due) does nothing.

    Transient trouble before the match is played (no referee answers, its bots are not
    all connected) or a match the referee aborted is put off on its row, and this task
    returns: whoever sweeps sends it again when it is due, to whichever worker is free.
    (``first_try`` is read by nothing: it is accepted from tasks queued by an older
    version.)"""
    flush_spool()
    s = _db(store)
    _db(lambda: s.delivered(match_id))  # a sweep must not take its task for lost
    row = _db(lambda: s.match(match_id))
    if row is None or row.tournament_id is None:
        return outcome_to_dict(Outcome(match_id, "failed", error=f"no tournament match {match_id}"))
    if row.status == "finished":
        return outcome_to_dict(outcome_of_row(row))
    if not _claimable(row):
        return _skipped(match_id, f"it is {row.status}, nothing to do")
    tournament = _db(lambda: s.tournament(row.tournament_id))
    if tournament is None or tournament.status != "running":
        return _skipped(match_id, f"its tournament is {getattr(tournament, 'status', 'gone')}")
    job = _db(lambda: jobs(s, tournament, [row])[0])
    address = None
    if job.remote:
        address, everyone = choose_referee(job, settings.referees)
        if address is None:
            put_off = _again(row, "no referee answers")
            _cut_off()
            return put_off
        if not everyone and _waited(row) < settings.bot_wait_s:
            return _again(row, "its bots are not all connected")
        # (after the wait, the match is played where most of its bots are: the referee
        # gives the absent ones its grace period, then scores them as forfeiting)
    # the claim comes before any play: of two deliveries at once, one plays
    worker = _worker_name(self)
    claimed = _db(lambda: s.claim(match_id, worker, settings.lease_s, address or ""))
    if claimed is None:
        return _skipped(match_id, "claimed by another delivery, or its tournament stopped")
    # the claim chose the attempt's seed (after the first, a fresh one: its bots may have
    # seen what the last one made); the match is played with that one
    attempt, seed = claimed
    job = replace(job, seed=seed)
    with Lease(s, match_id, attempt):
        try:
            outcome = _play(job, address)
        except Exception as exc:  # the soft time limit, a bug: its run decides what next
            why = f"{type(exc).__name__}: {exc}"
            return record(Outcome(match_id, "aborted", error=why), attempt)
        if address is not None and outcome.status == "aborted":
            # referee unreachable or restarted: again
            return _again(row, f"{address}: {outcome.error}", attempt)
        # the lease is kept while the result is written: a store that is away a while
        # does not make the match look abandoned
        return record(outcome, attempt)


def _play(job: MatchJob, address: str | None) -> Outcome:
    """Play the job here (house bots only) or on the referee at ``address``."""
    if address is None:
        return play_local(job)
    client = RefereeClient(address, settings.organiser_key)
    try:
        return client.play(job)
    finally:
        client.close()


def _claimable(row: Any) -> bool:
    return row.status in WAITING and (row.retry_at is None or as_utc(row.retry_at) <= now())


def _waited(row: Any) -> float:
    """Seconds since the match was first put off (0 if never)."""
    since = row.waiting_since
    return 0.0 if since is None else (now() - as_utc(since)).total_seconds()


def _worker_name(task: Any) -> str:
    return f"{task.request.hostname or 'worker'} pid {os.getpid()}"


def _skipped(match_id: str, why: str) -> dict[str, Any]:
    log.info("match %s: %s", match_id, why)
    return {"skipped": match_id, "why": why}


def _again(row: Any, why: str, attempt: int | None = None) -> dict[str, Any]:
    """Put the match off, to be sent again after a growing pause; after the last retry,
    record it as aborted (a resume or a later run plays it again) and say why."""
    if row.retries >= MAX_RETRIES:
        error = f"gave up after {row.retries} retries: {why}"
        return record(Outcome(row.id, "aborted", error=error), attempt)
    pause = _backoff(row.retries)
    log.info("match %s: %s; trying again in %.0f s", row.id, why, pause)
    _db(lambda: store().put_off(row.id, pause, why, attempt))
    return {"put_off": row.id, "why": why, "retry_in_s": round(pause, 1)}


class Lease:
    """Renews the worker's lease on the match it plays, every third of the lease, from a
    thread: the match may hold this one for an hour. A renewal that finds the claim gone
    (the match was reclaimed) is logged; the result's fenced write then changes nothing."""

    def __init__(self, s: Store, match_id: str, attempt: int) -> None:
        self.store, self.match_id, self.attempt = s, match_id, attempt
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew, name=f"lease-{match_id}", daemon=True)

    def __enter__(self) -> Lease:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _taken_back(self) -> bool:
        """Whether someone else holds the match now (not: this claim wrote its end)."""
        row = self.store.match(self.match_id)
        return row is not None and row.attempts != self.attempt

    def _renew(self) -> None:
        while not self._stop.wait(settings.lease_s / 3):
            try:
                if not self.store.renew_lease(self.match_id, self.attempt, settings.lease_s):
                    if not self._stop.is_set() and self._taken_back():
                        log.warning("match %s: its claim was taken back", self.match_id)
                    return
            except OperationalError as exc:  # the store is away: try again next time
                log.warning("match %s: cannot renew its lease: %s", self.match_id, exc)


def _db(call: Callable[[], T], budget_s: float | None = None) -> T:
    """``call()``, retried with a growing pause (0.5 s doubling to 5 s) while the store
    is away, for ``budget_s`` (``ARENA_DB_RETRY_S``) at most; then the error."""
    deadline = time.monotonic() + (settings.db_retry_s if budget_s is None else budget_s)
    pause = 0.5
    while True:
        try:
            return call()
        except OperationalError as exc:
            if time.monotonic() + pause > deadline:
                raise
            log.warning("the store is away (%s); again in %.1f s", str(exc).splitlines()[0], pause)
            time.sleep(pause)
            pause = min(5.0, pause * 2)


def record(outcome: Outcome, attempt: int | None = None) -> dict[str, Any]:
    """Write the outcome (once; fenced by the claim's ``attempt``), then what follows.

    Only the write is retried while the store is away; a played match is not played
    again. If the store stays away past ``ARENA_DB_RETRY_S``, the outcome goes to the
    spool directory and is written by this worker's next task (:func:`flush_spool`)."""
    try:
        wrote = _db(lambda: store().record_result(outcome, attempt))
    except OperationalError:
        path = spool(outcome, attempt)
        log.error("match %s: the store is away; its result waits in %s", outcome.match_id, path)
        return {"spooled": outcome.match_id, "path": str(path)}
    if not wrote:
        log.info("match %s: not recorded (recorded already, or claimed again)", outcome.match_id)
    return _after_write(outcome)


def _after_write(outcome: Outcome) -> dict[str, Any]:
    row = _db(lambda: store().match(outcome.match_id))
    if row is not None and row.status == "finished":
        # the leaderboard is refitted once the tournament is complete (finish_tournament),
        # not after every match: a refit per match would cost the workers more than the
        # matches; readers fit on demand in between (arena leaderboard, GetLeaderboard)
        if row.tournament_id is not None and _db(lambda: store().complete(row.tournament_id)):
            try:
                finish_tournament.apply_async((row.tournament_id,), priority=URGENT)
            except Exception as exc:  # the broker away: beat's sweep finishes it
                log.warning(
                    "tournament %s: its end is left to the sweep: %s", row.tournament_id, exc
                )
        return outcome_to_dict(outcome_of_row(row))
    return outcome_to_dict(outcome)


# --- the spool: played results waiting for the store ---------------------------------------


def spool(outcome: Outcome, attempt: int | None) -> Path:
    """Write the outcome (with its replay) to a file of its own, atomically."""
    folder = Path(settings.spool_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{outcome.match_id}.{attempt or 0}.json"
    data = {
        "outcome": outcome_to_dict(outcome),
        "replay": outcome.replay,
        "attempt": attempt,
        "logs": [list(log) for log in outcome.logs],
    }
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(data))
    os.replace(temporary, path)
    return path


def flush_spool() -> int:
    """Write the spooled results to the store (fenced as they were played); how many
    left the spool. Stops at the first that cannot be written (the store still away)."""
    folder = Path(settings.spool_dir)
    if not folder.is_dir():
        return 0
    flushed = 0
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:  # another process of this machine wrote it just now
            continue
        outcome = replace(
            outcome_from_dict(data["outcome"]),
            replay=data.get("replay"),
            logs=tuple((seat, text) for seat, text in data.get("logs", ())),
        )
        try:
            store().record_result(outcome, data.get("attempt"))
            _after_write(outcome)
        except OperationalError:
            return flushed
        path.unlink(missing_ok=True)
        flushed += 1
        log.info("match %s: its spooled result was written", outcome.match_id)
    return flushed


@app.task(name="arena.record_result", autoretry_for=(OperationalError,), retry_backoff=True)
def record_result(outcome: dict[str, Any]) -> dict[str, Any]:
    """Record an outcome that arrived from elsewhere (idempotent by match id)."""
    return record(outcome_from_dict(outcome))


@app.task(name="arena.update_ratings", autoretry_for=(OperationalError,), retry_backoff=True)
def update_ratings(game: str, variants: str) -> int:
    """Refit and store the leaderboard of one game and variant set; its length."""
    from arena.tournament.leaderboard import refresh  # scipy: 2 s of a worker's start

    return len(refresh(store(), game, variants))


@app.task(name="arena.finish_tournament", autoretry_for=(OperationalError,), retry_backoff=True)
def finish_tournament(tournament_id: str) -> str:
    """Mark the tournament finished once every match is; its status."""
    s = store()
    tournament = s.tournament(tournament_id)
    if tournament is None:
        return "missing"
    if s.finish_complete([tournament.id]):
        _refit(s, tournament.id)
        return "finished"
    again = s.tournament(tournament.id)
    return again.status if again is not None else "missing"


def _refit(s: Store, tournament_id: str) -> None:
    """Refit the leaderboard of a tournament that has just finished."""
    from arena.tournament.leaderboard import refresh

    tournament = s.tournament(tournament_id)
    if tournament is not None:
        refresh(
            s,
            tournament.game,
            variant_key(tournament.variants, tournament.options, tournament.game),
        )


@app.task(name="arena.fire_due_tournaments", autoretry_for=(OperationalError,), retry_backoff=True)
def fire_due_tournaments() -> list[str]:
    """Create and schedule a run of every recurring tournament that is due; their ids.
    A schedule whose previous run is still going makes no run this time (said in the
    log); its next time has moved on all the same."""
    s = store()
    created = []
    for claim in s.claim_due(datetime.now(UTC)):
        recurring = claim.recurring
        if claim.skipped:
            log.warning(
                "recurring %s: run %d skipped: the previous run %s is still going; next "
                "due in %d s",
                recurring.id,
                claim.run,
                recurring.last_tournament_id,
                recurring.every_s,
            )
            continue
        bots = [bot.label for bot in s.latest_bots(recurring.game)]
        bots += [f"house:{name}" for name in recurring.house_bots]
        if len(bots) < recurring.seats:
            log.warning(
                "recurring %s: %d bots play %s, %d seats: no run this time",
                recurring.id,
                len(bots),
                recurring.game,
                recurring.seats,
            )
            s.release(claim)
            continue
        try:
            tournament = create_tournament(
                s,
                TournamentSpec(
                    game=recurring.game,
                    bots=bots,
                    seats=recurring.seats,
                    games_per_pairing=recurring.games_per_pairing,
                    variants=recurring.variants,
                    options=dict(recurring.options),
                    # a fresh secret seed each run, 63 bits (31 could be searched): a
                    # predictable one would tell bots the dice and the shuffles of every
                    # match (the schedule derives them)
                    seed=fresh_seed(),
                    name=f"{recurring.name} #{claim.run}",
                    decision_ms=recurring.decision_ms,
                    time_bank_ms=recurring.time_bank_ms,
                    tournament_id=claim.tournament_id,
                ),
            )
        except ValueError as exc:
            log.error("recurring %s: cannot create run %d: %s", recurring.id, claim.run, exc)
            s.release(claim)
            continue
        log.info("recurring %s: run %d is tournament %s", recurring.id, claim.run, tournament.id)
        queue_tournament(s, tournament.id, schedule_tournament.delay)
        created.append(tournament.id)
    return created
