"""The Store on SQLite and PostgreSQL: bot versions and hashed tokens, house bots, and
results written once per match however often and however concurrently they arrive."""

from __future__ import annotations

import re
import textwrap
import threading

import pytest
from sqlalchemy import inspect, text

from arena.engine.seeds import attempt_seed
from arena.store import Outcome, SeatRow, Started, Store, hash_token


def _match(store: Store, match_id: str, *bot_names: str) -> list[str]:
    """A running match outside any tournament, one seat per (house) bot name."""
    bots = [store.house_bot(name) for name in bot_names]
    assert store.start_match(
        match_id, "risk", [b.label for b in bots], bot_ids=[b.id for b in bots], seed=7
    )
    return [b.id for b in bots]


def _finished(match_id: str, *places: int, **extra) -> Outcome:
    return Outcome(match_id, "finished", reason="victory", places=places, **extra)


def _dump(store: Store) -> str:
    """Every row of every table, as one string."""
    parts = []
    with store.engine.connect() as connection:
        for table in inspect(connection).get_table_names():
            rows = connection.execute(text(f'SELECT * FROM "{table}"')).all()
            parts.append(f"{table}: {rows!r}")
    return "\n".join(parts)


# --- bots ------------------------------------------------------------------------------


def test_registering_a_name_again_makes_version_two_with_a_new_token(store):
    first, token1 = store.register_bot("alice")
    _match(store, "m-old", "random")  # a seat row for v1 is added below
    with store.session() as s, s.begin():
        s.add(SeatRow(match_id="m-old", seat=1, bot_id=first.id))
    second, token2 = store.register_bot("alice")

    assert (first.version, second.version) == (1, 2)
    assert first.id != second.id
    assert token1 != token2
    assert token1.startswith("arena_") and token2.startswith("arena_")
    assert store.bot_by_token(token1).id == first.id
    assert store.bot_by_token(token2).id == second.id
    assert store.bot_by_token("arena_not-a-token") is None
    assert store.latest_bot("alice").id == second.id
    assert store.find_bot("alice").id == second.id
    assert store.find_bot("alice@1").id == first.id
    assert store.find_bot("alice@x") is None
    # the old version's results stay with the old version
    assert [s.bot_id for s in store.seats("m-old")][1] == first.id
    assert store.bot(first.id).label == "alice@1"


def test_tokens_are_stored_only_as_their_hash(store):
    _, token = store.register_bot("secretive")
    store.register_bot("secretive")
    dump = _dump(store)
    assert "secretive" in dump  # the dump does see the bot rows
    assert hash_token(token) in dump
    assert token not in dump
    assert token[len("arena_") :] not in dump


def test_a_revoked_bot_is_not_the_latest_version_any_more(store):
    bot, _ = store.register_bot("gone")
    assert not store.is_revoked(bot.id)
    assert store.revoke_bot(bot.id)
    assert store.is_revoked(bot.id)
    assert store.latest_bot("gone") is None
    assert store.find_bot("gone@1").revoked
    assert not store.revoke_bot("no-such-id")
    assert store.is_revoked("no-such-id")


def test_bad_bot_names_are_refused_naming_the_name_and_the_rule(store):
    """ASCII letters, digits, '-', '_', '.', starting with a letter or a digit, at most
    64: no confusable letters (Cyrillic, full-width), no leading '-', nothing a label
    or a URL would have to escape; a house bot's name goes through the same check."""
    bad = ["", "has space", "semi;colon", "x" * 65, "spy\u0410", "\uff46\uff55\uff4c\uff4c",
           "-option", "_under", ".dot", "a/b", "a@b", "house:x", "caf\u00e9", "tab\t",
           "new\nline", "zero\u200bwidth", "\u0661\u0662"]  # fmt: skip
    for name in bad:
        with pytest.raises(ValueError, match=re.escape(f"bot name {name!r}: 1 to 64 ASCII")):
            store.register_bot(name)
    with pytest.raises(ValueError, match="bot name '-x'"):
        store.house_bot("-x")
    assert store.bots() == []
    good = ["a", "A.b-c_d", "9lives", "x" * 64, "v1.2.3"]
    assert [store.register_bot(name)[0].name for name in good] == good


