"""The timeline in the store: instants, compaction plans (with operations and planned links) and table services.

The stored instants are those of the active timeline plus the archived ones the store saw; everything else that
left the timeline leaves the store (see `sync_timeline`, and docs/archival.md section 6 for the archived ones).
"""

from __future__ import annotations

import datetime as dt
import json
import posixpath
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, delete, select, update

from hudi_meta.errors import HudiMetaError
from hudi_meta.format.links import THRESHOLD_KEY, THRESHOLD_PARAM
from hudi_meta.format.table_service_metadata import CleanMetadata, CompactionPlan, RollbackMetadata
from hudi_meta.index.commit_summary import commit_summary
from hudi_meta.index.lineage import planned_lineage
from hudi_meta.index.models import (
    cleaned_file_table,
    compaction_operation_table,
    compaction_plan_table,
    instant_table,
    link_table,
    table_service_table,
)
from hudi_meta.index.run_stats import IndexRunStats
from hudi_meta.index.sql import chunks, insert_ignore
from hudi_meta.index.states import LinkState, PlanState
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action, Instant, State

ARCHIVED_KEY = "archived"  # in an instant's summary: archived (gone from the active timeline, still committed)


def record_plan(conn: Connection, table_id: int, instant: str, plan: CompactionPlan, state: PlanState) -> None:
    """Store a compaction plan with its operations and planned links (idempotent)."""
    plans = compaction_plan_table
    params = plan.strategy.strategy_params if plan.strategy else {}
    threshold = params.get(THRESHOLD_PARAM) or params.get(THRESHOLD_KEY)
    row = {
        "table_id": table_id,
        "instant": instant,
        "state": state,
        "strategy": plan.strategy.compactor_class_name if plan.strategy else None,
        "threshold": int(threshold) if threshold and str(threshold).lstrip("-").isdigit() else None,
        "mode": params.get("mode"),
        "exact": params.get("exact", "false") == "true",
        "created_at": dt.datetime.now(dt.UTC),
    }
    insert_ignore(conn, plans, [row])
    plan_id = conn.execute(
        select(plans.c.id).where(plans.c.table_id == table_id, plans.c.instant == instant)
    ).scalar_one()
    ops = [
        {
            "plan_id": plan_id,
            "partition_path": op.partition_path or "",
            "file_id": op.file_id,
            "base_instant": op.base_instant_time,
            "base_file": op.data_file_path,
            "files_to_compact": json.dumps(list(op.delta_file_paths)),
            "metrics": json.dumps(op.metrics),
        }
        for op in plan.operations
    ]
    insert_ignore(conn, compaction_operation_table, ops)
    lineage = planned_lineage(
        conn,
        table_id,
        {(op.partition_path or "", s.symlink): s.target for op in plan.operations for s in op.symlink_operations},
    )
    links = [
        {
            "table_id": table_id,
            "partition_path": part,
            "link_name": name,
            "target_name": found.target,
            "via_name": found.via,
            "compaction_instant": instant,
            "state": LinkState.PLANNED,
        }
        for (part, name), found in lineage.items()
    ]
    insert_ignore(conn, link_table, links)


@dataclass(frozen=True)
class StoredInstant:
    """What the store holds of an instant: enough to tell archived from gone."""

    state: str
    completion_time: str | None
    archived: bool


def archived_or_gone(
    stored: Mapping[str, StoredInstant],
    active: Collection[str],
    first_active: str | None,
    archive: Callable[[], Mapping[str, str | None]],
) -> tuple[dict[str, str | None], list[str]]:
    """Of the stored instants gone from the active timeline: the archived ones (requested -> completion time) and
    the gone ones. Archived: older than the first active instant (the archiver moves only completed instants
    older than every one it leaves) and completed in the store, or, when the store saw it pending, completed in
    the table's archive (`archive`: requested -> completion time, read only then). Anything else left the
    timeline otherwise (a rolled-back write, an unscheduled plan). Pure but for `archive`."""
    archived: dict[str, str | None] = {}
    gone: list[str] = []
    history: Mapping[str, str | None] | None = None
    for time, r in sorted(stored.items()):
        if time in active:
            continue
        older = first_active is not None and time < first_active
        if older and r.state == State.COMPLETED:
            archived[time] = r.completion_time
            continue
        if older:
            history = archive() if history is None else history
            if time in history:
                archived[time] = history[time]
                continue
        gone.append(time)
    return archived, gone


def archive_completions(table: HudiTable) -> dict[str, str | None]:
    """Requested -> completion time of the table's archived instants, as the store holds a completed instant's:
    none on timeline layout 1, whose file names carry no completion time."""
    layout2 = table.config.timeline_layout >= 2
    return {time: completion if layout2 else None for time, (completion, _) in table.archived.items()}


