"""``sqlite_store``: a store on a file only, for the tests about the runner's logic rather
than the database (``store``, on each backend, is in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from arena.store import Store


@pytest.fixture
def sqlite_store(tmp_path) -> Iterator[Store]:
    opened = Store(str(tmp_path / "arena.db"))
    try:
        yield opened
    finally:
        opened.close()
