"""SQLAlchemy models and the Store facade used by the referee."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Integer,
    String,
    Text,
    create_engine,
    select,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker


def _now() -> datetime:
    return datetime.now(UTC)


def hash_token(token: str) -> str:
    """Tokens are stored as SHA-256 digests: a leaked database holds no usable token."""
    return hashlib.sha256(token.encode()).hexdigest()


class Base(DeclarativeBase):
    pass


class BotRow(Base):
    __tablename__ = "bots"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(64), index=True)
    version: Mapped[int] = mapped_column(Integer)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class MatchRow(Base):
    __tablename__ = "matches"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16))  # running, finished, aborted
    players: Mapped[list[str]] = mapped_column(JSON)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    replay: Mapped[str | None] = mapped_column(Text, nullable=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    finished: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Store:
    """The one source of truth for bots and matches."""

    def __init__(self, url: str = "sqlite:///arena.db") -> None:
        if "://" not in url:  # a plain path means an SQLite file
            url = f"sqlite:///{url}"
        self.engine = create_engine(url)
        Base.metadata.create_all(self.engine)
        self._session = sessionmaker(self.engine, expire_on_commit=False)

    def session(self) -> Session:
        return self._session()

    # --- bots -----------------------------------------------------------------------

    def register_bot(self, name: str) -> tuple[BotRow, str]:
        """A new bot, or a new version of an existing name; returns it and its token
        (the only time the token exists in clear)."""
        if not name or len(name) > 64 or not name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"bot name {name!r}: 1-64 letters, digits, '-' or '_'")
        # a fixed prefix: recognisable in logs and secret scanners, and never starting
        # with "-" (a token_urlsafe can), which a command line would take for an option
        token = "arena_" + secrets.token_urlsafe(32)
        with self.session() as s, s.begin():
            latest = s.scalar(
                select(BotRow.version)
                .where(BotRow.name == name)
                .order_by(BotRow.version.desc())
                .limit(1)
            )
            bot = BotRow(
                id=str(uuid.uuid4()),
                name=name,
                version=(latest or 0) + 1,
                token_hash=hash_token(token),
            )
            s.add(bot)
        return bot, token

    def bot_by_token(self, token: str) -> BotRow | None:
        digest = hash_token(token)
        with self.session() as s:
            bot = s.scalar(select(BotRow).where(BotRow.token_hash == digest))
        if bot is None or not hmac.compare_digest(bot.token_hash, digest):
            return None
        return bot

    def latest_bot(self, name: str) -> BotRow | None:
        with self.session() as s:
            return s.scalar(
                select(BotRow)
                .where(BotRow.name == name, BotRow.revoked.is_(False))
                .order_by(BotRow.version.desc())
                .limit(1)
            )

    def bots(self) -> list[BotRow]:
        with self.session() as s:
            return list(s.scalars(select(BotRow).order_by(BotRow.name, BotRow.version)))

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

    def start_match(self, match_id: str, game: str, players: list[str]) -> None:
        with self.session() as s, s.begin():
            s.merge(MatchRow(id=match_id, game=game, status="running", players=players))

    def finish_match(
        self,
        match_id: str,
        status: str,
        result: dict[str, Any] | None,
        replay: dict[str, Any] | None,
    ) -> None:
        with self.session() as s, s.begin():
            row = s.get(MatchRow, match_id)
            if row is None:
                return
            row.status = status
            row.result = result
            row.replay = json.dumps(replay, separators=(",", ":")) if replay else None
            row.finished = _now()

    def match(self, match_id: str) -> MatchRow | None:
        with self.session() as s:
            return s.get(MatchRow, match_id)
