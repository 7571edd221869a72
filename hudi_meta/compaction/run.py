"""Execute a compaction plan: one task per operation (engines distribute them), then links, then one commit.

A task merges the slice's base file with the planned log files and writes `<fileId>_<token>_<C>.parquet`
(exact mode: records after T go to `.F_C.log.1_...` as well). Every step is idempotent (files are created
atomically and skipped when present), so re-running after a crash at any point finishes the compaction; the
atomic create of `<C>.commit` is the single commit point, and a completed compaction is never executed again.

Links are made by the driver after every task, right before the commit. Until the commit, Java Hudi reads a
pending compaction's slice together with the slice before it, so a link existing then repeats that slice's
records for stock readers (our readers skip a pending plan's links). That window is what is left: the time to
make the links (`bench/bench_link_window.py` prints it for symlinks and for copies). Copies stay byte-identical to
their targets (rewriting their blocks with the compaction's instant would hide them from stock readers until
the commit, but would make them new data for incremental readers and break `check`'s byte comparison).
"""

from __future__ import annotations

import json
import logging
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_meta.compaction.layout import SliceLayout, plan_layout
from hudi_meta.compaction.plan import exact_blocked_by
from hudi_meta.compaction.preconditions import check_compactable
from hudi_meta.compaction.stream import stream_new_base_file, with_file_name
from hudi_meta.compaction.undo import plan_breakers
from hudi_meta.compaction.unschedule import unschedule_compaction
from hudi_meta.crash_points import CrashPoints
from hudi_meta.errors import HudiMetaError, PlanTakenBackError
from hudi_meta.file_group.fs_view import is_committed
from hudi_meta.file_group.merge.records import SliceRecords
from hudi_meta.file_group.merge.rules import MergeMode, MergeSpec, is_natural_order
from hudi_meta.file_group.reader import ReadStats, base_file_errors, read_base_file, read_slice_records
from hudi_meta.format.block_content import DeleteRecord, conform
from hudi_meta.format.commit_metadata import CommitMetadata, WriteStat
from hudi_meta.format.file_names import UNKNOWN_WRITE_TOKEN, BaseFileName, LogFileName
from hudi_meta.format.links import (
    EXACT_RESULT_KEY,
    MODE_KEY,
    SYMLINK_OPERATIONS_KEY,
    THRESHOLD_KEY,
    THRESHOLD_PARAM,
    carry_log_name,
    has_carry_log,
    is_exact,
    plan_event_time_field,
)
from hudi_meta.format.log_reader import written_only_by
from hudi_meta.format.log_writer import arrow_avro_data_block, delete_block
from hudi_meta.format.parquet_file import encode_parquet
from hudi_meta.format.table_service_metadata import CompactionOperation, CompactionPlan
from hudi_meta.metadata.sync import metadata_sync
from hudi_meta.storage import Storage, storage_for
from hudi_meta.table.config import TableConfig
from hudi_meta.table.table import AUX_DIR, HudiTable
from hudi_meta.timeline.instant import Action, Instant
from hudi_meta.write.failed_writes import interrupted_compaction_rollbacks
from hudi_meta.write.lock import run_lock, table_lock
from hudi_meta.write.writer import WriteContext

CRASH_AT_ENV = "HUDI_META_CRASH_AT"  # failure injection for crash tests: kill -9 this process at a named step
CRASH_POINTS = ("after-base-file", "after-link", "before-commit")
_crash = CrashPoints(CRASH_AT_ENV, CRASH_POINTS)
set_crash_hook = _crash.set_hook
_crash_point = _crash.reach


log = logging.getLogger(__name__)
INEXACT_KEYS_FIELD = "hudiMetaInexactKeys"  # in a task's result beside the write stat
THRESHOLD_CAP_FIELD = "hudiMetaThresholdCap"  # in a task's result: the threshold its slice supports, if below T

MapTasks = Callable[
    [Callable[[CompactionOperation], dict[str, Any]], Sequence[CompactionOperation]], list[dict[str, Any]]
]


