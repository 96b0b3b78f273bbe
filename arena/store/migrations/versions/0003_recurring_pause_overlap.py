"""recurring tournaments: when the latest run was claimed (runs never overlap)

Revision ID: 0003_recurring
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_recurring"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("recurring", schema=None) as batch_op:
        batch_op.add_column(sa.Column("claimed", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("recurring", schema=None) as batch_op:
        batch_op.drop_column("claimed")
