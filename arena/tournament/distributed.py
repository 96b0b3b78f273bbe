"""Tournaments on Celery: the settings shared by the workers and their clients, and the
:class:`CeleryExecutor`, which sends a tournament's matches to the workers.

Celery is the distributed engine: the queue, the delivery, the retries and the
recurring runs are Celery's (``workers/``); Arena adds no scheduler or queue of its own.
Everything is configured by environment variables, with defaults for one machine:

=========================== ============================================ =========================
variable                    meaning                                      default
=========================== ============================================ =========================
``ARENA_BROKER_URL``        the Celery broker                            ``redis://127.0.0.1:6379/0``
``ARENA_RESULT_BACKEND``    the Celery result backend                    ``redis://127.0.0.1:6379/1``
``ARENA_DB``                the store (shared by workers and referees)   ``arena.db``
``ARENA_REFEREES``          referee addresses, comma-separated           ``127.0.0.1:50051``
``ARENA_ORGANISER_KEY``     the referees' organiser key                  (none)
``ARENA_BOT_WAIT_S``        how long a match waits for its bots to       ``60``
                            connect before it is played anyway (the
                            referee then forfeits the absent ones)
``ARENA_TASK_TIME_LIMIT_S`` a match task's hard time limit               ``3600``
``ARENA_VISIBILITY_S``      Redis visibility timeout: a task taken by a  ``3900``
                            worker that died unnoticed is redelivered
                            after this long (a last resort: leases come
                            first)
``ARENA_BEAT_INTERVAL_S``   how often beat looks for due tournaments,    ``30``
                            and sweeps (below)
``ARENA_LEASE_S``           a worker's lease on the match it plays,      ``60``
                            renewed every third of it; a lapsed one is
                            reclaimed and the match sent again
``ARENA_SWEEP_S``           how often a tournament client sweeps         ``5``
``ARENA_LOST_AFTER_S``      a pending match sent this long ago, while    ``30``
                            the queue is empty, lost its task: sent again
``ARENA_DB_RETRY_S``        how long a worker retries writing a played   ``120``
                            result before it spools it
``ARENA_SPOOL_DIR``         where results wait for the store to return   ``arena-spool``
=========================== ============================================ =========================

A sweep (:func:`sweep`: by every tournament client, and by beat for every running
tournament) sends again the matches whose worker let its lease lapse, those whose retry
is due, and those whose task was lost with the queue. See docs/distributed.md.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import OperationalError

from arena.store import MatchRow, Outcome, Store
from arena.tournament.executor import Executor, MatchJob

PLAY_MATCH = "arena.play_match"
#: Redis serves the lower number first (kombu's priority lists, strictly in order): a
#: match sent again (its worker died, its retry is due, its task was lost) and the
#: periodic tasks go ahead of the new work queued behind them
URGENT = 0
NEW = 9
#: the lists of the default queue, one per priority step (kombu's ``celery\x06\x16N``)
QUEUE_LISTS = ("celery", "celery\x06\x163", "celery\x06\x166", "celery\x06\x169")


@dataclass(frozen=True)
class Settings:
    broker_url: str
    result_backend: str
    db: str
    referees: tuple[str, ...]
    organiser_key: str
    bot_wait_s: float
    task_time_limit_s: int
    visibility_s: int
    beat_interval_s: float
    lease_s: float = 60.0
    sweep_s: float = 5.0
    lost_after_s: float = 30.0
    db_retry_s: float = 120.0
    spool_dir: str = "arena-spool"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if env is None else env)
        referees = env.get("ARENA_REFEREES", "127.0.0.1:50051")
        return cls(
            broker_url=env.get("ARENA_BROKER_URL", "redis://127.0.0.1:6379/0"),
            result_backend=env.get("ARENA_RESULT_BACKEND", "redis://127.0.0.1:6379/1"),
            db=env.get("ARENA_DB", "arena.db"),
            referees=tuple(a.strip() for a in referees.split(",") if a.strip()),
            organiser_key=env.get("ARENA_ORGANISER_KEY", ""),
            bot_wait_s=float(env.get("ARENA_BOT_WAIT_S", "60")),
            task_time_limit_s=int(env.get("ARENA_TASK_TIME_LIMIT_S", "3600")),
            visibility_s=int(env.get("ARENA_VISIBILITY_S", "3900")),
            beat_interval_s=float(env.get("ARENA_BEAT_INTERVAL_S", "30")),
            lease_s=_positive(env, "ARENA_LEASE_S", "60"),
            sweep_s=_positive(env, "ARENA_SWEEP_S", "5"),
            lost_after_s=_positive(env, "ARENA_LOST_AFTER_S", "30"),
            db_retry_s=_positive(env, "ARENA_DB_RETRY_S", "120"),
            spool_dir=env.get("ARENA_SPOOL_DIR", "arena-spool"),
        )


def _positive(env: dict[str, str], name: str, default: str) -> float:
    text = env.get(name, default)
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise ValueError(f"{name}={text!r}: expected a number of seconds above 0")
    return value


def outcome_to_dict(outcome: Outcome) -> dict[str, Any]:
    """An outcome as a task result (JSON), without the replay: the store has it."""
    return {
        "match_id": outcome.match_id,
        "status": outcome.status,
        "reason": outcome.reason,
        "places": list(outcome.places),
        "detail": outcome.detail,
        "forfeits": [list(f) for f in outcome.forfeits],
        "error": outcome.error,
    }


def outcome_of_row(row: MatchRow) -> Outcome:
    """A match's outcome as the store holds it (without the replay)."""
    result = row.result or {}
    return Outcome(
        row.id,
        row.status,
        reason=result.get("reason", ""),
        places=tuple(result.get("places", ())),
        detail=result.get("detail", ""),
        forfeits=tuple((f["seat"], f["why"]) for f in result.get("forfeits", ())),
        error=row.error if row.status != "finished" else None,
    )