def timeline_archival(table: HudiTable, stored: Mapping[str, StoredInstant]) -> tuple[dict[str, str | None], list[str]]:
    """`archived_or_gone` of the stored instants against the table's active timeline and archive."""
    tl = table.timeline
    on_disk = {i.requested_time for i in tl.instants}
    return archived_or_gone(stored, on_disk, tl.first_instant_time, lambda: archive_completions(table))


def archived_not_marked(conn: Connection, table: HudiTable, table_id: int) -> dict[str, str]:
    """Instants archival moved off the table's active timeline that the store holds as active (an `archive`
    whose index update did not run): requested time -> their state in the store. The next index run marks them."""
    stored = stored_instants(conn, table_id)
    found, _ = timeline_archival(table, stored)
    return {time: stored[time].state for time in found if not stored[time].archived}


def stored_instants(conn: Connection, table_id: int) -> dict[str, StoredInstant]:
    """Requested time -> what the store holds of each instant of `table_id` (the archived mark read once)."""
    instants = instant_table
    rows = conn.execute(
        select(instants.c.requested_time, instants.c.state, instants.c.completion_time, instants.c.summary).where(
            instants.c.table_id == table_id
        )
    )
    return {
        r.requested_time: StoredInstant(r.state, r.completion_time, bool(json.loads(r.summary).get(ARCHIVED_KEY)))
        for r in rows
    }


def _mark_archived(conn: Connection, table_id: int, time: str, completion: str | None) -> None:
    """Completed (at its archived completion time when the store saw it pending), `"archived": true`."""
    instants = instant_table
    where = (instants.c.table_id == table_id, instants.c.requested_time == time)
    summary = json.loads(conn.execute(select(instants.c.summary).where(*where)).scalar_one())
    summary[ARCHIVED_KEY] = True
    values = {"summary": json.dumps(summary), "state": State.COMPLETED, "completion_time": completion}
    conn.execute(update(instants).where(*where).values(**values))


def sync_timeline(engine: Engine, table: HudiTable, table_id: int, stats: IndexRunStats) -> None:
    """Make the stored instants those of the active timeline, plus the archived ones; then plans and services.

    An instant gone from the timeline that archival moved (`archived_or_gone`) stays, completed, with
    `"archived": true` in its summary (counted in `instants_archived` when this run marks it). Any other
    instant that is gone (a failed write rolled back, an unscheduled plan) leaves the store.
    """
    tl = table.timeline
    instants = instant_table
    with engine.begin() as conn:
        stored = stored_instants(conn, table_id)
        found, gone = timeline_archival(table, stored)
        for time, completion in found.items():
            if not stored[time].archived:
                _mark_archived(conn, table_id, time, completion)
                stats.instants_archived += 1
        archived = set(found)
        for part in chunks(gone, 500):
            conn.execute(delete(instants).where(instants.c.table_id == table_id, instants.c.requested_time.in_(part)))
        stats.instants_removed += len(gone)
        for instant in tl.instants:
            state = instant.state
            row = {
                "table_id": table_id,
                "requested_time": instant.requested_time,
                "action": instant.action,
                "state": state,
                "completion_time": instant.completion_time,
                "is_compaction": tl.is_compaction(instant.requested_time),
            }
            old = stored.get(instant.requested_time)
            if old is not None and (old.state, old.completion_time, old.archived) == (
                state,
                instant.completion_time,
                False,
            ):
                continue
            row["summary"] = json.dumps(commit_summary(table, instant))
            if old is None:
                insert_ignore(conn, instants, [row])
                stats.instants_added += 1
            else:
                conn.execute(
                    update(instants)
                    .where(instants.c.table_id == table_id, instants.c.requested_time == instant.requested_time)
                    .values(**row)
                )
                stats.instants_updated += 1
        _sync_plans(conn, table, table_id, archived, stats)
        _sync_table_services(conn, table, table_id, archived)


