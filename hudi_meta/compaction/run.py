"""Execute a compaction plan: one task per operation (engines distribute them), then one commit.

A task merges the slice's base file with the planned log files, writes `<fileId>_<token>_<C>.parquet`
(exact mode: records after T go to `.F_C.log.1_...` instead) and creates the links. Every step is
idempotent (files are created atomically and skipped when present), so re-running after a crash at any
point finishes the compaction; the atomic create of `<C>.commit` is the single commit point, and a
completed compaction is never executed again.
"""

from __future__ import annotations

import json
import os
import posixpath
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_meta.errors import HudiMetaError
from hudi_meta.format.avro_arrow import arrow_to_avro_records
from hudi_meta.format.commit_metadata import CommitMetadata, WriteStat
from hudi_meta.format.file_names import UNKNOWN_WRITE_TOKEN, BaseFileName
from hudi_meta.format.links import (
    EXACT_KEY,
    MODE_KEY,
    SYMLINK_OPERATIONS_KEY,
    THRESHOLD_KEY,
    THRESHOLD_PARAM,
    exact_log_name,
)
from hudi_meta.format.log_writer import avro_data_block
from hudi_meta.format.table_service_metadata import CompactionOperation, CompactionPlan
from hudi_meta.storage import Storage, storage_for
from hudi_meta.table.config import TableConfig
from hudi_meta.table.event_time import to_epoch_ms
from hudi_meta.table.file_group_reader import ReadStats, read_file_slice
from hudi_meta.table.instant import Action, Instant
from hudi_meta.table.table import HudiTable
from hudi_meta.table.timeline import TimelineWriter
from hudi_meta.table.writer import WriteContext

FILE_NAME_COLUMN = "_hoodie_file_name"
CRASH_AT_ENV = "HUDI_META_CRASH_AT"  # failure injection for crash tests: kill -9 this process at a named step