def outcome_from_dict(data: dict[str, Any]) -> Outcome:
    return Outcome(
        match_id=data["match_id"],
        status=data["status"],
        reason=data.get("reason", ""),
        places=tuple(data.get("places", ())),
        detail=data.get("detail", ""),
        forfeits=tuple((int(s), str(w)) for s, w in data.get("forfeits", ())),
        error=data.get("error"),
    )


@dataclass(frozen=True)
class Swept:
    """What a sweep sent again, by why."""

    #: running matches whose worker let its lease lapse (it died, or lost the store)
    stale: list[str]
    #: matches put off for transient trouble, whose retry is due
    due: list[str]
    #: pending matches whose task is not in the queue any more (the broker lost it)
    lost: list[str]
    #: tournaments found complete and finished (their last result's message lost, say)
    finished: list[str] = field(default_factory=list)

    def notices(self) -> list[str]:
        """One line per batch worth telling an operator (retries are routine)."""
        lines = []
        if self.stale:
            lines.append(
                f"re-sent {_matches(self.stale)} whose worker stopped renewing its lease "
                "(worker died?)"
            )
        if self.lost:
            lines.append(f"re-sent {_matches(self.lost)} whose tasks were lost (broker restarted?)")
        for tournament_id in self.finished:
            lines.append(f"tournament {tournament_id}: every match finished: finished")
        return lines


def _matches(ids: list[str]) -> str:
    return f"{len(ids)} match" + ("es" if len(ids) != 1 else "")


