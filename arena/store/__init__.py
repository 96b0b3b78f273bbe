"""The store: bots (with versions and hashed tokens), tournaments, matches, seats,
results, replays and ratings, through SQLAlchemy 2.

SQLite file by default, PostgreSQL by URL; the schema is migrated by Alembic when a
store is opened (``arena/store/migrate.py``).
"""

from arena.store.db import (
    BOT_NAME_RULE,
    HOUSE_PREFIX,
    Claim,
    NewMatch,
    Outcome,
    PlayedGame,
    Started,
    Store,
    StoreError,
    check_bot_name,
    database_url,
    hash_token,
    valid_bot_name,
)
from arena.store.models import (
    BotRow,
    EntryRow,
    MatchRow,
    RatingRow,
    RecurringRow,
    SeatRow,
    TournamentRow,
    variant_key,
)

__all__ = [
    "BOT_NAME_RULE",
    "HOUSE_PREFIX",
    "BotRow",
    "Claim",
    "EntryRow",
    "MatchRow",
    "NewMatch",
    "Outcome",
    "PlayedGame",
    "RatingRow",
    "RecurringRow",
    "SeatRow",
    "Started",
    "Store",
    "StoreError",
    "TournamentRow",
    "check_bot_name",
    "database_url",
    "hash_token",
    "valid_bot_name",
    "variant_key",
]
