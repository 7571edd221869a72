"""Cleaned files: each file a completed clean deleted (its `successDeleteFiles`), for link lineage ("which
clean removed what") without reading clean metadata on a request.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24 13:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "cleaned_file",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("clean_instant", sa.String(length=32), nullable=False),
        sa.Column("partition_path", sa.String(length=1024), nullable=False),
        sa.Column("name", sa.String(length=512), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"], ["hudi_table.id"], name=op.f("fk_cleaned_file_table_id_hudi_table"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cleaned_file")),
        sa.UniqueConstraint(
            "table_id",
            "clean_instant",
            "partition_path",
            "name",
            name=op.f("uq_cleaned_file_table_id_clean_instant_partition_path_name"),
        ),
    )
    op.create_index("ix_cleaned_file_table_file", "cleaned_file", ["table_id", "partition_path", "name"])


def downgrade() -> None:
    op.drop_index("ix_cleaned_file_table_file", table_name="cleaned_file")
    op.drop_table("cleaned_file")
