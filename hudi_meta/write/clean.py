"""Run a clean's instants on any Hudi table, data table or metadata table: the plan as Java writes it, the
deletes (links first, a link's target never while a link on disk points at it), `<t>.clean` with Java's
`HoodieCleanMetadata`; pending cleans finished first. Planning inputs read from the table itself
(`clean_timeline`, `groups_from_files`) are here too; `hudi_meta.clean.run` plans data tables from the index and
brings their metadata table in step (`metadata_step`), the metadata table's own clean (`hudi_meta.metadata.services`)
uses this module directly. See `hudi_meta.clean.run` for the instants' formats and the crash rules.

It sits on the write side, beside `archival.py`, for the same reason: both the data table's clean (`clean/run.py`,
which brings the metadata table in step) and the metadata table's own clean (`metadata/services.py`) run it, so it
must sit below both for every import to go down (docs/architecture.md section 1). It needs nothing but the table.
"""

from __future__ import annotations

import logging
import posixpath
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hudi_meta.crash_points import CrashPoints
from hudi_meta.errors import CorruptFileError
from hudi_meta.format.avro_container import read_container
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.format.table_service_metadata import (
    ActionInstant,
    CleanerPlan,
    CleanFileInfo,
    CleanMetadata,
    CleanPartitionMetadata,
    CompactionPlan,
    file_name,
)
from hudi_meta.progress import Report, silent
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action, Instant, State
from hudi_meta.write.clean_plan import (
    DELETE_FILE,
    DELETE_LINK,
    CleanAction,
    CleanFile,
    CleanGroup,
    CleanOperation,
    CleanPlanResult,
    CleanSlice,
    CleanTimeline,
    TimelineEntry,
)
from hudi_meta.write.lock import table_lock

log = logging.getLogger("hudi_meta.clean.execute")  # the name `-v` has always shown for a clean

MetadataStep = Callable[[str, CleanMetadata], None]  # (clean instant, its metadata): run before it completes

CLEAN_PLAN_VERSION = 2  # CleanPlanner.LATEST_CLEAN_PLAN_VERSION
CLEAN_METADATA_VERSION = 2  # CleanerUtils.LATEST_CLEAN_METADATA_VERSION
CRASH_AT_ENV = "HUDI_META_CLEAN_CRASH_AT"  # failure injection for crash tests: kill -9 this process at a named step
CRASH_POINTS = ("after-requested", "after-inflight", "after-link", "after-delete", "before-commit")
_crash = CrashPoints(CRASH_AT_ENV, CRASH_POINTS)
set_crash_hook = _crash.set_hook
crash_point = _crash.reach

# ---------------------------------------------------------------- planning inputs


def clean_timeline(table: HudiTable) -> CleanTimeline:
    """The timeline facts clean planning needs, read from the table's active timeline."""
    tl = table.timeline
    entries = tuple(TimelineEntry(i.requested_time, i.action, i.is_completed) for i in tl.instants)
    compactions: dict[tuple[str, str], tuple[str, str]] = {}
    clustering: dict[tuple[str, str], str] = {}
    replaced: dict[tuple[str, str], str] = {}
    savepointed: set[str] = set()
    for instant in tl.instants:
        t = instant.requested_time
        if not instant.is_completed and instant.action in (Action.COMPACTION, Action.LOG_COMPACTION):
            plan = CompactionPlan.from_bytes(tl.requested_bytes(t, instant.action))
            for op in plan.operations:
                compactions[(op.partition_path or "", op.file_id)] = (t, op.base_instant_time)
        elif not instant.is_completed and instant.action in (Action.CLUSTERING, Action.REPLACE_COMMIT):
            for key in _clustering_groups(tl.requested_bytes(t, instant.action), t):
                clustering[key] = t
        elif instant.is_completed and instant.action == Action.REPLACE_COMMIT:
            for part, ids in tl.commit_metadata(instant).partition_to_replace_file_ids.items():
                replaced.update(((part, fid), t) for fid in ids)
        elif instant.is_completed and instant.action == Action.SAVEPOINT:
            savepointed.update(_savepointed_files(tl.read_bytes(instant), t))
    return CleanTimeline(
        entries, compactions, clustering, replaced, frozenset(savepointed), table.config.timeline_timezone
    )


def _clustering_groups(data: bytes, instant: str) -> list[tuple[str, str]]:
    """(partition, file id) of the input slices of a pending clustering (HoodieRequestedReplaceMetadata)."""
    try:
        rec = read_container(data)
    except CorruptFileError as e:
        raise CorruptFileError(f"cannot read the plan of pending replacecommit {instant}: {e}") from e
    plan = (rec or {}).get("clusteringPlan") or {}
    return [
        (s.get("partitionPath") or "", s.get("fileId") or "")
        for group in plan.get("inputGroups") or ()
        for s in group.get("slices") or ()
    ]


