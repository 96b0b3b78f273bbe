"""bots' code kept in the store by content (hosted bots, and the files of tournaments
played on other machines), and the bounded stderr of a seat played from such code

Revision ID: 0010_code_blobs
Revises: 0009_board_keys
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_code_blobs"
down_revision = "0009_board_keys"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "code_blobs",
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("format", sa.String(length=8), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("digest"),
    )
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.add_column(sa.Column("stderr", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_column("stderr")
    op.drop_table("code_blobs")
