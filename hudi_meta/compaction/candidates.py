"""Planning input read from the index: each candidate file group's newest slice with its log files' min event
times (no listing). File groups replaced or under a pending compaction are not candidates."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from typing import Any

from sqlalchemy import Engine, func, or_, select

from hudi_meta.format.file_names import LogFileName
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
        ):
            if (r.partition_path, r.file_id) in busy or r.base_instant >= before_instant:
                continue
            if r.id not in newest or r.base_instant > newest[r.id].base_instant:
                newest[r.id] = r
        files: dict[int, list[Any]] = defaultdict(list)
        for r in conn.execute(select(f).where(f.c.table_id == table_id, f.c.file_slice_id.is_not(None))):
            files[r.file_slice_id].append(r)
        mins = {
            r.log_file_id: r.lo
            for r in conn.execute(
                select(b.c.log_file_id, func.min(b.c.min_event_time).label("lo"))
                .where(b.c.table_id == table_id, b.c.status == BlockStatus.COMMITTED, b.c.block_type.in_(DATA_TYPES))
                .group_by(b.c.log_file_id)
            )
        }
        pending = {
            r.log_file_id
            for r in conn.execute(
                select(b.c.log_file_id)
                .where(b.c.table_id == table_id, b.c.status == BlockStatus.UNCOMMITTED, b.c.block_type.in_(DATA_TYPES))
                .distinct()
            )
        }
        unknown = {
            r.log_file_id
            for r in conn.execute(
                select(b.c.log_file_id)
                .where(
                    b.c.table_id == table_id,
                    b.c.status == BlockStatus.COMMITTED,
                    b.c.block_type.in_(DATA_TYPES),
                    or_(b.c.min_event_time_source.is_(None), b.c.min_event_time_source == UNAVAILABLE),
                )
                .distinct()
            )
        }
        late = {
            r.log_file_id
            for r in conn.execute(
                select(b.c.log_file_id)
                .where(b.c.table_id == table_id, b.c.instant >= before_instant, b.c.block_type.in_(DATA_TYPES))
                .distinct()
            )
        }
    slices = []
    for r in sorted(newest.values(), key=lambda r: (r.partition_path, r.file_id)):
        if r.base_file is not None and not r.base_committed:
            continue
        logs = sorted(files.get(r.slice_id, []), key=lambda x: LogFileName.parse(x.name).sort_key())
        infos = []
        for x in logs:
            if x.id in pending or x.id in late:
                break  # not committed before the compaction instant: this file and later ones wait
            target = posixpath.basename(x.link_target) if x.link_target else None
            infos.append(LogFileInfo(x.name, x.version, x.size, mins.get(x.id), target, True, x.id not in unknown))
        kept_after = tuple(
            LogFileInfo(
                x.name,
                x.version,
                x.size,
                mins.get(x.id),
                posixpath.basename(x.link_target) if x.link_target else None,
                committed=False,
                event_time_known=x.id not in unknown,
            )
            for x in logs[len(infos) :]
        )
        if infos or kept_after:
            slices.append(SliceInfo(r.partition_path, r.file_id, r.base_instant, r.base_file, (*infos, *kept_after)))
    return slices
