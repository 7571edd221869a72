"""Planning input read from the index: each candidate file group's newest slice with its log files' min event
times (no listing). File groups replaced or under a pending compaction are not candidates."""

from __future__ import annotations

import posixpath
from itertools import groupby
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection, Engine, or_, select

from hudi_meta.compaction.plan_records import LogFileInfo, SliceInfo
from hudi_meta.format.file_names import LogFileName
from hudi_meta.format.links import CARRY_LOG_VERSION
from hudi_meta.gc_pause import paused_gc
from hudi_meta.index.models import (
    compaction_operation_table,
    compaction_plan_table,
    file_group_table,
    file_slice_table,
    log_block_table,
    log_file_table,
)
from hudi_meta.index.sql import plain_rows
from hudi_meta.index.states import PENDING_PLAN_STATES, BlockStatus, PlanState


@paused_gc()
def candidate_slices(
    engine: Engine, table_id: int, before_instant: str, with_base_only: bool = False
) -> list[SliceInfo]:
    """Newest committed slices of file groups that may be compacted at `before_instant`; those without log files
    too when `with_base_only` (an exact plan rewrites a base file holding records after T).

    A log file holding blocks of an instant that is not committed before `before_instant` ends the slice's
    compactable prefix: it and every later log file stay out of the merge (they may still be linked).
    """
    with engine.connect() as conn:
        busy = {
            (r.partition_path, r.file_id)
            for r in conn.execute(
                select(compaction_operation_table.c.partition_path, compaction_operation_table.c.file_id)
                .join(compaction_plan_table, compaction_plan_table.c.id == compaction_operation_table.c.plan_id)
                .where(
                    compaction_plan_table.c.table_id == table_id, compaction_plan_table.c.state.in_(PENDING_PLAN_STATES)
                )
            )
        }
        # the newest slice before our instant of each file group (replaced or busy groups are not candidates)
        newest: dict[int, tuple[Any, ...]] = {}
        for row in plain_rows(
            conn,
            select(
                file_group_table.c.id,
                file_slice_table.c.base_instant,
                file_group_table.c.partition_path,
                file_group_table.c.file_id,
                file_slice_table.c.id,
                file_slice_table.c.base_file,
                file_slice_table.c.base_committed,
            )
            .join(file_slice_table, file_slice_table.c.file_group_id == file_group_table.c.id)
            .where(
                file_group_table.c.table_id == table_id,
                file_group_table.c.replaced.is_(False),
                file_slice_table.c.base_instant < before_instant,
            ),
        ):
            if (row[2], row[3]) not in busy and (row[0] not in newest or row[1] > newest[row[0]][1]):
                newest[row[0]] = row
        # Each row carries its blocks' summary (index/log_file_summary.py): whether the file waits (a block not
        # committed before our instant), its min committed event time, whether a committed block's is unknown.
        waits = or_(log_file_table.c.has_uncommitted, log_file_table.c.last_block_instant >= before_instant)
        log_rows = plain_rows(
            conn,
            select(
                log_file_table.c.file_slice_id,
                log_file_table.c.base_instant,
                log_file_table.c.version,
                log_file_table.c.name,
                log_file_table.c.size,
            )
            .add_columns(
                log_file_table.c.link_target,
                log_file_table.c.min_event_time,
                waits,
                log_file_table.c.has_unknown_event_time,
            )
            .where(log_file_table.c.table_id == table_id, log_file_table.c.file_slice_id.is_not(None)),
        )
        held = _held_carry_times(conn, table_id, [r[1] for r in newest.values()])
    # sorted here, not by SQL (SQLite's ORDER BY cost more than the query)
    log_rows.sort(key=itemgetter(0, 1, 2))
    by_slice = {slice_id: list(rows) for slice_id, rows in groupby(log_rows, itemgetter(0))}
    slices = []
    for _, base_instant, partition, file_id, slice_id, base_file, base_committed in sorted(
        newest.values(), key=itemgetter(2, 3)
    ):
        if base_file is not None and base_committed and with_base_only and slice_id not in by_slice:
            slices.append(SliceInfo(partition, file_id, base_instant, base_file, ()))
        elif (base_file is None or base_committed) and slice_id in by_slice:
            infos = _log_file_infos(by_slice[slice_id])
            carry = held.get((partition, LogFileName(file_id, base_instant, CARRY_LOG_VERSION).name))
            if carry is not None and infos and infos[0].name == carry[0]:
                _, due, held_min = carry
                infos = (infos[0]._replace(min_event_time=due, held_min_event_time=held_min), *infos[1:])
            slices.append(SliceInfo(partition, file_id, base_instant, base_file, infos))
    return slices


