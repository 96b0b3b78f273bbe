"""Fixtures shared by the whole suite: databases.

``database_url`` is parametrised over SQLite (a file in the test's directory) and
PostgreSQL (a fresh database on the server at ``$ARENA_TEST_POSTGRES``, default
127.0.0.1:5432, created for the test and dropped after it). PostgreSQL is a real
server here: if it is not running the tests fail, they are not skipped
(``.ci/run`` starts it).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from arena.store import Store

POSTGRES = os.environ.get("ARENA_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def _admin_engine():
    from sqlalchemy import create_engine

    from arena.store import database_url

    return create_engine(database_url(POSTGRES), isolation_level="AUTOCOMMIT")


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped after the test."""
    from sqlalchemy import text

    name = f"arena_test_{uuid.uuid4().hex[:12]}"
    admin = _admin_engine()
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    base = POSTGRES.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path) -> str:
    """Each test using it runs on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'arena.db'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    """A migrated store on each backend, closed after the test."""
    opened = Store(database_url)
    try:
        yield opened
    finally:
        opened.close()
