"""The metadata store's schema as SQLAlchemy Core tables; migrations/ mirrors it revision by revision.

Times of the Hudi timeline stay strings (`yyyyMMddHHmmssSSS`), event times are epoch ms (BigInteger).
Lists and maps that are only displayed are JSON text; anything the planner filters on is a column.
States are the strings of `hudi_meta.index.states`. Constraint and index names come from `metadata`'s
naming convention, so Alembic and the tables name them alike.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _id() -> Column[int]:
    return Column("id", Integer, primary_key=True)


def _table_id(index: bool | None = True) -> Column[int]:
    return Column("table_id", ForeignKey("hudi_table.id", ondelete="CASCADE"), nullable=False, index=index)


# A registered Hudi table.
hudi_table = Table(
    "hudi_table",
    metadata,
    _id(),
    Column("base_path", String(1024), nullable=False, unique=True),
    Column("name", String(256), nullable=False),
    Column("table_type", String(32), nullable=False),
    Column("table_version", Integer, nullable=False),
    Column("timeline_layout", Integer, nullable=False),
    Column("record_key_fields", String(512), nullable=False, default=""),
    Column("ordering_field", String(256)),
    Column("event_time_field", String(256)),
    Column("options", Text, nullable=False, default="{}"),
    Column("registered_at", DateTime(timezone=True), nullable=False, default=_now),
    Column("last_indexed_at", DateTime(timezone=True)),
)

# One instant of a table's active timeline, in its newest state, or an archived one: gone from the active
# timeline, completed and older than its first instant, marked `"archived": true` in `summary`.
instant_table = Table(
    "instant",
    metadata,
    _id(),
    _table_id(),
    Column("requested_time", String(32), nullable=False),
    Column("action", String(32), nullable=False),
    Column("state", String(16), nullable=False),  # State
    Column("completion_time", String(32)),
    Column("is_compaction", Boolean, nullable=False, default=False),
    Column("summary", Text, nullable=False, default="{}"),
    UniqueConstraint("table_id", "requested_time"),
)

file_group_table = Table(
    "file_group",
    metadata,
    _id(),
    _table_id(),
    Column("partition_path", String(1024), nullable=False),
    Column("file_id", String(128), nullable=False),
    Column("replaced", Boolean, nullable=False, default=False),
    UniqueConstraint("table_id", "partition_path", "file_id"),
)

file_slice_table = Table(
    "file_slice",
    metadata,
    _id(),
    Column("file_group_id", ForeignKey("file_group.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("base_instant", String(32), nullable=False),
    Column("base_file", String(512)),
    Column("base_file_size", BigInteger),
    Column("base_committed", Boolean, nullable=False, default=False),
    UniqueConstraint("file_group_id", "base_instant"),
)

# A log file on disk; `indexed_offset` is where the next incremental scan starts.
log_file_table = Table(
    "log_file",
    metadata,
    _id(),
    _table_id(),
    Column("file_slice_id", ForeignKey("file_slice.id", ondelete="SET NULL"), index=True),
    Column("partition_path", String(1024), nullable=False),
    Column("name", String(512), nullable=False),
    Column("file_id", String(128), nullable=False),
    Column("base_instant", String(32), nullable=False),
    Column("version", Integer, nullable=False),
    Column("write_token", String(64), nullable=False, default=""),
    Column("size", BigInteger, nullable=False, default=0),
    Column("indexed_offset", BigInteger, nullable=False, default=0),
    Column("is_link", Boolean, nullable=False, default=False),
    Column("link_target", String(1024)),
    # what planning needs of the file's data and delete blocks, rewritten in every transaction that changes
    # them (hudi_meta.index.log_file_summary): so planning reads one row per log file, not every block
    Column("min_event_time", BigInteger),  # min over committed blocks
    Column("last_block_instant", String(32)),  # newest instant of any block
    Column("has_uncommitted", Boolean, nullable=False, server_default=false()),
    Column("has_unknown_event_time", Boolean, nullable=False, server_default=false()),  # committed, unresolved
    UniqueConstraint("table_id", "partition_path", "name"),
)

# One block of a log file, with its BlockStatus.
log_block_table = Table(
    "log_block",
    metadata,
    _id(),
    # no foreign key (covered by the composite indexes below): the log file's row ties the block to its table,
    # and a second per-row check cost PostgreSQL more than the bulk insert of a first index's blocks itself
    Column("table_id", Integer, nullable=False),
    # lookups by log file use the unique (log_file_id, offset) index
    Column("log_file_id", ForeignKey("log_file.id", ondelete="CASCADE"), nullable=False),
    Column("offset", BigInteger, nullable=False),
    Column("length", BigInteger, nullable=False),
    Column("block_type", String(16), nullable=False),
    Column("instant", String(32)),
    Column("target_instant", String(32)),
    Column("record_count", Integer),
    Column("min_event_time", BigInteger),
    Column("max_event_time", BigInteger),
    # NULL: not resolved yet; header/write_stat/record_scan/instant_time: min_event_time is known; "none": no
    # record has an event time; "unavailable": unknown for good (see hudi_meta.index.event_time_source)
    Column("min_event_time_source", String(16)),
    Column("status", String(16), nullable=False),  # BlockStatus
    # a committed data block after the last event-time compaction: how many of its records have an event time
    # below `late_threshold` (that compaction's T), NULL when that cannot be known (hudi_meta.index.late_records)
    Column("late_threshold", BigInteger),
    Column("late_records", Integer),
    UniqueConstraint("log_file_id", "offset"),
    Index("ix_log_block_table_status_min", "table_id", "status", "min_event_time"),
    Index("ix_log_block_table_instant", "table_id", "instant"),
    # planning's per-log-file summary (compaction/candidates.py) reads only this index
    Index(
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

compaction_plan_table = Table(
    "compaction_plan",
    metadata,
    _id(),
    _table_id(),
    Column("instant", String(32), nullable=False),
    Column("state", String(16), nullable=False),  # PlanState
    Column("strategy", String(256)),
    Column("threshold", BigInteger),
    Column("mode", String(16)),
    Column("exact", Boolean, nullable=False, default=False),
    Column("created_at", DateTime(timezone=True), nullable=False, default=_now),
    Column("completed_at", DateTime(timezone=True)),
    UniqueConstraint("table_id", "instant"),
)

compaction_operation_table = Table(
    "compaction_operation",
    metadata,
    _id(),
    Column("plan_id", ForeignKey("compaction_plan.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("partition_path", String(1024), nullable=False),
    Column("file_id", String(128), nullable=False),
    Column("base_instant", String(32)),
    Column("base_file", String(512)),
    Column("files_to_compact", Text, nullable=False, default="[]"),
    Column("metrics", Text, nullable=False, default="{}"),
    UniqueConstraint("plan_id", "partition_path", "file_id"),
)

# A log file made visible in a newer slice. `target` is always the physical file, `via` the earlier link the
# compaction kept it through (if any).
link_table = Table(
    "link",
    metadata,
    _id(),
    _table_id(),
    Column("partition_path", String(1024), nullable=False),
    Column("link_name", String(512), nullable=False),
    Column("target_name", String(512), nullable=False),
    Column("via_name", String(512)),
    Column("compaction_instant", String(32), index=True),
    Column("state", String(16), nullable=False),  # LinkState
    UniqueConstraint("table_id", "partition_path", "link_name"),
)

# A clean or rollback instant and what it did (summary as JSON).
table_service_table = Table(
    "table_service",
    metadata,
    _id(),
    _table_id(),
    Column("action", String(16), nullable=False),
    Column("instant", String(32), nullable=False),
    Column("state", String(16), nullable=False),  # State
    Column("summary", Text, nullable=False, default="{}"),
    UniqueConstraint("table_id", "action", "instant"),
)

# One `hudi-meta sync` of a table into a catalog: when, how long, what came of it (for metrics and the UI).
sync_run_table = Table(
    "sync_run",
    metadata,
    _id(),
    _table_id(),
    Column("mode", String(16), nullable=False),
    Column("uri", String(1024), nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("duration_ms", Integer, nullable=False),
    Column("outcome", String(16), nullable=False),  # ok | failed
    Column("changes", Integer, nullable=False, default=0),
    Column("message", Text, nullable=False, default=""),
)

# A file a completed clean deleted (its clean metadata's `successDeleteFiles`): link lineage shows which clean
# removed what. Rows leave with their clean instant (unless it was archived).
cleaned_file_table = Table(
    "cleaned_file",
    metadata,
    _id(),
    _table_id(index=None),  # covered by the index below
    Column("clean_instant", String(32), nullable=False),
    Column("partition_path", String(1024), nullable=False),
    Column("name", String(512), nullable=False),
    UniqueConstraint("table_id", "clean_instant", "partition_path", "name"),
    Index("ix_cleaned_file_table_file", "table_id", "partition_path", "name"),
)

# One step of `hudi-meta serve` on one table (index, schedule, compaction, clean, sync): its status while it
# runs (planning, pending, running, committing), then idle or failed with its outcome and error.
service_step_table = Table(
    "service_step",
    metadata,
    _id(),
    _table_id(index=None),  # covered by the index below
    Column("worker", String(128), nullable=False),
    Column("step", String(16), nullable=False),
    Column("status", String(16), nullable=False),  # StepStatus
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("ended_at", DateTime(timezone=True)),
    Column("outcome", String(16)),
    Column("detail", Text, nullable=False, default="{}"),
    Column("error", Text),
    Index("ix_service_step_table_started", "table_id", "started_at"),
)

# Which service process works on a table, until when: a holder renews its leases while it lives; another
# process takes a table over once the lease expired (its holder died) or was released (it stopped).
service_lease_table = Table(
    "service_lease",
    metadata,
    _id(),
    Column("table_id", ForeignKey("hudi_table.id", ondelete="CASCADE"), nullable=False, unique=True),
    Column("holder", String(128), nullable=False),
    Column("acquired_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)
