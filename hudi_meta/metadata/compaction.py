"""Compaction of the metadata table: the MDT table service that keeps its log files few and lets Java archive the
data table (Java archives no data-table instant the MDT has not compacted past). Every file group of every MDT
partition the data table lists is compacted, each record type merged by its own rule (`hudi_meta.metadata.merge`).

As `HoodieBackedTableMetadataWriter.compactIfNecessary` (1.x) and its version-6 counterpart do, called with the
data table's lock held, before the write's own MDT deltacommit: a pending MDT compaction is finished first
(`runPendingTableServicesOperationsAndRefreshTimeline`); else, once `hoodie.metadata.compact.max.delta.commits`
(10) deltacommits completed since the last compaction, one is planned over every file slice at instant C and run.
C on 1.x: just below the oldest data-table instant that is pending but complete on the MDT (that deltacommit
must stay rollbackable), else a fresh instant; on version 6: the latest MDT deltacommit + `001`, and no compaction
while a data-table instant at or before it is pending (`validateCompactionScheduling`). The plan takes each slice's
base file and the log files completed before C; the new base HFile holds their records merged as readers merge
them, blocks of instants readers skip left out. Steps: `.compaction.requested` (plan), `.inflight`, base files,
the completed `commit`; until that completion readers read the old slice (plus the pending compaction's logs), and
a run killed at any step is finished by the next call. docs/metadata-table.md sections 6.5 and 7.3.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from collections.abc import Callable
from dataclasses import dataclass

from hudi_meta.file_group.fs_view import FileGroup, latest_slice_for_snapshot
from hudi_meta.format.block_content import KeyedRecord
from hudi_meta.format.commit_metadata import CommitMetadata, WriteStat
from hudi_meta.format.config_keys import METADATA_COMPACT_MAX_DELTA_COMMITS
from hudi_meta.format.file_names import UNKNOWN_WRITE_TOKEN, BaseFileName
from hudi_meta.format.hfile import HFileReader
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.format.table_service_metadata import CompactionOperation, CompactionPlan
from hudi_meta.metadata.crash import crash_point
from hudi_meta.metadata.encoding import hfile_bytes, record_schema_json, writer_schema_json
from hudi_meta.metadata.init import metadata_partitions_now
from hudi_meta.metadata.merge import combine, kept_in_base
from hudi_meta.metadata.record import MetadataRecord
from hudi_meta.metadata.rollback import fresh_mdt_instant, mdt_timeline_writer, open_mdt, rollback_inflight_compaction
from hudi_meta.table.metadata_table import merge_log_records, merge_with_base, slice_records, valid_instants
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action, State, instant_epoch_ms
from hudi_meta.timeline.timeline import new_instant_time

MAX_DELTA_COMMITS = METADATA_COMPACT_MAX_DELTA_COMMITS.default
V6_COMPACTION_SUFFIX = "001"  # HBTMW6.createCompactionTimestamp
COMPACT = "COMPACT"


@dataclass(frozen=True)
class MdtCompactionReport:
    """One MDT compaction: its instant, the base files it wrote (relative to the MDT), whether it was a pending
    one finished."""

    instant: str
    base_files: tuple[str, ...]
    resumed: bool


def compact_if_necessary(table: HudiTable, max_delta_commits: int = MAX_DELTA_COMMITS) -> MdtCompactionReport | None:
    """Finish a pending MDT compaction, else plan and run one when due (see the module docstring); None when
    nothing ran. The caller holds the data table's lock."""
    table.reload()
    mdt = open_mdt(table)
    pending = mdt.timeline.pending_compactions()
    if pending:
        resume = pending[0].requested_time
        if pending[0].state == State.INFLIGHT:
            rollback_inflight_compaction(table, mdt, resume)
            mdt.reload()
        return _run(table, mdt, resume, mdt.compaction_plan(resume), resumed=True)
    completed = mdt.timeline.completed()
    last = max((i.requested_time for i in completed if i.action == Action.COMMIT), default="")
    since = [i for i in completed if i.action == Action.DELTA_COMMIT and i.requested_time > last]
    if len(since) < max_delta_commits:
        return None
    instant = _compaction_instant(table, mdt, since[-1].requested_time)
    if instant is None:
        return None
    plan = _plan(table, mdt, instant)
    mdt_timeline_writer(table, mdt).request(Action.COMPACTION, instant, plan.to_bytes())
    crash_point("compaction-after-requested")
    mdt.reload()
    return _run(table, mdt, instant, plan, resumed=False)


def _compaction_instant(table: HudiTable, mdt: HudiTable, latest_deltacommit: str) -> str | None:
    pending = [i.requested_time for i in table.timeline.pending()]
    if table.config.version == 6:
        if any(t <= latest_deltacommit for t in pending):
            return None  # HBTMW6.validateCompactionScheduling
        return latest_deltacommit + V6_COMPACTION_SUFFIX
    on_mdt = [t for t in pending if mdt.timeline.is_completed(t)]
    if on_mdt:
        zone = table.config.timeline_timezone
        ms = instant_epoch_ms(min(on_mdt), zone) - 1  # instantTimeMinusMillis(pending, 1)
        return new_instant_time((), now=dt.datetime.fromtimestamp(ms / 1000, zone), zone=zone)
    return fresh_mdt_instant(table, mdt)


def _groups(table: HudiTable, mdt: HudiTable) -> list[FileGroup]:
    """The file groups of the MDT partitions the data table lists (a partition an indexer is still building is
    not listed there: it is not touched)."""
    partitions = set(metadata_partitions_now(table))
    groups = [fg for fg in mdt.file_groups() if fg.partition in partitions]
    return sorted(groups, key=lambda g: (g.partition, g.file_id))


