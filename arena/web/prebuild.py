"""Frames built as matches end, so that the first viewer of a replay finds them made.

Re-simulating a long replay and making its frames takes the web about a second of CPU
(docs/benchmarks.md): a viewer who opens a match that has just ended should not wait for
it. :class:`Prebuilder` looks at the store every :data:`POLL_S` seconds for replays that
have become viewable since its last look (its first look only notes what was there
before the web started): matches that finished, outside a tournament, and the matches of
tournaments that finished (a tournament's replays are hidden until it has). It builds
the whole frames of the newest :data:`NEWEST` of them (:meth:`FrameCache.prebuild`; a
long replay's page then takes them at once, with no tail first).

The builds run in one worker process of lower priority (:class:`Worker`), so that the
web goes on answering meanwhile and a match being played keeps the CPU it needs. A
viewer who asks during a build waits for it, at most :data:`viewers.WAIT_S` seconds
(then builds itself: a starved worker must not hold a viewer). What is built follows
the same rules as a viewer's request: a replay that may not be shown yet is not built,
a game without a viewer is passed by. A worker that dies is started again for the next
match, and the match it was building is built when first viewed; one idle for
:data:`IDLE_S` seconds is ended (its memory given back) and started again when needed.
Nothing here writes to the store.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime, timedelta
from multiprocessing.connection import Connection
from typing import Any

from sqlalchemy import func, select

from arena.store import MatchRow, Store, TournamentRow
from arena.web import data, viewers

log = logging.getLogger(__name__)

#: how often the store is asked for newly viewable replays (seconds)
POLL_S = 2.0
#: per look, the newest replays built: the rest of a burst (a fast series of matches, a
#: big tournament ending) are built when someone views them
NEWEST = 4
#: how far before the latest finish a look goes back: a writer stamps a match's end
#: before it commits, so one can appear after a later one (arena.web.cache)
MARGIN = timedelta(minutes=2)
#: the worker's niceness: below the web, the referee and the bots
NICE = 10
#: rows read per look (the newest of them, if more finished in the margin)
LIMIT = 500
#: a build that takes longer than this is given up, and its worker ended (seconds)
BUILD_S = 300.0
#: a worker idle this long is ended (seconds); the next build starts another
IDLE_S = 120.0


class WorkerDied(RuntimeError):
    """The worker process ended during a build (killed, out of memory, the web
    stopping), or took longer than :data:`BUILD_S`."""


class Worker:
    """One process, at niceness :data:`NICE`, that builds frames for the web process:
    a fresh interpreter (no fork of the threaded web) that calls :func:`main`, named by
    reference (:func:`worker_command`), in a process group of its own, so that a
    terminal's Ctrl-C, sent to the web's group, is the web's to handle (it ends the
    worker); started when first needed and again after it dies, until
    :meth:`terminate`. They talk through two pipes, the store's URL first (never on a
    command line, where ``ps`` shows it). One caller of :meth:`build` at a time."""

    def __init__(self, db_url: str) -> None:
        self.db_url = db_url
        self._process: subprocess.Popen[bytes] | None = None
        self._outbox: Connection | None = None
        self._inbox: Connection | None = None
        self._lock = threading.Lock()
        self._stopped = False
        #: when the last build ended (time.monotonic)
        self.idle_since = time.monotonic()

    @property
    def pid(self) -> int | None:
        process = self._process
        return None if process is None else process.pid

    def build(self, match_id: str) -> dict[str, Any]:
        """:func:`viewers.build_entry` of ``match_id`` (its whole frames) in the worker;
        its errors are raised here, :class:`WorkerDied` if the worker ends first or
        takes too long."""
        with self._lock:
            if self._stopped:
                raise WorkerDied("the web is stopping")
            if self._process is None or self._process.poll() is not None:
                self._start()
            outbox, inbox = self._outbox, self._inbox
        assert outbox is not None and inbox is not None
        try:
            outbox.send(match_id)
            if not inbox.poll(BUILD_S):
                raise WorkerDied(f"no frames of match {match_id} after {BUILD_S:.0f} s")
            ok, value = inbox.recv()
        except (EOFError, OSError) as exc:
            self.close()
            raise WorkerDied(
                f"the frames' worker process ended while building match {match_id}"
            ) from exc
        except BaseException:  # the pipes may be out of step: start afresh
            self.close()
            raise
        finally:
            self.idle_since = time.monotonic()
        if not ok:
            raise value
        return value

    def _start(self) -> None:
        self._end()
        theirs_in, mine_out = os.pipe()  # web -> worker
        mine_in, theirs_out = os.pipe()  # worker -> web
        try:
            self._process = subprocess.Popen(
                [*worker_command(main), str(theirs_in), str(theirs_out)],
                pass_fds=(theirs_in, theirs_out),
                stdin=subprocess.DEVNULL,
                process_group=0,
            )
        except BaseException:
            os.close(mine_in)
            os.close(mine_out)
            raise
        finally:
            os.close(theirs_in)
            os.close(theirs_out)
        self._outbox = Connection(mine_out, readable=False)
        self._inbox = Connection(mine_in, writable=False)
        self._outbox.send(self.db_url)

    def terminate(self) -> None:
        """Stops the worker process now, for good, from any thread: a build under way
        ends in :class:`WorkerDied` for its caller, and no worker is started again."""
        with self._lock:
            self._stopped = True
            process = self._process
        if process is not None and process.poll() is None:
            process.terminate()

    def close(self) -> None:
        """Ends the worker (a build under way is abandoned); the next build starts
        another, unless :meth:`terminate` was called."""
        with self._lock:
            self._end()

    def _end(self) -> None:
        process, outbox, inbox = self._process, self._outbox, self._inbox
        self._process = self._outbox = self._inbox = None
        for box in (outbox, inbox):
            if box is not None:
                box.close()  # the worker's next read ends: it returns
        if process is not None:
            if process.poll() is None:
                process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def worker_command(function: Callable[[], None]) -> list[str]:
    """The command of a fresh interpreter that imports ``function`` and calls it, its
    arguments after (``sys.argv[1:]``). By reference, not ``python -m`` of its module:
    this module is imported with the package ``arena.web`` (its ``app`` imports it), so
    ``-m`` would run a second copy of it as ``__main__``, and Python warns so
    (``RuntimeWarning: 'arena.web.prebuild' found in sys.modules``) on the web's
    terminal each time a worker starts."""
    module, name = function.__module__, function.__qualname__
    return [sys.executable, "-c", f"from {module} import {name}; {name}()"]


def main() -> None:
    """The worker (:func:`worker_command`, started by :class:`Worker` with IN OUT):
    the store's URL, then a match id in, (True, its entry) or (False, the error)
    out, until the web closes its end or ends the process."""
    inbox = Connection(int(sys.argv[1]), writable=False)
    outbox = Connection(int(sys.argv[2]), readable=False)
    from arena.plugins import load_registry
    from arena.store.readonly import ReadOnlyStore

    os.nice(NICE)
    try:
        db_url = inbox.recv()
    except (EOFError, OSError):
        return
    store = ReadOnlyStore(db_url)
    registry = load_registry()
    try:
        while True:
            try:
                match_id = inbox.recv()
            except (EOFError, OSError):
                return
            try:
                answer = (True, viewers.build_entry(store, registry, match_id))
            except Exception as exc:  # sent back, raised in the web: one line there
                answer = (False, exc if _picklable(exc) else RuntimeError(str(exc)))
            try:
                outbox.send(answer)
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


class _Arrivals:
    """The rows of a table (matches, tournaments) that reach ``finished``, each once:
    a look reads those finished since the latest finish it saw less :data:`MARGIN`, and
    reports the ones it had not seen, newest first. The first look notes what is there."""

    def __init__(self, table: Any) -> None:
        self.table = table
        self.since: datetime | None = None
        self.seen: dict[str, datetime] = {}
        self.looked = False

    def new(self, session: Any) -> list[str]:
        table = self.table
        finished = (table.status == "finished", table.finished.is_not(None))
        since = self.since
        if not self.looked:  # the margin before the latest finish (an index's end)
            latest = session.scalar(select(func.max(table.finished)).where(*finished))
            since = None if latest is None else latest - MARGIN
        query = select(table.id, table.finished).where(*finished)
        if since is not None:
            query = query.where(table.finished >= since)
        query = query.order_by(table.finished.desc(), table.id.desc())
        rows = session.execute(query.limit(LIMIT) if self.looked else query).all()
        new = [row_id for row_id, _ in rows if row_id not in self.seen] if self.looked else []
        self.seen.update(rows)
        self.looked = True
        if rows:
            since = max(when for _, when in rows) - MARGIN
            if self.since is None or since > self.since:
                self.since = since
                self.seen = {k: v for k, v in self.seen.items() if v >= since}
        return new


class Prebuilder:
    """Watches the store for replays that become viewable and builds their frames into
    ``cache`` (see the module's doc). :meth:`run` is a thread's loop; :meth:`look` and
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
        #: the latest matches built, oldest first
        self.built: deque[str] = deque(maxlen=100)
        self._matches = _Arrivals(MatchRow)
        self._tournaments = _Arrivals(TournamentRow)
        #: looks made so far
        self.looks = 0
        self._stopping = False
        self._failing = False

    def look(self) -> list[str]:
        """The replays (of games with a viewer) that became viewable since the last
        look, newest first, at most :attr:`newest`: matches that finished outside a
        tournament, and the latest matches of tournaments that finished. The first look
        returns none (they were there before the web started) and notes them."""
        with self.store.session() as s:
            matches = self._matches.new(s)
            tournaments = self._tournaments.new(s)
            query = select(MatchRow.id, MatchRow.finished).where(
                MatchRow.status == "finished", MatchRow.game.in_(viewers.GAMES)
            )
            found = s.execute(
                query.where(MatchRow.id.in_(matches), MatchRow.tournament_id.is_(None))
            ).all()
            for tournament_id in tournaments:
                found += s.execute(
                    query.where(MatchRow.tournament_id == tournament_id)
                    .order_by(MatchRow.finished.desc(), MatchRow.id.desc())
                    .limit(self.newest)
                ).all()
        found.sort(key=lambda row: (row[1], row[0]), reverse=True)
        self.looks += 1
        return [match_id for match_id, _ in found[: self.newest]]

    def build(self, match_id: str) -> bool:
        """Builds the frames of ``match_id`` in the worker; False when they were kept
        already or were not built (a hidden replay, none stored, one that does not
        re-simulate, a worker that died, the store failing: each is built when viewed,
        as without a prebuilder)."""
        try:
            built = self.cache.prebuild(self.store, match_id, self.worker.build)
        except (PermissionError, data.NotFound):
            return False
        except Exception as exc:
            if not self._stopping:  # the web stopping ends the worker: nothing to say
                log.warning("frames of match %s not built ahead: %s", match_id, exc)
            return False
        if built:
            self.built.append(match_id)
        return built

    def run(self, stop: threading.Event) -> None:
        """Looks and builds every :attr:`poll_s` seconds until ``stop`` is set; ends an
        idle worker after :data:`IDLE_S` seconds."""
        try:
            while not stop.wait(self.poll_s):
                try:
                    found = self.look()
                except Exception:
                    if stop.is_set():  # the store closed under it at shutdown
                        return
                    # once (with its traceback) until a look works again, not every poll
                    if not self._failing:
                        log.exception("the frames' prebuilder cannot read the store")
                    self._failing = True
                    continue
                if self._failing:
                    log.warning("the frames' prebuilder reads the store again")
                    self._failing = False
                for match_id in found:
                    if stop.is_set():
                        return
                    self.build(match_id)
                if self.worker.pid is not None and (
                    time.monotonic() - self.worker.idle_since > IDLE_S
                ):
                    self.worker.close()
        finally:
            self.worker.close()

    def stop(self) -> None:
        """Ends a build under way at once and keeps the worker from starting again
        (from another thread: the web stopping); the thread in :meth:`run` returns once
        its ``stop`` event is set."""
        self._stopping = True
        self.worker.terminate()