def test_a_tournament_prefix_is_a_prefix_not_a_like_pattern(store):
    """'%' and '_' in an id asked for are themselves (SQLite's and PostgreSQL's LIKE
    would take them for wildcards): no tournament is found by a pattern."""
    from arena.tournament.runner import TournamentSpec, create_tournament

    spec = TournamentSpec(game="stratego", bots=["random", "heuristic"], seats=2)
    t = create_tournament(store, spec)
    assert store.tournament(t.id[:6]).id == t.id  # a unique prefix will do
    for pattern in ("%%%%", "____", t.id[:4] + "%", "_" + t.id[1:6], t.id[:5] + "_"):
        assert store.tournament(pattern) is None, pattern


def test_a_house_bot_is_created_once_and_found_by_either_name(store):
    row = store.house_bot("random")
    assert (row.name, row.version, row.kind, row.token_hash) == ("house:random", 1, "house", None)
    assert row.label == "house:random@1"
    assert store.house_bot("random").id == row.id
    assert store.house_bot("house:random").id == row.id
    assert [b.id for b in store.bots()] == [row.id]
    assert store.bots(include_house=False) == []
    # a house bot is not a registered bot of the same name
    assert store.latest_bot("random") is None
    with pytest.raises(ValueError, match="bot name"):
        store.house_bot("bad name")


# --- results ---------------------------------------------------------------------------


def test_a_result_is_written_once_and_a_second_delivery_changes_nothing(store):
    ids = _match(store, "m1", "a", "b", "c")
    assert store.record_result(_finished("m1", 2, 1, 3, replay='{"r":1}'))
    before = store.match("m1")
    assert before.status == "finished"
    assert before.result["places"] == [2, 1, 3]
    assert [s.place for s in store.seats("m1")] == [2, 1, 3]

    assert not store.record_result(_finished("m1", 1, 2, 3, replay='{"r":2}'))
    assert not store.record_result(Outcome("m1", "aborted", error="referee went away"))
    assert not store.record_result(Outcome("m1", "failed", error="no such bot"))
    after = store.match("m1")
    assert after.status == "finished"
    assert after.result == before.result
    assert after.finished == before.finished
    assert after.error is None
    assert [s.place for s in store.seats("m1")] == [2, 1, 3]
    assert [s.bot_id for s in store.seats("m1")] == ids
    assert store.replay("m1") == '{"r":1}'
    assert [g.places for g in store.played("risk")] == [[2, 1, 3]]


def test_an_unknown_match_has_no_result_to_write(store):
    assert not store.record_result(_finished("nowhere", 1, 2))
    assert not store.record_result(Outcome("nowhere", "aborted"))
    assert store.match("nowhere") is None


def test_an_aborted_match_is_played_again_and_then_finishes(store):
    _match(store, "m2", "a", "b")
    assert store.record_result(Outcome("m2", "aborted", error="worker process died"))
    row = store.match("m2")
    assert (row.status, row.attempts, row.error) == ("aborted", 1, "worker process died")
    assert store.played("risk") == []  # not rated
    assert [s.place for s in store.seats("m2")] == [None, None]

    assert store.start_match("m2", "risk", ["x", "y"])  # the same row, one more attempt
    row = store.match("m2")
    assert (row.status, row.attempts, row.error) == ("running", 2, None)
    assert store.record_result(_finished("m2", 1, 2, forfeits=((1, "timeout"),)))
    assert [(s.place, s.forfeit) for s in store.seats("m2")] == [(1, None), (2, "timeout")]
    assert not store.start_match("m2", "risk", ["x", "y"])  # finished: nothing to play
    assert store.match("m2").attempts == 2
    [played] = store.played("risk")
    assert played.forfeited == [False, True]


def test_a_match_is_stored_with_the_seed_it_is_played_with(store):
    bots = [store.house_bot(name) for name in ("a", "b")]
    labels, ids = [b.label for b in bots], [b.id for b in bots]
    # no default seed: a match recorded with a guessable one would misstate what was played
    with pytest.raises(ValueError, match="match 'new' is new: give the seed it is played with"):
        store.start_match("new", "risk", labels, bot_ids=ids)
    assert store.match("new") is None
    assert store.start_match("m3", "risk", labels, bot_ids=ids, seed=2**63 - 1)
    assert store.match("m3").seed == 2**63 - 1  # 63 bits fit the column
    assert store.record_result(Outcome("m3", "aborted", error="lost"))
    # played again after an abort: never the seed its bots saw, nor one given (a retried
    # RunMatch's), but the next of the chain, chosen with the attempt's number
    second = store.start_match("m3", "risk", labels, seed=-5, lease_s=-1)
    assert second == Started(2, attempt_seed(2**63 - 1, 2), None)
    assert store.match("m3").seed == second.seed not in (-5, 2**63 - 1)
    # a run that died (its lease lapsed: above, at once): begun again
    third = store.start_match("m3", "risk", labels)
    assert third == Started(3, attempt_seed(second.seed, 3), None) != second
    assert store.match("m3").seed == third.seed