def sweep(
    store: Store,
    settings: Settings,
    send: Callable[[str], Any],
    queued: Callable[[], int | None],
    tournament_ids: list[str] | None = None,
    finish: Callable[[str], Any] | None = None,
) -> Swept:
    """Send again what would otherwise wait forever: matches whose lease lapsed, those
    whose retry is due, and, when the queue is empty (``queued()`` says 0), pending
    matches sent more than ``lost_after_s`` ago, whose tasks must have been lost. Each
    is taken by a guarded UPDATE, so two sweepers never send one twice; a task sent in
    excess is harmless anyway (the worker's claim makes it a no-op). ``tournament_ids``
    None: every running tournament (beat).

    With ``finish``, a running tournament whose every match is finished is marked
    finished, and ``finish(id)`` follows (the leaderboard's refit): the end of a
    tournament is derived from its matches, never left to one message."""
    finished = store.finish_complete(tournament_ids) if finish is not None else []
    for tournament_id in finished:
        assert finish is not None
        finish(tournament_id)
    stale = store.reclaim_stale(tournament_ids)
    due = store.due_retries(tournament_ids)
    lost = store.unclaimed(settings.lost_after_s, tournament_ids) if queued() == 0 else []
    for match_id in stale + due + lost:
        # a send that fails (the broker away) leaves the match pending and marked sent:
        # the next sweeps find it lost once the queue is back, and send it then
        try:
            send(match_id)
        except Exception:
            break
    return Swept(stale, due, lost, finished)


def queue_tournament(store: Store, tournament_id: str, send: Callable[[str], Any]) -> None:
    """Hand a tournament to the workers: ``send`` queues its ``arena.schedule_tournament``
    task. The tournament is marked running and its matches sent first, so that if that one
    task is lost (the broker restarted before a worker took it), the sweeps find its
    matches' tasks lost and send them one by one: a queued run never stays ``created``."""
    store.set_tournament_status(tournament_id, "running")
    store.mark_sent(
        [m.id for m in store.tournament_matches(tournament_id) if m.status != "finished"]
    )
    send(tournament_id)


def queued_tasks(app: Any) -> int | None:
    """How many tasks wait in the default queue (its Redis lists, one per priority);
    None if the broker cannot say now (it is away)."""
    try:
        with app.connection_for_read() as connection:
            client = connection.default_channel.client
            return sum(int(client.llen(name)) for name in QUEUE_LISTS)
    except Exception:
        return None


def withdraw(app: Any, match_ids: Iterable[str]) -> int:
    """Take the queued ``arena.play_match`` tasks of these matches out of the queue
    (a stopped tournament's): how many. A task a worker has taken already is not in
    the queue; the worker's claim refuses it (its tournament is not running)."""
    wanted = set(match_ids)
    if not wanted:
        return 0
    removed = 0
    with app.connection_for_write() as connection:
        client = connection.default_channel.client
        for name in QUEUE_LISTS:
            for raw in client.lrange(name, 0, -1):
                if _play_match_of(raw) in wanted:
                    removed += int(client.lrem(name, 1, raw))
    return removed


def _play_match_of(raw: bytes) -> str | None:
    """The match id of a queued ``arena.play_match`` message (Celery's protocol 2)."""
    import base64
    import json

    try:
        message = json.loads(raw)
        if message.get("headers", {}).get("task") != PLAY_MATCH:
            return None
        args = json.loads(base64.b64decode(message["body"]))[0]
        return str(args[0])
    except Exception:
        return None


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


#: statuses after which a match's task has nothing more to do in this run
DONE = ("finished", "failed", "aborted")


