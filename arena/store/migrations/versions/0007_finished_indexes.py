"""indexes on when matches finished: a board's results since a moment (what the web's
leaderboard cache reads as results arrive), and the latest finished matches; and on a
tournament's matches by status (the progress of every tournament in one query)

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
    op.create_index("ix_matches_tournament_status", "matches", ["tournament_id", "status"])


def downgrade() -> None:
    op.drop_index("ix_matches_tournament_status", table_name="matches")
    op.drop_index("ix_matches_finished", table_name="matches")
    op.drop_index("ix_matches_board", table_name="matches")
    op.create_index("ix_matches_board", "matches", ["game", "variant_key", "status"])
