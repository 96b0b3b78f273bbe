"""The Store: the one source of truth for bots, tournaments, matches, results and ratings.

``Store(url)`` takes an SQLAlchemy URL (``sqlite:///arena.db``, ``postgresql://...``) or
a plain path (an SQLite file) and migrates the database to the newest schema on open.
Every method is one short transaction; a match's result is written at most once
(:meth:`Store.record_result` is idempotent by match id), so a retried or duplicated
delivery of the same result cannot count twice.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Engine,
    Select,
    and_,
    create_engine,
    delete,
    event,
    func,
    literal,
    make_url,
    or_,
    select,
    update,
)
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from arena.engine.seeds import attempt_seed
from arena.store import migrate
from arena.store.models import (
    BotRow,
    CodeRow,
    EntryRow,
    MatchRow,
    RatingRow,
    RecurringRow,
    ReplayRow,
    SeatRow,
    TournamentRow,
    now,
    variant_key,
)

HOUSE_PREFIX = "house:"
#: the kinds of bots a name may have as versions (house bots are named apart): a
#: connected process's, and hosted code's
REGISTERED = ("remote", "hosted")
#: statuses of a match that will not change any more
FINAL = ("finished",)
#: statuses of a match that a Celery worker may claim
WAITING = ("pending", "aborted", "failed")
#: a running match's lease when nobody says how long: ``ARENA_LEASE_S`` (60 s), as the
#: Celery workers' (docs/distributed.md)
LEASE_S = 60.0


def lease_seconds() -> float:
    """``ARENA_LEASE_S`` (60 by default): how long a running match stays its player's
    unless renewed, for every player (a Celery worker, a referee, a local run)."""
    import os

    try:
        value = float(os.environ.get("ARENA_LEASE_S", LEASE_S))
    except ValueError:
        return LEASE_S
    return value if value > 0 else LEASE_S


#: a guarded UPDATE runs in a session of its own, with no objects loaded to bring up to
#: date: skip the ORM's evaluation of the WHERE clause against them
_NO_SYNC = {"synchronize_session": False}


def hash_token(token: str) -> str:
    """Tokens are stored as SHA-256 digests: a leaked database holds no usable token."""
    return hashlib.sha256(token.encode()).hexdigest()


#: a bot's name: ASCII letters, digits, "-", "_" and ".", starting with a letter or a
#: digit, at most BOT_NAME_MAX characters: nothing that looks like another name (no
#: Cyrillic "a" for a Latin one, no full-width letters), nothing a command line takes
#: for an option (a leading "-"), nothing a URL or a label ("NAME@VERSION") must escape
BOT_NAME_MAX = 64
BOT_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{BOT_NAME_MAX - 1}}}")
BOT_NAME_RULE = (
    f"1 to {BOT_NAME_MAX} ASCII letters, digits, '-', '_' or '.', starting with a letter or a digit"
)


def valid_bot_name(name: object) -> bool:
    """Whether ``name`` follows today's rule (:data:`BOT_NAME`). A store may hold names
    from before it (an older Arena took any Unicode letter); they keep working, and the
    web marks them (``arena.web.data.shown_label``)."""
    return isinstance(name, str) and BOT_NAME.fullmatch(name) is not None


def check_bot_name(name: str) -> str:
    """``name`` if it follows the rule of bot names, else ValueError saying the rule:
    the one check of every way a bot gets a name (the referee's RegisterBot, the
    command line, a house or file bot)."""
    if not valid_bot_name(name):
        raise ValueError(f"bot name {name!r}: {BOT_NAME_RULE}")
    return name


def database_url(url: str) -> str:
    """A plain path means an SQLite file; ``postgresql://`` uses the psycopg 3 driver."""
    if "://" not in url:
        return f"sqlite:///{url}"
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


class StoreError(RuntimeError):
    """The database cannot be opened; the message is one line: which one, and what to do."""


#: where to point a user who has no database yet
MAKE_ONE = "make one with `arena demo` or `arena tournament run`, or give --db (or $ARENA_DB)"


def shown(url: str) -> str:
    """The URL as a message may show it: a plain path stays a path, a password is hidden."""
    if "://" not in url:
        return url
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url.split("://", 1)[0] + "://..."


def check_url(url: str, create: bool = True) -> None:
    """Refuse, before any connection, a URL no engine here can open, and (``create`` off)
    an SQLite file that does not exist: opening it would make an empty one."""
    full = database_url(url)
    scheme = full.split("://", 1)[0].split("+", 1)[0]
    if scheme not in ("sqlite", "postgresql"):
        raise StoreError(
            f"database URL {shown(url)}: unsupported scheme {scheme!r}; give a file path, "
            "sqlite:///FILE or postgresql://USER@HOST/NAME"
        )
    try:
        database = make_url(full).database
    except ArgumentError as exc:
        raise StoreError(f"database URL {shown(url)}: {exc}") from None
    if scheme != "sqlite" or not database or database == ":memory:":
        return
    path = Path(database)
    if not path.parent.is_dir():
        raise StoreError(
            f"cannot make the database {database}: the directory {path.parent} does not "
            "exist; create it or give another --db"
        )
    if not create and not path.exists():
        raise StoreError(f"no database at {database}: {MAKE_ONE}")


def _open_error(url: str, exc: DBAPIError) -> StoreError:
    """One line for a database that would not open (the driver's message is several)."""
    why = str(exc.orig).strip().splitlines()[0] if exc.orig is not None else str(exc)
    if "file is not a database" in why:
        what = "it is not an SQLite database; give another --db"
    elif url.startswith("sqlite") or "://" not in url:
        what = "check the file and its directory's permissions"
    else:
        what = "is the database server running there, and the URL right?"
    return StoreError(f"cannot open the database {shown(url)}: {why}; {what}")


def make_engine(url: str) -> Engine:
    url = database_url(url)
    if url.startswith("sqlite"):
        # several processes share one file (a referee, the CLI, worker processes): WAL
        # lets readers go on while one writes, and writers wait for each other
        engine = create_engine(url, connect_args={"timeout": 60})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=60000")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


@dataclass(frozen=True)
class SeatResult:
    seat: int
    place: int
    forfeit: str | None = None


@dataclass(frozen=True)
class Outcome:
    """How a match ended, as the store records it.

    ``status`` is ``finished`` (played to its end: rated), ``aborted`` (stopped before
    its end: a referee shutting down, a lost worker; played again from the start) or
    ``failed`` (it cannot be played as asked: an unknown bot, a bot's crash in-process;
    not retried by a run, played again when the tournament is resumed)."""

    match_id: str
    status: str
    reason: str = ""
    places: tuple[int, ...] = ()
    detail: str = ""
    forfeits: tuple[tuple[int, str], ...] = ()
    replay: str | None = None
    error: str | None = None
    #: per seat played from stored code (sandboxed): the end of its stderr, for its owner
    logs: tuple[tuple[int, str], ...] = ()

    def result(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "places": list(self.places),
            "detail": self.detail,
            "forfeits": [{"seat": s, "why": w} for s, w in self.forfeits],
        }