@dataclass(frozen=True)
class CompactionContext:
    """What a compaction task needs (picklable): the table's path in its storage, and its full URI and storage
    options to rebuild that storage on an executor."""

    base_path: str
    props: dict[str, str]
    instant: str
    completed: frozenset[str]  # instants completed on the active timeline when the run started
    first_active_instant: str | None  # older instants were archived: committed (`fs_view.is_committed`)
    exact: bool
    threshold_ms: int | None
    event_time_field: str | None = None  # the plan's (an event-time plan always has one)
    carry: bool = True  # the plan keeps version 1 of its slices for the carry log
    base_uri: str = ""
    storage_options: dict[str, object] = field(default_factory=dict)
    # versions 8 and 9: completion time of each completed instant (a log file's slice is where its write completed)
    completion_times: dict[str, str] = field(default_factory=dict)

    def storage(self) -> Storage:
        return storage_for(self.base_uri or self.base_path, self.storage_options)[0]

    def __call__(self, op: CompactionOperation) -> dict[str, Any]:
        result = compact_operation(self, op)
        return {
            **result.stat.to_dict(),
            INEXACT_KEYS_FIELD: result.inexact_keys,
            THRESHOLD_CAP_FIELD: result.threshold_cap_ms,
        }

    def committed(self, instant: str) -> bool:
        """Blocks of the log files that stay: committed when the run started (later ones too)."""
        return is_committed(instant, self.completed, self.first_active_instant)

    def in_own_slice(self, log: LogFileName) -> bool:
        """Whether a log file of an operation's file group belongs to the compaction's slice: named by the
        compaction instant (version 6; links and carry logs too), or, on versions 8 and 9, written by a write that
        completed after the compaction instant."""
        if log.instant == self.instant:
            return True
        done = self.completion_times.get(log.instant)
        return done is not None and done > self.instant

    def visible(self, instant: str) -> bool:
        """Blocks the merge uses: committed before the compaction instant (archived ones included)."""
        return instant < self.instant and is_committed(instant, self.completed, self.first_active_instant)


@dataclass(frozen=True)
class OperationResult:
    """What one operation reports to the driver: its write stat, the number of keys exact mode could not make
    exact, and the threshold the slice supports when below T (None when it supports T)."""

    stat: WriteStat
    inexact_keys: int
    threshold_cap_ms: int | None


def compact_operation(ctx: CompactionContext, op: CompactionOperation) -> OperationResult:
    """Run one operation: the new base file and the carry log (compaction/layout.py).

    Links are not made here: the driver makes them right before the commit (see `run_compaction`)."""
    storage = ctx.storage()
    partition = op.partition_path or ""
    directory = posixpath.join(ctx.base_path, partition) if partition else ctx.base_path

    def rel(name: str) -> str:
        return f"{partition}/{name}" if partition else name

    stats = ReadStats()
    config = TableConfig(ctx.props)
    spec = config.merge_spec()
    base_file = posixpath.join(ctx.base_path, rel(op.data_file_path)) if op.data_file_path else None
    schema = None
    if base_file is not None:
        with base_file_errors(base_file), storage.open_arrow(base_file) as f:
            schema = pq.read_schema(f)
    logs = read_slice_records(
        storage, ctx.base_path, None, [rel(n) for n in op.delta_file_paths], spec, ctx.visible, stats, schema
    )
    rest = None
    if order_sensitive(spec):  # the rest of the slice decides which layout keeps the snapshot
        rest_files = [rel(n) for n in _rest_log_files(storage, directory, op, ctx)]
        rest = read_slice_records(storage, ctx.base_path, None, rest_files, spec, ctx.committed, schema=logs.schema)
    name = BaseFileName(op.file_id, UNKNOWN_WRITE_TOKEN, ctx.instant).name
    path = posixpath.join(directory, name)
    _clear_earlier_attempt(ctx, storage, directory, op, path)
    num_writes = None
    if base_file is not None and not ctx.exact and logs.schema is not None:  # a plain merge, nothing carried
        num_writes = stream_new_base_file(storage, base_file, logs, rest, spec, path)
    if num_writes is None:
        base = read_base_file(storage, base_file) if base_file is not None else None
        if base is not None and logs.schema is not None:
            base = conform(base, logs.schema)
        records = SliceRecords(logs.schema, base, logs.log_rows, logs.parts, logs.log_keys, spec)
        layout = _slice_layout(ctx, op, records, rest, spec, partition)
        held = layout.held if layout.held is not None else layout.carry.schema.empty_table()
        if layout.carry.num_rows or layout.carry_deletes or held.num_rows or layout.held_deletes:
            groups = ((held, layout.held_deletes), (layout.carry, layout.carry_deletes))
            _write_carry_log(ctx, storage, directory, op, groups)
        base_records = with_file_name(layout.base, name)
        storage.create_atomic(path, encode_parquet(base_records))
        num_writes = base_records.num_rows
        inexact, cap = len(layout.inexact_keys), layout.threshold_cap_ms
    else:
        inexact, cap = 0, None
    _crash_point("after-base-file")
    stat = _write_stat(op, rel(name), num_writes, storage.size(path), stats)
    return OperationResult(stat, inexact, cap)


