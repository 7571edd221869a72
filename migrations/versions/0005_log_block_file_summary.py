"""A covering index for planning: every column of `log_block` that `candidate_slices` aggregates per log file,
led by table and log file, so the per-file summary is read from the index in order (no table lookups, no
sort). It replaces the single-column index on `log_file_id`: the unique (log_file_id, offset) constraint
already serves lookups by log file.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SUMMARY_COLUMNS = [
    "table_id",
    "log_file_id",
    "block_type",
    "status",
    "instant",
    "min_event_time",
    "min_event_time_source",
]


def upgrade() -> None:
    op.create_index("ix_log_block_file_summary", "log_block", SUMMARY_COLUMNS)
    op.drop_index("ix_log_block_log_file_id", table_name="log_block")


def downgrade() -> None:
    op.create_index("ix_log_block_log_file_id", "log_block", ["log_file_id"])
    op.drop_index("ix_log_block_file_summary", table_name="log_block")
