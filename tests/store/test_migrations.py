"""Schema migrations: a fresh database reaches the head revision, the migrated schema is
exactly the models', concurrent openers migrate once, and a newer schema is refused."""

from __future__ import annotations

import textwrap

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text

from arena.store import Store, migrate
from arena.store.db import make_engine
from arena.store.models import Base

TABLES = {
    "alembic_version",
    "bots",
    "matches",
    "ratings",
    "replays",
    "seats",
    "tournament_entries",
    "tournaments",
    "recurring",
    "code_blobs",
}


def test_a_fresh_database_is_migrated_to_the_head_revision(database_url):
    store = Store(database_url)
    try:
        with store.engine.connect() as connection:
            assert migrate.current(connection) == migrate.head()
            assert set(inspect(connection).get_table_names()) == TABLES
    finally:
        store.close()


def test_the_migrated_schema_is_exactly_what_the_models_describe(database_url):
    store = Store(database_url)
    try:
        with store.engine.connect() as connection:
            context = MigrationContext.configure(
                connection, opts={"compare_type": True, "compare_server_default": True}
            )
            assert compare_metadata(context, Base.metadata) == []
    finally:
        store.close()


def test_opening_a_migrated_store_again_runs_no_migration(database_url, monkeypatch):
    from alembic import command

    runs = []
    real_upgrade = command.upgrade
    monkeypatch.setattr(command, "upgrade", lambda *a, **k: runs.append(1) or real_upgrade(*a, **k))
    Store(database_url).close()
    assert runs == [1]
    store = Store(database_url)
    try:
        assert runs == [1]
        bot, _ = store.register_bot("still-works")
        assert store.bot(bot.id).name == "still-works"
        with store.engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1
    finally:
        store.close()


# Every process has imported Arena before they all open the store: the migrations race.
_OPEN = textwrap.dedent(
    """
    import sys
    from arena.store import Store
    print("ready", flush=True)
    sys.stdin.readline()
    store = Store(sys.argv[1])
    store.house_bot("racer")
    store.close()
    print("opened")
    """
)


def test_processes_opening_a_new_database_together_migrate_it_once(database_url, race):
    assert race(_OPEN, [[database_url]] * 3) == ["opened"] * 3
    store = Store(database_url)
    try:
        with store.engine.connect() as connection:
            assert connection.execute(text("SELECT version_num FROM alembic_version")).all() == [
                (migrate.head(),)
            ]
        # house_bot is get-or-create: three processes, one row
        assert [b.name for b in store.bots()] == ["house:racer"]
    finally:
        store.close()


def test_a_database_from_a_newer_arena_is_refused_with_a_clear_error(database_url):
    Store(database_url).close()
    engine = make_engine(database_url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = 'f00dfeed9999'"))
    engine.dispose()
    with pytest.raises(RuntimeError, match=r"revision f00dfeed9999.*newer Arena"):
        Store(database_url)
    engine = make_engine(database_url)
    with engine.connect() as connection:  # left as it was: nothing was downgraded
        assert migrate.current(connection) == "f00dfeed9999"
        assert "bots" in inspect(connection).get_table_names()
    engine.dispose()


def test_the_migrations_are_one_line_of_revisions_from_the_initial_schema_to_the_head():
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(migrate._config())
    line = [r.revision for r in script.walk_revisions()]  # head first, following parents
    assert line[-1] == "0001"
    assert line[0] == migrate.head()
    assert line == sorted(line, reverse=True)  # numbered in order, no branches


COUNTED = ("tournaments", "tournament_entries", "matches", "seats", "replays", "bots")


def _counts(url: str) -> dict[str, int]:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return {
                t: connection.execute(text(f"SELECT count(*) FROM {t}")).scalar() for t in COUNTED
            }
    finally:
        engine.dispose()


def test_upgrading_an_sqlite_store_keeps_every_row(tmp_path):
    """Alembic's batch mode rebuilds an SQLite table (copy, drop, rename); with foreign
    keys on, dropping the old `tournaments` deleted every match of it, with their seats
    and replays, through ON DELETE CASCADE (seen: a demo database upgraded empty)."""
    from alembic import command
    from sqlalchemy import create_engine

    from arena.tournament.executor import LocalExecutor
    from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament

    url = f"sqlite:///{tmp_path / 'arena.db'}"
    store = Store(url)
    spec = TournamentSpec(
        game="risk",
        bots=["random", "aggressive", "defensive"],
        seats=3,
        games_per_pairing=2,
        options={"turn-limit": "20"},
        seed=3,
    )
    tournament = create_tournament(store, spec)
    assert run_tournament(store, tournament.id, LocalExecutor(workers=0)).status == "finished"
    store.close()
    before = _counts(url)
    assert before["matches"] == 2 and before["seats"] == 6 and before["replays"] == 2

    # back to the schema of the first Arena with tournaments (a plain connection: foreign
    # keys off, so that going down loses nothing either), then open it as a user would
    plain = create_engine(url)
    with plain.begin() as connection:
        config = migrate._config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0002")
    plain.dispose()
    assert _counts(url) == before

    Store(url).close()  # migrates to the head
    assert _counts(url) == before
    engine = make_engine(url)
    with engine.connect() as connection:
        assert migrate.current(connection) == migrate.head()
        # and the connections of the store enforce foreign keys again
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    engine.dispose()


def test_upgrading_splits_the_boards_that_mixed_rule_sets(tmp_path):
    """Before 0009 a match's board was its variant set alone: Risk with and without
    cards on one board. The upgrade keys each match by its play-changing options and drops
    the mixed boards' ratings (computed again on the next read)."""
    from alembic import command
    from sqlalchemy import create_engine

    from arena.tournament.executor import LocalExecutor
    from arena.tournament.leaderboard import refresh
    from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament

    url = f"sqlite:///{tmp_path / 'arena.db'}"
    store = Store(url)
    for options in ({"cards": "none"}, {"dice": "faces"}):
        spec = TournamentSpec(
            game="risk", bots=["random", "aggressive", "defensive"], seats=3,
            games_per_pairing=1, options={"turn-limit": "10", **options}, seed=3,
        )  # fmt: skip
        tournament = create_tournament(store, spec)
        assert run_tournament(store, tournament.id, LocalExecutor(workers=0)).status == "finished"
    store.close()
    plain = create_engine(url)
    with plain.begin() as connection:
        config = migrate._config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0008_deal_seeds")
        # as an older Arena keyed them: by variant set alone, one mixed board and its ratings
        keys = {r[0] for r in connection.execute(text("SELECT variant_key FROM matches"))}
        assert keys == {""}
        connection.execute(
            text(
                "INSERT INTO ratings (game, variants, bot_id, rank, games, wins, draws, losses, "
                "score, elo, elo_low, elo_high, online_elo, mu, sigma, updated) SELECT 'risk', "
                "'', id, 1, 2, 1, 0, 1, 0.5, 0, -1, 1, 0, 25, 8, '2026-01-01' FROM bots LIMIT 1"
            )
        )
    plain.dispose()
    store = Store(url)  # migrates to the head
    try:
        assert sorted(store.boards()) == [("risk", ""), ("risk", ";cards=none")]
        assert store.ratings("risk", "") == []  # the mixed board's ratings are gone
        assert {len(refresh(store, "risk", key)) for _, key in store.boards()} == {3}
    finally:
        store.close()