def _sync_plans(conn: Connection, table: HudiTable, table_id: int, archived: set[str], stats: IndexRunStats) -> None:
    """Plans of the timeline's compaction instants; a plan whose instant left the timeline without being
    archived (unscheduled, as hudi-cli's `unschedule` deletes its requested and inflight files) leaves the
    store with its operations and links not made yet, so its file groups are candidates again."""
    tl = table.timeline
    plans = compaction_plan_table
    operations = compaction_operation_table
    links = link_table
    known = {
        r.instant: (r.id, r.state)
        for r in conn.execute(select(plans.c.instant, plans.c.id, plans.c.state).where(plans.c.table_id == table_id))
    }
    for instant_time, (plan_id, plan_state) in known.items():
        if instant_time in archived and plan_state != PlanState.COMPLETED:  # completed after the store saw it
            now = dt.datetime.now(dt.UTC)
            conn.execute(update(plans).where(plans.c.id == plan_id).values(state=PlanState.COMPLETED, completed_at=now))
        if instant_time in tl.compaction_instants or instant_time in archived:
            continue
        conn.execute(delete(operations).where(operations.c.plan_id == plan_id))
        conn.execute(delete(plans).where(plans.c.id == plan_id))
        conn.execute(
            delete(links).where(
                links.c.table_id == table_id,
                links.c.compaction_instant == instant_time,
                links.c.state == LinkState.PLANNED,
            )
        )
        stats.plans_removed += 1
    for instant_time in sorted(tl.compaction_instants):
        instant = tl.instant(instant_time)
        if instant is None:
            continue
        state = instant.state
        if instant_time in known:
            if known[instant_time][1] != state:
                done = dt.datetime.now(dt.UTC) if state == PlanState.COMPLETED else None
                conn.execute(
                    update(plans).where(plans.c.id == known[instant_time][0]).values(state=state, completed_at=done)
                )
            continue
        try:
            plan = table.compaction_plan(instant_time)
        except (HudiMetaError, OSError):
            continue  # the requested file is gone or unreadable
        record_plan(conn, table_id, instant_time, plan, state)
        stats.plans_added += 1


def _sync_table_services(conn: Connection, table: HudiTable, table_id: int, archived: set[str]) -> None:
    """Clean and rollback instants, a completed rollback with what it rolled back, a completed clean with the
    files it deleted (`cleaned_file`)."""
    tl = table.timeline
    services = table_service_table
    cleaned_files = cleaned_file_table
    stored = {
        (r.action, r.instant): (r.state, json.loads(r.summary or "{}"))
        for r in conn.execute(
            select(services.c.action, services.c.instant, services.c.state, services.c.summary).where(
                services.c.table_id == table_id
            )
        )
    }
    # a completed clean indexed before cleaned files were recorded (a store upgraded from 0002) is read again
    known = {
        key: state
        for key, (state, summary) in stored.items()
        if not (key[0] == Action.CLEAN and state == State.COMPLETED and not summary)
    }
    on_disk = {i.requested_time for i in tl.instants}
    for action, instant_time in stored:
        if instant_time not in on_disk and instant_time not in archived:
            conn.execute(
                delete(services).where(
                    services.c.table_id == table_id, services.c.action == action, services.c.instant == instant_time
                )
            )
            conn.execute(
                delete(cleaned_files).where(
                    cleaned_files.c.table_id == table_id, cleaned_files.c.clean_instant == instant_time
                )
            )
    for instant in tl.instants:
        if instant.action not in (Action.CLEAN, Action.ROLLBACK):
            continue
        key = (instant.action, instant.requested_time)
        state = instant.state
        if known.get(key) == state:
            continue
        summary: dict[str, Any] = {}
        if instant.is_completed and instant.action == Action.ROLLBACK:
            try:
                md = RollbackMetadata.from_bytes(tl.read_bytes(instant))
                summary = {
                    "commits_rollback": list(md.commits_rollback),
                    "files_deleted": md.total_files_deleted,
                }
            except HudiMetaError:
                summary = {"error": "unreadable rollback metadata"}
        if instant.is_completed and instant.action == Action.CLEAN:
            summary = _record_cleaned_files(conn, table, table_id, instant)
        row = {
            "table_id": table_id,
            "action": instant.action,
            "instant": instant.requested_time,
            "state": state,
            "summary": json.dumps(summary),
        }
        if key in stored:
            conn.execute(
                update(services)
                .where(services.c.table_id == table_id, services.c.action == key[0], services.c.instant == key[1])
                .values(**row)
            )
        else:
            insert_ignore(conn, services, [row])


def _record_cleaned_files(conn: Connection, table: HudiTable, table_id: int, instant: Instant) -> dict[str, Any]:
    """Store the files a completed clean deleted; its summary (policy, count)."""
    data = table.timeline.read_bytes(instant)
    if not data:
        return {"files_deleted": 0}  # Java writes an empty clean for "nothing cleaned"
    try:
        md = CleanMetadata.from_bytes(data)
    except HudiMetaError:
        return {"error": "unreadable clean metadata"}
    rows = [
        {
            "table_id": table_id,
            "clean_instant": instant.requested_time,
            "partition_path": partition,
            "name": posixpath.basename(name),
        }
        for partition, pm in md.partition_metadata.items()
        for name in pm.success_delete_files
    ]
    for batch in chunks(rows, 2000):
        insert_ignore(conn, cleaned_file_table, batch)
    policies = sorted({pm.policy for pm in md.partition_metadata.values()})
    return {"files_deleted": md.total_files_deleted, "policy": ",".join(policies)}