def _plan(table: HudiTable, mdt: HudiTable, instant: str) -> CompactionPlan:
    """Every file slice of those partitions: its committed base file and the log files completed before
    `instant` (1.x; version 6 log files are named by the slice, its blocks filtered when merged)."""
    inputs = mdt.view_inputs()
    operations = []
    for fg in _groups(table, mdt):
        picked = latest_slice_for_snapshot(fg, inputs)
        base, logs = picked if picked is not None else (None, [])
        if mdt.config.version >= 8:
            logs = [lf for lf in logs if (inputs.completion_time(lf.parsed.instant) or instant) < instant]
        operations.append(
            CompactionOperation(
                base_instant_time=base.parsed.instant if base is not None else fg.ordered_slices()[0].base_instant,
                file_id=fg.file_id,
                partition_path=fg.partition,
                data_file_path=base.name if base is not None else None,
                delta_file_paths=tuple(lf.name for lf in logs),
            )
        )
    return CompactionPlan(operations=tuple(operations))


def _run(table: HudiTable, mdt: HudiTable, instant: str, plan: CompactionPlan, resumed: bool) -> MdtCompactionReport:
    writer = mdt_timeline_writer(table, mdt)
    writer.start(Action.COMPACTION, instant)
    crash_point("compaction-after-inflight")
    is_valid = valid_instants(table, mdt)
    stats: dict[str, list[WriteStat]] = {}
    for op in plan.operations:
        stat = _compact(mdt, op, instant, lambda t: is_valid(t) and t < instant)
        if stat is not None:
            stats.setdefault(op.partition_path or "", []).append(stat)
    metadata = CommitMetadata(
        partition_to_write_stats=stats,
        compacted=True,
        extra_metadata={"schema": record_schema_json()},
        operation_type=COMPACT,
    )
    writer.complete(Action.COMPACTION, instant, metadata.to_bytes(mdt.config.timeline_layout))
    crash_point("compaction-after-complete")
    return MdtCompactionReport(instant, tuple(s.path for group in stats.values() for s in group), resumed)


def merged_slice(mdt: HudiTable, op: CompactionOperation, is_valid: Callable[[str], bool]) -> list[KeyedRecord]:
    """The records of `op`'s slice as the new base file holds them: base, then its valid log blocks, merged."""
    folder = op.partition_path or ""
    base = f"{folder}/{op.data_file_path}" if op.data_file_path else None
    in_base, in_logs = slice_records(mdt, base, [f"{folder}/{name}" for name in op.delta_file_paths], is_valid)
    merged = merge_with_base(in_base, merge_log_records(in_logs, combine), combine)
    return [r for r in merged.values() if kept_in_base(r)]


def _compact(
    mdt: HudiTable, op: CompactionOperation, instant: str, is_valid: Callable[[str], bool]
) -> WriteStat | None:
    """The slice's records merged (base, then its valid log blocks) into base file `{fileId}_{token}_{C}.hfile`;
    a rerun replaces what a killed run wrote. A slice left without records gets no base file (as Java's
    compaction writes none: a record-index file group no key hashes to stays as it is)."""
    folder = posixpath.join(mdt.base_path, op.partition_path or "")
    logs = [f"{op.partition_path}/{name}" for name in op.delta_file_paths]
    name = BaseFileName(op.file_id, UNKNOWN_WRITE_TOKEN, instant, ".hfile").name
    records = base_file_records(op.partition_path or "", merged_slice(mdt, op, is_valid), name)
    if not records:
        return None
    payload = hfile_bytes(records, slice_schema(mdt, op), base_file=True)
    path = posixpath.join(folder, name)
    if mdt.storage.exists(path):
        mdt.storage.replace_atomic(path, payload)
    else:
        mdt.storage.create_atomic(path, payload)
    crash_point("compaction-after-base-file")
    sizes = sum(mdt.storage.size(posixpath.join(mdt.base_path, p)) for p in logs)
    return WriteStat(
        file_id=op.file_id,
        path=f"{op.partition_path}/{name}",
        prev_commit=op.base_instant_time,
        num_writes=len(records),
        num_update_writes=len(records),
        total_write_bytes=len(payload),
        partition_path=op.partition_path,
        total_log_records=len(records),
        total_log_files_compacted=len(logs),
        total_log_size_compacted=sizes,
        total_updated_records_compacted=len(records),
        file_size_in_bytes=len(payload),
    )


def slice_schema(mdt: HudiTable, op: CompactionOperation) -> str:
    """The schema the new base file is written in: the one its slice was last written in (the base HFile's, else
    the newest log block's SCHEMA header), else ours. Java writes its own version's schema; the slice's keeps
    readers of that version reading what they wrote, and every record decoded from the slice fits it."""
    folder = posixpath.join(mdt.base_path, op.partition_path or "")
    for name in reversed(op.delta_file_paths):
        schemas = [b.schema for b in read_blocks(mdt.storage, posixpath.join(folder, name)) if b.schema]
        if schemas:
            return schemas[-1]
    if op.data_file_path:
        path = posixpath.join(folder, op.data_file_path)
        schema = HFileReader(mdt.storage.read_bytes(path), path).schema
        if schema:
            return schema
    return writer_schema_json()


def base_file_records(partition: str, merged: list[KeyedRecord], file_name: str) -> list[MetadataRecord]:
    """The records of a compacted base file: meta fields null but `_hoodie_file_name`, the file's own name (what
    Java's compaction writes; the first base files of a partition carry none)."""
    out = []
    for r in merged:
        payload = {k: v for k, v in r.record.items() if not k.startswith("_hoodie_")}
        out.append(MetadataRecord(partition, r.key, {**payload, "_hoodie_file_name": file_name}))
    return out
