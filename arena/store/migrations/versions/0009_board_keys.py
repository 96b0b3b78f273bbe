"""leaderboards split by the options that change play: every match's variant key gains
its play-changing options (``missions;cards=none``), computed from the options it was
played with; the ratings of the old boards, which mixed those games, are dropped (they
are computed again from the matches on the next read)

Revision ID: 0009_board_keys
Revises: 0008_deal_seeds
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_board_keys"
down_revision = "0008_deal_seeds"
branch_labels = None
depends_on = None

MATCHES = sa.table(
    "matches",
    sa.column("id", sa.String),
    sa.column("game", sa.String),
    sa.column("variants", sa.JSON),
    sa.column("options", sa.JSON),
    sa.column("variant_key", sa.String),
)
RATINGS = sa.table("ratings", sa.column("game", sa.String))


def upgrade() -> None:
    # the key as this Arena computes it (its games' options, from the installed plugins)
    from arena.store.models import variant_key

    connection = op.get_bind()
    rows = connection.execute(
        sa.select(MATCHES.c.id, MATCHES.c.game, MATCHES.c.variants, MATCHES.c.options)
    ).all()
    changed = {}
    for match_id, game, variants, options in rows:
        if options:
            key = variant_key(list(variants or []), dict(options), game)
            if key != variant_key(list(variants or [])):
                changed[match_id] = key
    for match_id, key in changed.items():
        connection.execute(MATCHES.update().where(MATCHES.c.id == match_id).values(variant_key=key))
    if changed:
        connection.execute(RATINGS.delete())


def downgrade() -> None:
    connection = op.get_bind()
    rows = connection.execute(sa.select(MATCHES.c.id, MATCHES.c.variant_key)).all()
    for match_id, key in rows:
        if ";" in (key or ""):
            connection.execute(
                MATCHES.update()
                .where(MATCHES.c.id == match_id)
                .values(variant_key=key.split(";", 1)[0])
            )
    connection.execute(RATINGS.delete())
