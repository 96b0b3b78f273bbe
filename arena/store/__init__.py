"""The store: bots (with versions and hashed tokens) and matches, through SQLAlchemy.

SQLite file by default, PostgreSQL by URL. The tournament issue adds tournaments,
ratings and Alembic migrations on top of these tables.
"""

from arena.store.db import Store, hash_token

__all__ = ["Store", "hash_token"]