def _clear_earlier_attempt(
    ctx: CompactionContext, storage: Storage, directory: str, op: CompactionOperation, path: str
) -> None:
    """Delete an earlier attempt's base file and carry log: they are rewritten, not reused, as writes appended
    into the slice since then can change the layout that keeps the snapshot (no reader reads them before the
    commit). A carry log holding another write's blocks is refused: a writer that did not know the plan took it."""
    carry_path = posixpath.join(directory, carry_log_name(op.file_id, ctx.instant))
    if storage.exists(carry_path):
        if not written_only_by(storage, carry_path, ctx.instant):
            raise HudiMetaError(
                f"{carry_path} holds another write's blocks: run the compaction again (it is taken back)"
            )
        storage.delete(carry_path)
    if storage.exists(path):
        storage.delete(path)


def _slice_layout(
    ctx: CompactionContext,
    op: CompactionOperation,
    records: SliceRecords,
    rest: SliceRecords | None,
    spec: MergeSpec,
    partition: str,
) -> SliceLayout:
    """The slice's new base file and carry log by the plan's settings; keys it could not make exact are
    logged (the version as of T cannot sit under the later ones by the table's merge rules)."""
    layout = plan_layout(
        records,
        rest,
        spec,
        partition,
        exact=ctx.exact,
        carry_allowed=ctx.carry,
        event_time_field=ctx.event_time_field,
        threshold_ms=ctx.threshold_ms,
        instant_zone=TableConfig(ctx.props).timeline_timezone,
    )
    if layout.inexact_keys:
        log.warning(
            "compaction %s, file group %s: %d keys are not exact (the version as of T cannot sit under the "
            "later ones by the table's merge rules): %s",
            ctx.instant,
            op.file_id,
            len(layout.inexact_keys),
            ", ".join(layout.inexact_keys[:5]),
        )
    return layout


def _write_stat(op: CompactionOperation, path: str, num_writes: int, size: int, stats: ReadStats) -> WriteStat:
    """The operation's write stat as Hudi's commit metadata holds it: the new base file and what the merge read."""
    return WriteStat(
        file_id=op.file_id,
        path=path,
        prev_commit=op.base_instant_time or "null",
        num_writes=num_writes,
        num_update_writes=stats.log_records,
        total_write_bytes=size,
        partition_path=op.partition_path or "",
        total_log_records=stats.log_records + stats.log_deletes,
        total_log_files_compacted=len(op.delta_file_paths),
        total_log_size_compacted=int(op.metrics.get("TOTAL_LOG_FILES_SIZE", 0)),
        total_updated_records_compacted=stats.log_records + stats.log_deletes,
        total_log_blocks=stats.log_blocks,
        total_corrupt_log_block=stats.corrupt_blocks,
        total_rollback_blocks=stats.rollback_blocks,
        file_size_in_bytes=size,
    )


