"""Each committed data block written after the last event-time compaction carries how many of its records have
an event time below that compaction's threshold (`log_block.late_threshold`, `log_block.late_records`): late
data is counted in records, not as the blocks' record counts. Both start empty; the next index run counts them
(until then freshness says the late records are not known and gives a bound).

Plain ALTER TABLE, also on SQLite (3.35+ adds and drops columns in place), as 0006 does: batch mode would copy
`log_block`, and could not render offline SQL without reflecting it.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("log_block", sa.Column("late_threshold", sa.BigInteger(), nullable=True))
    op.add_column("log_block", sa.Column("late_records", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("log_block", "late_records")
    op.drop_column("log_block", "late_threshold")
