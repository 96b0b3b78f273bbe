"""Frames built as matches end, so that the first viewer of a replay finds them made.

Re-simulating a long replay and making its frames takes the web about a second of CPU
(docs/benchmarks.md): a viewer who opens a match that has just ended should not wait for
it. :class:`Prebuilder` looks at the store every :data:`POLL_S` seconds for matches
finished since its last look (its first look only notes what had finished before the web
started) and builds, for the newest :data:`NEWEST` of them, the whole frames their first
viewer asks for (:meth:`FrameCache.prebuild`; a long replay's page then takes them at
once, with no tail first). The
builds run in one worker process of lower priority (:class:`Worker`), so that the web
goes on answering meanwhile and a match being played keeps the CPU it needs; a viewer who
asks while one is under way waits for it rather than building the same again.

What is built follows the same rules as a viewer's request: a replay that may not be
shown yet (a duplicate-seed tournament still running) is not built, and a game without a
viewer is passed by. A worker that dies is started again for the next match; the match it
was building is built when it is first viewed, as without a prebuilder. Nothing here
writes to the store.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
from collections import deque
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select

from arena.store import Store
from arena.store.models import MatchRow
from arena.web import data, viewers

log = logging.getLogger(__name__)

#: how often the store is asked for newly finished matches (seconds)
POLL_S = 2.0
#: per look, the newest matches built: the rest of a burst (a fast tournament finishes
#: many a second) are built when someone views them
NEWEST = 4
#: how far before the latest finished match a look goes back: a writer stamps a match's
#: end before it commits, so one can appear after a later one (arena.web.cache)
MARGIN = timedelta(minutes=2)
#: the worker's niceness: below the web, the referee and the bots
NICE = 10
#: matches read per look (more in the margin than this: the newest of them)
LIMIT = 200


class WorkerDied(RuntimeError):
    """The worker process ended during a build (killed, out of memory)."""


class Worker:
    """One process, at niceness :data:`NICE`, that builds frames for the web process:
    started when first needed (from a fork server, not a fork of the threaded web) and
    again after it dies. One caller at a time."""

    def __init__(self, db_url: str) -> None:
        self.db_url = db_url
        self._process: Any = None
        self._conn: Any = None

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def build(self, match_id: str, firsts: list[int]) -> list[dict[str, Any]]:
        """:func:`viewers.build_entries` of ``match_id`` in the worker; its errors are
        raised here, :class:`WorkerDied` if the worker ends first."""
        if self._process is None or not self._process.is_alive():
            self._start()
        try:
            self._conn.send((match_id, firsts))
            ok, value = self._conn.recv()
        except (EOFError, OSError) as exc:
            self.close()
            raise WorkerDied(
                f"the frames' worker process ended while building match {match_id}"
            ) from exc
        if not ok:
            raise value
        return value

    def _start(self) -> None:
        self.close()
        context = multiprocessing.get_context("forkserver")
        mine, theirs = context.Pipe()
        self._process = context.Process(
            target=_serve, args=(theirs, self.db_url), name="arena-web-frames", daemon=True
        )
        self._process.start()
        theirs.close()
        self._conn = mine

    def terminate(self) -> None:
        """Stops the worker process now, from any thread: a build under way ends in
        :class:`WorkerDied` for its caller."""
        process = self._process
        if process is not None and process.is_alive():
            process.terminate()

    def close(self) -> None:
        """Ends the worker (a build under way is abandoned). The caller's thread only."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if process is not None:
            if process.is_alive():
                process.terminate()
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join()
        if conn is not None:
            conn.close()


