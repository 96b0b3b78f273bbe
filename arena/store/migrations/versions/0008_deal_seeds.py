"""a match's deal seed: the seed of its public start, shared by the rotations of a
tournament's deal (the match's own seed keeps its secrets)

Revision ID: 0008_deal_seeds
Revises: 0007_finished_indexes
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_deal_seeds"
down_revision = "0007_finished_indexes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("deal_seed", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_column("deal_seed")