def test_every_attempt_after_the_first_plays_a_fresh_seed_and_keeps_the_deal(store):
    """Whoever begins an attempt (an in-process run, a referee, a Celery worker's claim)
    gets its seed from the store, with its number: the first plays the scheduled seed,
    each later one a seed derived from the last, and the deal seed stays."""
    bots = [store.house_bot(name) for name in ("a", "b")]
    labels, ids = [b.label for b in bots], [b.id for b in bots]
    first = store.start_match("d1", "risk", labels, ids, seed=11, deal_seed=99)
    assert first == Started(1, 11, 99)
    row = store.match("d1")
    assert (row.seed, row.deal_seed) == (11, 99)
    assert store.record_result(Outcome("d1", "aborted", error="the referee was killed"))
    seeds = [11]
    # a worker's claim, then a referee that it chose: the claim chose the seed
    attempt = store.claim_match("d1", "w1", 60, "ref:1")
    assert attempt == 2
    seeds.append(store.match("d1").seed)
    assert seeds[-1] == attempt_seed(11, 2)
    assert store.start_match("d1", "risk", labels, seed=11, referee="ref:1") == Started(
        2, seeds[-1], 99
    )
    assert store.record_result(Outcome("d1", "aborted", error="referee lost"), attempt)
    assert store.claim_match("d1", "w2", 60) == 3
    seeds.append(store.match("d1").seed)
    assert seeds[-1] == attempt_seed(seeds[-2], 3)
    assert store.record_result(Outcome("d1", "aborted", error="soft time limit"), 3)
    fourth = store.start_match("d1", "risk", labels)  # a local run takes it up
    assert fourth == Started(4, attempt_seed(seeds[-1], 4), 99)
    seeds.append(fourth.seed)
    assert len(set(seeds)) == 4 and store.match("d1").deal_seed == 99
    assert store.record_result(_finished("d1", 1, 2))
    assert store.start_match("d1", "risk", labels) is None  # finished: nothing to play
    assert store.match("d1").seed == fourth.seed  # the replay's


def test_concurrent_deliveries_from_threads_write_exactly_one_result(store):
    _match(store, "race", "a", "b", "c", "d")
    orders = [(1, 2, 3, 4), (4, 3, 2, 1), (2, 1, 4, 3), (3, 4, 1, 2), (1, 1, 3, 4), (2, 2, 1, 4)]
    barrier = threading.Barrier(len(orders))
    written: dict[tuple[int, ...], bool] = {}

    def deliver(places: tuple[int, ...]) -> None:
        barrier.wait()
        written[places] = store.record_result(_finished("race", *places))

    threads = [threading.Thread(target=deliver, args=(p,)) for p in orders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [places for places, wrote in written.items() if wrote]
    assert len(written) == len(orders)
    assert len(winners) == 1
    # the stored result is the one delivery that wrote, seats and result alike
    assert store.match("race").result["places"] == list(winners[0])
    assert [s.place for s in store.seats("race")] == list(winners[0])


_DELIVER = textwrap.dedent(
    """
    import sys
    from arena.store import Outcome, Store
    url, places = sys.argv[1], tuple(int(p) for p in sys.argv[2].split(","))
    store = Store(url)
    store.match("race")  # connected before the start
    print("ready", flush=True)
    sys.stdin.readline()
    wrote = store.record_result(Outcome("race", "finished", reason="victory", places=places))
    store.close()
    print(places, wrote)
    """
)


def test_concurrent_deliveries_from_processes_write_exactly_one_result(store, database_url, race):
    _match(store, "race", "a", "b", "c")
    orders = ["1,2,3", "3,2,1", "2,3,1"]
    results = race(_DELIVER, [[database_url, places] for places in orders])
    wrote = [line for line in results if line.endswith("True")]
    assert len(wrote) == 1, results
    assert sum(line.endswith("False") for line in results) == len(orders) - 1
    places = [s.place for s in store.seats("race")]
    assert wrote[0].startswith(str(tuple(places)))
    assert store.match("race").result["places"] == places
