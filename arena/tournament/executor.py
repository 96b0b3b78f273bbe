"""Executors: where a tournament's matches are played.

A match is a :class:`MatchJob` (ids, names and the seed: everything can be pickled or
sent as JSON) and comes back as an :class:`~arena.store.Outcome`. Two ways to play one:

* :func:`play_local`: every seat is a house bot (a built-in or plugin bot), so the
  match runs wherever the engine is: a worker process here, a Celery worker later.
* :class:`RefereeClient`: some seat is a registered bot that connects to a referee, so
  the match runs in that referee (``ArenaService.RunMatch``) and this side waits.

:class:`LocalExecutor` is the default and needs no service: house-only matches in a
pool of worker processes, matches with connected bots through the referee, several at
once. The Celery executor (``workers/``) implements the same :class:`Executor`.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing
import os
import threading
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from arena.engine.seeds import house_bot_seed
from arena.sandbox.files import NotStarted
from arena.store import HOUSE_PREFIX, Outcome

#: a referee's RunMatch call may wait this long for one match (a long Stratego game
#: between slow bots takes minutes; a tournament is not stuck while it waits)
MATCH_TIMEOUT_S = 3600.0


@dataclass(frozen=True)
class SeatSpec:
    """One seat: ``label`` is ``name@version``; ``house`` names a house bot played
    in-process; ``path`` a bot file whose content is ``digest`` (played from the store's
    copy of that content where the store has it: a worker of another machine has no such
    path); ``hosted`` a submitted bot whose code is ``digest`` in the store, run in the
    sandbox; otherwise the seat is the registered bot ``label`` on a referee."""

    label: str
    house: str | None = None
    path: str | None = None
    digest: str | None = None
    hosted: bool = False

    @property
    def in_process(self) -> bool:
        """Played without a referee (a house bot, a bot file, hosted code)."""
        return self.house is not None or self.path is not None or self.hosted

    @property
    def player(self) -> str:
        """How a referee's RunMatch names this seat."""
        return f"{HOUSE_PREFIX}{self.house}" if self.house else self.label


@dataclass(frozen=True)
class MatchJob:
    match_id: str
    game: str
    variants: tuple[str, ...]
    options: dict[str, str]
    #: the seed of the attempt (in-process: as the store chose it when it began; a
    #: referee asks its store again, which chooses a new one for an attempt after the
    #: first: see ``Store.start_match``)
    seed: int
    seats: tuple[SeatSpec, ...]
    decision_ms: int = 0
    time_bank_ms: int = 0
    #: the seed of the public start, shared by the rotations of a deal (None: none)
    deal_seed: int | None = None
    #: how bot files are played (arena.sandbox.ISOLATIONS): under bubblewrap by default
    isolation: str = "sandbox"
    #: the store's URL, where the code of hosted seats and bot files is read (by
    #: digest: a worker never plays a path it was given)
    db: str | None = None

    @property
    def remote(self) -> bool:
        """True when a connected bot plays: the match must run in a referee."""
        return not all(seat.in_process for seat in self.seats)


class PermanentError(Exception):
    """A match that cannot be played as asked (an unknown bot, bad options): playing it
    again would fail the same way, so it is not retried."""


_registry: Any = None


def play_local(job: MatchJob) -> Outcome:
    """Play a match of house bots in this process. Exceptions become an outcome."""
    from arena.engine.match import play_match
    from arena.engine.replay import dumps

    players: list[Any] = []
    try:
        registry = _preload()
        game = registry.game(job.game)
        variants = registry.resolve_variants(job.game, list(job.variants))
        for index in range(len(job.seats)):
            players.append(_player(registry, job, index))
        rec = play_match(
            game,
            players,
            job.seed,
            job.options,
            variants,
            names=[seat.label for seat in job.seats],
            deal_seed=job.deal_seed,
        )
    except Exception as exc:
        # in-process play is deterministic (seeded bots, seeded game): playing it again
        # would fail the same way, so the match is marked failed and shown, never rated
        return Outcome(
            job.match_id,
            "failed",
            error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-3)}",
            logs=_end_sandboxed(players),
        )
    logs = _end_sandboxed(players)
    result = rec.result
    assert result is not None
    return Outcome(
        match_id=job.match_id,
        status="finished",
        reason=result.reason.value,
        places=tuple(result.places),
        detail=result.detail,
        # a bot file is refereed in process: its forfeits are recorded as a referee's
        forfeits=tuple((seat, c.forfeit) for seat, c in enumerate(rec.conduct) if c.forfeit),
        replay=dumps(rec),
        logs=logs,
    )


def _end_sandboxed(players: list[Any]) -> tuple[tuple[int, str], ...]:
    """End the sandboxed players' process trees; the end of each one's stderr."""
    logs = []
    for index, player in enumerate(players):
        if callable(getattr(player, "stderr", None)) and callable(getattr(player, "close", None)):
            player.close()
            logs.append((index, player.stderr().decode("utf-8", "replace")))
    return tuple(logs)


