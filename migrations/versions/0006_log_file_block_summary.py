"""Each log file's summary of its data and delete blocks on its `log_file` row (`min_event_time`,
`last_block_instant`, `has_uncommitted`, `has_unknown_event_time`): planning reads one row per log file instead of
aggregating every block. The upgrade fills the summaries of the files already indexed from their blocks.

The covering index of 0005 stays: the indexer's refreshes of the summaries read it.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# this revision's view of the two tables and of the rules (hudi_meta.index.log_file_summary), frozen here
DATA_TYPES = ("avro_data", "parquet_data", "cdc_data", "delete")
log_block = sa.table(
    "log_block",
    sa.column("log_file_id", sa.Integer),
    sa.column("block_type", sa.String),
    sa.column("status", sa.String),
    sa.column("instant", sa.String),
    sa.column("min_event_time", sa.BigInteger),
    sa.column("min_event_time_source", sa.String),
)
log_file = sa.table(
    "log_file",
    sa.column("id", sa.Integer),
    sa.column("min_event_time", sa.BigInteger),
    sa.column("last_block_instant", sa.String),
    sa.column("has_uncommitted", sa.Boolean),
    sa.column("has_unknown_event_time", sa.Boolean),
)
COLUMNS = ("min_event_time", "last_block_instant", "has_uncommitted", "has_unknown_event_time")


def _of_blocks(aggregate: sa.ColumnElement[Any]) -> sa.ScalarSelect[Any]:
    """`aggregate` over the data and delete blocks of the log file being updated. Grouped, though it is one
    file: SQLite answers an ungrouped lone max() by walking an index in instant order, over every block."""
    b = log_block.c
    return (
        sa.select(aggregate)
        .where(b.log_file_id == log_file.c.id, b.block_type.in_(DATA_TYPES))
        .group_by(b.log_file_id)
        .scalar_subquery()
    )


def upgrade() -> None:
    # plain ALTER TABLE, also on SQLite (3.35+ adds and drops columns in place): batch mode would copy the
    # table, and could not render offline SQL without reflecting it
    op.add_column("log_file", sa.Column("min_event_time", sa.BigInteger(), nullable=True))
    op.add_column("log_file", sa.Column("last_block_instant", sa.String(32), nullable=True))
    op.add_column("log_file", sa.Column("has_uncommitted", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column(
        "log_file", sa.Column("has_unknown_event_time", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    b = log_block.c
    committed = b.status == "committed"
    unknown = sa.and_(committed, sa.or_(b.min_event_time_source.is_(None), b.min_event_time_source == "unavailable"))

    def any_block(condition: sa.ColumnElement[bool]) -> sa.ColumnElement[bool]:
        return sa.func.coalesce(_of_blocks(sa.func.max(sa.case((condition, 1), else_=0))), 0) == 1

    op.execute(
        log_file.update().values(
            min_event_time=_of_blocks(sa.func.min(sa.case((committed, b.min_event_time)))),
            last_block_instant=_of_blocks(sa.func.max(b.instant)),
            has_uncommitted=any_block(b.status == "uncommitted"),
            has_unknown_event_time=any_block(unknown),
        )
    )


def downgrade() -> None:
    for name in reversed(COLUMNS):
        op.drop_column("log_file", name)
