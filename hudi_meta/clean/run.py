"""Clean a table: finish pending cleans, plan from the index (`hudi_meta.clean.plan`), write Hudi's clean
instants and delete, so the store and every reader (ours, hudi-rs, Java) keep seeing the same table.

Instants are written as Java's `CleanPlanActionExecutor` / `CleanActionExecutor` write them:
`<t>.clean.requested` holds the `HoodieCleanerPlan` (plan version 2: absolute paths under
`filePathsToBeDeletedPerPartition`, links first), `<t>.clean.inflight` the same plan on version 6 and nothing on
versions 8 and 9 (docs/hudi-1x.md section 5), and `<t>.clean` (`<t>_<c>.clean` on 8 and 9) the
`HoodieCleanMetadata` (version 2; per partition the deleted names as `deletePathPatterns`, and what was and
was not deleted). No plan is written when there is nothing to delete, as Java does.

Execution deletes every planned symlink first (unlinked, never followed), then the other files; a physical
file that a symlink on disk still points at is not deleted (reported as failed), so a link target can only go
after its links. Deletes are idempotent: a clean killed at any point (`kill -9`) is finished by the next
`clean --execute`, which runs pending cleans before planning a new one; a file already gone counts as
deleted (Java would list it as failed: the earlier attempt of the same clean deleted it).

The timeline facts planning needs (pending compactions and clustering, replaced file groups, savepoints) are
read from the table's timeline; the file groups, slices, links and the instants each file holds come from the
index, refreshed right before planning.
"""

from __future__ import annotations

import logging
import posixpath
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, select

from hudi_meta.clean.plan import (
    DELETE_FILE,
    DELETE_LINK,
    CleanAction,
    CleanFile,
    CleanGroup,
    CleanPlanResult,
    CleanPolicy,
    CleanSlice,
    CleanTimeline,
    TimelineEntry,
    plan_clean,
)
from hudi_meta.compaction.schedule import schedule_lock
from hudi_meta.crash_points import CrashPoints
from hudi_meta.errors import CorruptFileError, UnsupportedTableError
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
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.models import file_group_table, file_slice_table, link_table, log_block_table, log_file_table
from hudi_meta.index.states import LinkState
from hudi_meta.index.table_format import require_current_index
from hudi_meta.metadata.sync import metadata_sync
from hudi_meta.progress import Report, silent
from hudi_meta.table.instant import Action, Instant, State
from hudi_meta.table.lock import table_lock
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import now_ms as current_ms

log = logging.getLogger(__name__)

CLEAN_PLAN_VERSION = 2  # CleanPlanner.LATEST_CLEAN_PLAN_VERSION
CLEAN_METADATA_VERSION = 2  # CleanerUtils.LATEST_CLEAN_METADATA_VERSION
CRASH_AT_ENV = "HUDI_META_CLEAN_CRASH_AT"  # failure injection for crash tests: kill -9 this process at a named step
CRASH_POINTS = ("after-requested", "after-inflight", "after-link", "after-delete", "before-commit")
_crash = CrashPoints(CRASH_AT_ENV, CRASH_POINTS)
set_crash_hook = _crash.set_hook
_crash_point = _crash.reach


def check_cleanable(table: HudiTable) -> None:
    """Refuse tables this cleaner cannot clean safely, with the setting to change."""
    cfg = table.config
    if cfg.version not in (6, 8, 9):
        raise UnsupportedTableError(
            f"{table.base_path}: clean writes tables of version 6, 8 and 9 (this table is version {cfg.version})"
        )
    metadata_sync(table)  # refuses a metadata table partition it cannot keep


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