@dataclass
class CeleryExecutor(Executor):
    """Sends every job to the Celery workers as an ``arena.play_match`` task (by name:
    the client needs no worker code) and reports each outcome as the store shows it.

    The store, not the result backend, is the truth: a worker claims a match, plays it
    and writes its result there, so the client follows the matches' statuses and sweeps
    (:func:`sweep`) every ``sweep_s``: a match whose worker died, whose retry is due, or
    whose task was lost with the queue is sent again, and a line says so. Waiting
    survives a broker restart and a store that is away for a while."""

    settings: Settings = field(default_factory=Settings.from_env)
    store: Store | None = None
    poll_s: float = 0.5
    #: where lines for the operator go
    say: Callable[[str], None] = _stderr
    #: tasks taken out of the queue when the run was stopped
    withdrawn: int = field(default=0, init=False)
    _app: Any = field(default=None, init=False, repr=False)

    @property
    def app(self) -> Any:
        if self._app is None:
            from celery import Celery

            self._app = Celery(
                "arena-client",
                broker=self.settings.broker_url,
                backend=self.settings.result_backend,
            )
            self._app.conf.update(
                broker_connection_retry_on_startup=True,
                broker_transport_options={"visibility_timeout": self.settings.visibility_s},
                result_backend_transport_options={"retry_policy": {"timeout": 5.0}},
            )
        return self._app

    claims = True

    def _send(self, match_id: str) -> Any:
        return self.app.send_task(PLAY_MATCH, args=[match_id], priority=NEW)

    def _send_again(self, match_id: str) -> Any:
        return self.app.send_task(PLAY_MATCH, args=[match_id], priority=URGENT)

    def run(
        self,
        jobs: Iterable[MatchJob],
        on_outcome: Callable[[MatchJob, Outcome], None],
        stop: threading.Event | None = None,
        on_start: Callable[[MatchJob], MatchJob | None] | None = None,
    ) -> None:
        # Every job is sent at once: the workers pull at their own pace (prefetch 1),
        # so the queue, not this process, spreads the matches.
        if self.store is None:
            self.store = Store(self.settings.db)
        store = self.store
        waiting = {job.match_id: job for job in jobs}
        if not waiting:
            return
        tournaments = sorted(store.tournaments_of(list(waiting)))
        store.mark_sent(list(waiting))
        try:
            self._follow(store, waiting, tournaments, on_outcome, stop)
        except BaseException:  # Ctrl-C: no further match of this run starts
            self._stop(store, tournaments, list(waiting))
            raise
        if stop is not None and stop.is_set():
            self._stop(store, tournaments, list(waiting))

    def _stop(self, store: Store, tournaments: list[str], match_ids: list[str]) -> None:
        """The run is stopped: its tournaments first (a worker's claim then refuses
        their matches), then its tasks taken out of the queue."""
        for tournament_id in tournaments:
            with contextlib.suppress(Exception):
                store.stop_tournament(tournament_id)
        with contextlib.suppress(Exception):
            self.withdrawn = withdraw(self.app, match_ids)

    def _follow(
        self,
        store: Store,
        waiting: dict[str, MatchJob],
        tournaments: list[str],
        on_outcome: Callable[[MatchJob, Outcome], None],
        stop: threading.Event | None,
    ) -> None:
        for match_id in list(waiting):
            if stop is not None and stop.is_set():
                return
            _retrying(lambda match_id=match_id: self._send(match_id))
        next_sweep = time.monotonic() + self.settings.sweep_s
        while waiting:
            if stop is not None and stop.is_set():
                return
            try:
                self._report(store, waiting, on_outcome)
                if time.monotonic() >= next_sweep:
                    next_sweep = time.monotonic() + self.settings.sweep_s
                    swept = sweep(
                        store,
                        self.settings,
                        self._send_again,
                        lambda: queued_tasks(self.app),
                        tournaments,
                    )
                    for line in swept.notices():
                        self.say(line)
            except OperationalError:  # the store is away for a while: ask again later
                pass
            if waiting:
                time.sleep(self.poll_s)

    @staticmethod
    def _report(
        store: Store,
        waiting: dict[str, MatchJob],
        on_outcome: Callable[[MatchJob, Outcome], None],
    ) -> None:
        """Hand over the outcome of every waiting match that the store shows ended."""
        for match_id, status in store.match_states(list(waiting)).items():
            if status in DONE:
                row = store.match(match_id)
                if row is not None and row.status in DONE:
                    on_outcome(waiting.pop(match_id), outcome_of_row(row))

    def close(self) -> None:
        if self._app is not None:
            self._app.close()
            self._app = None


def _retrying(send: Callable[[], Any], attempts: int = 60, pause_s: float = 1.0) -> Any:
    """Send a task, waiting out a broker that is restarting."""
    for attempt in range(attempts):
        try:
            return send()
        except Exception:
            if attempt == attempts - 1:
                raise
            time.sleep(pause_s)
    raise AssertionError("unreachable")
