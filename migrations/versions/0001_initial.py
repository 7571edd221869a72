"""Initial schema of the metadata store: every table, index and constraint of `hudi_meta.index.models`.

Constraint and index names are spelled out as the naming convention of the schema's MetaData
(`hudi_meta.index.models.metadata`) produces them, wrapped in `op.f()` so they are used verbatim.

Revision ID: 0001
Revises:
Create Date: 2026-11-22 07:28:36
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "hudi_table",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("base_path", sa.String(length=1024), nullable=False),
        sa.Column("name", sa.String(length=256), nullable=False),
        sa.Column("table_type", sa.String(length=32), nullable=False),
        sa.Column("table_version", sa.Integer(), nullable=False),
        sa.Column("timeline_layout", sa.Integer(), nullable=False),
        sa.Column("record_key_fields", sa.String(length=512), nullable=False),
        sa.Column("ordering_field", sa.String(length=256), nullable=True),
        sa.Column("event_time_field", sa.String(length=256), nullable=True),
        sa.Column("options", sa.Text(), nullable=False),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_indexed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hudi_table")),
        sa.UniqueConstraint("base_path", name=op.f("uq_hudi_table_base_path")),
    )

    op.create_table(
        "instant",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("requested_time", sa.String(length=32), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("completion_time", sa.String(length=32), nullable=True),
        sa.Column("is_compaction", sa.Boolean(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"], ["hudi_table.id"], name=op.f("fk_instant_table_id_hudi_table"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_instant")),
        sa.UniqueConstraint("table_id", "requested_time", name=op.f("uq_instant_table_id_requested_time")),
    )
    op.create_index(op.f("ix_instant_table_id"), "instant", ["table_id"])

    op.create_table(
        "file_group",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("partition_path", sa.String(length=1024), nullable=False),
        sa.Column("file_id", sa.String(length=128), nullable=False),
        sa.Column("replaced", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["hudi_table.id"],
            name=op.f("fk_file_group_table_id_hudi_table"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_file_group")),
        sa.UniqueConstraint(
            "table_id",
            "partition_path",
            "file_id",
            name=op.f("uq_file_group_table_id_partition_path_file_id"),
        ),
    )
    op.create_index(op.f("ix_file_group_table_id"), "file_group", ["table_id"])

    op.create_table(
        "file_slice",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("file_group_id", sa.Integer(), nullable=False),
        sa.Column("base_instant", sa.String(length=32), nullable=False),
        sa.Column("base_file", sa.String(length=512), nullable=True),
        sa.Column("base_file_size", sa.BigInteger(), nullable=True),
        sa.Column("base_committed", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["file_group_id"],
            ["file_group.id"],
            name=op.f("fk_file_slice_file_group_id_file_group"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_file_slice")),
        sa.UniqueConstraint("file_group_id", "base_instant", name=op.f("uq_file_slice_file_group_id_base_instant")),
    )
    op.create_index(op.f("ix_file_slice_file_group_id"), "file_slice", ["file_group_id"])

    op.create_table(
        "log_file",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("file_slice_id", sa.Integer(), nullable=True),
        sa.Column("partition_path", sa.String(length=1024), nullable=False),
        sa.Column("name", sa.String(length=512), nullable=False),
        sa.Column("file_id", sa.String(length=128), nullable=False),
        sa.Column("base_instant", sa.String(length=32), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("write_token", sa.String(length=64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("indexed_offset", sa.BigInteger(), nullable=False),
        sa.Column("is_link", sa.Boolean(), nullable=False),
        sa.Column("link_target", sa.String(length=1024), nullable=True),
        sa.ForeignKeyConstraint(
            ["file_slice_id"],
            ["file_slice.id"],
            name=op.f("fk_log_file_file_slice_id_file_slice"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["table_id"], ["hudi_table.id"], name=op.f("fk_log_file_table_id_hudi_table"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_log_file")),
        sa.UniqueConstraint(
            "table_id", "partition_path", "name", name=op.f("uq_log_file_table_id_partition_path_name")
        ),
    )
    op.create_index(op.f("ix_log_file_file_slice_id"), "log_file", ["file_slice_id"])
    op.create_index(op.f("ix_log_file_table_id"), "log_file", ["table_id"])

    op.create_table(
        "log_block",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("log_file_id", sa.Integer(), nullable=False),
        sa.Column("offset", sa.BigInteger(), nullable=False),
        sa.Column("length", sa.BigInteger(), nullable=False),
        sa.Column("block_type", sa.String(length=16), nullable=False),
        sa.Column("instant", sa.String(length=32), nullable=True),
        sa.Column("target_instant", sa.String(length=32), nullable=True),
        sa.Column("record_count", sa.Integer(), nullable=True),
        sa.Column("min_event_time", sa.BigInteger(), nullable=True),
        sa.Column("max_event_time", sa.BigInteger(), nullable=True),
        sa.Column("min_event_time_source", sa.String(length=16), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["log_file_id"],
            ["log_file.id"],
            name=op.f("fk_log_block_log_file_id_log_file"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["table_id"], ["hudi_table.id"], name=op.f("fk_log_block_table_id_hudi_table"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_log_block")),
        sa.UniqueConstraint("log_file_id", "offset", name=op.f("uq_log_block_log_file_id_offset")),
    )
    op.create_index(op.f("ix_log_block_log_file_id"), "log_block", ["log_file_id"])
    op.create_index(op.f("ix_log_block_table_instant"), "log_block", ["table_id", "instant"])
    op.create_index(op.f("ix_log_block_table_status_min"), "log_block", ["table_id", "status", "min_event_time"])

    op.create_table(
        "compaction_plan",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("instant", sa.String(length=32), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("strategy", sa.String(length=256), nullable=True),
        sa.Column("threshold", sa.BigInteger(), nullable=True),
        sa.Column("mode", sa.String(length=16), nullable=True),
        sa.Column("exact", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["hudi_table.id"],
            name=op.f("fk_compaction_plan_table_id_hudi_table"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_compaction_plan")),
        sa.UniqueConstraint("table_id", "instant", name=op.f("uq_compaction_plan_table_id_instant")),
    )
    op.create_index(op.f("ix_compaction_plan_table_id"), "compaction_plan", ["table_id"])

    op.create_table(
        "compaction_operation",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("plan_id", sa.Integer(), nullable=False),
        sa.Column("partition_path", sa.String(length=1024), nullable=False),
        sa.Column("file_id", sa.String(length=128), nullable=False),
        sa.Column("base_instant", sa.String(length=32), nullable=True),
        sa.Column("base_file", sa.String(length=512), nullable=True),
        sa.Column("files_to_compact", sa.Text(), nullable=False),
        sa.Column("metrics", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["plan_id"],
            ["compaction_plan.id"],
            name=op.f("fk_compaction_operation_plan_id_compaction_plan"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_compaction_operation")),
        sa.UniqueConstraint(
            "plan_id",
            "partition_path",
            "file_id",
            name=op.f("uq_compaction_operation_plan_id_partition_path_file_id"),
        ),
    )
    op.create_index(op.f("ix_compaction_operation_plan_id"), "compaction_operation", ["plan_id"])

    op.create_table(
        "link",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("partition_path", sa.String(length=1024), nullable=False),
        sa.Column("link_name", sa.String(length=512), nullable=False),
        sa.Column("target_name", sa.String(length=512), nullable=False),
        sa.Column("via_name", sa.String(length=512), nullable=True),
        sa.Column("compaction_instant", sa.String(length=32), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"], ["hudi_table.id"], name=op.f("fk_link_table_id_hudi_table"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_link")),
        sa.UniqueConstraint(
            "table_id", "partition_path", "link_name", name=op.f("uq_link_table_id_partition_path_link_name")
        ),
    )
    op.create_index(op.f("ix_link_compaction_instant"), "link", ["compaction_instant"])
    op.create_index(op.f("ix_link_table_id"), "link", ["table_id"])

    op.create_table(
        "table_service",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("instant", sa.String(length=32), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["hudi_table.id"],
            name=op.f("fk_table_service_table_id_hudi_table"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_table_service")),
        sa.UniqueConstraint("table_id", "action", "instant", name=op.f("uq_table_service_table_id_action_instant")),
    )
    op.create_index(op.f("ix_table_service_table_id"), "table_service", ["table_id"])

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


def downgrade() -> None:
    op.drop_index(op.f("ix_freshness_table_id"), table_name="freshness")
    op.drop_table("freshness")

    op.drop_index(op.f("ix_table_service_table_id"), table_name="table_service")
    op.drop_table("table_service")

    op.drop_index(op.f("ix_link_table_id"), table_name="link")
    op.drop_index(op.f("ix_link_compaction_instant"), table_name="link")
    op.drop_table("link")

    op.drop_index(op.f("ix_compaction_operation_plan_id"), table_name="compaction_operation")
    op.drop_table("compaction_operation")

    op.drop_index(op.f("ix_compaction_plan_table_id"), table_name="compaction_plan")
    op.drop_table("compaction_plan")

    op.drop_index(op.f("ix_log_block_table_status_min"), table_name="log_block")
    op.drop_index(op.f("ix_log_block_table_instant"), table_name="log_block")
    op.drop_index(op.f("ix_log_block_log_file_id"), table_name="log_block")
    op.drop_table("log_block")

    op.drop_index(op.f("ix_log_file_table_id"), table_name="log_file")
    op.drop_index(op.f("ix_log_file_file_slice_id"), table_name="log_file")
    op.drop_table("log_file")

    op.drop_index(op.f("ix_file_slice_file_group_id"), table_name="file_slice")
    op.drop_table("file_slice")

    op.drop_index(op.f("ix_file_group_table_id"), table_name="file_group")
    op.drop_table("file_group")

    op.drop_index(op.f("ix_instant_table_id"), table_name="instant")
    op.drop_table("instant")

    op.drop_table("hudi_table")