def groups_from_index(engine: Engine, table_id: int) -> list[CleanGroup]:
    """Every file group of the table with its slices and files, as the index holds them: base files, log files
    (a symlink with its target), copies made by compaction, and the instants each log file's blocks belong to."""
    g, s, f = file_group_table, file_slice_table, log_file_table
    b, k = log_block_table, link_table
    with engine.connect() as conn:
        # rows are unpacked as tuples: attribute access on a million rows costs seconds
        block_instants: dict[int, list[str]] = defaultdict(list)
        for file_id, instant in conn.execute(
            select(b.c.log_file_id, b.c.instant).where(b.c.table_id == table_id, b.c.instant.is_not(None)).distinct()
        ).all():
            block_instants[file_id].append(instant)
        copies = {
            (part, link): posixpath.join(part, target)
            for part, link, target in conn.execute(
                select(k.c.partition_path, k.c.link_name, k.c.target_name).where(
                    k.c.table_id == table_id, k.c.state == LinkState.CREATED
                )
            )
        }
        logs: dict[int, list[CleanFile]] = defaultdict(list)
        no_instants: tuple[str, ...] = ()
        for log_id, slice_id, part, name, is_link, link_target in conn.execute(
            select(f.c.id, f.c.file_slice_id, f.c.partition_path, f.c.name, f.c.is_link, f.c.link_target).where(
                f.c.table_id == table_id, f.c.file_slice_id.is_not(None)
            )
        ).all():
            target = link_target if is_link and link_target else None
            copy_of = None if target or not copies else copies.get((part, name))
            found = block_instants.get(log_id)
            logs[slice_id].append(CleanFile(name, target, copy_of, tuple(sorted(found)) if found else no_instants))
        slices: dict[int, list[CleanSlice]] = defaultdict(list)
        keys: dict[int, tuple[str, str]] = {}
        for gid, part, fid, slice_id, base_instant, base_file in conn.execute(
            select(g.c.id, g.c.partition_path, g.c.file_id, s.c.id, s.c.base_instant, s.c.base_file)
            .join(s, s.c.file_group_id == g.c.id)
            .where(g.c.table_id == table_id)
        ).all():
            keys[gid] = (part, fid)
            files = logs.get(slice_id, [])
            if base_file:  # a v6 slice is keyed by its base file's instant
                files = [CleanFile(base_file, None, None, (base_instant,)), *files]
            slices[gid].append(CleanSlice(base_instant, tuple(files)))
    return [CleanGroup(*keys[gid], tuple(found)) for gid, found in sorted(slices.items(), key=lambda x: keys[x[0]])]


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
    operation: str
    path: str
    reason: str
    done: bool = False
    error: str | None = None

    def row(self) -> dict[str, Any]:
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
) -> CleanRun:
    """Run a requested or inflight clean to completion: inflight, links, other files, then `<t>.clean`."""
    t0 = time.monotonic()
    t = instant.requested_time
    writer = table.timeline_writer()
    if instant.state == State.REQUESTED:
        # Java's transitionCleanRequestedToInflight keeps the plan on layout 1, writes an empty file on layout 2
        writer.start(Action.CLEAN, t, plan.to_bytes() if table.config.timeline_layout < 2 else b"")
    _crash_point("after-inflight")
    storage, base = table.storage, table.base_path
    entries = planned_paths(plan)
    reports: dict[str, FileReport] = {}

    def report(path: str, operation: str) -> FileReport:
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
            _crash_point("after-link")
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
        _crash_point("after-delete")
    _crash_point("before-commit")
    metadata = clean_metadata(t, plan, entries, reports, int((time.monotonic() - t0) * 1000))
    with table_lock(storage, table.meta_path, table.config.props, f"complete clean {t}"):
        if (sync := metadata_sync(table)) is not None:
            sync.clean(t, metadata)
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


# ---------------------------------------------------------------- the command


@dataclass
class CleanOutcome:
    """What `clean` did or would do: the new plan (if any) and a report per file, pending cleans first."""

    plan: CleanPlanResult | None
    instant: str | None  # the new clean's instant (None: nothing planned, or a dry run)
    finished: list[str] = field(default_factory=list)  # pending cleans finished before planning
    reports: list[FileReport] = field(default_factory=list)
    note: str = ""  # why nothing new was planned, when nothing was

    @property
    def deleted(self) -> int:
        """Files deleted (pending cleans finished included); a dry run deletes none."""
        return sum(1 for r in self.reports if r.done and r.operation != "keep")


