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
                            after this long (keep it above the limit)
``ARENA_BEAT_INTERVAL_S``   how often beat looks for due tournaments     ``30``
=========================== ============================================ =========================
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from arena.store import Outcome
from arena.tournament.executor import Executor, MatchJob

PLAY_MATCH = "arena.play_match"


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
        )


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


@dataclass
class CeleryExecutor(Executor):
    """Sends every job to the Celery workers as an ``arena.play_match`` task (by name:
    the client needs no worker code) and reports each outcome as its task ends.

    The workers record results in the store themselves; the runner's write of the same
    outcome is then a no-op. Waiting survives a broker or backend restart: a lost
    connection is retried until the result can be read again."""

    settings: Settings = field(default_factory=Settings.from_env)
    poll_s: float = 0.05
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

    def run(
        self,
        jobs: Iterable[MatchJob],
        on_outcome: Callable[[MatchJob, Outcome], None],
        stop: threading.Event | None = None,
        on_start: Callable[[MatchJob], None] | None = None,
    ) -> None:
        # Every job is sent at once: the workers pull at their own pace (prefetch 1),
        # so the queue, not this process, spreads the matches.
        waiting: dict[str, tuple[MatchJob, Any]] = {}
        for job in jobs:
            if stop is not None and stop.is_set():
                break
            result = _retrying(lambda job=job: self.app.send_task(PLAY_MATCH, args=[job.match_id]))
            waiting[job.match_id] = (job, result)
        by_task = {result.id: job for job, result in waiting.values()}
        while by_task:
            if stop is not None and stop.is_set():
                return
            for task_id, meta in self._finished(list(by_task)):
                job = by_task.pop(task_id)
                if meta["status"] == "SUCCESS":
                    outcome = outcome_from_dict(meta["result"])
                else:
                    why = f"worker task {meta['status'].lower()}: {meta.get('result')!r}"
                    outcome = Outcome(job.match_id, "aborted", error=why)
                on_outcome(job, outcome)
            if by_task:
                time.sleep(self.poll_s)

    def _finished(self, task_ids: list[str]) -> list[tuple[str, dict[str, Any]]]:
        """The tasks among ``task_ids`` that have ended, with their result metadata: one
        round trip to a key-value backend (Redis) for all of them, however many."""
        from celery.backends.base import KeyValueStoreBackend
        from celery.exceptions import TimeoutError as StillRunning

        backend = self.app.backend
        try:
            if isinstance(backend, KeyValueStoreBackend):
                found: list[tuple[str, dict[str, Any]]] = []
                try:
                    # one MGET: max_iterations bounds it on every Celery version
                    # (before 5.7, timeout=0 alone meant "wait for all")
                    ready = backend.get_many(task_ids, timeout=0, interval=0, max_iterations=1)
                    for task_id, meta in ready:
                        found.append((task_id, meta))
                        backend._cache.pop(task_id, None)  # keep the client's memory flat
                except StillRunning:  # some are still running: what is there so far
                    pass
                return found
            results = [self.app.AsyncResult(task_id) for task_id in task_ids]
            return [(r.id, {"status": r.state, "result": r.result}) for r in results if r.ready()]
        except Exception:  # the backend is away (a Redis restart): ask again later
            return []

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
