"""The metadata store's schema (SQLAlchemy 2 typed models); migrations/ mirrors it revision by revision.

Times of the Hudi timeline stay strings (`yyyyMMddHHmmssSSS`), event times are epoch ms (BigInteger).
Lists and maps that are only displayed are JSON text; anything the planner filters on is a column.
"""

from __future__ import annotations

import datetime as dt
from typing import cast

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class TableRecord(Base):
    """A registered Hudi table."""

    __tablename__ = "hudi_table"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    base_path: Mapped[str] = mapped_column(String(1024), unique=True)
    name: Mapped[str] = mapped_column(String(256))
    table_type: Mapped[str] = mapped_column(String(32))
    table_version: Mapped[int] = mapped_column(Integer)
    timeline_layout: Mapped[int] = mapped_column(Integer)
    record_key_fields: Mapped[str] = mapped_column(String(512), default="")
    ordering_field: Mapped[str | None] = mapped_column(String(256))
    event_time_field: Mapped[str | None] = mapped_column(String(256))
    options: Mapped[str] = mapped_column(Text, default="{}")
    registered_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    last_indexed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))


class InstantRecord(Base):
    """One instant of a table's active timeline, in its newest state."""

    __tablename__ = "instant"
    __table_args__ = (UniqueConstraint("table_id", "requested_time"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("hudi_table.id", ondelete="CASCADE"), index=True)
    requested_time: Mapped[str] = mapped_column(String(32))
    action: Mapped[str] = mapped_column(String(32))
    state: Mapped[str] = mapped_column(String(16))
    completion_time: Mapped[str | None] = mapped_column(String(32))
    is_compaction: Mapped[bool] = mapped_column(Boolean, default=False)
    summary: Mapped[str] = mapped_column(Text, default="{}")


class FileGroupRecord(Base):
    __tablename__ = "file_group"
    __table_args__ = (UniqueConstraint("table_id", "partition_path", "file_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("hudi_table.id", ondelete="CASCADE"), index=True)
    partition_path: Mapped[str] = mapped_column(String(1024))
    file_id: Mapped[str] = mapped_column(String(128))
    replaced: Mapped[bool] = mapped_column(Boolean, default=False)


class FileSliceRecord(Base):
    __tablename__ = "file_slice"
    __table_args__ = (UniqueConstraint("file_group_id", "base_instant"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    file_group_id: Mapped[int] = mapped_column(ForeignKey("file_group.id", ondelete="CASCADE"), index=True)
    base_instant: Mapped[str] = mapped_column(String(32))
    base_file: Mapped[str | None] = mapped_column(String(512))
    base_file_size: Mapped[int | None] = mapped_column(BigInteger)
    base_committed: Mapped[bool] = mapped_column(Boolean, default=False)


class LogFileRecord(Base):
    """A log file on disk; `indexed_offset` is where the next incremental scan starts."""

    __tablename__ = "log_file"
    __table_args__ = (UniqueConstraint("table_id", "partition_path", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("hudi_table.id", ondelete="CASCADE"), index=True)
    file_slice_id: Mapped[int | None] = mapped_column(ForeignKey("file_slice.id", ondelete="SET NULL"), index=True)
    partition_path: Mapped[str] = mapped_column(String(1024))
    name: Mapped[str] = mapped_column(String(512))
    file_id: Mapped[str] = mapped_column(String(128))
    base_instant: Mapped[str] = mapped_column(String(32))
    version: Mapped[int] = mapped_column(Integer)
    write_token: Mapped[str] = mapped_column(String(64), default="")
    size: Mapped[int] = mapped_column(BigInteger, default=0)
    indexed_offset: Mapped[int] = mapped_column(BigInteger, default=0)
    is_link: Mapped[bool] = mapped_column(Boolean, default=False)
    link_target: Mapped[str | None] = mapped_column(String(1024))


class LogBlockRecord(Base):
    """One block of a log file. `status`: committed, uncommitted, rolled_back or corrupt."""

    __tablename__ = "log_block"
    __table_args__ = (
        UniqueConstraint("log_file_id", "offset"),
        Index("ix_log_block_table_status_min", "table_id", "status", "min_event_time"),
        Index("ix_log_block_table_instant", "table_id", "instant"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("hudi_table.id", ondelete="CASCADE"))
    log_file_id: Mapped[int] = mapped_column(ForeignKey("log_file.id", ondelete="CASCADE"), index=True)
    offset: Mapped[int] = mapped_column(BigInteger)
    length: Mapped[int] = mapped_column(BigInteger)
    block_type: Mapped[str] = mapped_column(String(16))
    instant: Mapped[str | None] = mapped_column(String(32))
    target_instant: Mapped[str | None] = mapped_column(String(32))
    record_count: Mapped[int | None] = mapped_column(Integer)
    min_event_time: Mapped[int | None] = mapped_column(BigInteger)
    max_event_time: Mapped[int | None] = mapped_column(BigInteger)
    min_event_time_source: Mapped[str | None] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))


class CompactionPlanRecord(Base):
    __tablename__ = "compaction_plan"
    __table_args__ = (UniqueConstraint("table_id", "instant"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("hudi_table.id", ondelete="CASCADE"), index=True)
    instant: Mapped[str] = mapped_column(String(32))
    state: Mapped[str] = mapped_column(String(16))
    strategy: Mapped[str | None] = mapped_column(String(256))
    threshold: Mapped[int | None] = mapped_column(BigInteger)
    mode: Mapped[str | None] = mapped_column(String(16))
    exact: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    completed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))


class CompactionOperationRecord(Base):
    __tablename__ = "compaction_operation"
    __table_args__ = (UniqueConstraint("plan_id", "partition_path", "file_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    plan_id: Mapped[int] = mapped_column(ForeignKey("compaction_plan.id", ondelete="CASCADE"), index=True)
    partition_path: Mapped[str] = mapped_column(String(1024))
    file_id: Mapped[str] = mapped_column(String(128))
    base_instant: Mapped[str | None] = mapped_column(String(32))
    base_file: Mapped[str | None] = mapped_column(String(512))
    files_to_compact: Mapped[str] = mapped_column(Text, default="[]")
    metrics: Mapped[str] = mapped_column(Text, default="{}")


class LinkRecord(Base):
    """A log file made visible in a newer slice. `target` is always the physical file."""

    __tablename__ = "link"
    __table_args__ = (UniqueConstraint("table_id", "partition_path", "link_name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("hudi_table.id", ondelete="CASCADE"), index=True)
    partition_path: Mapped[str] = mapped_column(String(1024))
    link_name: Mapped[str] = mapped_column(String(512))
    target_name: Mapped[str] = mapped_column(String(512))
    via_name: Mapped[str | None] = mapped_column(String(512))  # the link this one was made from, if any
    compaction_instant: Mapped[str | None] = mapped_column(String(32), index=True)
    state: Mapped[str] = mapped_column(String(16))  # planned, created, removed


class TableServiceRecord(Base):
    """A clean or rollback instant and what it did (summary as JSON)."""

    __tablename__ = "table_service"
    __table_args__ = (UniqueConstraint("table_id", "action", "instant"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("hudi_table.id", ondelete="CASCADE"), index=True)
    action: Mapped[str] = mapped_column(String(16))
    instant: Mapped[str] = mapped_column(String(32))
    state: Mapped[str] = mapped_column(String(16))
    summary: Mapped[str] = mapped_column(Text, default="{}")


class FreshnessRecord(Base):
    """Freshness published after a completed event-time compaction."""

    __tablename__ = "freshness"
    __table_args__ = (UniqueConstraint("table_id", "compaction_instant"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("hudi_table.id", ondelete="CASCADE"), index=True)
    compaction_instant: Mapped[str] = mapped_column(String(32))
    threshold: Mapped[int] = mapped_column(BigInteger)
    watermark: Mapped[int | None] = mapped_column(BigInteger)
    late_blocks: Mapped[int] = mapped_column(Integer, default=0)
    published_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)


def table_of(model: type[Base]) -> Table:
    """The Core table of a model, typed as a Table (for bulk inserts and updates)."""
    return cast(Table, model.__table__)
