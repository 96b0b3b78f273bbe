"""The Celery app: ``celery -A arena.workers.app worker`` and ``celery -A arena.workers.app beat``.

Configured from the environment (``arena.tournament.distributed.Settings``): Redis as
broker and result backend by default.
"""

from __future__ import annotations

from celery import Celery

from arena.tournament.distributed import Settings

settings = Settings.from_env()

app = Celery(
    "arena",
    broker=settings.broker_url,
    backend=settings.result_backend,
    include=["arena.workers.tasks"],
)
app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    # A match task is acknowledged when it ends, not when it starts: a worker that dies
    # mid-match leaves it unacknowledged, and Redis hands it out again after the
    # visibility timeout. That is the last resort: the worker's lease on the match row
    # lapses long before, and a sweep (the client's, beat's) sends the match again; the
    # late redelivery then finds the match claimed or finished and does nothing.
    task_acks_late=True,
    # ...and a pool process killed under a live worker makes the worker give the task
    # back at once instead of marking it failed.
    task_reject_on_worker_lost=True,
    # one task at a time per process: a long match does not hold others hostage
    worker_prefetch_multiplier=1,
    task_time_limit=settings.task_time_limit_s,
    # the soft limit comes a little before the hard one (30 s, or a fifth of a short one)
    task_soft_time_limit=max(
        1, settings.task_time_limit_s - min(30, settings.task_time_limit_s // 5)
    ),
    # Redis redelivers an unacknowledged task after this long (a worker that died
    # without its parent noticing): above the time limit, so a live task is seldom
    # doubled (and a doubled one does nothing: the match is claimed).
    # Kombu looks for such tasks only every interval x throttle seconds (10 x 10 by
    # default): a tenth of the timeout, so a lost task waits little longer than that.
    broker_transport_options={
        "visibility_timeout": settings.visibility_s,
        "unacked_restore_interval": max(1, min(60, settings.visibility_s // 10)),
        "unacked_restore_throttle": 1,
    },
    result_backend_transport_options={"visibility_timeout": settings.visibility_s},
    broker_connection_retry_on_startup=True,
    broker_connection_max_retries=None,  # ride out a broker restart, however long
    result_expires=24 * 3600,
    worker_hijack_root_logger=False,
    # Redis serves a queue's priority lists strictly in order, the lowest number first:
    # matches sent again and the periodic tasks (0) before new matches (9)
    beat_schedule={
        "recurring-tournaments": {
            "task": "arena.fire_due_tournaments",
            "schedule": settings.beat_interval_s,
            # ahead of the matches queued; due runs that waited are dropped, not run in
            # a row (the next one finds them due all the same)
            "options": {"priority": 0, "expires": max(5.0, 10 * settings.beat_interval_s)},
        },
        # the sweeps (a lapsed lease, a due retry, a lost task, a tournament complete)
        # run in beat's own process, never behind the queue: tasks.py, _beat_sweeps
    },
)