def _savepointed_files(data: bytes, instant: str) -> set[str]:
    """File names a savepoint keeps (HoodieSavepointMetadata's `savepointDataFile` per partition)."""
    try:
        rec = read_container(data)
    except CorruptFileError as e:
        raise CorruptFileError(f"cannot read savepoint {instant}: {e}") from e
    partitions = (rec or {}).get("partitionMetadata") or {}
    return {file_name(f) for pm in partitions.values() for f in pm.get("savepointDataFile") or ()}


def groups_from_files(table: HudiTable) -> list[CleanGroup]:
    """The same input as `groups_from_index`, from a listing of the table and its log files' headers (no store)."""
    out = []
    for fg in table.all_file_groups():
        slices = []
        for fs in fg.ordered_slices():
            files = []
            if fs.base_file is not None:
                files.append(CleanFile(fs.base_file.name, instants=(fs.base_file.parsed.instant,)))
            for lf in fs.sorted_logs():
                path = posixpath.join(table.base_path, lf.path)
                instants = sorted({i for blk in read_blocks(table.storage, path) if (i := blk.instant_time)})
                files.append(CleanFile(lf.name, lf.link_target, None, tuple(instants)))
            slices.append(CleanSlice(fs.base_instant, tuple(files)))
        out.append(CleanGroup(fg.partition, fg.file_id, tuple(slices)))
    return out


# ---------------------------------------------------------------- instants


def cleaner_plan(base_uri: str, result: CleanPlanResult) -> CleanerPlan:
    """The `HoodieCleanerPlan` of a planned clean of the table at `base_uri`, as Java's `CleanPlanActionExecutor`
    builds it: full paths, with the store's scheme (`s3://...`), so that Java finishing a clean we planned deletes
    the same files."""
    per_partition: dict[str, list[CleanFileInfo]] = defaultdict(list)
    for action in result.deletions:  # links first: executors that follow the plan's order keep targets last
        per_partition[action.partition].append(CleanFileInfo(posixpath.join(base_uri, action.path)))
    earliest = result.earliest_commit_to_retain
    return CleanerPlan(
        earliest_instant_to_retain=None
        if earliest is None
        else ActionInstant(earliest.time, earliest.action, "COMPLETED"),
        last_completed_commit_timestamp=result.last_completed_commit,
        policy=result.policy.name,
        version=CLEAN_PLAN_VERSION,
        file_paths_to_be_deleted_per_partition={p: tuple(infos) for p, infos in per_partition.items()},
    )


def pending_cleans(table: HudiTable) -> list[Instant]:
    return [i for i in table.timeline.pending() if i.action == Action.CLEAN]


def read_pending_plan(table: HudiTable, instant: Instant) -> CleanerPlan | None:
    """The plan of a pending clean (from `.requested`, as Java reads it); None when its files are empty."""
    data = table.timeline.requested_bytes(instant.requested_time, Action.CLEAN)
    if not data and instant.state == State.INFLIGHT:
        data = table.timeline.read_bytes(instant)
    return CleanerPlan.from_bytes(data) if data else None


def planned_paths(plan: CleanerPlan) -> list[tuple[str, str]]:
    """(partition, path relative to the table) of every file a plan deletes, in the plan's order; plan version 1
    files (the deprecated map) too. Paths are rebuilt from the partition and the file name, so absolute paths of
    any scheme (Java writes `file:/...`, `hdfs://...`) resolve to the same file."""
    out: list[tuple[str, str]] = []
    for partition, infos in plan.file_paths_to_be_deleted_per_partition.items():
        out.extend((partition, _rel(partition, file_name(info.file_path))) for info in infos)
    for partition, names in plan.files_to_be_deleted_per_partition.items():
        out.extend((partition, _rel(partition, file_name(name))) for name in names)
    return list(dict.fromkeys(out))


def _rel(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


@dataclass
class FileReport:
    """What a clean did (or would do) to one file: operation, path, reason, done, error."""

    instant: str | None
    operation: CleanOperation
    path: str
    reason: str
    done: bool = False
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "instant": self.instant,
            "operation": self.operation,
            "path": self.path,
            "reason": self.reason,
            "done": self.done,
            "error": self.error,
        }


@dataclass
class CleanRun:
    """One clean instant executed: its metadata and a report per file."""

    instant: str
    metadata: CleanMetadata
    reports: list[FileReport] = field(default_factory=list)