@dataclass
class NewMatch:
    """A match to write with its tournament (see :meth:`Store.create_tournament`)."""

    match_id: str
    match_key: str
    round: int
    group: int
    seed: int
    bot_ids: list[str]
    deal_seed: int | None = None


@dataclass(frozen=True)
class Started:
    """An attempt at a match that has begun (:meth:`Store.start_match`): its number and
    the seeds it plays with."""

    attempt: int
    seed: int
    deal_seed: int | None = None


@dataclass
class PlayedGame:
    """A finished match as the ratings read it: bot ids and their places, by seat."""

    match_id: str
    bot_ids: list[str]
    places: list[int]
    forfeited: list[bool] = field(default_factory=list)
    finished: datetime | None = None
    tournament_id: str | None = None


class Store:
    """Bots, tournaments, matches, results, replays and ratings."""

    def __init__(self, url: str = "sqlite:///arena.db", *, create: bool = True) -> None:
        """``create`` off: open an existing database only (a read-only command must not
        leave an empty ``arena.db`` behind). An existing one is still migrated: an older
        schema cannot be read by this code."""
        check_url(url, create)
        self.url = database_url(url)
        self.engine = make_engine(url)
        try:
            migrate.upgrade(self.engine)
        except DBAPIError as exc:
            self.engine.dispose()
            raise _open_error(url, exc) from None
        self._session = sessionmaker(self.engine, expire_on_commit=False)

    def session(self) -> Session:
        return self._session()

    def close(self) -> None:
        self.engine.dispose()

    # --- bots -----------------------------------------------------------------------

    def register_bot(self, name: str, games: Sequence[str] = ()) -> tuple[BotRow, str]:
        """A new bot, or a new version of an existing name; returns it and its token
        (the only time the token exists in clear). ``games``: what it plays (none: all)."""
        check_bot_name(name)
        # a fixed prefix: recognisable in logs and secret scanners, and never starting
        # with "-" (a token_urlsafe can), which a command line would take for an option
        token = "arena_" + secrets.token_urlsafe(32)
        for _ in range(5):  # two registrations of one name at once: one retries
            try:
                with self.session() as s, s.begin():
                    latest = s.scalar(select(func.max(BotRow.version)).where(BotRow.name == name))
                    bot = BotRow(
                        id=str(uuid.uuid4()),
                        name=name,
                        version=(latest or 0) + 1,
                        kind="remote",
                        token_hash=hash_token(token),
                        revoked=False,
                        created=now(),
                        games=sorted(set(games)),
                    )
                    s.add(bot)
                return bot, token
            except IntegrityError:
                continue
        raise RuntimeError(f"could not register {name!r}: too many registrations at once")

    def house_bot(self, name: str) -> BotRow:
        """The row of a house bot (``house:NAME``), created on first use."""
        full = name if name.startswith(HOUSE_PREFIX) else HOUSE_PREFIX + name
        check_bot_name(full[len(HOUSE_PREFIX) :])
        with self.session() as s:
            row = s.scalar(select(BotRow).where(BotRow.name == full, BotRow.version == 1))
        if row is not None:
            return row
        try:
            with self.session() as s, s.begin():
                row = BotRow(
                    id=str(uuid.uuid4()),
                    name=full,
                    version=1,
                    kind="house",
                    token_hash=None,
                    revoked=False,
                    created=now(),
                    games=[],
                )
                s.add(row)
            return row
        except IntegrityError:  # created by another process meanwhile
            with self.session() as s:
                return s.scalars(select(BotRow).where(BotRow.name == full)).one()

    def file_bot(self, name: str, digest: str, path: str) -> BotRow:
        """The version of the bot file ``name`` (``file:STEM``) whose content is ``digest``:
        the one stored (now at ``path``), or a new one numbered after the others."""
        row, _ = self._version_of_content(name, "file", digest, [], path=path)
        return row

    def has_bot(self, name: str) -> bool:
        """Whether any version of ``name`` exists (of any kind)."""
        with self.session() as s:
            return s.scalar(select(BotRow.id).where(BotRow.name == name).limit(1)) is not None

    def hosted_bot(
        self, name: str, digest: str, games: Sequence[str], token: bool = False
    ) -> tuple[BotRow, str | None, bool]:
        """The hosted version of ``name`` whose code is ``digest`` (stored first with
        :meth:`put_code`): the one there is, or a new one numbered after every version
        of the name. Returns it, its token if ``token`` asked for one on a new version
        (a new name's: the only time it exists in clear), and whether it is new."""
        check_bot_name(name)
        secret = "arena_" + secrets.token_urlsafe(32) if token else None
        row, new = self._version_of_content(
            name, "hosted", digest, games, token_hash=hash_token(secret) if secret else None
        )
        return row, secret if new else None, new

    def _version_of_content(
        self,
        name: str,
        kind: str,
        digest: str,
        games: Sequence[str],
        path: str | None = None,
        token_hash: str | None = None,
    ) -> tuple[BotRow, bool]:
        """The ``kind`` version of ``name`` whose content is ``digest`` (a file's moved
        to ``path``), or a new one numbered after every version of the name; and whether
        it is new."""
        for _ in range(5):  # two processes adding one version at once: one retries
            with self.session() as s, s.begin():
                row = s.scalar(
                    select(BotRow).where(
                        BotRow.name == name, BotRow.kind == kind, BotRow.digest == digest
                    )
                )
                if row is not None:
                    if path is not None:
                        row.path = path  # the same content, perhaps moved: play it from here
                    return row, False
            try:
                with self.session() as s, s.begin():
                    latest = s.scalar(select(func.max(BotRow.version)).where(BotRow.name == name))
                    row = BotRow(
                        id=str(uuid.uuid4()),
                        name=name,
                        version=(latest or 0) + 1,
                        kind=kind,
                        token_hash=token_hash,
                        revoked=False,
                        created=now(),
                        games=sorted(set(games)),
                        digest=digest,
                        path=path,
                    )
                    s.add(row)
                return row, True
            except IntegrityError:
                continue
        raise RuntimeError(f"could not add {name!r}: too many versions added at once")

    # --- code kept by content -------------------------------------------------------

    def put_code(self, digest: str, format: str, data: bytes) -> None:
        """Keep ``data`` (whose SHA-256 is ``digest``) once: the same content again
        changes nothing."""
        if hashlib.sha256(data).hexdigest() != digest:
            raise ValueError(f"code {digest[:12]}: its bytes do not have that digest")
        with self.session() as s:
            if s.get(CodeRow, digest) is not None:
                return
        try:
            with self.session() as s, s.begin():
                s.add(CodeRow(digest=digest, format=format, size=len(data), data=data))
        except IntegrityError:  # stored by another writer meanwhile: the same bytes
            pass

    def code(self, digest: str) -> CodeRow | None:
        with self.session() as s:
            return s.get(CodeRow, digest)

    def code_sizes(self, digests: Iterable[str]) -> dict[str, int]:
        """The size of each stored code among ``digests`` (one read, not its bytes)."""
        wanted = sorted(set(digests))
        out: dict[str, int] = {}
        with self.session() as s:
            for part in _chunks(wanted, 500):
                rows = s.execute(
                    select(CodeRow.digest, CodeRow.size).where(CodeRow.digest.in_(part))
                )
                out.update({digest: size for digest, size in rows})
        return out

    def seat_stderr(self, match_id: str, seat: int) -> tuple[str, str | None] | None:
        """The bot id of a match's seat and what its sandboxed bot wrote to stderr
        there (None: not kept); None if there is no such seat."""
        with self.session() as s:
            row = s.get(SeatRow, (match_id, seat))
            return None if row is None else (row.bot_id, row.stderr)

    def bot_by_token(self, token: str) -> BotRow | None:
        digest = hash_token(token)
        with self.session() as s:
            bot = s.scalar(select(BotRow).where(BotRow.token_hash == digest))
        if bot is None or not hmac.compare_digest(bot.token_hash or "", digest):
            return None
        return bot

    def bot(self, bot_id: str) -> BotRow | None:
        with self.session() as s:
            return s.get(BotRow, bot_id)

    def latest_bot(self, name: str) -> BotRow | None:
        """The newest unrevoked version of a registered bot (connected or hosted)."""
        with self.session() as s:
            return s.scalar(
                select(BotRow)
                .where(BotRow.name == name, BotRow.kind.in_(REGISTERED), BotRow.revoked.is_(False))
                .order_by(BotRow.version.desc())
                .limit(1)
            )

    def latest_bots(self, game: str) -> list[BotRow]:
        """The newest unrevoked version of every registered bot that plays ``game``."""
        newest: dict[str, BotRow] = {}
        for bot in self.bots(include_house=False):
            if bot.revoked or not bot.plays(game):
                continue
            if bot.name not in newest or bot.version > newest[bot.name].version:
                newest[bot.name] = bot
        return [newest[name] for name in sorted(newest)]

    def find_bot(self, spec: str) -> BotRow | None:
        """``name`` (newest version), ``name@version`` or ``house:name``."""
        name, _, version = spec.partition("@")
        with self.session() as s:
            query = select(BotRow).where(BotRow.name == name)
            if version:
                if not version.isdigit():
                    return None
                query = query.where(BotRow.version == int(version))
            return s.scalar(query.order_by(BotRow.version.desc()).limit(1))

    def bots(self, include_house: bool = True) -> list[BotRow]:
        with self.session() as s:
            query = select(BotRow).order_by(BotRow.name, BotRow.version)
            if not include_house:
                query = query.where(BotRow.kind.in_(REGISTERED))
            return list(s.scalars(query))

    def bots_of(self, bot_ids: Iterable[str]) -> dict[str, BotRow]:
        """These bot versions by id, in one query (a match's, a tournament's)."""
        ids = sorted(set(bot_ids))
        out: dict[str, BotRow] = {}
        with self.session() as s:
            for chunk in _chunks(ids, 500):
                out.update(
                    (row.id, row) for row in s.scalars(select(BotRow).where(BotRow.id.in_(chunk)))
                )
        return out

    def revoke_bot(self, bot_id: str) -> bool:
        with self.session() as s, s.begin():
            bot = s.get(BotRow, bot_id)
            if bot is None:
                return False
            bot.revoked = True
        return True

    def is_revoked(self, bot_id: str) -> bool:
        with self.session() as s:
            bot = s.get(BotRow, bot_id)
            return bot is None or bot.revoked

    # --- matches ----------------------------------------------------------------------

    def start_match(
        self,
        match_id: str,
        game: str,
        players: list[str],
        bot_ids: Sequence[str] | None = None,
        variants: Sequence[str] = (),
        options: dict[str, str] | None = None,
        seed: int | None = None,
        referee: str = "",
        deal_seed: int | None = None,
        owner: str = "",
        lease_s: float | None = None,
    ) -> Started | None:
        """Mark a match running (one more attempt), creating it if it is new (a match
        outside any tournament); the attempt and the seeds to play it with. None if it
        has finished already: nothing to play.

        ``seed``: the seed it is played with (needed for a new match; given for a first
        attempt, it replaces the stored one; ``deal_seed`` likewise). An attempt after
        the first never plays a seed given or stored: its bots (or another's) may have
        seen what that one made. It plays :func:`~arena.engine.seeds.attempt_seed` of the
        stored seed, which becomes the stored one (the replay's), chosen here with the
        attempt's number in one transaction. ``referee``: the address of the referee
        playing it (empty: in-process).

        ``owner`` and ``lease_s``: who plays it and for how long it is theirs unless they
        renew (:meth:`renew_owned`): every running match has a lease, so one whose
        player died (a referee that took a late RunMatch, a local run killed) is
        reclaimed by a sweep once it lapses. A match a Celery worker holds stays the
        worker's."""
        moment = now()
        lease = moment + timedelta(seconds=lease_s if lease_s is not None else lease_seconds())
        with self.session() as s, s.begin():
            row = s.get(MatchRow, match_id, with_for_update=True)
            if row is None:
                if seed is None:
                    # never a default: a seed anyone can guess tells every secret
                    raise ValueError(f"match {match_id!r} is new: give the seed it is played with")
                s.add(
                    MatchRow(
                        id=match_id,
                        game=game,
                        variants=list(variants),
                        variant_key=variant_key(list(variants), dict(options or {}), game),
                        options=dict(options or {}),
                        seed=seed,
                        deal_seed=deal_seed,
                        status="running",
                        players=list(players),
                        attempts=1,
                        round=0,
                        group=0,
                        created=now(),
                        started=now(),
                        referee=referee,
                        worker=owner or None,
                        lease_until=lease,
                    )
                )
                s.flush()
                for seat, bot_id in enumerate(bot_ids or ()):
                    s.add(SeatRow(match_id=match_id, seat=seat, bot_id=bot_id))
                return Started(1, seed, deal_seed)
            if row.status in FINAL:
                return None
            if (
                row.status == "running"
                and row.lease_until is not None
                and as_utc(row.lease_until) > moment
            ):
                # a Celery worker claimed it (counted the attempt, chose its seed): the
                # referee it chose only says that it plays it
                row.referee = referee
                return Started(row.attempts, row.seed, row.deal_seed)
            row.status = "running"
            row.worker = owner or None
            row.lease_until = lease
            row.retry_at = None
            row.attempts += 1
            row.started = now()
            row.error = None
            row.referee = referee
            # the store tells the seed that is played, always
            if row.attempts > 1:
                row.seed = attempt_seed(row.seed, row.attempts)
            else:
                if seed is not None:
                    row.seed = seed
                if deal_seed is not None:
                    row.deal_seed = deal_seed
            return Started(row.attempts, row.seed, row.deal_seed)

    def record_result(self, outcome: Outcome, attempt: int | None = None, owner: str = "") -> bool:
        """Write a match's result once. True if this call wrote it; False if the match
        had a final result already (a duplicate delivery: nothing changes) or is unknown.

        An ``aborted`` outcome (stopped before its end) or a ``failed`` one (could not be
        played as asked) only marks an unfinished match, to be played again.

        ``attempt``: the fencing token of a worker's claim (:meth:`claim_match`). The
        write then happens only if nobody has claimed the match since: a worker that was
        taken for dead, and whose match was given to another, changes nothing. Without
        it, an unfinished outcome leaves a match that a worker holds alone, unless the
        caller is the ``owner`` that started it (:meth:`start_match`)."""
        guard = [MatchRow.id == outcome.match_id, MatchRow.status.not_in(FINAL)]
        if attempt is not None:
            guard.append(MatchRow.attempts == attempt)
        with self.session() as s, s.begin():
            if outcome.status != "finished":
                if attempt is None:
                    # a match a worker holds is that worker's to put off or give up (a
                    # referee's word that it aborted reaches the worker too)
                    mine = [
                        MatchRow.status != "running",
                        MatchRow.lease_until.is_(None),
                        MatchRow.worker.is_(None),
                    ]
                    if owner:
                        mine.append(MatchRow.worker == owner)
                    guard.append(or_(*mine))
                done = s.execute(
                    update(MatchRow)
                    .where(*guard)
                    .values(
                        status=outcome.status,
                        result=outcome.result(),
                        error=outcome.error or outcome.detail or None,
                        finished=now(),
                        lease_until=None,
                    ),
                    execution_options=_NO_SYNC,
                )
                return done.rowcount == 1
            # the guarded UPDATE is the idempotence: of two writers, one changes the row
            done = s.execute(
                update(MatchRow)
                .where(*guard)
                .values(
                    status="finished",
                    result=outcome.result(),
                    finished=now(),
                    error=None,
                    lease_until=None,
                ),
                execution_options=_NO_SYNC,
            )
            if done.rowcount != 1:
                return False
            forfeits = dict(outcome.forfeits)
            logs = dict(outcome.logs)
            seats = s.scalars(select(SeatRow).where(SeatRow.match_id == outcome.match_id))
            for seat in seats:
                if seat.seat < len(outcome.places):
                    seat.place = outcome.places[seat.seat]
                seat.forfeit = forfeits.get(seat.seat)
                if seat.seat in logs:
                    seat.stderr = logs[seat.seat]
            if outcome.replay is not None:
                s.merge(ReplayRow(match_id=outcome.match_id, data=outcome.replay))
            return True

    def finish_match(
        self,
        match_id: str,
        status: str,
        result: dict[str, Any] | None,
        replay: str | None,
        logs: dict[int, str] | None = None,
        owner: str = "",
    ) -> bool:
        """:meth:`record_result` from the referee's result dict and the replay's JSON
        text (``logs``: its sandboxed seats' stderr; ``owner``: the referee's name, as it
        started the match)."""
        result = result or {}
        return self.record_result(
            Outcome(
                match_id=match_id,
                status="finished" if status == "finished" else "aborted",
                reason=result.get("reason", ""),
                places=tuple(result.get("places", ())),
                detail=result.get("detail", ""),
                forfeits=tuple((f["seat"], f["why"]) for f in result.get("forfeits", ())),
                replay=replay or None,
                logs=tuple(sorted((logs or {}).items())),
            ),
            owner=owner,
        )

    # --- the Celery workers' claims (docs/distributed.md) --------------------------------

    def claim_match(
        self, match_id: str, worker: str, lease_s: float, referee: str = ""
    ) -> int | None:
        """Claim a match to play it: one guarded UPDATE from waiting (pending, aborted,
        failed; a retry only once it is due) to running, with one more attempt, the
        worker's name, the referee chosen (empty: in-process) and a lease of ``lease_s``;
        only while its tournament is running (a stopped one starts no match). The
        attempt number is the claim's fencing token; None if the match is running
        elsewhere, finished, not due, or its tournament stopped. An attempt after the
        first gets its new seed here, in the same transaction
        (:func:`~arena.engine.seeds.attempt_seed`; :meth:`claim` tells it)."""
        claimed = self.claim(match_id, worker, lease_s, referee)
        return None if claimed is None else claimed[0]

    def claim(
        self, match_id: str, worker: str, lease_s: float, referee: str = ""
    ) -> tuple[int, int] | None:
        """:meth:`claim_match`, and the seed the attempt plays: (attempt, seed)."""
        moment = now()
        running = select(TournamentRow.id).where(TournamentRow.status == "running")
        with self.session() as s, s.begin():
            claimed = s.execute(
                update(MatchRow)
                .where(
                    MatchRow.id == match_id,
                    MatchRow.status.in_(WAITING),
                    or_(MatchRow.retry_at.is_(None), MatchRow.retry_at <= moment),
                    or_(MatchRow.tournament_id.is_(None), MatchRow.tournament_id.in_(running)),
                )
                .values(
                    status="running",
                    attempts=MatchRow.attempts + 1,
                    worker=worker,
                    lease_until=moment + timedelta(seconds=lease_s),
                    started=moment,
                    retry_at=None,
                    error=None,
                    referee=referee,
                )
                .returning(MatchRow.attempts, MatchRow.seed),
                execution_options=_NO_SYNC,
            ).one_or_none()
            if claimed is None:
                return None
            attempt, seed = int(claimed[0]), int(claimed[1])
            if attempt > 1:  # played before: never the seed its bots have seen
                seed = attempt_seed(seed, attempt)
                s.execute(
                    update(MatchRow)
                    .where(MatchRow.id == match_id, MatchRow.attempts == attempt)
                    .values(seed=seed),
                    execution_options=_NO_SYNC,
                )
            return attempt, seed

    def renew_lease(self, match_id: str, attempt: int, lease_s: float) -> bool:
        """Extend the lease of a claim that is still this worker's; False if it is not."""
        with self.session() as s, s.begin():
            done = s.execute(
                update(MatchRow)
                .where(
                    MatchRow.id == match_id,
                    MatchRow.attempts == attempt,
                    MatchRow.status == "running",
                )
                .values(lease_until=now() + timedelta(seconds=lease_s)),
                execution_options=_NO_SYNC,
            )
            return done.rowcount == 1

    def renew_owned(self, owner: str, match_ids: Sequence[str], lease_s: float) -> list[str]:
        """Extend the leases of the running matches that ``owner`` started
        (:meth:`start_match`: a referee, a local run); the ids still its."""
        if not match_ids:
            return []
        with self.session() as s, s.begin():
            done = s.execute(
                update(MatchRow)
                .where(
                    MatchRow.id.in_(list(match_ids)),
                    MatchRow.worker == owner,
                    MatchRow.status == "running",
                )
                .values(lease_until=now() + timedelta(seconds=lease_s))
                .returning(MatchRow.id),
                execution_options=_NO_SYNC,
            )
            return list(done.scalars())

    def release_lost(self, match_id: str, worker: str) -> bool:
        """A worker saw the process playing ``match_id`` die (Celery's
        ``WorkerLostError``): the claim of that process ends now, not when its lease
        lapses; the match is pending again, to be claimed by the task given back."""
        with self.session() as s, s.begin():
            done = s.execute(
                update(MatchRow)
                .where(
                    MatchRow.id == match_id,
                    MatchRow.worker == worker,
                    MatchRow.status == "running",
                )
                .values(
                    status="pending",
                    lease_until=None,
                    sent=now(),
                    error=literal("the process of ") + MatchRow.worker + literal(" died"),
                ),
                execution_options=_NO_SYNC,
            )
            return done.rowcount == 1

    def live_leases(self, tournament_id: str) -> list[MatchRow]:
        """The tournament's running matches whose lease has not lapsed: someone plays
        them (a worker, a referee, a local run)."""
        with self.session() as s:
            return list(
                s.scalars(
                    select(MatchRow).where(
                        MatchRow.tournament_id == tournament_id,
                        MatchRow.status == "running",
                        MatchRow.lease_until >= now(),
                    )
                )
            )

    def finish_complete(self, tournament_ids: Sequence[str] | None = None) -> list[str]:
        """Mark finished every tournament of ``tournament_ids`` (None: every running
        one) whose every match is finished; their ids. The end of a tournament is derived
        from its matches by whoever sweeps, so a message that said so and was lost
        (the broker away when the last result was written) loses nothing."""
        unfinished = (
            select(MatchRow.id)
            .where(MatchRow.tournament_id == TournamentRow.id, MatchRow.status != "finished")
            .exists()
        )
        played = select(MatchRow.id).where(MatchRow.tournament_id == TournamentRow.id).exists()
        guard = [~unfinished, played]
        if tournament_ids is None:
            guard.append(TournamentRow.status == "running")
        else:  # named: whatever its status says (a stopped one's last match ended)
            guard += [
                TournamentRow.id.in_(list(tournament_ids)),
                TournamentRow.status != "finished",
            ]
        moment = now()
        with self.session() as s, s.begin():
            done = s.execute(
                update(TournamentRow)
                .where(*guard)
                .values(status="finished", finished=moment)
                .returning(TournamentRow.id),
                execution_options=_NO_SYNC,
            )
            return list(done.scalars())

    def put_off(self, match_id: str, delay_s: float, why: str, attempt: int | None = None) -> bool:
        """Leave a match waiting to be tried again in ``delay_s`` (transient trouble),
        counting the retry; whoever sweeps (the client, beat) sends it again then. With
        ``attempt``, only while the claim is still the caller's; without, only while
        nobody plays it."""
        guard = [MatchRow.id == match_id]
        if attempt is None:
            guard.append(MatchRow.status.in_(WAITING))
        else:
            guard += [MatchRow.attempts == attempt, MatchRow.status.not_in(FINAL)]
        moment = now()
        with self.session() as s, s.begin():
            done = s.execute(
                update(MatchRow)
                .where(*guard)
                .values(
                    status="pending",
                    retry_at=moment + timedelta(seconds=delay_s),
                    retries=MatchRow.retries + 1,
                    waiting_since=func.coalesce(MatchRow.waiting_since, moment),
                    lease_until=None,
                    error=why,
                ),
                execution_options=_NO_SYNC,
            )
            return done.rowcount == 1

    def mark_sent(self, match_ids: Sequence[str]) -> None:
        """Note that tasks for these matches are being sent now; any that waits from an
        earlier run (aborted, failed, or running with a lapsed lease or none: its player
        died)
        is pending again, so that a worker may claim it."""
        moment = now()
        with self.session() as s, s.begin():
            for chunk in _chunks(list(match_ids), 500):
                s.execute(
                    update(MatchRow)
                    .where(
                        MatchRow.id.in_(chunk),
                        or_(
                            MatchRow.status.in_(WAITING),
                            and_(
                                MatchRow.status == "running",
                                or_(MatchRow.lease_until.is_(None), MatchRow.lease_until < moment),
                            ),
                        ),
                    )
                    .values(status="pending", sent=moment, retry_at=None, lease_until=None),
                    execution_options=_NO_SYNC,
                )

    def delivered(self, match_id: str) -> None:
        """A task for this match has reached a worker: while it is pending, its task is
        not lost (the worker may ask the referees for a while before it claims it)."""
        with self.session() as s, s.begin():
            s.execute(
                update(MatchRow)
                .where(MatchRow.id == match_id, MatchRow.status == "pending")
                .values(sent=now()),
                execution_options=_NO_SYNC,
            )

    def reclaim_stale(
        self, tournament_ids: Sequence[str] | None = None, max_attempts: int = 5
    ) -> list[str]:
        """Running matches whose worker let its lease lapse (it died, or lost the
        store): pending again, to be sent again at once. Their ids. ``tournament_ids``
        None: every running tournament's. A match that has lost its worker
        ``max_attempts`` times (one that kills its worker: out of memory) is left
        ``aborted`` instead, for its tournament's run to decide."""
        stale = [MatchRow.status == "running", MatchRow.lease_until < now()]
        lapsed = literal("the lease of ") + MatchRow.worker + literal(" lapsed")
        self._to_send(
            tournament_ids,
            [*stale, MatchRow.attempts >= max_attempts],
            status="aborted",
            lease_until=None,
            error=lapsed + literal(f", {max_attempts} attempts: given up"),
        )
        return self._to_send(
            tournament_ids, stale, status="pending", lease_until=None, error=lapsed
        )

    def due_retries(self, tournament_ids: Sequence[str] | None = None) -> list[str]:
        """Matches put off (:meth:`put_off`) whose time has come; their ids, each handed
        out once (its ``retry_at`` is cleared): the caller sends them."""
        return self._to_send(
            tournament_ids,
            [MatchRow.status == "pending", MatchRow.retry_at <= now()],
            retry_at=None,
        )

    def unclaimed(
        self, older_than_s: float, tournament_ids: Sequence[str] | None = None
    ) -> list[str]:
        """Pending matches sent (or last delivered: :meth:`delivered`) more than
        ``older_than_s`` ago that no worker claimed and that wait for no retry: the
        caller has seen that their tasks are lost, and sends them again. Their ids."""
        return self._to_send(
            tournament_ids,
            [
                MatchRow.status == "pending",
                MatchRow.retry_at.is_(None),
                MatchRow.sent < now() - timedelta(seconds=older_than_s),
            ],
        )

    def _to_send(
        self, tournament_ids: Sequence[str] | None, where: list[Any], **values: Any
    ) -> list[str]:
        """One guarded UPDATE that marks the matches it finds as sent now: of two
        sweepers (a client and beat), each match goes to one."""
        if tournament_ids is None:
            running = select(TournamentRow.id).where(TournamentRow.status == "running")
            scope = MatchRow.tournament_id.in_(running)
        else:
            scope = MatchRow.tournament_id.in_(list(tournament_ids))
        with self.session() as s, s.begin():
            found = s.execute(
                update(MatchRow)
                .where(scope, *where)
                .values(sent=now(), **values)
                .returning(MatchRow.id),
                execution_options=_NO_SYNC,
            )
            return list(found.scalars())

    def tournaments_of(self, match_ids: Sequence[str]) -> set[str]:
        """The tournaments these matches belong to."""
        out: set[str] = set()
        with self.session() as s:
            for chunk in _chunks(list(match_ids), 500):
                query = select(MatchRow.tournament_id).where(MatchRow.id.in_(chunk)).distinct()
                out.update(t for t in s.scalars(query) if t is not None)
        return out

    def match_states(self, match_ids: Sequence[str]) -> dict[str, str]:
        """match id -> status, for many matches in few queries."""
        out: dict[str, str] = {}
        with self.session() as s:
            for chunk in _chunks(list(match_ids), 500):
                rows = s.execute(select(MatchRow.id, MatchRow.status).where(MatchRow.id.in_(chunk)))
                out.update({match_id: status for match_id, status in rows})
        return out

    def match(self, match_id: str) -> MatchRow | None:
        with self.session() as s:
            return s.get(MatchRow, match_id)

    def replay(self, match_id: str) -> str | None:
        with self.session() as s:
            row = s.get(ReplayRow, match_id)
            return row.data if row else None

    def seats(self, match_id: str) -> list[SeatRow]:
        with self.session() as s:
            return list(
                s.scalars(
                    select(SeatRow).where(SeatRow.match_id == match_id).order_by(SeatRow.seat)
                )
            )

    # --- tournaments ------------------------------------------------------------------

    def create_tournament(
        self,
        tournament: TournamentRow,
        entries: Iterable[EntryRow],
        matches: Iterable[NewMatch],
        labels: dict[str, str],
    ) -> TournamentRow:
        """Write a tournament, its entries and every match of its schedule (pending)
        in one transaction: a tournament exists whole or not at all."""
        created = now()
        with self.session() as s, s.begin():
            s.add(tournament)
            s.flush()
            s.add_all(entries)
            s.flush()
            seats = []
            for m in matches:
                s.add(
                    MatchRow(
                        id=m.match_id,
                        tournament_id=tournament.id,
                        match_key=m.match_key,
                        round=m.round,
                        group=m.group,
                        game=tournament.game,
                        variants=list(tournament.variants),
                        variant_key=variant_key(
                            tournament.variants, tournament.options, tournament.game
                        ),
                        options=dict(tournament.options),
                        seed=m.seed,
                        deal_seed=m.deal_seed,
                        status="pending",
                        players=[labels[b] for b in m.bot_ids],
                        attempts=0,
                        created=created,
                    )
                )
                seats.extend(
                    SeatRow(match_id=m.match_id, seat=i, bot_id=b) for i, b in enumerate(m.bot_ids)
                )
            s.flush()
            s.add_all(seats)
        return tournament

    def tournament(self, tournament_id: str) -> TournamentRow | None:
        with self.session() as s:
            row = s.get(TournamentRow, tournament_id)
            if row is None and len(tournament_id) >= 4:  # a unique prefix will do
                rows = list(
                    s.scalars(
                        select(TournamentRow).where(
                            TournamentRow.id.startswith(tournament_id, autoescape=True)
                        )
                    ).all()
                )
                row = rows[0] if len(rows) == 1 else None
            return row

    def tournaments(self) -> list[TournamentRow]:
        with self.session() as s:
            return list(s.scalars(select(TournamentRow).order_by(TournamentRow.created)))

    def entries(self, tournament_id: str) -> list[EntryRow]:
        with self.session() as s:
            return list(
                s.scalars(
                    select(EntryRow)
                    .where(EntryRow.tournament_id == tournament_id)
                    .order_by(EntryRow.label)
                )
            )

    def set_tournament_status(self, tournament_id: str, status: str) -> None:
        with self.session() as s, s.begin():
            row = s.get(TournamentRow, tournament_id)
            if row is None:
                raise KeyError(f"no tournament {tournament_id}")
            row.status = status
            if status == "running" and row.started is None:
                row.started = now()
            if status == "finished":
                row.finished = now()

    def stop_tournament(self, tournament_id: str) -> bool:
        """Mark a running (or created) tournament stopped: no match of it is claimed any
        more (:meth:`claim_match`); True if this call stopped it."""
        with self.session() as s, s.begin():
            done = s.execute(
                update(TournamentRow)
                .where(
                    TournamentRow.id == tournament_id,
                    TournamentRow.status.in_(("running", "created")),
                )
                .values(status="stopped"),
                execution_options=_NO_SYNC,
            )
            return done.rowcount == 1

    def set_tournament_run(
        self,
        tournament_id: str,
        executor: str,
        workers: int | None,
        referee: str | None,
        organiser_key: bool,
    ) -> None:
        """Remember how a tournament is played, for its resume (never the key itself)."""
        with self.session() as s, s.begin():
            row = s.get(TournamentRow, tournament_id)
            if row is None:
                raise KeyError(f"no tournament {tournament_id}")
            row.executor, row.workers = executor, workers
            row.referee, row.organiser_key = referee, organiser_key

    def tournament_matches(
        self, tournament_id: str, statuses: Sequence[str] | None = None
    ) -> list[MatchRow]:
        """The tournament's matches in schedule order (round, group, key)."""
        with self.session() as s:
            query = select(MatchRow).where(MatchRow.tournament_id == tournament_id)
            if statuses is not None:
                query = query.where(MatchRow.status.in_(list(statuses)))
            query = query.order_by(MatchRow.round, MatchRow.group, MatchRow.match_key)
            return list(s.scalars(query))

    def match_seats(self, match_ids: Sequence[str]) -> dict[str, list[SeatRow]]:
        out: dict[str, list[SeatRow]] = {m: [] for m in match_ids}
        with self.session() as s:
            for chunk in _chunks(list(match_ids), 500):
                rows = s.scalars(
                    select(SeatRow).where(SeatRow.match_id.in_(chunk)).order_by(SeatRow.seat)
                )
                for row in rows:
                    out[row.match_id].append(row)
        return out

    def progress_by_tournament(self) -> dict[str, Counter[str]]:
        """:meth:`progress` of every tournament, in one query (the tournament and
        status index)."""
        out: dict[str, Counter[str]] = {}
        with self.session() as s:
            rows = s.execute(
                select(MatchRow.tournament_id, MatchRow.status, func.count())
                .where(MatchRow.tournament_id.is_not(None))
                .group_by(MatchRow.tournament_id, MatchRow.status)
            )
            for tournament_id, status, count in rows:
                out.setdefault(tournament_id, Counter())[status] = count
        return out

    def complete(self, tournament_id: str) -> bool:
        """Whether every match of the tournament is finished (one cheap query)."""
        with self.session() as s:
            left = s.scalar(
                select(MatchRow.id)
                .where(MatchRow.tournament_id == tournament_id, MatchRow.status != "finished")
                .limit(1)
            )
            return left is None

    def progress(self, tournament_id: str) -> Counter[str]:
        """How many of the tournament's matches are in each status."""
        with self.session() as s:
            rows = s.execute(
                select(MatchRow.status, func.count())
                .where(MatchRow.tournament_id == tournament_id)
                .group_by(MatchRow.status)
            )
            return Counter({status: count for status, count in rows})

    # --- recurring tournaments -------------------------------------------------------

    def add_recurring(self, row: RecurringRow) -> RecurringRow:
        with self.session() as s, s.begin():
            s.add(row)
        return row

    def recurring(self) -> list[RecurringRow]:
        with self.session() as s:
            return list(s.scalars(select(RecurringRow).order_by(RecurringRow.created)))

    def find_recurring(self, recurring_id: str) -> RecurringRow | None:
        """A recurring tournament by its id, or a unique prefix of it (four or more)."""
        with self.session() as s:
            return _find_recurring(s, recurring_id)

    def pause_recurring(self, recurring_id: str) -> RecurringRow | None:
        """Stop making runs (a run going on plays to its end); None if there is no such
        recurring tournament. Pausing a paused one changes nothing."""
        with self.session() as s, s.begin():
            row = _find_recurring(s, recurring_id, lock=True)
            if row is not None:
                row.enabled = False
            return row

    def resume_recurring(self, recurring_id: str, when: datetime) -> RecurringRow | None:
        """Make runs again, keeping the schedule's cadence: a next run time that passed
        while it was paused moves to the first one after ``when`` (the runs it missed
        are not made up, not even one of them). None if there is no such one."""
        when = as_utc(when)
        with self.session() as s, s.begin():
            row = _find_recurring(s, recurring_id, lock=True)
            if row is not None and not row.enabled:
                row.enabled = True
                row.next_run = _first_after(as_utc(row.next_run), row.every_s, when)
            return row

    def delete_recurring(self, recurring_id: str) -> RecurringRow | None:
        """Delete the definition: it never runs again. Its runs stay (each is a
        tournament of its own, with its results); a run going on plays to its end.
        Returns what was deleted, None if there was no such one."""
        with self.session() as s, s.begin():
            row = _find_recurring(s, recurring_id, lock=True)
            if row is not None:
                s.delete(row)
            return row

    def claim_due(self, when: datetime) -> list[Claim]:
        """The runs of recurring tournaments due at ``when``, each claimed by one caller:
        of two callers at once only one gets a given run, by a guarded UPDATE of its next
        time, which moves on by whole periods past ``when`` (missed runs are not made up).

        A run does not start while the schedule's previous run is still going: the
        claim then moves the next time on all the same and comes back ``skipped``. A
        paused schedule is not due at all (its next time stays where it was)."""
        when = as_utc(when)
        with self.session() as s:
            due = list(
                s.scalars(
                    select(RecurringRow).where(
                        RecurringRow.enabled.is_(True), RecurringRow.next_run <= when
                    )
                )
            )
        return [claim for row in due if (claim := self._claim(row, when)) is not None]

    def _claim(self, row: RecurringRow, when: datetime) -> Claim | None:
        following = _first_after(as_utc(row.next_run), row.every_s, when)
        tournament_id = uuid.uuid4().hex[:12]
        # the same row, still due at the time that was read, still enabled
        mine = (
            RecurringRow.id == row.id,
            RecurringRow.next_run == row.next_run,
            RecurringRow.enabled.is_(True),
        )
        with self.session() as s, s.begin():
            claimed = s.execute(
                update(RecurringRow)
                .where(*mine, ~_previous_run_going(when))
                .values(
                    next_run=following,
                    runs=RecurringRow.runs + 1,
                    last_tournament_id=tournament_id,
                    claimed=when,
                ),
                execution_options=_NO_SYNC,
            )
            if claimed.rowcount == 1:
                return Claim(row, row.runs + 1, tournament_id)
            # the previous run is going (or another caller got this run): skip this time
            skipped = s.execute(
                update(RecurringRow).where(*mine).values(next_run=following),
                execution_options=_NO_SYNC,
            )
            if skipped.rowcount == 1:
                return Claim(row, row.runs + 1, tournament_id, skipped=True)
        return None

    def release(self, claim: Claim) -> None:
        """Give back a claimed run whose tournament could not be created (too few bots,
        say): the schedule's run count and previous run are what they were, so neither
        its numbering nor its next run waits for a run that never was."""
        with self.session() as s, s.begin():
            s.execute(
                update(RecurringRow)
                .where(
                    RecurringRow.id == claim.recurring.id,
                    RecurringRow.last_tournament_id == claim.tournament_id,
                )
                .values(
                    runs=RecurringRow.runs - 1,
                    last_tournament_id=claim.recurring.last_tournament_id,
                    claimed=claim.recurring.claimed,
                ),
                execution_options=_NO_SYNC,
            )

    # --- results for the ratings ------------------------------------------------------

    def boards(self) -> list[tuple[str, str]]:
        """Every (game, variant key) with at least one finished match.

        A walk along the board index, not a scan of every match: the next (game,
        variant key) after the last one found, then whether it has a finished match; a
        few index lookups a board, however many matches there are."""
        first = select(MatchRow.game, MatchRow.variant_key).limit(1)
        out: list[tuple[str, str]] = []
        with self.session() as s:
            row = s.execute(first.order_by(MatchRow.game, MatchRow.variant_key)).first()
            while row is not None:
                game, variants = row[0], row[1]
                finished = select(MatchRow.id).where(
                    MatchRow.game == game,
                    MatchRow.variant_key == variants,
                    MatchRow.status == "finished",
                )
                if s.execute(finished.limit(1)).first() is not None:
                    out.append((game, variants))
                # the next variant set of this game, else the first of the next game (two
                # seeks: a row-value comparison is not one on every database)
                row = (
                    s.execute(
                        first.where(
                            MatchRow.game == game, MatchRow.variant_key > variants
                        ).order_by(MatchRow.variant_key)
                    ).first()
                    or s.execute(
                        first.where(MatchRow.game > game).order_by(
                            MatchRow.game, MatchRow.variant_key
                        )
                    ).first()
                )
        return out

    def played(
        self, game: str, variants: str | None = None, tournament_id: str | None = None
    ) -> list[PlayedGame]:
        """Finished matches of a game (and variant key, or tournament), oldest first."""
        query = _played_query(game, variants)
        if tournament_id is not None:
            query = query.where(MatchRow.tournament_id == tournament_id)
        games = self._played(query)
        return [g for g in games if all(p > 0 for p in g.places)]

    def finished_since(
        self, game: str, variants: str, since: datetime | None = None
    ) -> list[PlayedGame]:
        """Finished matches of one board that finished at ``since`` or later (every one
        if None), in the order of :meth:`played`, with their finish time and tournament.
        A seat the result did not place has place 0 (:meth:`played` leaves such a match
        out; here it is counted, to match :meth:`count_finished`)."""
        query = _played_query(game, variants)
        if since is not None:
            query = query.where(MatchRow.finished >= since)
        return self._played(query)

    def count_finished(self, game: str, variants: str, before: datetime | None = None) -> int:
        """How many matches of one board have finished (before a moment, if given): one
        range of the board index, no row read."""
        with self.session() as s:
            query = select(func.count()).where(
                MatchRow.game == game,
                MatchRow.variant_key == variants,
                MatchRow.status == "finished",
            )
            if before is not None:
                query = query.where(MatchRow.finished < before)
            return s.execute(query).scalar_one()

    def _played(self, query: Select[Any]) -> list[PlayedGame]:
        with self.session() as s:
            games: dict[str, PlayedGame] = {}
            for match_id, finished, tournament_id, bot_id, place, forfeit in s.execute(query):
                played = games.get(match_id)
                if played is None:
                    played = games[match_id] = PlayedGame(
                        match_id, [], [], [], finished, tournament_id
                    )
                played.bot_ids.append(bot_id)
                played.places.append(place if place is not None else 0)
                played.forfeited.append(forfeit is not None)
        return list(games.values())

    def save_ratings(self, game: str, variants: str, rows: Iterable[RatingRow]) -> None:
        """Replace the stored leaderboard of one game and variant set.

        Several processes may refresh one board at once (Celery workers, the CLI): the
        later of two replacements can meet the rows the other has just written, and
        then starts again (on top of them: the last refresh wins)."""
        rows = list(rows)
        for attempt in range(5):
            try:
                with self.session() as s, s.begin():
                    s.execute(
                        delete(RatingRow).where(
                            RatingRow.game == game, RatingRow.variants == variants
                        )
                    )
                    s.add_all(rows)
                return
            except IntegrityError:
                if attempt == 4:
                    raise

    def ratings(self, game: str, variants: str) -> list[RatingRow]:
        with self.session() as s:
            return list(
                s.scalars(
                    select(RatingRow)
                    .where(RatingRow.game == game, RatingRow.variants == variants)
                    .order_by(RatingRow.rank)
                )
            )


