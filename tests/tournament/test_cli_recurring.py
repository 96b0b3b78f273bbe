"""``arena tournament recurring pause|resume|delete ID``: what each does to the stored
schedule, what it prints, and the one-line error for an id that is not there."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from arena.cli import main
from arena.store import Store


@pytest.fixture
def schedule(tmp_path, capsys) -> tuple[str, str]:
    """A database with one recurring Stratego tournament, first due now: (db, its id)."""
    db = str(tmp_path / "arena.db")
    code = main(
        [
            *("tournament", "create", "--game", "stratego", "--seats", "2"),
            *("--bots", "random,heuristic", "--every", "1h", "--now", "--db", db),
        ]
    )
    assert code == 0
    found = re.search(r"^recurring tournament (\w+): ", capsys.readouterr().out, re.M)
    assert found
    return db, found.group(1)


def recurring(db: str) -> list:
    store = Store(db)
    try:
        return store.recurring()
    finally:
        store.close()


def test_pause_and_resume_are_shown_in_the_listing(schedule, capsys):
    db, rid = schedule
    assert main(["tournament", "recurring", "pause", rid[:6], "--db", db]) == 0
    assert re.search(rf"^recurring {rid} .*\(paused\)$", capsys.readouterr().out, re.M)
    (row,) = recurring(db)
    assert not row.enabled
    main(["tournament", "list", "--db", db])
    assert f"recurring {rid}" in (listed := capsys.readouterr().out) and "(paused)" in listed

    assert main(["tournament", "recurring", "resume", rid, "--db", db]) == 0
    out = capsys.readouterr().out
    assert f"recurring {rid}" in out and "(paused)" not in out
    (row,) = recurring(db)
    assert row.enabled
    # its first run was due at creation and passed while paused: the next is an hour on
    next_run = row.next_run.replace(tzinfo=UTC)
    assert datetime.now(UTC) < next_run <= datetime.now(UTC) + timedelta(hours=1)


def test_delete_removes_the_schedule(schedule, capsys):
    db, rid = schedule
    assert main(["tournament", "recurring", "delete", rid, "--db", db]) == 0
    assert f"deleted recurring {rid}" in capsys.readouterr().out
    assert recurring(db) == []
    main(["tournament", "list", "--db", db])
    assert "recurring" not in capsys.readouterr().out


@pytest.mark.parametrize("action", ["pause", "resume", "delete"])
def test_an_unknown_id_is_one_clear_line_and_changes_nothing(schedule, capsys, action):
    db, rid = schedule
    assert main(["tournament", "recurring", action, "feedbeef", "--db", db]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"arena: error: no recurring tournament 'feedbeef' in {db} (see `arena tournament list`)\n"
    )
    (row,) = recurring(db)
    assert (row.id, row.enabled) == (rid, True)
