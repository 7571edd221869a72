"""The incremental indexer: mirrors a table's timeline, file slices, log blocks and links into the store.

A run reads only what is new: instants that appeared or changed state, log files that grew (scanned from
their last indexed offset), files that disappeared. Unchanged log files are never opened. Work is
committed in batches, each a transaction that also advances the files' indexed offsets, so a run killed
at any point leaves a consistent index that the next run completes.
"""

from __future__ import annotations

import datetime as dt
import json
import posixpath
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, delete, func, select, update

from hudi_meta.errors import HudiMetaError
from hudi_meta.format.block_content import BlockDecodeError
from hudi_meta.format.links import SYMLINK_OPERATIONS_KEY, THRESHOLD_KEY, THRESHOLD_PARAM
from hudi_meta.format.log_block import LogBlock
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.format.table_service_metadata import CompactionPlan, RollbackMetadata
from hudi_meta.index import event_time_source as ets
from hudi_meta.index.models import (
    CompactionOperationRecord,
    CompactionPlanRecord,
    FileGroupRecord,
    FileSliceRecord,
    InstantRecord,
    LinkRecord,
    LogBlockRecord,
    LogFileRecord,
    TableRecord,
    TableServiceRecord,
    table_of,
)
from hudi_meta.index.sql import chunks, insert_ignore, table_lock
from hudi_meta.table.instant import Action, Instant
from hudi_meta.table.table import HudiTable

DATA_TYPES = ("avro_data", "parquet_data", "cdc_data", "delete")

COMMITTED = "committed"
UNCOMMITTED = "uncommitted"
ROLLED_BACK = "rolled_back"
CORRUPT = "corrupt"


@dataclass
class IndexRunStats:
    instants_added: int = 0
    instants_updated: int = 0
    log_files_added: int = 0
    log_files_scanned: int = 0
    log_files_removed: int = 0
    blocks_added: int = 0
    blocks_event_time_resolved: int = 0
    plans_added: int = 0
    links: int = 0


def register_table(engine: Engine, table: HudiTable, event_time_field: str | None = None) -> int:
    """Register `table` (idempotent); an explicit event-time field overrides the table's config."""
    cfg = table.config
    row = {
        "base_path": table.base_path,
        "name": cfg.name,
        "table_type": cfg.table_type,
        "table_version": cfg.version,
        "timeline_layout": cfg.timeline_layout,
        "record_key_fields": ",".join(cfg.record_key_fields),
        "ordering_field": cfg.ordering_fields[0] if cfg.ordering_fields else None,
        "event_time_field": event_time_field or cfg.event_time_field,
        "options": json.dumps({"metadata_partitions": list(cfg.metadata_partitions)}),
        "registered_at": dt.datetime.now(dt.UTC),
    }
    t = table_of(TableRecord)
    with engine.begin() as conn:
        insert_ignore(conn, t, [row])
        table_id, current = conn.execute(
            select(t.c.id, t.c.event_time_field).where(t.c.base_path == table.base_path)
        ).one()
        if event_time_field and event_time_field != current:
            conn.execute(update(t).where(t.c.id == table_id).values(event_time_field=event_time_field))
            b = table_of(LogBlockRecord)
            conn.execute(  # times found by scanning records depend on the field: find them again
                update(b)
                .where(
                    b.c.table_id == table_id,
                    b.c.min_event_time_source.in_([ets.RECORD_SCAN, ets.UNAVAILABLE]),
                )
                .values(min_event_time=None, max_event_time=None, min_event_time_source=None)
            )
        return int(table_id)


def event_time_field_of(engine: Engine, table_id: int) -> str | None:
    t = table_of(TableRecord)
    with engine.connect() as conn:
        found = conn.execute(select(t.c.event_time_field).where(t.c.id == table_id)).scalar_one_or_none()
    return str(found) if found else None


def table_id_of(engine: Engine, base_path: str) -> int | None:
    t = table_of(TableRecord)
    with engine.connect() as conn:
        found = conn.execute(select(t.c.id).where(t.c.base_path == base_path)).scalar_one_or_none()
    return int(found) if found is not None else None