@dataclass(frozen=True)
class Claim:
    """A due run of a recurring tournament, claimed by one caller."""

    #: the recurring tournament as it was before the claim
    recurring: RecurringRow
    #: the run's number (1: the first)
    run: int
    #: the id its tournament is created with (the schedule names it as its latest run)
    tournament_id: str
    #: not to be made: the previous run (``recurring.last_tournament_id``) is still going
    skipped: bool = False


#: a claimed run whose tournament is not written yet counts as going for this long (it
#: is being created); after that its creator is taken to have died
CREATING_S = 600


def _previous_run_going(when: datetime) -> ColumnElement[bool]:
    """A recurring tournament's previous run is going: a match of it waits or is being
    played (unless the organiser stopped it), or it was claimed and is being created.
    Aborted and failed matches are not waiting: a resume plays them, not the schedule."""
    previous = RecurringRow.last_tournament_id
    unfinished = (
        select(MatchRow.id)
        .join(TournamentRow, TournamentRow.id == MatchRow.tournament_id)
        .where(
            MatchRow.tournament_id == previous,
            MatchRow.status.in_(("pending", "running")),
            TournamentRow.status.not_in(("stopped", "finished")),
        )
        .exists()
    )
    written = select(TournamentRow.id).where(TournamentRow.id == previous).exists()
    being_created = and_(
        previous.is_not(None),
        ~written,
        RecurringRow.claimed > when - timedelta(seconds=CREATING_S),
    )
    return or_(unfinished, being_created)


