"""The tables of the store (SQLAlchemy 2 declarative models).

The schema is owned by the Alembic migrations in ``arena/store/migrations/``; these
models must describe exactly what the migrations build (a test compares the two).

* ``bots``: a registered bot is one row per *version*: registering a name again makes a
  new version with a new token, and old results stay with the old version. House bots
  (built-in or plugin bots played in-process) are rows too, named ``house:NAME``, with
  no token, so every seat of every match points at a bot row.
* ``tournaments`` and ``tournament_entries``: what was asked for, and which bot
  versions take part.
* ``matches`` and ``seats``: every scheduled or played match, who sat where, and the
  places. A tournament's matches are written when it is created (status ``pending``),
  so a stopped tournament resumes by playing what is not ``finished``.
* ``replays``: the replay of a finished match, apart so listing matches stays cheap.
* ``ratings``: the last computed leaderboard of a game and variant set, one row a bot.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def now() -> datetime:
    return datetime.now(UTC)


def variant_key(
    variants: list[str] | tuple[str, ...],
    options: dict[str, str] | None = None,
    game: str | None = None,
) -> str:
    """A leaderboard's key: the variant set, names sorted and joined with "+" ("" for the
    classic game), then each option of ``game`` that changes play and is not at its
    default, as ``;name=value`` in name order (``missions;cards=none``): a game without
    cards is another game, and its results go on a board of their own. Options that do
    not change play (time controls are none; Risk's ``dice``) never split a board."""
    key = "+".join(sorted(variants))
    if not options or game is None:
        return key
    from arena.plugins import default_registry

    return key + "".join(
        f";{k}={v}"
        for k, v in default_registry().board_options(game, list(variants), options).items()
    )


def board_parts(key: str) -> tuple[list[str], dict[str, str]]:
    """The variant names and the options of a board's key (:func:`variant_key`)."""
    variants, *options = key.split(";")
    return [v for v in variants.split("+") if v], dict(o.split("=", 1) for o in options)


class Base(DeclarativeBase):
    pass


class BotRow(Base):
    __tablename__ = "bots"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(80), index=True)
    version: Mapped[int] = mapped_column(Integer)
    #: "remote": connects to a referee with its token; "house": played in-process;
    #: "file": a bot file (``file:STEM``) played in-process, one version per content;
    #: "hosted": code submitted over gRPC (``SubmitBot``), kept in ``code_blobs`` by
    #: its digest and run in the sandbox, one version per content
    kind: Mapped[str] = mapped_column(String(8), default="remote")
    token_hash: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    #: the games the bot plays, as it said when it registered; empty: every game
    games: Mapped[list[str] | None] = mapped_column(JSON, default=list, nullable=True)
    #: a bot file's or a hosted bot's SHA-256: what makes this version this version (a
    #: hosted bot's code, and a file bot's once a tournament stored it, is the
    #: ``code_blobs`` row of this digest)
    digest: Mapped[str | None] = mapped_column(String(64), nullable=True)
    #: where the bot file was last seen (absolute): its matches import it from there
    path: Mapped[str | None] = mapped_column(Text, nullable=True)

    __table_args__ = (UniqueConstraint("name", "version", name="uq_bots_name_version"),)

    def plays(self, game: str) -> bool:
        return not self.games or game in self.games

    def check_plays(self, game: str) -> BotRow:
        """This bot, if it plays ``game`` (as it said when it registered); else ValueError:
        seated in another game's match, it could only forfeit."""
        if not self.plays(game):
            raise ValueError(
                f"bot {self.label} is registered for {', '.join(sorted(self.games or []))} "
                f"only, not {game} (a version that plays it: arena bot register {self.name} "
                f"--game {game} --new-version)"
            )
        return self

    @property
    def label(self) -> str:
        """How leaderboards and match records name this version: ``name@version``."""
        return f"{self.name}@{self.version}"


class TournamentRow(Base):
    __tablename__ = "tournaments"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(120), default="")
    game: Mapped[str] = mapped_column(String(32))
    variants: Mapped[list[str]] = mapped_column(JSON)
    options: Mapped[dict[str, str]] = mapped_column(JSON)
    #: "round-robin" or "gauntlet"
    format: Mapped[str] = mapped_column(String(16))
    seats: Mapped[int] = mapped_column(Integer)
    games_per_pairing: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    decision_ms: Mapped[int] = mapped_column(Integer, default=0)
    time_bank_ms: Mapped[int] = mapped_column(Integer, default=0)
    #: how the command line plays it, so that a resume plays the rest the same way:
    #: "local" or "celery" (none: never run from the command line)
    executor: Mapped[str | None] = mapped_column(String(16), nullable=True)
    #: the local executor's worker processes
    workers: Mapped[int | None] = mapped_column(Integer, nullable=True)
    #: HOST:PORT of the referee where its connected bots play
    referee: Mapped[str | None] = mapped_column(String(255), nullable=True)
    #: whether that referee was given an organiser key (the key itself is never stored)
    organiser_key: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: created, running, stopped, finished
    status: Mapped[str] = mapped_column(String(16), default="created")
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    started: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class EntryRow(Base):
    __tablename__ = "tournament_entries"

    tournament_id: Mapped[str] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    bot_id: Mapped[str] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    #: the name the schedule uses for this bot (unique within the tournament)
    label: Mapped[str] = mapped_column(String(80))
    #: the gauntlet's challenger
    challenger: Mapped[bool] = mapped_column(Boolean, default=False)