def order_sensitive(spec: MergeSpec) -> bool:
    """Whether a record merges differently as a base record than as a log record (so a partial compaction must
    look at the log files it keeps): ordering values decide, and base and log records merge by different rules."""
    return spec.ordering_field is not None and spec.merge_mode is not MergeMode.COMMIT_TIME_ORDERING


def _rest_log_files(storage: Storage, directory: str, op: CompactionOperation, ctx: CompactionContext) -> list[str]:
    """The log files that stay after the new base file, in log order: the kept files (the links' physical
    targets) and those writers appended into the compaction's slice while it was pending."""
    reserved = {s.symlink for s in op.symlink_operations} | {carry_log_name(op.file_id, ctx.instant)}
    appended = []
    for info in storage.list_dir(directory):
        parsed = LogFileName.try_parse(info.name)
        if parsed and parsed.file_id == op.file_id and ctx.in_own_slice(parsed) and info.name not in reserved:
            appended.append(parsed)
    return [s.target for s in op.symlink_operations] + [p.name for p in sorted(appended, key=LogFileName.sort_key)]


def _write_carry_log(
    ctx: CompactionContext,
    storage: Storage,
    directory: str,
    op: CompactionOperation,
    groups: Sequence[tuple[pa.Table, Sequence[DeleteRecord]]],
) -> None:
    """The carry log `.F_C.log.1_...`, created at once: per group of versions (held at or before T, then after T:
    `layout.SliceLayout`), a data block and the delete blocks, all of the compaction instant."""
    path = posixpath.join(directory, carry_log_name(op.file_id, ctx.instant))
    blocks = []
    for data, deletes in groups:
        if data.num_rows:
            meta = posixpath.join(ctx.base_path, ".hoodie")
            writer_ctx = WriteContext(ctx.base_path, meta, ctx.props, ctx.instant, ctx.base_uri, ctx.storage_options)
            schema_json = writer_ctx.avro_schema(data.schema)
            blocks.append(arrow_avro_data_block(data, schema_json, ctx.instant).data)
        # one delete block per kind of ordering value: the carried deletes come from different writes, and hudi-rs
        # refuses a block whose ordering values mix types (Java's writers never mix them in one block either)
        kinds: dict[str, list[DeleteRecord]] = {}
        for d in deletes:
            kind = "natural" if is_natural_order(d.ordering_value) else type(d.ordering_value).__name__
            kinds.setdefault(kind, []).append(d)
        for same_kind in kinds.values():
            blocks.append(delete_block(same_kind, ctx.instant).data)
    storage.create_atomic(path, b"".join(blocks))


def make_links(table: HudiTable, plan: CompactionPlan, mode: str) -> int:
    """Create the plan's links (symlinks, or copies of the physical files); existing ones are kept."""
    made = 0
    for op in plan.operations:
        partition = op.partition_path or ""
        directory = posixpath.join(table.base_path, partition) if partition else table.base_path
        for link in op.symlink_operations:
            link_path = posixpath.join(directory, link.symlink)
            if table.storage.exists(link_path) or table.storage.link_target(link_path) is not None:
                continue
            if mode == "symlink":
                table.storage.symlink(link.target, link_path)
            else:
                table.storage.copy_atomic(posixpath.join(directory, link.target), link_path)
            made += 1
            _crash_point("after-link")
    return made


def files_beyond_stats(table: HudiTable, plan: CompactionPlan, instant: str) -> dict[str, dict[str, int]]:
    """Partition -> name -> size of the files of the new slices the commit's write stats do not name: the links
    (their targets' sizes) and the carry logs; the metadata table lists them like any other file."""
    out: dict[str, dict[str, int]] = {}
    for op in plan.operations:
        partition = op.partition_path or ""
        directory = posixpath.join(table.base_path, partition) if partition else table.base_path
        names = [link.symlink for link in op.symlink_operations] + [carry_log_name(op.file_id, instant)]
        for name in names:
            path = posixpath.join(directory, name)
            if table.storage.exists(path):
                out.setdefault(partition, {})[name] = table.storage.size(path)
    return out


