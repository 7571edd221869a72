"""Planning input read from the index: each candidate file group's newest slice with its log files' min event
times (no listing). File groups replaced or under a pending compaction are not candidates."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from operator import itemgetter
from typing import Any

from sqlalchemy import Engine, and_, case, func, or_, select

from hudi_meta.format.file_names import log_sort_key
from hudi_meta.gc_pause import paused_gc
from hudi_meta.index.event_time_source import UNAVAILABLE
from hudi_meta.index.event_times import DATA_TYPES
from hudi_meta.index.models import (
    compaction_operation_table,
    compaction_plan_table,
    file_group_table,
    file_slice_table,
    log_block_table,
    log_file_table,
)
from hudi_meta.index.sql import plain_rows
from hudi_meta.index.states import PENDING_PLAN_STATES, BlockStatus
from hudi_meta.planning.model import LogFileInfo, SliceInfo


@paused_gc()
def candidate_slices(engine: Engine, table_id: int, before_instant: str) -> list[SliceInfo]:
    """Newest committed slices of file groups that may be compacted at `before_instant`.

    A log file holding blocks of an instant that is not committed before `before_instant` ends the slice's
    compactable prefix: it and every later log file stay out of the merge (they may still be linked).
    """
    g, s, f, b = file_group_table, file_slice_table, log_file_table, log_block_table
    p, o = compaction_plan_table, compaction_operation_table
    with engine.connect() as conn:
        busy = {
            (r.partition_path, r.file_id)
            for r in conn.execute(
                select(o.c.partition_path, o.c.file_id)
                .join(p, p.c.id == o.c.plan_id)
                .where(p.c.table_id == table_id, p.c.state.in_(PENDING_PLAN_STATES))
            )
        }
        # the newest slice before our instant of each file group (replaced or busy groups are not candidates)
        newest: dict[int, tuple[Any, ...]] = {}
        for row in plain_rows(
            conn,
            select(g.c.id, s.c.base_instant, g.c.partition_path, g.c.file_id, s.c.id, s.c.base_file, s.c.base_committed)
            .join(s, s.c.file_group_id == g.c.id)
            .where(g.c.table_id == table_id, g.c.replaced.is_(False), s.c.base_instant < before_instant),
        ):
            if (row[2], row[3]) not in busy and (row[0] not in newest or row[1] > newest[row[0]][1]):
                newest[row[0]] = row
        # log files by (slice, instant, version), sorted here (SQLite's ORDER BY cost more than the query); a
        # slice with two files of one instant and version (write tokens, .cdc) is sorted by Hudi's full log order
        log_rows = plain_rows(
            conn,
            select(f.c.file_slice_id, f.c.base_instant, f.c.version, f.c.write_token)
            .add_columns(f.c.id, f.c.name, f.c.size, f.c.link_target)
            .where(f.c.table_id == table_id, f.c.file_slice_id.is_not(None)),
        )
        log_rows.sort(key=itemgetter(0, 1, 2))
        files: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
        resort: set[int] = set()
        last: tuple[Any, ...] = ()
        for row in log_rows:
            if row[:3] == last:
                resort.add(row[0])
            last = row[:3]
            files[row[0]].append(row)
        for slice_id in resort:
            files[slice_id].sort(key=lambda x: log_sort_key(x[1], x[2], x[3], x[5].endswith(".cdc")))
        # one pass over the data blocks (index ix_log_block_file_summary alone) gives, per log file: its min
        # committed event time, whether it holds an uncommitted block or a block of an instant not before ours
        # (it must wait), a committed block of unknown event time
        committed = b.c.status == BlockStatus.COMMITTED
        unknown_time = or_(b.c.min_event_time_source.is_(None), b.c.min_event_time_source == UNAVAILABLE)
        waits = or_(b.c.status == BlockStatus.UNCOMMITTED, b.c.instant >= before_instant)
        stats: dict[int, tuple[int | None, int, int]] = {
            log_file_id: (lo, waiting, unknown)
            for log_file_id, lo, waiting, unknown in plain_rows(
                conn,
                select(
                    b.c.log_file_id,
                    func.min(case((committed, b.c.min_event_time))),
                    func.max(case((waits, 1), else_=0)),
                    func.max(case((and_(committed, unknown_time), 1), else_=0)),
                )
                .where(b.c.table_id == table_id, b.c.block_type.in_(DATA_TYPES))
                .group_by(b.c.log_file_id),
            )
        }
    slices = []
    none = (None, 0, 0)
    for _, base_instant, partition, file_id, slice_id, base_file, base_committed in sorted(
        newest.values(), key=lambda r: (r[2], r[3])
    ):
        if base_file is not None and not base_committed:
            continue
        infos: list[LogFileInfo] = []
        waiting = False  # once a file is not committed before the compaction instant, it and later ones wait
        for _, _, version, _, log_id, name, size, link_target in files.get(slice_id, ()):
            lo, waits_here, unknown = stats.get(log_id, none)
            waiting = waiting or bool(waits_here)
            target = posixpath.basename(link_target) if link_target else None
            infos.append(LogFileInfo(name, version, size, lo, target, not waiting, not unknown))
        if infos:
            slices.append(SliceInfo(partition, file_id, base_instant, base_file, tuple(infos)))
    return slices
