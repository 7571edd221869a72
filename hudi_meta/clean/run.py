"""Clean a table: finish pending cleans, plan from the index (`hudi_meta.write.clean_plan`), write Hudi's
clean instants and delete (`hudi_meta.write.clean`), so the store and every reader (ours, hudi-rs, Java) keep
seeing the same table. The metadata table is a precondition here as it is for compaction: `metadata_sync`
refuses a table whose metadata table hudi-meta cannot keep, and its clean step runs before each clean
completes; the metadata table's own clean uses the planner and executor in `write/`, never this module.

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
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, select

from hudi_meta.errors import UnsupportedTableError
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.locks import schedule_lock
from hudi_meta.index.models import file_group_table, file_slice_table, link_table, log_block_table, log_file_table
from hudi_meta.index.states import LinkState
from hudi_meta.index.table_format import require_current_index
from hudi_meta.metadata.sync import metadata_sync
from hudi_meta.progress import Report, silent
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import now_ms as current_ms
from hudi_meta.timeline.instant import Action, Instant, State
from hudi_meta.write.clean import (
    FileReport,
    MetadataStep,
    clean_timeline,
    cleaner_plan,
    crash_point,
    execute_clean,
    finish_pending_cleans,
    pending_cleans,
    planned_paths,
    read_pending_plan,
)
from hudi_meta.write.clean_plan import (
    DELETE_FILE,
    DELETE_LINK,
    CleanFile,
    CleanGroup,
    CleanPlanResult,
    CleanPolicy,
    CleanSlice,
    plan_clean,
)

log = logging.getLogger(__name__)


def metadata_step(table: HudiTable) -> MetadataStep | None:
    """What a clean of `table` writes to its metadata table before completing (None: it has none)."""
    sync = metadata_sync(table)
    return sync.clean if sync is not None else None


def check_cleanable(table: HudiTable) -> None:
    """Refuse tables this cleaner cannot clean safely, with the setting to change."""
    cfg = table.config
    if cfg.version not in (6, 8, 9):
        raise UnsupportedTableError(
            f"{table.base_path}: clean writes tables of version 6, 8 and 9 (this table is version {cfg.version})"
        )
    metadata_sync(table)  # refuses a metadata table partition it cannot keep


def groups_from_index(engine: Engine, table_id: int) -> list[CleanGroup]:
    """Every file group of the table with its slices and files, as the index holds them: base files, log files
    (a symlink with its target), copies made by compaction, and the instants each log file's blocks belong to."""
    with engine.connect() as conn:
        # rows are unpacked as tuples: attribute access on a million rows costs seconds
        block_instants: dict[int, list[str]] = defaultdict(list)
        for file_id, instant in conn.execute(
            select(log_block_table.c.log_file_id, log_block_table.c.instant)
            .where(log_block_table.c.table_id == table_id, log_block_table.c.instant.is_not(None))
            .distinct()
        ).all():
            block_instants[file_id].append(instant)
        copies = {
            (part, link): posixpath.join(part, target)
            for part, link, target in conn.execute(
                select(link_table.c.partition_path, link_table.c.link_name, link_table.c.target_name).where(
                    link_table.c.table_id == table_id, link_table.c.state == LinkState.CREATED
                )
            )
        }
        logs: dict[int, list[CleanFile]] = defaultdict(list)
        no_instants: tuple[str, ...] = ()
        for log_id, slice_id, part, name, is_link, link_target in conn.execute(
            select(
                log_file_table.c.id,
                log_file_table.c.file_slice_id,
                log_file_table.c.partition_path,
                log_file_table.c.name,
                log_file_table.c.is_link,
                log_file_table.c.link_target,
            ).where(log_file_table.c.table_id == table_id, log_file_table.c.file_slice_id.is_not(None))
        ).all():
            target = link_target if is_link and link_target else None
            copy_of = None if target or not copies else copies.get((part, name))
            found = block_instants.get(log_id)
            logs[slice_id].append(CleanFile(name, target, copy_of, tuple(sorted(found)) if found else no_instants))
        slices: dict[int, list[CleanSlice]] = defaultdict(list)
        keys: dict[int, tuple[str, str]] = {}
        for gid, part, fid, slice_id, base_instant, base_file in conn.execute(
            select(
                file_group_table.c.id,
                file_group_table.c.partition_path,
                file_group_table.c.file_id,
                file_slice_table.c.id,
                file_slice_table.c.base_instant,
                file_slice_table.c.base_file,
            )
            .join(file_slice_table, file_slice_table.c.file_group_id == file_group_table.c.id)
            .where(file_group_table.c.table_id == table_id)
        ).all():
            keys[gid] = (part, fid)
            files = logs.get(slice_id, [])
            if base_file:  # a v6 slice is keyed by its base file's instant
                files = [CleanFile(base_file, None, None, (base_instant,)), *files]
            slices[gid].append(CleanSlice(base_instant, tuple(files)))
    return [CleanGroup(*keys[gid], tuple(found)) for gid, found in sorted(slices.items(), key=lambda x: keys[x[0]])]


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
    step = metadata_step(table)
    runs = finish_pending_cleans(table, step)
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
    crash_point("after-requested")
    reasons = {a.path: a for a in result.actions}
    run = execute_clean(table, Instant(instant, Action.CLEAN, State.REQUESTED), plan, reasons, progress, step)
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
            reason = f"pending clean {instant.requested_time}: finished first when a clean is executed"
            reports.append(FileReport(instant.requested_time, DELETE_LINK if link else DELETE_FILE, path, reason))
            seen.add(path)
    _, result = plan_table_clean(engine, table, policy, now_ms)
    reports.extend(FileReport(None, a.operation, a.path, a.reason) for a in result.actions if a.path not in seen)
    note = "" if result.deletions else "nothing to clean"
    return CleanOutcome(result, None, [], reports, note)


def format_reports(reports: Sequence[FileReport]) -> list[dict[str, Any]]:
    return [r.to_dict() for r in reports]
