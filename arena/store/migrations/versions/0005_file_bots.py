"""bot files played in process: each version's content hash and path

Revision ID: 0005_file_bots
Revises: 0004_match_leases
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_file_bots"
down_revision = "0004_match_leases"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.add_column(sa.Column("digest", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("path", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_column("path")
        batch_op.drop_column("digest")