class MatchRow(Base):
    __tablename__ = "matches"

    id: Mapped[str] = mapped_column(String(80), primary_key=True)
    tournament_id: Mapped[str | None] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), nullable=True, index=True
    )
    #: the schedule's stable key of this match within its tournament
    match_key: Mapped[str | None] = mapped_column(String(64), nullable=True)
    round: Mapped[int] = mapped_column(Integer, default=0)
    group: Mapped[int] = mapped_column(Integer, default=0)
    game: Mapped[str] = mapped_column(String(32))
    variants: Mapped[list[str]] = mapped_column(JSON, default=list)
    #: the variant set as leaderboards group it (:func:`variant_key`)
    variant_key: Mapped[str] = mapped_column(String(200), default="")
    options: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    #: every secret of the match follows from it: see arena/engine/seeds.py; the seed
    #: of the attempt playing (or last played): each attempt after the first has a new
    #: one (``attempt_seed``), so it is the replay's once the match has finished
    seed: Mapped[int] = mapped_column(BigInteger)
    #: the seed of the public start (Risk's deal), shared by the rotations of a
    #: tournament's deal and kept by every attempt; None: it comes from ``seed``
    deal_seed: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    #: pending, running, finished, aborted (not played to the end: played again)
    status: Mapped[str] = mapped_column(String(16), index=True)
    #: seat labels (``name@version`` or ``house:NAME@1``), by seat
    players: Mapped[list[str]] = mapped_column(JSON)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    #: how many times this match was started (a replayed match counts again)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    #: the address of the referee that last started it (empty: played in-process)
    referee: Mapped[str | None] = mapped_column(String(200), default="", nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    started: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # --- the Celery workers' claim on a match (docs/distributed.md) ---
    #: the worker that claimed it last (Celery node name and process id)
    worker: Mapped[str | None] = mapped_column(String(200), nullable=True)
    #: a running match whose worker has not renewed this is reclaimed and sent again
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: a match waiting for a retry (a referee away, bots not connected) is sent again then
    retry_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: how many times it was put off for transient trouble
    retries: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: since when it has been put off (the wait for absent bots counts from here)
    waiting_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: when its task was last sent to the queue (a task lost with the queue is sent again)
    sent: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (
        UniqueConstraint("tournament_id", "match_key", name="uq_matches_tournament_key"),
        # a board's finished matches, and those since a moment (the web's cache)
        Index("ix_matches_board", "game", "variant_key", "status", "finished"),
        # the latest finished matches
        Index("ix_matches_finished", "status", "finished"),
        # a tournament's matches by status (its progress; every tournament's at once)
        Index("ix_matches_tournament_status", "tournament_id", "status"),
    )


class SeatRow(Base):
    __tablename__ = "seats"

    match_id: Mapped[str] = mapped_column(
        ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[str] = mapped_column(ForeignKey("bots.id"), index=True)
    #: 1 is best, ties share; empty until the match has finished
    place: Mapped[int | None] = mapped_column(Integer, nullable=True)
    #: why this seat forfeited, if it did
    forfeit: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: the end of what a sandboxed bot wrote to its stderr in this match (bounded),
    #: for its owner (``GetBotLog``); None: not played from stored code
    stderr: Mapped[str | None] = mapped_column(Text, nullable=True)


class ReplayRow(Base):
    __tablename__ = "replays"

    match_id: Mapped[str] = mapped_column(
        ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True
    )
    #: the replay JSON (docs/replay-format.md)
    data: Mapped[str] = mapped_column(Text)


class CodeRow(Base):
    """A bot's code by content: the bytes submitted (a ``.py`` file, a zip or a tar.gz
    archive), keyed by their SHA-256. Workers extract it into a private cache, checked
    against the digest first (``arena.hosting.cache``)."""

    __tablename__ = "code_blobs"

    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    #: "py", "zip" or "tar.gz"
    format: Mapped[str] = mapped_column(String(8))
    size: Mapped[int] = mapped_column(Integer)
    data: Mapped[bytes] = mapped_column(LargeBinary)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class RatingRow(Base):
    __tablename__ = "ratings"

    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    #: the variant set, names sorted and joined with "+"; "" for the classic game
    variants: Mapped[str] = mapped_column(String(200), primary_key=True)
    bot_id: Mapped[str] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    rank: Mapped[int] = mapped_column(Integer)
    games: Mapped[int] = mapped_column(Integer)
    wins: Mapped[int] = mapped_column(Integer)
    draws: Mapped[int] = mapped_column(Integer)
    losses: Mapped[int] = mapped_column(Integer)
    score: Mapped[float] = mapped_column(Float)
    elo: Mapped[float] = mapped_column(Float)
    elo_low: Mapped[float] = mapped_column(Float)
    elo_high: Mapped[float] = mapped_column(Float)
    online_elo: Mapped[float] = mapped_column(Float)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    updated: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class RecurringRow(Base):
    """A tournament run again and again (Celery beat creates each run when it is due):
    every run takes the newest version of every registered bot that plays the game,
    plus the house bots named here. A paused one (``enabled`` false) makes no run; a
    deleted one is gone, and its runs stay (they are ordinary tournaments)."""

    __tablename__ = "recurring"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(120), default="")
    game: Mapped[str] = mapped_column(String(32))
    variants: Mapped[list[str]] = mapped_column(JSON)
    options: Mapped[dict[str, str]] = mapped_column(JSON)
    seats: Mapped[int] = mapped_column(Integer)
    games_per_pairing: Mapped[int] = mapped_column(Integer)
    house_bots: Mapped[list[str]] = mapped_column(JSON)
    decision_ms: Mapped[int] = mapped_column(Integer, default=0)
    time_bank_ms: Mapped[int] = mapped_column(Integer, default=0)
    every_s: Mapped[int] = mapped_column(Integer)
    next_run: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    runs: Mapped[int] = mapped_column(Integer, default=0)
    #: the latest run: named when it is claimed, before its tournament is written
    last_tournament_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    #: false: paused
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    #: when the latest run was claimed (its tournament may not be written yet)
    claimed: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
