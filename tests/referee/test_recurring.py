"""The organiser's gRPC calls on recurring tournaments, on a real ``arena referee``
process over 127.0.0.1, on SQLite and on PostgreSQL: ListRecurring (public),
PauseRecurring, ResumeRecurring and DeleteRecurring (organiser only; an unknown id is
NOT_FOUND). What the tests read back comes from the referee's database itself."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import grpc
import pytest

from arena.cli import main
from arena.store import Store
from arena.v1 import arena_pb2 as pb

KEY = "recurring-organiser-key"
RPC_TIMEOUT = 10.0
CALLS = {
    "PauseRecurring": pb.PauseRecurringRequest,
    "ResumeRecurring": pb.ResumeRecurringRequest,
    "DeleteRecurring": pb.DeleteRecurringRequest,
}


@pytest.fixture
def ref(referee_factory, database_url):
    return referee_factory(db=database_url, organiser_key=KEY)


def create(db: str, capsys: pytest.CaptureFixture[str]) -> str:
    """``arena tournament create --every 1h --now`` on the referee's database: its id."""
    code = main(
        [
            *("tournament", "create", "--game", "stratego", "--seats", "2", "--name", "hourly"),
            *("--bots", "random", "--every", "1h", "--now", "--db", db),
        ]
    )
    assert code == 0
    return re.search(r"^recurring tournament (\w+):", capsys.readouterr().out, re.M).group(1)


def stored(db: str) -> list:
    store = Store(db)
    try:
        return store.recurring()
    finally:
        store.close()


def call(ref, name: str, recurring_id: str, metadata=()) -> pb.RecurringInfo:
    method = getattr(ref.arena, name)
    return method(CALLS[name](recurring_id=recurring_id), metadata=metadata, timeout=RPC_TIMEOUT)


def refused(ref, name: str, recurring_id: str, metadata=()) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call(ref, name, recurring_id, metadata)
    return caught.value


def test_only_the_organiser_pauses_resumes_or_deletes(ref, capsys):
    rid = create(ref.db, capsys)
    for metadata in ([], [("authorization", "Bearer wrong-key")], [("authorization", KEY)]):
        for name in CALLS:
            error = refused(ref, name, rid, metadata)
            assert error.code() == grpc.StatusCode.PERMISSION_DENIED, (name, metadata)
            assert "organiser key" in error.details()
    (row,) = stored(ref.db)  # nothing changed
    assert (row.id, row.enabled) == (rid, True)
    # listing is public: what anyone may see of the schedule
    (info,) = ref.arena.ListRecurring(pb.ListRecurringRequest(), timeout=RPC_TIMEOUT).recurring
    assert (info.recurring_id, info.name, info.game, info.every_s) == (
        rid,
        "hourly",
        "stratego",
        3600,
    )
    assert (list(info.house_bots), info.seats, info.paused, info.runs) == (["random"], 2, False, 0)


def test_the_organiser_pauses_resumes_and_deletes(ref, capsys):
    rid = create(ref.db, capsys)
    other = create(ref.db, capsys)
    paused = call(ref, "PauseRecurring", rid[:6], ref.organiser())  # a unique prefix will do
    assert (paused.recurring_id, paused.paused) == (rid, True)
    assert {r.id: r.enabled for r in stored(ref.db)} == {rid: False, other: True}
    listed = ref.arena.ListRecurring(pb.ListRecurringRequest(), timeout=RPC_TIMEOUT).recurring
    assert {i.recurring_id: i.paused for i in listed} == {rid: True, other: False}

    resumed = call(ref, "ResumeRecurring", rid, ref.organiser())
    assert not resumed.paused
    # due at its creation, passed while paused: the next run is its next hour, not now
    next_run = datetime.fromisoformat(resumed.next_run)
    assert datetime.now(UTC) < next_run <= datetime.now(UTC) + timedelta(hours=1)
    assert {r.id: r.enabled for r in stored(ref.db)} == {rid: True, other: True}

    deleted = call(ref, "DeleteRecurring", rid, ref.organiser())
    assert (deleted.recurring_id, deleted.name) == (rid, "hourly")
    assert [r.id for r in stored(ref.db)] == [other]
    listed = ref.arena.ListRecurring(pb.ListRecurringRequest(), timeout=RPC_TIMEOUT).recurring
    assert [i.recurring_id for i in listed] == [other]
    error = refused(ref, "DeleteRecurring", rid, ref.organiser())  # deleted: gone
    assert error.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("name", CALLS)
def test_an_unknown_id_is_not_found_and_changes_nothing(ref, capsys, name):
    rid = create(ref.db, capsys)
    for unknown in ("feedbeef0000", ""):
        error = refused(ref, name, unknown, ref.organiser())
        assert error.code() == grpc.StatusCode.NOT_FOUND
        assert error.details() == f"no recurring tournament {unknown!r}"
    (row,) = stored(ref.db)
    assert (row.id, row.enabled) == (rid, True)
