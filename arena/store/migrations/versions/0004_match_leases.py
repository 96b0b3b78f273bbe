"""match leases: who plays a running match, until when, and when to try it again

Revision ID: 0004_match_leases
Revises: 0003_recurring
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_match_leases"
down_revision = "0003_recurring"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("worker", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("retry_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("retries", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("waiting_since", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("sent", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        for column in ("sent", "waiting_since", "retries", "retry_at", "lease_until", "worker"):
            batch_op.drop_column(column)
