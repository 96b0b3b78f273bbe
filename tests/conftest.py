"""Fixtures shared by the whole suite: databases; and the order the suite's files start in.

``database_url`` is parametrised over SQLite (a file in the test's directory) and
PostgreSQL (a fresh database on the server at ``$ARENA_TEST_POSTGRES``, default
127.0.0.1:5432, created for the test and dropped after it). PostgreSQL is a real
server here: if it is not running the tests fail, they are not skipped
(``.ci/run`` starts it).
"""

from __future__ import annotations

import os
import uuid
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.store import Store

ROOT = Path(__file__).resolve().parents[1]
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


#: The files that take longest, the longest first (seconds, each alone on an idle
#: machine: ``pytest FILE -n 0``), started before all others. Under ``--dist loadfile``
#: a file is one unit of work for one worker: a long file that starts last ends the run
#: alone while the other workers idle (pytest-xdist's own order, the files with the most
#: tests first, put these few-test files last). A file missing here only starts later.
LONGEST_FIRST = (
    "tests/web/test_crowd_streams.py",  # 100 (a live match watched until a reader drops)
    "tests/distributed/test_failures.py",  # 60
    "tests/test_demo.py",  # 56
    "tests/distributed/test_lost_tasks.py",  # 55
    "tests/distributed/test_beat.py",  # 52
    "tests/distributed/test_celery_tournaments.py",  # 47
    "tests/distributed/test_redis_restarts.py",  # 43
    "tests/referee/test_tournaments.py",  # 43
    "tests/test_makefile.py",  # 42
    "tests/web/test_prebuild.py",  # 45 (most of it waiting on arena web processes)
    "tests/web/test_crowds.py",  # 40
    "tests/test_wheel.py",  # 31 (47 the first time: it downloads the wheelhouse)
    "tests/distributed/test_compose_worker.py",  # 37
    "tests/referee/test_referee.py",  # 37
    "tests/bots/test_stratego_search.py",  # 30
    "tests/sdk/test_local.py",  # 28
    "tests/web/test_live_browser.py",  # 28
    "tests/distributed/test_claims.py",  # 24
    "tests/web/test_live_feed.py",  # 21
    "tests/referee/test_recurring.py",  # 21
    "tests/web/test_viewer_browser.py",  # 21
    "tests/referee/test_shedding.py",  # 20
    "tests/store/test_leases.py",  # 20
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of :data:`LONGEST_FIRST` first, in its order, then the others, the files
    with more tests first; each file's tests stay together and in their order (pyproject's
    ``--no-loadscope-reorder`` has pytest-xdist hand the files out in this order)."""
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    for path in LONGEST_FIRST:
        if not (ROOT / path).is_file():
            warnings.warn(
                f"LONGEST_FIRST names {path}: no such file", pytest.PytestWarning, stacklevel=2
            )
    tests = Counter(item.nodeid.split("::", 1)[0] for item in items)

    def order(item: pytest.Item) -> tuple[int, int]:
        path = item.nodeid.split("::", 1)[0]
        return rank.get(path, len(rank)), -tests[path]

    items.sort(key=order)  # stable: equal keys keep their order