def _held_carry_times(
    conn: Connection, table_id: int, base_instants: list[str]
) -> dict[tuple[str, str], tuple[str, int | None, int | None]]:
    """(partition, carry log name) -> (name, min event time of its blocks that are due by themselves, min of those
    held for merge order) for the carry logs of slices that completed compactions opened. An exact plan's carry
    log holds its versions after the plan's threshold in blocks of their own (due once T passes them); every other
    carried version is held: re-merging it alone changes nothing (`compaction/layout.py`), it goes when the log
    files after it are merged."""
    wanted = set(base_instants)
    plans = {
        instant: threshold if exact else None
        for instant, threshold, exact in conn.execute(
            select(
                compaction_plan_table.c.instant, compaction_plan_table.c.threshold, compaction_plan_table.c.exact
            ).where(compaction_plan_table.c.table_id == table_id, compaction_plan_table.c.state == PlanState.COMPLETED)
        )
        if instant in wanted
    }
    if not plans:
        return {}
    out: dict[tuple[str, str], tuple[str, int | None, int | None]] = {}
    foreign: set[tuple[str, str]] = set()
    rows = conn.execute(
        select(
            log_file_table.c.partition_path,
            log_file_table.c.name,
            log_file_table.c.base_instant,
            log_block_table.c.instant,
            log_block_table.c.status,
            log_block_table.c.min_event_time,
        )
        .join(log_block_table, log_block_table.c.log_file_id == log_file_table.c.id)
        .where(
            log_file_table.c.table_id == table_id,
            log_file_table.c.version == CARRY_LOG_VERSION,
            log_file_table.c.base_instant.in_(list(plans)),
        )
    )
    for partition, name, base_instant, instant, status, lo in rows:
        key = (partition, name)
        if instant != base_instant:  # a writer took the name the compaction did not use: no carry log
            foreign.add(key)
        if status != BlockStatus.COMMITTED or lo is None:
            continue
        _, due, held_min = out.get(key, (name, None, None))
        exact_threshold = plans[base_instant]
        if exact_threshold is None or lo <= exact_threshold:
            held_min = lo if held_min is None else min(held_min, lo)
        else:
            due = lo if due is None else min(due, lo)
        out[key] = (name, due, held_min)
    return {k: v for k, v in out.items() if k not in foreign}


def _log_file_infos(rows: list[tuple[Any, ...]], full_order: bool = False) -> tuple[LogFileInfo, ...]:
    """A slice's log files from its rows sorted by (instant, version). Two files of one instant and version
    (write tokens) are first put in Hudi's full log order, parsed from their names. A file that waits makes
    every later one wait."""
    infos = []
    waiting = False
    last_instant, last_version = None, None
    for _, instant, version, name, size, link_target, lo, waits, unknown in rows:
        if version == last_version and instant == last_instant and not full_order:
            rows = sorted(rows, key=lambda r: LogFileName.parse(r[3]).sort_key())
            return _log_file_infos(rows, full_order=True)
        last_instant, last_version = instant, version
        if waits:
            waiting = True
        target = posixpath.basename(link_target) if link_target else None
        infos.append(_tuple_new(LogFileInfo, (name, version, size, lo, target, not waiting, not unknown, None)))
    return tuple(infos)


# builds a named tuple from its values as `_make` does, less its Python-level call and length check: a plan
# reads 10^5 log files
_tuple_new = tuple.__new__