def check_plan_inputs(table: HudiTable, plan: CompactionPlan, instant: str) -> None:
    """Refuse to commit while a write older than the compaction is pending (its log files would land in a slice
    being compacted), and take the plan back when writers that did not know it broke its merge order
    (`compaction_undo.plan_breakers`): no plan is left pending that can never run."""
    table.reload()
    older = [i.requested_time for i in table.timeline.pending_writes(before=instant)]
    if older:
        raise HudiMetaError(
            f"write {older[0]} is still pending and older than compaction {instant}: let it finish (or roll it "
            f"back if its writer died), then run the compaction again"
        )
    breakers = plan_breakers(table, plan, instant)
    if not breakers:
        return
    why = breakers[0].describe() + (f" (and {len(breakers) - 1} more)" if len(breakers) > 1 else "")
    try:
        report = unschedule_compaction(table, instant, dry_run=False)
    except HudiMetaError as refused:
        raise HudiMetaError(
            f"compaction {instant} cannot keep merge order ({why}); taking it back was refused: {refused}; run it "
            "again once no write is pending (it is then taken back)"
        ) from None
    log.warning("compaction %s taken back: %s", instant, why)
    raise PlanTakenBackError(
        f"compaction {instant} was taken back, nothing lost: {why}; schedule again to compact these file groups",
        report,
    )


def _sequential(
    func: Callable[[CompactionOperation], dict[str, Any]], ops: Sequence[CompactionOperation]
) -> list[dict[str, Any]]:
    return [func(op) for op in ops]


def runnable_instant(table: HudiTable, instant: str | None) -> str:
    """The compaction `run_compaction` would run (the oldest pending one when `instant` is None), refused as it
    would refuse it, but before an engine starts (the CLI and the spark-submit entry ask first)."""
    check_compactable(table)
    instant = instant if instant is not None else oldest_pending(table)
    if instant not in interrupted_compaction_rollbacks(table):  # else the run finishes taking it back
        _plan_to_run(table, instant)
    return instant


def _plan_to_run(table: HudiTable, instant: str) -> CompactionPlan:
    """The plan of pending compaction `instant`; refused for anything else, and for a plan whose event-time
    field the table does not hold, before anything is written."""
    tl = table.timeline
    state = tl.instant(instant)
    if state is None or not tl.is_compaction(instant):
        raise HudiMetaError(f"{instant} is not a compaction of {table.base_path}")
    if state.is_completed:
        raise HudiMetaError(f"compaction {instant} is already completed")
    plan: CompactionPlan = table.compaction_plan(instant)
    event_time_field(table, plan, instant)
    return plan


def oldest_pending(table: HudiTable) -> str:
    """The oldest pending compaction; first, one whose take-back was interrupted (running it finishes that)."""
    interrupted = interrupted_compaction_rollbacks(table)
    if interrupted:
        return interrupted[0]
    pending = table.timeline.pending_compactions()
    if not pending:
        raise HudiMetaError(f"no pending compaction on {table.base_path}: schedule one first")
    return pending[0].requested_time


LAYOUT_ATTEMPTS = 3  # times operations are laid out again when writes land in their slices during a run


def _op_keys(ops: Sequence[CompactionOperation]) -> list[tuple[str, str]]:
    return [(op.partition_path or "", op.file_id) for op in ops]


def event_time_field(table: HudiTable, plan: CompactionPlan, instant: str) -> str | None:
    """The field a plan's versions are judged by: the one the plan was cut with (the index's), else, for plans
    written before plans recorded it, the table's `hoodie.payload.event.time.field`. A plan with a threshold and
    neither is refused: guessing would put versions after T into the base file, or none at all."""
    params = plan.strategy.strategy_params if plan.strategy else {}
    field_name = plan_event_time_field(plan) or table.config.event_time_field
    if field_name is None and (THRESHOLD_PARAM in params or is_exact(plan)):
        raise HudiMetaError(
            f"compaction {instant} has a threshold but no event-time field (neither its plan nor "
            f"hoodie.properties names one): unschedule it, index the table with an event-time field, and "
            f"schedule again"
        )
    return field_name


