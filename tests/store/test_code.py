"""Code kept by content and hosted versions, on SQLite and PostgreSQL: the same bytes
are kept once, new content is a new version of the name and the same content the same
version, and a hosted version is what a name stands for."""

from __future__ import annotations

import hashlib

import pytest

from arena.store import Outcome


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_code_is_kept_once_by_its_digest(store):
    data = b"print('bot')\n"
    store.put_code(digest(data), "py", data)
    store.put_code(digest(data), "py", data)  # again: nothing changes
    row = store.code(digest(data))
    assert row.data == data and row.size == len(data) and row.format == "py"
    assert store.code_sizes([digest(data), "0" * 64]) == {digest(data): len(data)}
    with pytest.raises(ValueError, match="do not have that digest"):
        store.put_code("0" * 64, "py", data)


def test_new_content_is_a_new_version_and_the_same_content_the_same_version(store):
    store.register_bot("alice")
    one, token, new = store.hosted_bot("alice", digest(b"1"), ["risk"])
    assert (one.version, one.kind, new, token) == (2, "hosted", True, None)
    two, _, new = store.hosted_bot("alice", digest(b"2"), ["risk"])
    assert (two.version, new) == (3, True)
    again, _, new = store.hosted_bot("alice", digest(b"1"), ["risk"])
    assert (again.id, again.version, new) == (one.id, 2, False)
    # the newest version, hosted or connected, is what the name stands for
    assert store.latest_bot("alice").id == two.id
    assert {b.kind for b in store.bots(include_house=False)} == {"remote", "hosted"}
    assert [b.id for b in store.latest_bots("risk")] == [two.id]


def test_a_new_hosted_name_gets_a_token_that_finds_it(store):
    row, token, new = store.hosted_bot("bob", digest(b"x"), [], token=True)
    assert new and token.startswith("arena_")
    assert store.bot_by_token(token).id == row.id
    assert store.has_bot("bob") and not store.has_bot("carol")


def test_a_seats_stderr_is_kept_with_its_result(store):
    bot, _, _ = store.hosted_bot("bob", digest(b"x"), [])
    house = store.house_bot("random")
    store.start_match("m1", "stratego", ["bob@1", "house:random@1"], [bot.id, house.id], seed=5)
    outcome = Outcome("m1", "finished", "victory", (1, 2), logs=((0, "thinking...\n"),))
    assert store.record_result(outcome)
    assert store.seat_stderr("m1", 0) == (bot.id, "thinking...\n")
    assert store.seat_stderr("m1", 1) == (house.id, None)
    assert store.seat_stderr("m1", 7) is None
