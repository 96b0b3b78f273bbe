"""Celery tasks: each takes ids, does one thing, and leaves the rules to ``arena``.

* ``arena.schedule_tournament(tournament_id)``: send every unfinished match to the queue.
* ``arena.play_match(match_id)``: play it (in this worker if every seat is a house bot,
  else on a referee where all its connected bots are), record the result, return it.
* ``arena.record_result(outcome)``: write a result (idempotent by match id), and finish
  the tournament when it was its last match (which refits its leaderboard).
* ``arena.update_ratings(game, variants)``, ``arena.finish_tournament(tournament_id)``.
* ``arena.fire_due_tournaments()``: beat's periodic task; creates and schedules the runs
  of recurring tournaments that are due.

Transient trouble (a referee unreachable, a bot not connected yet, the database away)
is retried with a growing pause; what cannot succeed ends in a clear state: a match that
cannot be played as asked is ``failed``, and a bot that never connects is played anyway
after ``ARENA_BOT_WAIT_S``, so the referee scores it as forfeiting.
"""

from __future__ import annotations

import logging
import random
import time
from datetime import UTC, datetime
from typing import Any

from celery.signals import worker_process_init
from sqlalchemy.exc import OperationalError

from arena.engine.seeds import fresh_seed
from arena.store import Outcome, Store, variant_key
from arena.tournament.distributed import outcome_from_dict, outcome_to_dict
from arena.tournament.executor import MatchJob, RefereeClient, play_local
from arena.tournament.leaderboard import refresh
from arena.tournament.runner import TournamentSpec, create_tournament, jobs
from workers.app import app, settings

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
        finish_tournament.delay(tournament.id)
        return 0
    s.set_tournament_status(tournament.id, "running")
    for match in todo:
        play_match.delay(match.id)
    return len(todo)


@app.task(
    name="arena.play_match",
    bind=True,
    max_retries=MAX_RETRIES,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=30,
)
def play_match(self: Any, match_id: str, first_try: float | None = None) -> dict[str, Any]:
    """Play one match and record it. Idempotent: a finished match is not played again
    (a redelivered task after a worker died just returns the stored result)."""
    s = store()
    first_try = first_try or time.time()
    row = s.match(match_id)
    if row is None or row.tournament_id is None:
        return outcome_to_dict(Outcome(match_id, "failed", error=f"no tournament match {match_id}"))
    if row.status == "finished":
        return _stored(row)
    tournament = s.tournament(row.tournament_id)
    job = jobs(s, tournament, [row])[0]
    if not job.remote:
        s.start_match(job.match_id, job.game, [seat.label for seat in job.seats])
        outcome = play_local(job)
    else:
        address, everyone = choose_referee(job, settings.referees)
        if address is None:
            return _again(self, match_id, first_try, "no referee answers")
        if not everyone and time.time() - first_try < settings.bot_wait_s:
            return _again(self, match_id, first_try, "its bots are not all connected")
        # (after the wait, the match is played where most of its bots are: the referee
        # gives the absent ones its grace period, then scores them as forfeiting)
        client = RefereeClient(address, settings.organiser_key)
        try:
            outcome = client.play(job)
        finally:
            client.close()
        if outcome.status == "aborted":  # referee unreachable or restarted: play it again
            return _again(self, match_id, first_try, f"{address}: {outcome.error}")
    return record(outcome)


def _again(task: Any, match_id: str, first_try: float, why: str) -> dict[str, Any]:
    """Retry later; after the last retry, record the match as aborted (a resume or a
    later run plays it again) and say why."""
    if task.request.retries >= task.max_retries:
        error = f"gave up after {task.request.retries} retries: {why}"
        return record(Outcome(match_id, "aborted", error=error))
    log.info("match %s: %s; trying again", match_id, why)
    raise task.retry(countdown=_backoff(task.request.retries), kwargs={"first_try": first_try})


def _stored(row: Any) -> dict[str, Any]:
    result = row.result or {}
    return outcome_to_dict(
        Outcome(
            row.id,
            row.status,
            reason=result.get("reason", ""),
            places=tuple(result.get("places", ())),
            detail=result.get("detail", ""),
            forfeits=tuple((f["seat"], f["why"]) for f in result.get("forfeits", ())),
        )
    )


def record(outcome: Outcome) -> dict[str, Any]:
    """Write the outcome (once), then what follows from it."""
    s = store()
    s.record_result(outcome)
    row = s.match(outcome.match_id)
    if row is not None and row.status == "finished":
        # the leaderboard is refitted once the tournament is complete (finish_tournament),
        # not after every match: a refit per match would cost the workers more than the
        # matches; readers fit on demand in between (arena leaderboard, GetLeaderboard)
        if row.tournament_id is not None:
            counts = s.progress(row.tournament_id)
            if counts.get("finished", 0) == sum(counts.values()):
                finish_tournament.delay(row.tournament_id)
        return _stored(row)
    return outcome_to_dict(outcome)


@app.task(name="arena.record_result", autoretry_for=(OperationalError,), retry_backoff=True)
def record_result(outcome: dict[str, Any]) -> dict[str, Any]:
    """Record an outcome that arrived from elsewhere (idempotent by match id)."""
    return record(outcome_from_dict(outcome))


@app.task(name="arena.update_ratings", autoretry_for=(OperationalError,), retry_backoff=True)
def update_ratings(game: str, variants: str) -> int:
    """Refit and store the leaderboard of one game and variant set; its length."""
    return len(refresh(store(), game, variants))


@app.task(name="arena.finish_tournament", autoretry_for=(OperationalError,), retry_backoff=True)
def finish_tournament(tournament_id: str) -> str:
    """Mark the tournament finished once every match is; its status."""
    s = store()
    tournament = s.tournament(tournament_id)
    if tournament is None:
        return "missing"
    counts = s.progress(tournament.id)
    if counts.get("finished", 0) != sum(counts.values()):
        return tournament.status
    if tournament.status != "finished":
        s.set_tournament_status(tournament.id, "finished")
        refresh(s, tournament.game, variant_key(tournament.variants))
    return "finished"


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
        schedule_tournament.delay(tournament.id)
        created.append(tournament.id)
    return created