def record_plan(conn: Connection, table_id: int, instant: str, plan: CompactionPlan, state: str) -> None:
    """Store a compaction plan with its operations and planned links (idempotent)."""
    p = table_of(CompactionPlanRecord)
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
    insert_ignore(conn, p, [row])
    plan_id = conn.execute(select(p.c.id).where(p.c.table_id == table_id, p.c.instant == instant)).scalar_one()
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
    insert_ignore(conn, table_of(CompactionOperationRecord), ops)
    links = [
        {
            "table_id": table_id,
            "partition_path": op.partition_path or "",
            "link_name": s.symlink,
            "target_name": s.target,
            "via_name": None,
            "compaction_instant": instant,
            "state": "planned",
        }
        for op in plan.operations
        for s in op.symlink_operations
    ]
    insert_ignore(conn, table_of(LinkRecord), links)


def commit_summary(table: HudiTable, instant: Instant) -> dict[str, Any]:
    if not instant.is_completed or instant.action not in (
        Action.COMMIT,
        Action.DELTA_COMMIT,
        Action.REPLACE_COMMIT,
    ):
        return {}
    md = table.timeline.commit_metadata(instant)
    stats = md.write_stats()
    summary: dict[str, Any] = {
        "operation_type": md.operation_type,
        "compacted": md.compacted,
        "num_writes": sum(s.num_writes for s in stats),
        "num_deletes": sum(s.num_deletes for s in stats),
        "files": len(stats),
        "partitions": sorted(md.partition_to_write_stats),
    }
    if THRESHOLD_KEY in md.extra_metadata:
        summary["threshold"] = md.extra_metadata[THRESHOLD_KEY]
    return summary


