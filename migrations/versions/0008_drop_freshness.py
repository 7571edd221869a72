"""Drop the `freshness` table: nothing ever wrote or read it. Freshness is computed from the index on demand
(`hudi_meta.freshness` over completed compactions and pending blocks), so a stored copy could only go stale.
The downgrade brings it back empty, as 0001 made it.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index(op.f("ix_freshness_table_id"), table_name="freshness")
    op.drop_table("freshness")


def downgrade() -> None:
    op.create_table(
        "freshness",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("compaction_instant", sa.String(length=32), nullable=False),
        sa.Column("threshold", sa.BigInteger(), nullable=False),
        sa.Column("watermark", sa.BigInteger(), nullable=True),
        sa.Column("late_blocks", sa.Integer(), nullable=False),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"], ["hudi_table.id"], name=op.f("fk_freshness_table_id_hudi_table"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_freshness")),
        sa.UniqueConstraint("table_id", "compaction_instant", name=op.f("uq_freshness_table_id_compaction_instant")),
    )
    op.create_index(op.f("ix_freshness_table_id"), "freshness", ["table_id"])