def finish_pending_cleans(table: HudiTable) -> list[CleanRun]:
    """Run every pending clean to completion, oldest first (Java's `CleanActionExecutor.execute`)."""
    runs = []
    for instant in pending_cleans(table):
        plan = read_pending_plan(table, instant)
        if plan is None:  # an empty pending clean: Java deletes such instants
            table.timeline_writer().delete_pending(Action.CLEAN, instant.requested_time)
            continue
        runs.append(execute_clean(table, instant, plan))
    table.reload()
    return runs


def plan_table_clean(
    engine: Engine, table: HudiTable, policy: CleanPolicy, now_ms: int | None = None
) -> tuple[int, CleanPlanResult]:
    """Index the table, then plan a clean from the index: (table id, plan)."""
    indexer = Indexer(engine, table)
    indexer.run()
    assert indexer.table_id is not None
    table.reload()
    require_current_index(engine, table, indexer.table_id)  # upgraded since indexing: never plan from stale rows
    now = now_ms if now_ms is not None else current_ms()
    return indexer.table_id, plan_clean(groups_from_index(engine, indexer.table_id), clean_timeline(table), policy, now)


def run_clean(
    engine: Engine,
    table: HudiTable,
    policy: CleanPolicy,
    dry_run: bool = True,
    now_ms: int | None = None,
    progress: Report = silent,
) -> CleanOutcome:
    """`hudi-meta clean`: a dry run by default (the plan, pending cleans included); with `dry_run=False`, finish
    pending cleans, plan from the freshly indexed store, write the clean instants, delete, and index again."""
    check_cleanable(table)
    if dry_run:
        return _dry_run(engine, table, policy, now_ms)
    reports: list[FileReport] = []
    runs = finish_pending_cleans(table)
    for run in runs:
        reports.extend(_as_pending(run.reports))
    table_id, result = plan_table_clean(engine, table, policy, now_ms)
    outcome = CleanOutcome(result, None, [r.instant for r in runs], reports)
    with schedule_lock(engine, table_id, table.uri):
        table.reload()
        busy = pending_cleans(table)
        if busy:  # another cleaner planned meanwhile: it runs its own plan
            outcome.note = f"clean {busy[0].requested_time} is pending (another cleaner is running it)"
            return outcome
        if not result.deletions:
            outcome.note = "nothing to clean"
            return outcome
        instant = table.new_instant_time()
        plan = cleaner_plan(table.uri, result)
        table.timeline_writer().request(Action.CLEAN, instant, plan.to_bytes())
        log.info("clean %s requested: %d files to delete (%s)", instant, len(result.deletions), table.base_path)
    _crash_point("after-requested")
    reasons = {a.path: a for a in result.actions}
    run = execute_clean(table, Instant(instant, Action.CLEAN, State.REQUESTED), plan, reasons, progress)
    outcome.instant = instant
    outcome.reports.extend(run.reports)
    outcome.reports.extend(FileReport(instant, a.operation, a.path, a.reason, done=True) for a in result.kept)
    table.reload()
    Indexer(engine, table).run()
    return outcome


def _as_pending(reports: Iterable[FileReport]) -> list[FileReport]:
    for r in reports:
        r.reason = f"finishing pending clean {r.instant}"
    return list(reports)


def _dry_run(engine: Engine, table: HudiTable, policy: CleanPolicy, now_ms: int | None) -> CleanOutcome:
    reports: list[FileReport] = []
    seen: set[str] = set()
    for instant in pending_cleans(table):
        plan = read_pending_plan(table, instant)
        for _, path in planned_paths(plan) if plan is not None else ():
            full = posixpath.join(table.base_path, path)
            link = table.storage.supports_symlinks and table.storage.link_target(full) is not None
            reason = f"pending clean {instant.requested_time}: finished first by --execute"
            reports.append(FileReport(instant.requested_time, DELETE_LINK if link else DELETE_FILE, path, reason))
            seen.add(path)
    _, result = plan_table_clean(engine, table, policy, now_ms)
    reports.extend(FileReport(None, a.operation, a.path, a.reason) for a in result.actions if a.path not in seen)
    note = "" if result.deletions else "nothing to clean"
    return CleanOutcome(result, None, [], reports, note)


def format_reports(reports: Sequence[FileReport]) -> list[dict[str, Any]]:
    return [r.row() for r in reports]