class Indexer:
    """Index one table into the store behind `engine`."""

    def __init__(self, engine: Engine, table: HudiTable, batch_files: int = 200) -> None:
        self.engine = engine
        self.table = table
        self.batch_files = batch_files
        self.stats = IndexRunStats()
        self.table_id: int | None = None

    def run(self, event_time_field: str | None = None) -> IndexRunStats:
        with table_lock(self.engine, self.table.base_path):
            table_id = self.table_id = register_table(self.engine, self.table, event_time_field)
            self._sync_timeline(table_id)
            self._sync_files(table_id)
            self._resolve_status(table_id)
            self._resolve_event_times(table_id)
            self._sync_links(table_id)
            with self.engine.begin() as conn:
                t = table_of(TableRecord)
                conn.execute(update(t).where(t.c.id == table_id).values(last_indexed_at=dt.datetime.now(dt.UTC)))
        return self.stats

    # ---- timeline -----------------------------------------------------------------------------------

    def _sync_timeline(self, table_id: int) -> None:
        tl = self.table.timeline
        t = table_of(InstantRecord)
        with self.engine.begin() as conn:
            known = {
                r.requested_time: (r.state, r.completion_time)
                for r in conn.execute(
                    select(t.c.requested_time, t.c.state, t.c.completion_time).where(t.c.table_id == table_id)
                )
            }
            on_disk = {i.requested_time for i in tl.instants}
            gone = [k for k in known if k not in on_disk]
            if gone:
                conn.execute(delete(t).where(t.c.table_id == table_id, t.c.requested_time.in_(gone)))
            for instant in tl.instants:
                row = {
                    "table_id": table_id,
                    "requested_time": instant.requested_time,
                    "action": instant.action,
                    "state": instant.state.value,
                    "completion_time": instant.completion_time,
                    "is_compaction": tl.is_compaction(instant.requested_time),
                }
                old = known.get(instant.requested_time)
                if old == (instant.state.value, instant.completion_time):
                    continue
                row["summary"] = json.dumps(commit_summary(self.table, instant))
                if old is None:
                    insert_ignore(conn, t, [row])
                    self.stats.instants_added += 1
                else:
                    conn.execute(
                        update(t)
                        .where(t.c.table_id == table_id, t.c.requested_time == instant.requested_time)
                        .values(**row)
                    )
                    self.stats.instants_updated += 1
            self._sync_plans(conn, table_id)
            self._sync_table_services(conn, table_id)

    def _sync_plans(self, conn: Connection, table_id: int) -> None:
        tl = self.table.timeline
        p = table_of(CompactionPlanRecord)
        known = {
            r.instant: (r.id, r.state)
            for r in conn.execute(select(p.c.instant, p.c.id, p.c.state).where(p.c.table_id == table_id))
        }
        for instant_time in sorted(tl.compaction_instants):
            instant = tl.instant(instant_time)
            state = instant.state.value if instant else "rolled_back"
            if instant_time in known:
                if known[instant_time][1] != state:
                    done = dt.datetime.now(dt.UTC) if state == "completed" else None
                    conn.execute(
                        update(p).where(p.c.id == known[instant_time][0]).values(state=state, completed_at=done)
                    )
                continue
            try:
                plan = self.table.compaction_plan(instant_time)
            except (HudiMetaError, OSError):
                continue  # the requested file is gone (rolled back) or unreadable
            record_plan(conn, table_id, instant_time, plan, state)
            self.stats.plans_added += 1

    def _sync_table_services(self, conn: Connection, table_id: int) -> None:
        tl = self.table.timeline
        s = table_of(TableServiceRecord)
        known = {
            (r.action, r.instant): r.state
            for r in conn.execute(select(s.c.action, s.c.instant, s.c.state).where(s.c.table_id == table_id))
        }
        for instant in tl.instants:
            if instant.action not in (Action.CLEAN, Action.ROLLBACK):
                continue
            key = (instant.action, instant.requested_time)
            if known.get(key) == instant.state.value:
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
            row = {
                "table_id": table_id,
                "action": instant.action,
                "instant": instant.requested_time,
                "state": instant.state.value,
                "summary": json.dumps(summary),
            }
            if key in known:
                conn.execute(
                    update(s).where(s.c.table_id == table_id, s.c.action == key[0], s.c.instant == key[1]).values(**row)
                )
            else:
                insert_ignore(conn, s, [row])

    # ---- files and blocks ---------------------------------------------------------------------------

    def _sync_files(self, table_id: int) -> None:
        groups = self.table.all_file_groups()
        inputs = self.table.view_inputs()
        g = table_of(FileGroupRecord)
        sl = table_of(FileSliceRecord)
        lf = table_of(LogFileRecord)
        slice_ids: dict[tuple[str, str, str], int] = {}
        with self.engine.begin() as conn:
            insert_ignore(
                conn,
                g,
                [
                    {
                        "table_id": table_id,
                        "partition_path": fg.partition,
                        "file_id": fg.file_id,
                        "replaced": (fg.partition, fg.file_id) in inputs.replaced,
                    }
                    for fg in groups
                ],
            )
            group_ids = {
                (r.partition_path, r.file_id): (r.id, r.replaced)
                for r in conn.execute(
                    select(g.c.id, g.c.partition_path, g.c.file_id, g.c.replaced).where(g.c.table_id == table_id)
                )
            }
            for fg in groups:
                gid, replaced = group_ids[(fg.partition, fg.file_id)]
                if replaced != ((fg.partition, fg.file_id) in inputs.replaced):
                    conn.execute(update(g).where(g.c.id == gid).values(replaced=not replaced))
            slice_rows = []
            for fg in groups:
                gid = group_ids[(fg.partition, fg.file_id)][0]
                for fs in fg.ordered_slices():
                    base = fs.base_file
                    slice_rows.append(
                        {
                            "file_group_id": gid,
                            "base_instant": fs.base_instant,
                            "base_file": base.name if base else None,
                            "base_file_size": base.size if base else None,
                            "base_committed": bool(base and inputs.is_committed(base.parsed.instant)),
                        }
                    )
            existing = {
                (r.file_group_id, r.base_instant): (r.id, r.base_file, r.base_committed)
                for r in conn.execute(
                    select(sl.c.id, sl.c.file_group_id, sl.c.base_instant, sl.c.base_file, sl.c.base_committed)
                    .join(g, g.c.id == sl.c.file_group_id)
                    .where(g.c.table_id == table_id)
                )
            }
            insert_ignore(conn, sl, [r for r in slice_rows if (r["file_group_id"], r["base_instant"]) not in existing])
            for r in slice_rows:
                old = existing.get((r["file_group_id"], r["base_instant"]))
                if old is not None and (old[1], old[2]) != (r["base_file"], r["base_committed"]):
                    conn.execute(
                        update(sl)
                        .where(sl.c.id == old[0])
                        .values(
                            base_file=r["base_file"],
                            base_file_size=r["base_file_size"],
                            base_committed=r["base_committed"],
                        )
                    )
            by_group = {gid: key for key, (gid, _) in group_ids.items()}
            for found in conn.execute(
                select(sl.c.id, sl.c.file_group_id, sl.c.base_instant)
                .join(g, g.c.id == sl.c.file_group_id)
                .where(g.c.table_id == table_id)
            ):
                part, fid = by_group[found.file_group_id]
                slice_ids[(part, fid, found.base_instant)] = found.id

            known = {
                (r.partition_path, r.name): r
                for r in conn.execute(
                    select(
                        lf.c.id,
                        lf.c.partition_path,
                        lf.c.name,
                        lf.c.size,
                        lf.c.indexed_offset,
                        lf.c.file_slice_id,
                    ).where(lf.c.table_id == table_id)
                )
            }
            on_disk = {}
            new_rows = []
            for fg in groups:
                for fs in fg.ordered_slices():
                    for log in fs.log_files:
                        on_disk[(log.partition, log.name)] = (
                            log,
                            slice_ids[(fg.partition, fg.file_id, fs.base_instant)],
                        )
            for (part, name), (log, sid) in on_disk.items():
                row = known.get((part, name))
                if row is None:
                    new_rows.append(
                        {
                            "table_id": table_id,
                            "file_slice_id": sid,
                            "partition_path": part,
                            "name": name,
                            "file_id": log.parsed.file_id,
                            "base_instant": log.parsed.instant,
                            "version": log.parsed.version,
                            "write_token": log.parsed.write_token,
                            "size": 0,
                            "indexed_offset": 0,
                            "is_link": log.link_target is not None,
                            "link_target": log.link_target,
                        }
                    )
                elif row.file_slice_id != sid:
                    conn.execute(update(lf).where(lf.c.id == row.id).values(file_slice_id=sid))
            insert_ignore(conn, lf, new_rows)
            self.stats.log_files_added += len(new_rows)
            gone = [row.id for key, row in known.items() if key not in on_disk]
            for ids in chunks(gone, 500):
                conn.execute(delete(table_of(LogBlockRecord)).where(table_of(LogBlockRecord).c.log_file_id.in_(ids)))
                conn.execute(delete(lf).where(lf.c.id.in_(ids)))
            self.stats.log_files_removed += len(gone)
            offsets = {
                (r.partition_path, r.name): (r.id, r.indexed_offset, r.size)
                for r in conn.execute(
                    select(lf.c.id, lf.c.partition_path, lf.c.name, lf.c.indexed_offset, lf.c.size).where(
                        lf.c.table_id == table_id
                    )
                )
            }
        # A file is scanned when it grew since the last scan (bytes past the indexed offset that did not change
        # size, e.g. the torn tail of a killed writer, are not reread on every run).
        to_scan = [
            (offsets[key][0], offsets[key][1], log)
            for key, (log, _) in sorted(on_disk.items())
            if log.size > offsets[key][1] and log.size != offsets[key][2]
        ]
        for batch in chunks(to_scan, self.batch_files):
            self._scan_batch(table_id, batch)

    def _scan_batch(self, table_id: int, batch: Sequence[tuple[int, int, Any]]) -> None:
        lf = table_of(LogFileRecord)
        found: list[tuple[int, Any, LogBlock]] = []
        advanced: list[tuple[int, int, int, int]] = []  # (file id, old offset, new offset, size)
        for file_id, start, log in batch:
            path = posixpath.join(self.table.base_path, log.path)
            blocks = read_blocks(self.table.storage, path, start)
            if blocks and blocks[-1].is_corrupt:
                blocks = blocks[:-1]  # a torn tail may be a write in progress: rescan it when the file grows
            end = blocks[-1].offset + blocks[-1].length if blocks else start
            found.extend((file_id, log, b) for b in blocks)
            advanced.append((file_id, start, end, log.size))
            self.stats.log_files_scanned += 1
        # Write-stat event times are known now for blocks of completed deltacommits: store them with the block.
        stat_times = self._write_stat_times({b.instant_time for _, _, b in found if b.is_data and b.instant_time})
        rows = [
            _block_row(table_id, file_id, b, stat_times.get((b.instant_time or "", log.partition, log.name)))
            for file_id, log, b in found
        ]
        with self.engine.begin() as conn:
            for file_id, old, new, size in advanced:
                # optimistic: another indexer that already advanced this file wins, ours is a no-op
                conn.execute(
                    update(lf)
                    .where(lf.c.id == file_id, lf.c.indexed_offset == old)
                    .values(indexed_offset=new, size=size)
                )
            insert_ignore(conn, table_of(LogBlockRecord), rows)
        self.stats.blocks_added += len(rows)
        self.stats.blocks_event_time_resolved += sum(1 for r in rows if r["min_event_time_source"] == ets.WRITE_STAT)

    # ---- status and event time ----------------------------------------------------------------------

    def _resolve_status(self, table_id: int) -> None:
        b = table_of(LogBlockRecord)
        inputs = self.table.view_inputs()
        s = table_of(TableServiceRecord)
        with self.engine.begin() as conn:
            rolled: set[str] = set(
                r[0]
                for r in conn.execute(
                    select(b.c.target_instant)
                    .where(b.c.table_id == table_id, b.c.block_type == "command", b.c.target_instant.is_not(None))
                    .distinct()
                )
            )
            for (summary,) in conn.execute(
                select(s.c.summary).where(s.c.table_id == table_id, s.c.action == Action.ROLLBACK)
            ):
                rolled.update(json.loads(summary).get("commits_rollback", []))
            pending = (
                conn.execute(
                    select(b.c.instant)
                    .where(b.c.table_id == table_id, b.c.status.in_([UNCOMMITTED, COMMITTED, ROLLED_BACK]))
                    .distinct()
                )
                .scalars()
                .all()
            )
            desired: dict[str, list[str]] = defaultdict(list)
            for instant in pending:
                if instant in rolled:
                    desired[ROLLED_BACK].append(instant)
                elif instant is not None and inputs.is_committed(instant):
                    desired[COMMITTED].append(instant)
                else:
                    desired[UNCOMMITTED].append(instant)
            for status, instants in desired.items():
                for part in chunks(instants, 500):
                    conn.execute(
                        update(b)
                        .where(
                            b.c.table_id == table_id,
                            b.c.instant.in_(part),
                            b.c.status != status,
                            b.c.status != CORRUPT,
                        )
                        .values(status=status)
                    )

    def _resolve_event_times(self, table_id: int) -> None:
        b = table_of(LogBlockRecord)
        lf = table_of(LogFileRecord)
        t = table_of(TableRecord)
        with self.engine.connect() as conn:
            event_field, ordering_field = conn.execute(
                select(t.c.event_time_field, t.c.ordering_field).where(t.c.id == table_id)
            ).one()
            todo = conn.execute(
                select(
                    b.c.id,
                    b.c.offset,
                    b.c.length,
                    b.c.block_type,
                    b.c.instant,
                    lf.c.partition_path,
                    lf.c.name,
                )
                .join(lf, lf.c.id == b.c.log_file_id)
                .where(
                    b.c.table_id == table_id,
                    b.c.min_event_time_source.is_(None),
                    b.c.status == COMMITTED,
                    b.c.block_type.in_(DATA_TYPES),
                )
                .order_by(lf.c.partition_path, lf.c.name, b.c.offset)
            ).all()
        if not todo:
            return
        stat_times = self._write_stat_times({r.instant for r in todo})
        resolved: list[dict[str, Any]] = []
        rescan: dict[tuple[str, str], list[Any]] = defaultdict(list)
        for r in todo:
            found = stat_times.get((r.instant, r.partition_path, r.name))
            if r.block_type != "delete" and found is not None and found[0] is not None:
                resolved.append({"bid": r.id, "lo": found[0], "hi": found[1], "src": ets.WRITE_STAT})
            else:
                rescan[(r.partition_path, r.name)].append(r)
        for (part, name), rows in rescan.items():
            path = (
                posixpath.join(self.table.base_path, part, name) if part else posixpath.join(self.table.base_path, name)
            )
            blocks = {blk.offset: blk for blk in read_blocks(self.table.storage, path, rows[0].offset)}
            with self.table.storage.open_read(path) as f:
                for r in rows:
                    blk = blocks.get(r.offset)
                    if blk is None:
                        resolved.append({"bid": r.id, "lo": None, "hi": None, "src": ets.UNAVAILABLE})
                        continue
                    f.seek(blk.content_offset)
                    try:
                        times = ets.from_records(blk, f.read(blk.content_length), event_field, ordering_field)
                    except BlockDecodeError:
                        times = ets.EventTimes(None, None, ets.UNAVAILABLE)
                    resolved.append({"bid": r.id, "lo": times.min_ms, "hi": times.max_ms, "src": times.source})
        stmt = (
            update(b)
            .where(b.c.id == bindparam("bid"))
            .values(
                min_event_time=bindparam("lo"),
                max_event_time=bindparam("hi"),
                min_event_time_source=bindparam("src"),
            )
        )
        for batch in chunks(resolved, 1000):
            with self.engine.begin() as conn:
                conn.execute(stmt, list(batch))
        self.stats.blocks_event_time_resolved += len(resolved)

    def _write_stat_times(self, instants: set[str]) -> dict[tuple[str, str, str], tuple[int | None, int | None]]:
        """(instant, partition, log file) -> (minEventTime, maxEventTime) from deltacommit write stats."""
        out: dict[tuple[str, str, str], tuple[int | None, int | None]] = {}
        tl = self.table.timeline
        for instant_time in instants:
            instant = tl.instant(instant_time) if instant_time else None
            if instant is None or not instant.is_completed or instant.action != Action.DELTA_COMMIT:
                continue
            for stat in tl.commit_metadata(instant).write_stats():
                for name in stat.log_files or [stat.file_name]:
                    out[(instant_time, stat.partition_path, name)] = (
                        stat.min_event_time,
                        stat.max_event_time,
                    )
        return out

    # ---- lineage ------------------------------------------------------------------------------------

    def _sync_links(self, table_id: int) -> None:
        """Links from completed compaction commits and from symlinks on disk; targets resolved to the
        physical file, the intermediate link kept in `via_name`."""
        k = table_of(LinkRecord)
        lf = table_of(LogFileRecord)
        tl = self.table.timeline
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for instant in tl.completed():
            if not tl.is_compaction(instant.requested_time):
                continue
            raw = tl.commit_metadata(instant).extra_metadata.get(SYMLINK_OPERATIONS_KEY)
            for op in json.loads(raw) if raw else []:
                found[(op.get("partition_path", ""), op["symlink"])] = {
                    "target_name": op["target"],
                    "compaction_instant": instant.requested_time,
                }
        with self.engine.begin() as conn:
            files = {
                (r.partition_path, r.name): r
                for r in conn.execute(
                    select(lf.c.partition_path, lf.c.name, lf.c.is_link, lf.c.link_target).where(
                        lf.c.table_id == table_id
                    )
                )
            }
            for (part, name), r in files.items():
                if r.is_link and r.link_target:
                    entry = found.setdefault((part, name), {"compaction_instant": None})
                    entry["target_name"] = posixpath.basename(r.link_target)
            known = {
                (r.partition_path, r.link_name): r for r in conn.execute(select(k).where(k.c.table_id == table_id))
            }
            for (part, name), entry in found.items():
                target, via = entry["target_name"], None
                seen = {name}
                while (part, target) in found and target not in seen:  # a link of a link: follow to the file
                    seen.add(target)
                    via, target = target, found[(part, target)]["target_name"]
                state = "created" if (part, name) in files else "removed"
                row = {
                    "table_id": table_id,
                    "partition_path": part,
                    "link_name": name,
                    "target_name": target,
                    "via_name": via,
                    "compaction_instant": entry.get("compaction_instant"),
                    "state": state,
                }
                old = known.get((part, name))
                if old is None:
                    insert_ignore(conn, k, [row])
                elif (old.target_name, old.via_name, old.state) != (target, via, state):
                    conn.execute(
                        update(k)
                        .where(k.c.id == old.id)
                        .values(
                            target_name=target,
                            via_name=via,
                            state=state,
                            compaction_instant=entry.get("compaction_instant") or old.compaction_instant,
                        )
                    )
            self.stats.links = conn.execute(
                select(func.count()).select_from(k).where(k.c.table_id == table_id)
            ).scalar_one()


def _block_row(
    table_id: int, file_id: int, block: LogBlock, stat_times: tuple[int | None, int | None] | None = None
) -> dict[str, Any]:
    lo, hi, source = block.min_event_time, None, ets.HEADER if block.min_event_time is not None else None
    if source is None and block.is_data and stat_times is not None and stat_times[0] is not None:
        lo, hi, source = stat_times[0], stat_times[1], ets.WRITE_STAT
    return {
        "table_id": table_id,
        "log_file_id": file_id,
        "offset": block.offset,
        "length": block.length,
        "block_type": block.block_type.label,
        "instant": block.instant_time,
        "target_instant": block.target_instant_time,
        "record_count": block.record_count,
        "min_event_time": lo,
        "max_event_time": hi,
        "min_event_time_source": source,
        "status": CORRUPT if block.is_corrupt else UNCOMMITTED,
    }