#: how hosted bots run on this machine: "sandbox" (bubblewrap), or "process" where
#: bubblewrap cannot run and the code is trusted (docs/hosting.md)
HOSTED_ISOLATION_ENV = "ARENA_HOSTED_ISOLATION"


def _player(registry: Any, job: MatchJob, index: int) -> Any:
    """The in-process player of seat ``index``: a house bot, a bot file's bot (played
    as ``job.isolation`` says), or hosted code in the sandbox (both from the store, by
    digest)."""
    from arena.hosting import cache
    from arena.sandbox.files import file_player
    from arena.sdk import MatchContext

    seat = job.seats[index]
    labels = [s.label for s in job.seats]
    context = MatchContext(
        job.match_id, job.game, index, labels, list(job.variants), dict(job.options)
    )
    if seat.hosted and seat.digest is not None:
        from arena.sandbox import Limits, SandboxError, stdio_player

        if job.db is None:
            raise PermanentError(f"seat {index} ({seat.label}) is hosted: no store to read it")
        isolation = os.environ.get(HOSTED_ISOLATION_ENV) or "sandbox"
        program = cache.program(seat.digest, job.db)
        options: dict[str, Any] = {"name": seat.label}
        if job.decision_ms:
            options["decision_ms"] = job.decision_ms
        if job.time_bank_ms:
            options["time_bank_ms"] = job.time_bank_ms
        try:
            return stdio_player(program, context, isolation=isolation, limits=Limits(), **options)
        except SandboxError as exc:  # its seat forfeits, saying why; the match goes on
            return NotStarted(f"its code could not start: {exc.reason}")
    if seat.path is not None and seat.digest is not None:
        path = seat.path  # a job made without a store (tests, older callers)
        if job.db is not None:
            # (CodeMissing: a tournament made before files were stored)
            with contextlib.suppress(cache.CodeMissing):
                path = str(cache.bot_file(seat.digest, job.db))
        return file_player(
            path,
            context,
            job.isolation,
            digest=seat.digest,
            decision_ms=job.decision_ms,
            time_bank_ms=job.time_bank_ms,
        )
    if seat.house is None:
        raise PermanentError(f"seat {index} ({seat.label}) is not a house bot")
    spec = registry.bot(job.game, seat.house)
    # the same seeds as a referee gives its house bots: one match, one game
    return spec.factory(index, house_bot_seed(job.seed, index))


def _preload() -> Any:
    """This process's plugin registry, loaded once."""
    global _registry
    from arena.plugins import load_registry

    if _registry is None:
        _registry = load_registry()
    return _registry


class RefereeClient:
    """Plays matches with connected bots in a referee, over ``ArenaService.RunMatch``."""

    def __init__(self, address: str, organiser_key: str = "", timeout_s: float = MATCH_TIMEOUT_S):
        import grpc

        from arena.v1 import arena_pb2_grpc as pb_grpc

        self.address = address
        self.timeout_s = timeout_s
        self._metadata = (("authorization", f"Bearer {organiser_key}"),) if organiser_key else ()
        self._channel = grpc.insecure_channel(
            address,
            options=[
                ("grpc.max_receive_message_length", 64 << 20),
                ("grpc.keepalive_time_ms", 30_000),
            ],
        )
        self._stub = pb_grpc.ArenaServiceStub(self._channel)

    def play(self, job: MatchJob) -> Outcome:
        import grpc

        from arena.v1 import arena_pb2 as pb

        request = pb.RunMatchRequest(
            game=job.game,
            variants=list(job.variants),
            options=job.options,
            players=[seat.player for seat in job.seats],
            seed=job.seed,
            deal_seed=job.deal_seed,
            match_id=job.match_id,
            wait=True,
            decision_ms=job.decision_ms,
            time_bank_ms=job.time_bank_ms,
        )
        try:
            response = self._stub.RunMatch(
                request, timeout=self.timeout_s, metadata=self._metadata, wait_for_ready=False
            )
        except grpc.RpcError as exc:
            code = exc.code()
            why = f"referee {self.address}: {code.name}: {exc.details()}"
            permanent = code in (
                grpc.StatusCode.INVALID_ARGUMENT,
                grpc.StatusCode.PERMISSION_DENIED,
                grpc.StatusCode.UNAUTHENTICATED,
            )
            return Outcome(job.match_id, "failed" if permanent else "aborted", error=why)
        return outcome_of(job.match_id, response.match)

    def close(self) -> None:
        self._channel.close()


def outcome_of(match_id: str, info: Any) -> Outcome:
    """An Outcome from a referee's ``MatchInfo``."""
    result = info.result
    if info.status != "finished":
        return Outcome(
            match_id,
            "aborted",
            reason=result.reason,
            detail=result.detail,
            error=f"the referee ended the match as {info.status or 'unknown'}: {result.detail}",
        )
    return Outcome(
        match_id=match_id,
        status="finished",
        reason=result.reason,
        places=tuple(result.places),
        detail=result.detail,
        forfeits=tuple((f.seat, f.why) for f in result.forfeits),
        replay=info.replay_json or None,
    )