def _context(table: HudiTable, plan: CompactionPlan, instant: str) -> CompactionContext:
    """The tasks' view of the table now: what is committed decides which log blocks the layout sees."""
    params = plan.strategy.strategy_params if plan.strategy else {}
    field_name = event_time_field(table, plan, instant)
    table.reload()
    inputs = table.view_inputs()
    return CompactionContext(
        base_path=table.base_path,
        props=dict(table.config.props),
        instant=instant,
        completed=frozenset(inputs.completed),
        first_active_instant=inputs.first_active_instant,
        exact=is_exact(plan),
        carry=has_carry_log(plan),
        threshold_ms=int(params[THRESHOLD_PARAM]) if THRESHOLD_PARAM in params else None,
        event_time_field=field_name,
        base_uri=table.uri,
        storage_options=table.storage.options,
        completion_times=dict(inputs.completed) if table.config.version >= 8 else {},
    )


def _laid_out_before_a_write(
    table: HudiTable, ctx: CompactionContext, ops: Sequence[CompactionOperation]
) -> list[CompactionOperation]:
    """The operations whose layout did not see a write that has committed since into their new slice (a log
    file of the compaction's instant; on versions 8 and 9 any). Only order-sensitive merges look at those files
    (`_rest_log_files`)."""
    if not order_sensitive(TableConfig(ctx.props).merge_spec()):
        return []
    table.reload()
    tl = table.timeline
    touched: set[tuple[str, str]] = set()
    for w in tl.completed_writes():
        if w.requested_time in ctx.completed or tl.is_compaction(w.requested_time):
            continue
        for stat in tl.commit_metadata(w).write_stats():
            parsed = LogFileName.try_parse(stat.file_name)
            # on versions 8 and 9 a write that completed since the run began is in the compaction's slice
            if parsed is not None and (parsed.instant == ctx.instant or table.config.version >= 8):
                touched.add((stat.partition_path, parsed.file_id))
    return [op for op in ops if (op.partition_path or "", op.file_id) in touched]


def _commit_metadata(
    table: HudiTable, plan: CompactionPlan, ctx: CompactionContext, results: Sequence[dict[str, Any]]
) -> CommitMetadata:
    """The compaction's commit: the tasks' write stats, the links, the threshold the slices support and the
    exact flag, and the schema of the newest write."""
    links = [
        {"partition_path": op.partition_path or "", "symlink": s.symlink, "target": s.target}
        for op in plan.operations
        for s in op.symlink_operations
    ]
    extra = {SYMLINK_OPERATIONS_KEY: json.dumps(links)}
    if ctx.threshold_ms is not None:
        caps = [int(d[THRESHOLD_CAP_FIELD]) for d in results if d.get(THRESHOLD_CAP_FIELD) is not None]
        extra[THRESHOLD_KEY] = str(min([ctx.threshold_ms, *caps]))
    if ctx.exact:
        exact = not exact_blocked_by(plan) and not any(d.get(INEXACT_KEYS_FIELD) for d in results)
        extra[EXACT_RESULT_KEY] = str(exact).lower()
    writes = table.timeline.completed_writes()
    schema = table.timeline.commit_metadata(writes[-1]).schema if writes else None
    if schema:
        extra["schema"] = schema
    metadata = CommitMetadata(compacted=True, operation_type="COMPACT", extra_metadata=extra)
    for s in (WriteStat.from_dict(d) for d in results):
        metadata.partition_to_write_stats.setdefault(s.partition_path, []).append(s)
    return metadata


