"""Planning input read from the index: each candidate file group's newest slice with its log files' min event
times (no listing). File groups replaced or under a pending compaction are not candidates."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from typing import Any

from sqlalchemy import Engine, and_, case, func, or_, select

from hudi_meta.format.file_names import log_sort_key
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
from hudi_meta.index.states import PENDING_PLAN_STATES, BlockStatus
from hudi_meta.planning.model import LogFileInfo, SliceInfo


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
        newest: dict[int, Any] = {}
        for r in conn.execute(
            select(
                g.c.id,
                g.c.partition_path,
                g.c.file_id,
                s.c.id.label("slice_id"),
                s.c.base_instant,
                s.c.base_file,
                s.c.base_committed,
            )
            .join(s, s.c.file_group_id == g.c.id)
            .where(g.c.table_id == table_id, g.c.replaced.is_(False))
        ).all():
            if (r.partition_path, r.file_id) in busy or r.base_instant >= before_instant:
                continue
            if r.id not in newest or r.base_instant > newest[r.id].base_instant:
                newest[r.id] = r
        files: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
        for slice_id, *file_row in conn.execute(
            select(f.c.file_slice_id, f.c.id, f.c.name, f.c.base_instant, f.c.version, f.c.write_token)
            .add_columns(f.c.size, f.c.link_target)
            .where(f.c.table_id == table_id, f.c.file_slice_id.is_not(None))
        ).all():
            files[slice_id].append(tuple(file_row))
        # one pass over the data blocks gives, per log file: its min committed event time, whether it holds an
        # uncommitted block or a block of an instant not before ours (it must wait), a committed block of unknown
        # event time
        data = b.c.block_type.in_(DATA_TYPES)
        committed = and_(b.c.status == BlockStatus.COMMITTED, data)
        unknown_time = or_(b.c.min_event_time_source.is_(None), b.c.min_event_time_source == UNAVAILABLE)
        waits = or_(b.c.status == BlockStatus.UNCOMMITTED, b.c.instant >= before_instant)
        stats: dict[int, tuple[int | None, int, int]] = {
            log_file_id: (lo, waiting, unknown)
            for log_file_id, lo, waiting, unknown in conn.execute(
                select(
                    b.c.log_file_id,
                    func.min(case((committed, b.c.min_event_time))),
                    func.max(case((waits, 1), else_=0)),
                    func.max(case((and_(committed, unknown_time), 1), else_=0)),
                )
                .where(b.c.table_id == table_id, data)
                .group_by(b.c.log_file_id)
            ).all()
        }
    slices = []
    none = (None, 0, 0)
    for r in sorted(newest.values(), key=lambda r: (r.partition_path, r.file_id)):
        if r.base_file is not None and not r.base_committed:
            continue
        logs = sorted(files.get(r.slice_id, []), key=lambda x: log_sort_key(x[2], x[3], x[4], x[1].endswith(".cdc")))
        infos: list[LogFileInfo] = []
        waiting = False  # once a file is not committed before the compaction instant, it and later ones wait
        for file_id, name, _, version, _, size, link_target in logs:
            lo, waits_here, unknown = stats.get(file_id, none)
            waiting = waiting or bool(waits_here)
            target = posixpath.basename(link_target) if link_target else None
            infos.append(LogFileInfo(name, version, size, lo, target, not waiting, not unknown))
        if infos:
            slices.append(SliceInfo(r.partition_path, r.file_id, r.base_instant, r.base_file, tuple(infos)))
    return slices