def _serve(conn: Any, db_url: str) -> None:
    """The worker's loop: (match id, first frames) in, (True, entries) or (False, the
    error) out, until the web closes its end."""
    from arena.plugins import load_registry
    from arena.store.readonly import ReadOnlyStore

    os.nice(NICE)
    store = ReadOnlyStore(db_url)
    registry = load_registry()
    try:
        while True:
            try:
                match_id, firsts = conn.recv()
            except (EOFError, OSError):
                return
            try:
                answer = (True, viewers.build_entries(store, registry, match_id, firsts))
            except Exception as exc:  # sent back, raised in the web: one line there
                answer = (False, exc if _picklable(exc) else RuntimeError(str(exc)))
            try:
                conn.send(answer)
            except (EOFError, OSError):
                return
    finally:
        store.close()


def _picklable(exc: Exception) -> bool:
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return False
    return True


class Prebuilder:
    """Watches the store for matches that finish and builds their frames into ``cache``
    (see the module's doc). :meth:`run` is a thread's loop; :meth:`look` and
    :meth:`build` are its steps."""

    def __init__(
        self,
        store: Store,
        cache: viewers.FrameCache,
        db_url: str,
        poll_s: float = POLL_S,
        newest: int = NEWEST,
    ) -> None:
        self.store = store
        self.cache = cache
        self.poll_s = poll_s
        self.newest = newest
        self.worker = Worker(db_url)
        #: the match being built now (None between builds)
        self.building: str | None = None
        #: the latest matches built, oldest first
        self.built: deque[str] = deque(maxlen=100)
        self._since: datetime | None = None
        self._seen: dict[str, datetime] = {}
        self._looked = False
        self._stopping = False

    def look(self) -> list[str]:
        """The matches (with a viewer) finished since the last look, newest first, at
        most :attr:`newest`; the first look returns none (they ended before the web
        started) and notes them."""
        with self.store.session() as s:
            query = select(MatchRow.id, MatchRow.game, MatchRow.finished).where(
                MatchRow.status == "finished"
            )
            if self._since is not None:
                query = query.where(MatchRow.finished >= self._since)
            query = query.order_by(MatchRow.finished.desc(), MatchRow.id.desc()).limit(LIMIT)
            rows = s.execute(query).all()
        new = [
            (match_id, game)
            for match_id, game, _finished in rows
            if match_id not in self._seen and self._looked
        ]
        for match_id, _game, finished in rows:
            self._seen[match_id] = finished
        self._looked = True
        if rows:
            latest = max(finished for _id, _game, finished in rows)
            since = latest - MARGIN
            if self._since is None or since > self._since:
                self._since = since
                self._seen = {k: v for k, v in self._seen.items() if v >= since}
        return [match_id for match_id, game in new if game in viewers.GAMES][: self.newest]

    def build(self, match_id: str) -> bool:
        """Builds the frames of ``match_id`` in the worker; False when they were kept
        already or may not be built (hidden replay, none stored, one that does not
        re-simulate, a worker that died: each viewed later builds as usual)."""
        self.building = match_id
        try:
            built = self.cache.prebuild(self.store, match_id, self.worker.build)
        except (PermissionError, data.NotFound):
            return False
        except (ValueError, WorkerDied) as exc:
            if not self._stopping:  # the web stopping ends the worker: nothing to say
                log.warning("frames of match %s not built ahead: %s", match_id, exc)
            return False
        finally:
            self.building = None
        if built:
            self.built.append(match_id)
        return built

    def run(self, stop: threading.Event) -> None:
        """Looks and builds every :attr:`poll_s` seconds until ``stop`` is set."""
        try:
            while not stop.wait(self.poll_s):
                try:
                    for match_id in self.look():
                        if stop.is_set():
                            return
                        self.build(match_id)
                except Exception:
                    if stop.is_set():  # the store closed under it at shutdown
                        return
                    log.exception("the frames' prebuilder failed a look; it goes on")
        finally:
            self.worker.close()

    def stop(self) -> None:
        """Ends a build under way at once (from another thread: the web stopping); the
        thread in :meth:`run` returns once its ``stop`` event is set."""
        self._stopping = True
        self.worker.terminate()