class Executor(ABC):
    """Plays jobs and reports each outcome, in the calling thread, as it arrives."""

    #: whether every match it plays is claimed first (Celery workers' claims): then a
    #: match someone else holds is never played twice at once by it. An executor that
    #: does not claim (the local one) waits for the live leases of others to end before
    #: it plays a tournament (``runner.run_tournament``).
    claims = False

    @abstractmethod
    def run(
        self,
        jobs: Iterable[MatchJob],
        on_outcome: Callable[[MatchJob, Outcome], None],
        stop: threading.Event | None = None,
        on_start: Callable[[MatchJob], MatchJob | None] | None = None,
    ) -> None:
        """Play every job (a job may be retried by the caller by running it again).

        ``on_start(job)`` is called, in the calling thread, as a job is handed to a
        worker; a job it returns is played (and reported) instead: the runner gives an
        attempt the seed the store chose for it. Returns when every job has an outcome,
        or soon after ``stop`` is set (jobs not started then are left alone: they have no
        outcome)."""

    def close(self) -> None:  # noqa: B027 - optional
        """Release processes and connections."""


@dataclass
class LocalExecutor(Executor):
    """House-only matches in ``workers`` processes; the rest through a referee.

    ``workers=0`` plays house matches in this process (no pool: tests, debugging)."""

    workers: int = field(default_factory=lambda: max(1, os.cpu_count() or 1))
    referee: RefereeClient | None = None
    #: matches played at once through the referee (it plays them concurrently)
    remote_concurrency: int = 16
    _pool: cf.ProcessPoolExecutor | None = field(default=None, init=False, repr=False)
    _threads: cf.ThreadPoolExecutor | None = field(default=None, init=False, repr=False)

    def start(self) -> None:
        """Start the worker processes now and load the plugins in each (otherwise the
        first matches pay for it)."""
        if self.workers and self._pool is None:
            self._pool = self._new_pool()
        if self._pool is not None:
            for future in [self._pool.submit(_preload) for _ in range(self.workers)]:
                future.result()

    def _submit(self, job: MatchJob) -> cf.Future[Outcome]:
        if job.remote:
            if self.referee is None:
                future: cf.Future[Outcome] = cf.Future()
                future.set_result(
                    Outcome(
                        job.match_id,
                        "failed",
                        error="a seat is a connected bot, but no referee was given (--referee)",
                    )
                )
                return future
            if self._threads is None:
                self._threads = cf.ThreadPoolExecutor(self.remote_concurrency, "arena-remote")
            return self._threads.submit(self.referee.play, job)
        if self.workers == 0:
            future = cf.Future()
            future.set_result(play_local(job))
            return future
        if self._pool is None:
            self._pool = self._new_pool()
        return self._pool.submit(play_local, job)

    def _new_pool(self) -> cf.ProcessPoolExecutor:
        # spawn, not fork: the parent may hold gRPC channels and database connections,
        # which must not be shared with a forked child
        context = multiprocessing.get_context("spawn")
        return cf.ProcessPoolExecutor(self.workers, mp_context=context)

    def run(
        self,
        jobs: Iterable[MatchJob],
        on_outcome: Callable[[MatchJob, Outcome], None],
        stop: threading.Event | None = None,
        on_start: Callable[[MatchJob], MatchJob | None] | None = None,
    ) -> None:
        queue = iter(jobs)
        # a bounded window of jobs in flight: memory stays flat for any schedule size,
        # and stopping leaves few started matches behind
        window = max(2 * self.workers, 1) + self.remote_concurrency
        running: dict[cf.Future[Outcome], MatchJob] = {}

        def fill() -> None:
            while len(running) < window and not (stop and stop.is_set()):
                job = next(queue, None)
                if job is None:
                    return
                if on_start is not None:
                    job = on_start(job) or job
                running[self._submit(job)] = job

        fill()
        while running:
            done, _ = cf.wait(running, timeout=0.5, return_when=cf.FIRST_COMPLETED)
            for future in done:
                job = running.pop(future)
                try:
                    outcome = future.result()
                except cf.process.BrokenProcessPool as exc:
                    # a worker died (killed, out of memory): the next job gets a new pool;
                    # a late failure from the old pool leaves a new healthy one alone
                    if self._pool is not None and getattr(self._pool, "_broken", False):
                        self._pool.shutdown(wait=False, cancel_futures=True)
                        self._pool = None
                    outcome = Outcome(job.match_id, "aborted", error=f"worker process died: {exc}")
                except Exception as exc:
                    outcome = Outcome(job.match_id, "aborted", error=f"{type(exc).__name__}: {exc}")
                on_outcome(job, outcome)
            fill()

    def close(self) -> None:
        if self.referee is not None:
            # first: a run stopped (Ctrl-C) does not wait for the matches in flight, whose
            # calls this ends; the referee plays them on and writes their results itself
            self.referee.close()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._threads is not None:
            self._threads.shutdown(wait=True, cancel_futures=True)
            self._threads = None
