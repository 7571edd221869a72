"""Service state: the step records of `hudi-meta serve` (what each step of each table did, when, by which
process) and the leases that keep two service processes off the same table.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 14:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "service_step",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("worker", sa.String(length=128), nullable=False),
        sa.Column("step", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=True),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["table_id"], ["hudi_table.id"], name=op.f("fk_service_step_table_id_hudi_table"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_service_step")),
    )
    op.create_index("ix_service_step_table_started", "service_step", ["table_id", "started_at"])
    op.create_table(
        "service_lease",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("holder", sa.String(length=128), nullable=False),
        sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"], ["hudi_table.id"], name=op.f("fk_service_lease_table_id_hudi_table"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_service_lease")),
        sa.UniqueConstraint("table_id", name=op.f("uq_service_lease_table_id")),
    )


def downgrade() -> None:
    op.drop_table("service_lease")
    op.drop_index("ix_service_step_table_started", table_name="service_step")
    op.drop_table("service_step")
