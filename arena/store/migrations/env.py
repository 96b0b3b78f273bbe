"""Alembic's entry point for Arena's store. ``arena.store.migrate`` runs it; so can the
``alembic`` command with ``-x url=...`` (for writing a new revision, see README there)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from arena.store.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:  # the usual path: arena.store.migrate hands one over
        _run(connection)
        return
    url = context.get_x_argument(as_dictionary=True).get("url", "sqlite:///arena.db")
    with create_engine(url).connect() as connection:
        _run(connection)


def _run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite alters tables by copying them: batch mode does that for us
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("Arena's migrations run online only (they need a connection)")
run_migrations_online()
