"""how a tournament is played (executor, workers, referee), so that a resume plays the
rest the same way; whether the referee needed an organiser key, never the key

Revision ID: 0006_tournament_run
Revises: 0005_file_bots
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_tournament_run"
down_revision = "0005_file_bots"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.add_column(sa.Column("executor", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("workers", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("referee", sa.String(length=255), nullable=True))
        batch_op.add_column(
            sa.Column("organiser_key", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.drop_column("organiser_key")
        batch_op.drop_column("referee")
        batch_op.drop_column("workers")
        batch_op.drop_column("executor")
