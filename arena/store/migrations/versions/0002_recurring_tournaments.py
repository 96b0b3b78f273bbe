"""recurring tournaments, bot games, match referee

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "recurring",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("variants", sa.JSON(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("seats", sa.Integer(), nullable=False),
        sa.Column("games_per_pairing", sa.Integer(), nullable=False),
        sa.Column("house_bots", sa.JSON(), nullable=False),
        sa.Column("decision_ms", sa.Integer(), nullable=False),
        sa.Column("time_bank_ms", sa.Integer(), nullable=False),
        sa.Column("every_s", sa.Integer(), nullable=False),
        sa.Column("next_run", sa.DateTime(timezone=True), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("last_tournament_id", sa.String(length=36), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.add_column(sa.Column("games", sa.JSON(), nullable=True))

    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("referee", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_column("referee")

    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_column("games")

    op.drop_table("recurring")