def execute_clean(
    table: HudiTable,
    instant: Instant,
    plan: CleanerPlan,
    reasons: dict[str, CleanAction] | None = None,
    progress: Report = silent,
    metadata_step: MetadataStep | None = None,
) -> CleanRun:
    """Run a requested or inflight clean to completion: inflight, links, other files, then `<t>.clean`;
    `metadata_step` runs under the table lock right before the completion (the metadata table's deltacommit)."""
    t0 = time.monotonic()
    t = instant.requested_time
    writer = table.timeline_writer()
    if instant.state == State.REQUESTED:
        # Java's transitionCleanRequestedToInflight keeps the plan on layout 1, writes an empty file on layout 2
        writer.start(Action.CLEAN, t, plan.to_bytes() if table.config.timeline_layout < 2 else b"")
    crash_point("after-inflight")
    storage, base = table.storage, table.base_path
    entries = planned_paths(plan)
    reports: dict[str, FileReport] = {}

    def report(path: str, operation: CleanOperation) -> FileReport:
        action = (reasons or {}).get(path)
        reason = action.reason if action is not None else f"planned by clean {t}"
        reports[path] = FileReport(t, operation, path, reason)
        progress("clean: files deleted", len(reports), len(entries))
        return reports[path]

    remaining = []
    for _, path in entries:  # 1. links, unlinked (never followed)
        full = posixpath.join(base, path)
        if storage.supports_symlinks and storage.link_target(full) is not None:
            _delete(storage, full, report(path, DELETE_LINK))
            crash_point("after-link")
        else:
            remaining.append(path)
    linked = _symlink_targets(table, {posixpath.dirname(p) for p in remaining})
    for path in remaining:  # 2. files, once no link on disk points at them
        full = posixpath.join(base, path)
        rep = report(path, DELETE_FILE)
        if not storage.exists(full):
            rep.done = True  # deleted by an earlier attempt of this clean
            continue
        if full in linked:
            rep.error = f"still linked by {posixpath.relpath(linked[full], base)}: not deleted"
            continue
        _delete(storage, full, rep)
        crash_point("after-delete")
    crash_point("before-commit")
    metadata = clean_metadata(t, plan, entries, reports, int((time.monotonic() - t0) * 1000))
    with table_lock(storage, table.meta_path, table.config.props, f"complete clean {t}"):
        if metadata_step is not None:
            metadata_step(t, metadata)
        writer.complete(Action.CLEAN, t, metadata.to_bytes())
    failed = sum(1 for r in reports.values() if not r.done)
    log.info("clean %s completed: %d files deleted, %d kept (%s)", t, len(reports) - failed, failed, table.base_path)
    ordered = [reports[path] for _, path in entries]
    return CleanRun(t, metadata, ordered)


def _delete(storage: Any, full: str, rep: FileReport) -> None:
    try:
        storage.delete(full)
        rep.done = True
    except OSError as e:
        rep.error = e.strerror or str(e)


def _symlink_targets(table: HudiTable, folders: Iterable[str]) -> dict[str, str]:
    """Physical file -> a symlink on disk pointing at it, over the given partition folders."""
    if not table.storage.supports_symlinks:
        return {}
    out: dict[str, str] = {}
    for folder in sorted(folders):
        for info in table.storage.list_dir(posixpath.join(table.base_path, folder) if folder else table.base_path):
            if info.link_target is not None:
                out.setdefault(posixpath.normpath(info.link_target), info.path)
    return out


def clean_metadata(
    instant: str, plan: CleanerPlan, entries: Sequence[tuple[str, str]], reports: dict[str, FileReport], took_ms: int
) -> CleanMetadata:
    """`HoodieCleanMetadata` as Java's `CleanerUtils.convertCleanMetadata` builds it from the per-partition stats."""
    partitions: dict[str, CleanPartitionMetadata] = {}
    names: dict[str, list[str]] = defaultdict(list)
    for partition, path in entries:
        names[partition].append(path)
    for partition in plan.file_paths_to_be_deleted_per_partition.keys() | names.keys():
        paths = names.get(partition, [])
        partitions[partition] = CleanPartitionMetadata(
            partition_path=partition,
            policy=plan.policy,
            delete_path_patterns=tuple(posixpath.basename(p) for p in paths),
            success_delete_files=tuple(posixpath.basename(p) for p in paths if reports[p].done),
            failed_delete_files=tuple(posixpath.basename(p) for p in paths if not reports[p].done),
        )
    earliest = plan.earliest_instant_to_retain
    return CleanMetadata(
        start_clean_time=instant,
        time_taken_in_millis=took_ms,
        total_files_deleted=sum(len(pm.success_delete_files) for pm in partitions.values()),
        earliest_commit_to_retain=earliest.timestamp if earliest is not None else "",
        last_completed_commit_timestamp=plan.last_completed_commit_timestamp,
        partition_metadata=partitions,
        version=CLEAN_METADATA_VERSION,
        extra_metadata=dict(plan.extra_metadata),
    )


def finish_pending_cleans(table: HudiTable, metadata_step: MetadataStep | None = None) -> list[CleanRun]:
    """Run every pending clean to completion, oldest first (Java's `CleanActionExecutor.execute`)."""
    runs = []
    for instant in pending_cleans(table):
        plan = read_pending_plan(table, instant)
        if plan is None:  # an empty pending clean: Java deletes such instants
            table.timeline_writer().delete_pending(Action.CLEAN, instant.requested_time)
            continue
        runs.append(execute_clean(table, instant, plan, metadata_step=metadata_step))
    table.reload()
    return runs
