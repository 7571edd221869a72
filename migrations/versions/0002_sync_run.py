"""Sync runs: one row per `hudi-meta sync` of a table (when, how long, outcome), for metrics.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23 15:25:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sync_run",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("uri", sa.String(length=1024), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("changes", sa.Integer(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"], ["hudi_table.id"], name=op.f("fk_sync_run_table_id_hudi_table"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sync_run")),
    )
    op.create_index(op.f("ix_sync_run_table_id"), "sync_run", ["table_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_sync_run_table_id"), table_name="sync_run")
    op.drop_table("sync_run")
