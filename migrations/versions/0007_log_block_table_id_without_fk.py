"""`log_block.table_id` loses its foreign key to `hudi_table`: the block's log file (`log_block.log_file_id`, whose
row has the table's own foreign key, both cascading) already ties it to its table. On PostgreSQL each foreign
key is a trigger run per inserted row: checking both cost 60% of bulk-inserting a first index's blocks.

SQLite cannot drop a constraint in place: batch mode copies the table. The table as each side of this
revision has it is written out here, so the copy needs no reflection (and offline SQL can be rendered).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FK_NAME = "fk_log_block_table_id_hudi_table"
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def log_block(with_table_fk: bool) -> sa.Table:
    """`log_block` before (with the foreign key) or after this revision, as 0001-0006 made it."""
    meta = sa.MetaData(naming_convention=NAMING)
    sa.Table("hudi_table", meta, sa.Column("id", sa.Integer, primary_key=True))
    sa.Table("log_file", meta, sa.Column("id", sa.Integer, primary_key=True))
    table_fk = [sa.ForeignKey("hudi_table.id", ondelete="CASCADE")] if with_table_fk else []
    return sa.Table(
        "log_block",
        meta,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("table_id", sa.Integer, *table_fk, nullable=False),
        sa.Column("log_file_id", sa.Integer, sa.ForeignKey("log_file.id", ondelete="CASCADE"), nullable=False),
        sa.Column("offset", sa.BigInteger, nullable=False),
        sa.Column("length", sa.BigInteger, nullable=False),
        sa.Column("block_type", sa.String(16), nullable=False),
        sa.Column("instant", sa.String(32)),
        sa.Column("target_instant", sa.String(32)),
        sa.Column("record_count", sa.Integer),
        sa.Column("min_event_time", sa.BigInteger),
        sa.Column("max_event_time", sa.BigInteger),
        sa.Column("min_event_time_source", sa.String(16)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.UniqueConstraint("log_file_id", "offset"),
        sa.Index("ix_log_block_table_status_min", "table_id", "status", "min_event_time"),
        sa.Index("ix_log_block_table_instant", "table_id", "instant"),
        sa.Index(
            "ix_log_block_file_summary",
            "table_id",
            "log_file_id",
            "block_type",
            "status",
            "instant",
            "min_event_time",
            "min_event_time_source",
        ),
    )


def upgrade() -> None:
    with op.batch_alter_table("log_block", copy_from=log_block(with_table_fk=True)) as batch:
        batch.drop_constraint(FK_NAME, type_="foreignkey")


def downgrade() -> None:
    with op.batch_alter_table("log_block", copy_from=log_block(with_table_fk=False)) as batch:
        batch.create_foreign_key(FK_NAME, "hudi_table", ["table_id"], ["id"], ondelete="CASCADE")
