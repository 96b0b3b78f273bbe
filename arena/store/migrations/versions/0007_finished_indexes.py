"""indexes on when matches finished: a board's results since a moment (what the web's
leaderboard cache reads as results arrive), and the latest finished matches

Revision ID: 0007_finished_indexes
Revises: 0006_tournament_run
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0007_finished_indexes"
down_revision = "0006_tournament_run"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # the board index gains the finish time: a board's count stays one index range, and
    # its matches finished since a moment become one too
    op.drop_index("ix_matches_board", table_name="matches")
    op.create_index("ix_matches_board", "matches", ["game", "variant_key", "status", "finished"])
    op.create_index("ix_matches_finished", "matches", ["status", "finished"])


def downgrade() -> None:
    op.drop_index("ix_matches_finished", table_name="matches")
    op.drop_index("ix_matches_board", table_name="matches")
    op.create_index("ix_matches_board", "matches", ["game", "variant_key", "status"])