def _crash_point(step: str) -> None:
    if os.environ.get(CRASH_AT_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


MapTasks = Callable[
    [Callable[[CompactionOperation], dict[str, Any]], Sequence[CompactionOperation]], list[dict[str, Any]]
]


@dataclass(frozen=True)
class CompactionContext:
    """What a compaction task needs (picklable)."""

    base_path: str
    props: dict[str, str]
    instant: str
    committed: frozenset[str]  # instants whose blocks the merge may use (completed before the compaction)
    mode: str
    exact: bool
    threshold_ms: int | None

    def __call__(self, op: CompactionOperation) -> dict[str, Any]:
        return compact_operation(self, op).to_dict()


def _visible(ctx: CompactionContext) -> Callable[[str], bool]:
    return lambda instant: instant in ctx.committed and instant < ctx.instant


def _split_exact(records: pa.Table, ctx: CompactionContext) -> tuple[pa.Table, pa.Table]:
    """(records with event time <= T, records after T) for exact mode."""
    field = TableConfig(ctx.props).event_time_field
    if not ctx.exact or field is None or ctx.threshold_ms is None or field not in records.column_names:
        return records, records.schema.empty_table()
    times = [to_epoch_ms(v) for v in records.column(field).to_pylist()]
    after = pa.array([t is not None and t > ctx.threshold_ms for t in times], pa.bool_())
    return records.filter(pc.invert(after)), records.filter(after)


def compact_operation(ctx: CompactionContext, op: CompactionOperation) -> WriteStat:
    """Run one operation: new base file (and exact log), then links; return its write stat."""
    storage = storage_for(ctx.base_path)[0]
    partition = op.partition_path or ""
    directory = posixpath.join(ctx.base_path, partition) if partition else ctx.base_path

    def rel(name: str) -> str:
        return f"{partition}/{name}" if partition else name

    stats = ReadStats()
    config = TableConfig(ctx.props)
    merged = read_file_slice(
        storage,
        ctx.base_path,
        rel(op.data_file_path) if op.data_file_path else None,
        [rel(n) for n in op.delta_file_paths],
        config.merge_spec(),
        _visible(ctx),
        stats,
    )
    base_records, after = _split_exact(merged, ctx)
    name = BaseFileName(op.file_id, UNKNOWN_WRITE_TOKEN, ctx.instant).name
    path = posixpath.join(directory, name)
    if FILE_NAME_COLUMN in base_records.column_names:
        idx = base_records.column_names.index(FILE_NAME_COLUMN)
        base_records = base_records.set_column(
            idx, FILE_NAME_COLUMN, pa.array([name] * base_records.num_rows, pa.string())
        )
    if not storage.exists(path):  # present: written completely (atomic create) by an earlier attempt
        sink = pa.BufferOutputStream()
        pq.write_table(base_records, sink)
        storage.create_atomic(path, sink.getvalue().to_pybytes())
    _crash_point("after-base-file")
    if after.num_rows:
        _write_exact_log(ctx, storage, directory, op, after)
    for link in op.symlink_operations:
        link_path = posixpath.join(directory, link.symlink)
        if storage.exists(link_path):
            continue
        if ctx.mode == "symlink":
            storage.symlink(link.target, link_path)
        else:
            storage.copy_atomic(posixpath.join(directory, link.target), link_path)
        _crash_point("after-link")
    size = storage.size(path)
    return WriteStat(
        file_id=op.file_id,
        path=rel(name),
        prev_commit=op.base_instant_time or "null",
        num_writes=base_records.num_rows,
        num_update_writes=stats.log_records,
        total_write_bytes=size,
        partition_path=partition,
        total_log_records=stats.log_records,
        total_log_files_compacted=len(op.delta_file_paths),
        total_log_size_compacted=int(op.metrics.get("TOTAL_LOG_FILES_SIZE", 0)),
        total_updated_records_compacted=stats.log_records,
        total_log_blocks=stats.log_blocks,
        total_corrupt_log_block=stats.corrupt_blocks,
        total_rollback_blocks=stats.rollback_blocks,
        file_size_in_bytes=size,
    )


def _write_exact_log(
    ctx: CompactionContext, storage: Storage, directory: str, op: CompactionOperation, after: pa.Table
) -> None:
    """Records after T, written as one block of the compaction instant into `.F_C.log.1_...`."""
    name = exact_log_name(op.file_id, ctx.instant)
    path = posixpath.join(directory, name)
    if storage.exists(path):
        return
    writer_ctx = WriteContext(ctx.base_path, posixpath.join(ctx.base_path, ".hoodie"), ctx.props, ctx.instant)
    schema_json = writer_ctx.avro_schema(after.schema)
    block = avro_data_block(arrow_to_avro_records(after), schema_json, ctx.instant)
    storage.create_atomic(path, block.data)


def _sequential(
    func: Callable[[CompactionOperation], dict[str, Any]], ops: Sequence[CompactionOperation]
) -> list[dict[str, Any]]:
    return [func(op) for op in ops]


def oldest_pending(table: HudiTable) -> str:
    pending = table.timeline.pending_compactions()
    if not pending:
        raise HudiMetaError(f"no pending compaction on {table.base_path}: schedule one first")
    return pending[0].requested_time


def run_compaction(table: HudiTable, instant: str | None = None, map_tasks: MapTasks = _sequential) -> Instant:
    """Execute the plan of `instant` (default: the oldest pending one) and commit it."""
    from hudi_meta.compaction.schedule import check_compactable

    check_compactable(table)
    instant = instant or oldest_pending(table)
    tl = table.timeline
    state = tl.instant(instant)
    if state is None or not tl.is_compaction(instant):
        raise HudiMetaError(f"{instant} is not a compaction of {table.base_path}")
    if state.is_completed:
        raise HudiMetaError(f"compaction {instant} is already completed")
    plan: CompactionPlan = table.compaction_plan(instant)
    params = plan.strategy.strategy_params if plan.strategy else {}
    writer = TimelineWriter(table.storage, table.timeline_path)
    writer.start(Action.COMPACTION, instant)
    inputs = table.view_inputs()
    ctx = CompactionContext(
        base_path=table.base_path,
        props=dict(table.config.props),
        instant=instant,
        committed=frozenset(t for t in inputs.completed if t < instant),
        mode=params.get(MODE_KEY, "symlink"),
        exact=params.get(EXACT_KEY, "false") == "true",
        threshold_ms=int(params[THRESHOLD_PARAM]) if THRESHOLD_PARAM in params else None,
    )
    stats = [WriteStat.from_dict(d) for d in map_tasks(ctx, list(plan.operations))]
    links = [
        {"partition_path": op.partition_path or "", "symlink": s.symlink, "target": s.target}
        for op in plan.operations
        for s in op.symlink_operations
    ]
    extra = {SYMLINK_OPERATIONS_KEY: json.dumps(links)}
    if ctx.threshold_ms is not None:
        extra[THRESHOLD_KEY] = str(ctx.threshold_ms)
    writes = table.timeline.completed_writes()
    schema = table.timeline.commit_metadata(writes[-1]).schema if writes else None
    if schema:
        extra["schema"] = schema
    _crash_point("before-commit")
    metadata = CommitMetadata(compacted=True, operation_type="COMPACT", extra_metadata=extra)
    for s in stats:
        metadata.partition_to_write_stats.setdefault(s.partition_path, []).append(s)
    completed = writer.complete(Action.COMPACTION, instant, metadata.to_json())
    table.reload()
    return completed