def _finish_taking_back(table: HudiTable, instant: str) -> NoReturn:
    """A run killed while it took its plan back (a version-6 table with a metadata table takes it back as a
    rollback, whose plan is gone once its files moved): the run again finishes that rollback."""
    report = unschedule_compaction(table, instant, dry_run=False)
    raise PlanTakenBackError(
        f"compaction {instant} was taken back (a run killed while taking it back is finished now), nothing lost; "
        "schedule again to compact these file groups",
        report,
    )


def run_compaction(
    table: HudiTable,
    instant: str | None = None,
    map_tasks: MapTasks = _sequential,
    on_phase: Callable[[str], None] | None = None,
) -> Instant:
    """Execute the plan of `instant` (default: the oldest pending one) and commit it. `on_phase` hears
    "running" before the tasks and "committing" before the links and the commit (the service records it)."""
    check_compactable(table)
    instant = instant or oldest_pending(table)
    with run_lock(table.storage, run_lock_path(table, instant), table.config.props, f"run compaction {instant}"):
        return _run_compaction(table, instant, map_tasks, on_phase)


def run_lock_path(table: HudiTable, instant: str) -> str:
    """One process runs a compaction at a time: a second run of the same plan would rewrite, and first delete, base
    files the first one may have committed meanwhile. The lock lives in `.hoodie/.aux`, Hudi's folder for
    auxiliary files, which readers do not list (docs/concurrency.md section 1)."""
    folder = posixpath.join(table.meta_path, AUX_DIR)
    table.storage.makedirs(folder)
    return posixpath.join(folder, f"{instant}.compaction.run.lock")


def _run_compaction(
    table: HudiTable, instant: str, map_tasks: MapTasks, on_phase: Callable[[str], None] | None
) -> Instant:
    if instant in interrupted_compaction_rollbacks(table):
        _finish_taking_back(table, instant)
    plan = _plan_to_run(table, instant)
    check_plan_inputs(table, plan, instant)  # and before any work that a taken-back plan would waste
    params = plan.strategy.strategy_params if plan.strategy else {}
    writer = table.timeline_writer()
    writer.start(Action.COMPACTION, instant)
    ops = list(plan.operations)
    ctx = _context(table, plan, instant)
    if on_phase is not None:
        on_phase("running")
    results = dict(zip(_op_keys(ops), map_tasks(ctx, ops), strict=True))
    check_plan_inputs(table, plan, instant)
    if on_phase is not None:
        on_phase("committing")
    # Links last, right before the commit: until the commit, stock readers merge the pending slice with the
    # one before it and would read a link's records twice (ours skip planned links; see fs_view).
    make_links(table, plan, params.get(MODE_KEY, "symlink"))
    _crash_point("before-commit")
    for attempt in range(LAYOUT_ATTEMPTS + 1):
        stale = _laid_out_before_a_write(table, ctx, ops)
        if not stale:
            break
        if attempt == LAYOUT_ATTEMPTS:
            raise HudiMetaError(
                f"writes kept landing in the slices of compaction {instant} while it ran (laid out again "
                f"{LAYOUT_ATTEMPTS} times): run it again"
            )
        # a write committed into these slices while the run was going: their layout may no longer keep the
        # snapshot (compaction/layout.py), so they are laid out again with that write in view
        log.info("compaction %s: %d operations laid out again after writes into their slices", instant, len(stale))
        ctx = _context(table, plan, instant)
        results.update(zip(_op_keys(stale), map_tasks(ctx, stale), strict=True))
    metadata = _commit_metadata(table, plan, ctx, [results[k] for k in _op_keys(ops)])
    content = metadata.to_bytes(table.config.timeline_layout)
    with table_lock(table.storage, table.meta_path, table.config.props, f"complete compaction {instant}"):
        if (sync := metadata_sync(table)) is not None:
            sync.commit(instant, metadata, files_beyond_stats(table, plan, instant))
        completed = writer.complete(Action.COMPACTION, instant, content)
    log.info("compaction %s completed: %d file groups (%s)", instant, len(ops), table.base_path)
    table.reload()
    return completed
