"""The read-only store (what ``arena web`` opens): it reads what the store holds, the
database itself refuses its writes, and it never migrates."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from arena.store import Store, migrate
from arena.store.readonly import ReadOnlyStore


def test_it_reads_the_store_and_the_database_refuses_its_writes(database_url):
    writer = Store(database_url)
    house = writer.house_bot("random")
    writer.close()
    reader = ReadOnlyStore(database_url)
    try:
        assert [b.label for b in reader.bots()] == [house.label]
        with pytest.raises(DBAPIError, match=r"read-?only"):
            reader.house_bot("heuristic")  # would insert a row
        assert [b.label for b in reader.bots()] == [house.label]
    finally:
        reader.close()


def test_a_database_at_another_revision_is_refused_and_left_as_it_is(database_url):
    writer = Store(database_url)
    with writer.engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '0002'"))
    try:
        with pytest.raises(ValueError, match="is at schema revision 0002, this Arena reads"):
            ReadOnlyStore(database_url)
        with writer.engine.connect() as connection:
            assert migrate.current(connection) == "0002"  # not migrated
    finally:
        writer.close()


def test_a_missing_sqlite_file_is_one_clear_error(tmp_path):
    missing = tmp_path / "none.db"
    with pytest.raises(ValueError, match=f"no SQLite database at '{missing}'"):
        ReadOnlyStore(str(missing))
    assert not missing.exists()  # not created either
