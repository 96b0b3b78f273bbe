"""Schema migrations: every process that opens the store brings it to the newest schema.

The migrations are Alembic revisions in ``arena/store/migrations/versions``. Opening a
store checks the database's revision (one query) and runs the missing revisions only
when there are some, under a lock, so several processes starting together (a referee,
workers, the CLI) migrate once: PostgreSQL's advisory lock, or a lock file beside an
SQLite database.

A new revision, after changing ``arena/store/models.py``::

    .venv/bin/alembic -c arena/store/alembic.ini revision --autogenerate \\
        -x url=sqlite:////tmp/empty.db -m "what changed"

(on a database at the previous head; review what it wrote: autogenerate is a draft).
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import Connection, Engine, inspect, text

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# any constant: the advisory lock that serialises migrations of one PostgreSQL database
_PG_LOCK = 0x4152454E41  # "ARENA"


def _config():
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def head() -> str:
    """The newest revision the code knows."""
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(_config()).get_heads()
    if len(heads) != 1:
        raise RuntimeError(f"the migrations must have one head, found {heads}")
    return heads[0]


def current(connection: Connection) -> str | None:
    if not inspect(connection).has_table("alembic_version"):
        return None
    return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()


def upgrade(engine: Engine) -> None:
    """Bring the database to :func:`head`, doing nothing when it is there already."""
    target = head()
    with engine.connect() as connection:
        if current(connection) == target:
            return
    with (
        _lock(engine),
        engine.connect() as connection,
        _foreign_keys_off(connection),
        connection.begin(),
    ):
        if current(connection) == target:  # another process did it while we waited
            return
        newer = current(connection)
        if newer is not None and not _known(newer):
            raise RuntimeError(
                f"the database is at schema revision {newer}, which this version of "
                "Arena does not know: it was written by a newer Arena; upgrade Arena"
            )
        from alembic import command

        config = _config()
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
        if connection.dialect.name == "sqlite":
            broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise RuntimeError(f"the migration broke references: {broken[:3]}")


@contextlib.contextmanager
def _foreign_keys_off(connection: Connection) -> Iterator[None]:
    """SQLite: foreign keys off while the schema changes, as SQLite's own procedure for
    altering a table says. Alembic's batch mode rebuilds a table by copy, drop and
    rename; with foreign keys on, dropping the old table deletes through ON DELETE CASCADE
    every row that refers to it (a tournament's matches, their seats and replays). The
    pragma has no effect inside a transaction, so it is set before one begins."""
    if connection.dialect.name != "sqlite":
        yield
        return
    connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
    connection.commit()
    try:
        yield
    finally:
        connection.exec_driver_sql("PRAGMA foreign_keys=ON")
        connection.commit()


def _known(revision: str) -> bool:
    from alembic.script import ScriptDirectory

    try:
        return ScriptDirectory.from_config(_config()).get_revision(revision) is not None
    except Exception:
        return False


@contextlib.contextmanager
def _lock(engine: Engine) -> Iterator[None]:
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _PG_LOCK})
            try:
                yield
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _PG_LOCK})
                connection.commit()
        return
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:":
        yield
        return
    with open(f"{database}.migrate.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
