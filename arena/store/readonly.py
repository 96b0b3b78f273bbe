"""A store opened for reading only: what the web app reads (``arena web``).

The database refuses writes itself, so no bug in a reader can change it: an SQLite file
is opened with ``mode=ro`` (no journal mode set, nothing created beside it) and a
PostgreSQL session starts every transaction read-only. Nothing is migrated: a database
at another schema revision than this Arena's is refused with a line saying what to do.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import sessionmaker
from sqlalchemy.pool import QueuePool

from arena.store import migrate
from arena.store.db import Store, database_url


def read_only_engine(url: str) -> Engine:
    url = database_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        path = parsed.database or ""
        if not path or path == ":memory:" or not Path(path).is_file():
            raise ValueError(f"no SQLite database at {path or url!r}: nothing to show")
        uri = f"file:{Path(path).resolve()}?mode=ro"
        # a queue of connections any thread may borrow: the URL "sqlite://" alone would
        # mean an in-memory database's pool, one connection per thread and at most 5,
        # closing others' connections under them when more threads read at once
        return create_engine(
            "sqlite://",
            creator=lambda: _sqlite_ro(uri),
            poolclass=QueuePool,
            pool_size=8,
            max_overflow=32,
        )
    if parsed.get_backend_name() == "postgresql":
        return create_engine(
            url,
            pool_pre_ping=True,
            connect_args={"options": "-c default_transaction_read_only=on"},
        )
    raise ValueError(f"database URL {url!r}: expected an SQLite file or postgresql://")


def _sqlite_ro(uri: str):
    import sqlite3

    # check_same_thread off: the pool hands a connection to whichever worker thread asks
    connection = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=60)
    connection.execute("PRAGMA busy_timeout=60000")
    return connection


class ReadOnlyStore(Store):
    """The :class:`Store`'s reading methods on a connection that cannot write."""

    def __init__(self, url: str) -> None:  # no super().__init__: it would migrate
        self.url = database_url(url)
        self.engine = read_only_engine(url)
        self._check_schema(self.engine)
        self._session = sessionmaker(self.engine, expire_on_commit=False)

    def _check_schema(self, engine: Engine) -> None:
        try:
            with engine.connect() as connection:
                revision = migrate.current(connection)
        except OperationalError as exc:
            raise ValueError(f"cannot read the database {self.url}: {exc.orig}") from None
        head = migrate.head()
        if revision != head:
            engine.dispose()
            raise ValueError(
                f"the database {self.url} is at schema revision {revision or 'none'}, this "
                f"Arena reads {head}: open it once with a command that writes (e.g. "
                "`arena tournament list --db ...` migrates it), or upgrade Arena"
            )