def _first_after(start: datetime, every_s: int, when: datetime) -> datetime:
    """The first of ``start``, ``start + every_s``, ... that is after ``when``; ``start``
    itself if it is after ``when`` already."""
    if start > when:
        return start
    periods = int((when - start).total_seconds() // every_s) + 1
    return start + timedelta(seconds=every_s * periods)


def _find_recurring(s: Session, recurring_id: str, lock: bool = False) -> RecurringRow | None:
    row = s.get(RecurringRow, recurring_id, with_for_update=lock)
    if row is None and len(recurring_id) >= 4:  # a unique prefix will do
        prefix = RecurringRow.id.startswith(recurring_id, autoescape=True)
        query = select(RecurringRow).where(prefix)
        rows = list(s.scalars(query.with_for_update() if lock else query))
        row = rows[0] if len(rows) == 1 else None
    return row


def _played_query(game: str, variants: str | None) -> Select[Any]:
    """Finished matches of a game (and variant key) with their seats, oldest first."""
    query = (
        select(
            MatchRow.id,
            MatchRow.finished,
            MatchRow.tournament_id,
            SeatRow.bot_id,
            SeatRow.place,
            SeatRow.forfeit,
        )
        .join(SeatRow, SeatRow.match_id == MatchRow.id)
        .where(MatchRow.game == game, MatchRow.status == "finished")
        .order_by(MatchRow.finished, MatchRow.id, SeatRow.seat)
    )
    if variants is not None:
        query = query.where(MatchRow.variant_key == variants)
    return query


def as_utc(moment: datetime) -> datetime:
    """SQLite hands datetimes back without their zone; Arena writes them all in UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
