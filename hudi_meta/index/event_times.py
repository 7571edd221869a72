"""Status and event times of the stored log blocks: which blocks count (committed, uncommitted, rolled back) and
each committed data or delete block's min event time (the rules of one block: `event_time_source`)."""

from __future__ import annotations

import datetime as dt
import json
import posixpath
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, and_, bindparam, select, update

from hudi_meta.file_group.fs_view import ViewInputs
from hudi_meta.format.block_content import BlockDecodeError
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.index import event_time_source as ets
from hudi_meta.index.log_file_summary import refresh_summaries
from hudi_meta.index.models import hudi_table, log_block_table, log_file_table, table_service_table
from hudi_meta.index.registry import event_time_field_of
from hudi_meta.index.run_stats import IndexRunStats
from hudi_meta.index.sql import chunks
from hudi_meta.index.states import BlockStatus
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action

StatTimes = dict[tuple[str, str, str], tuple[int | None, int | None]]


@dataclass
class StatusRule:
    """The status of a readable block of an instant: rolled back when a rollback names the instant (a command
    block or a rollback instant: `rolled_back`), else committed or uncommitted by `ViewInputs.is_committed`."""

    rolled_back: set[str]
    inputs: ViewInputs

    def __call__(self, instant: str | None) -> BlockStatus:
        if instant in self.rolled_back:
            return BlockStatus.ROLLED_BACK
        if instant is not None and self.inputs.is_committed(instant):
            return BlockStatus.COMMITTED
        return BlockStatus.UNCOMMITTED


def status_rule(conn: Connection, table: HudiTable, table_id: int) -> StatusRule:
    """The rule as the store and the timeline give it now: rollbacks named by the stored command blocks and by
    the rollback instants. Command blocks scanned later are added to `rolled_back` by whoever scans them."""
    blocks = log_block_table
    services = table_service_table
    rolled: set[str] = set(
        conn.execute(
            select(blocks.c.target_instant)
            .where(
                blocks.c.table_id == table_id, blocks.c.block_type == "command", blocks.c.target_instant.is_not(None)
            )
            .distinct()
        ).scalars()
    )
    for (summary,) in conn.execute(
        select(services.c.summary).where(services.c.table_id == table_id, services.c.action == Action.ROLLBACK)
    ):
        rolled.update(json.loads(summary).get("commits_rollback", []))
    return StatusRule(rolled, table.view_inputs())


def resolve_status(engine: Engine, table: HudiTable, table_id: int) -> None:
    """Give every readable block the status of its instant (`status_rule`). Blocks are stored with the status
    their instant had when scanned; this corrects those whose instant changed since (a commit, a rollback, a
    command block scanned later)."""
    blocks = log_block_table
    with engine.begin() as conn:
        status_of = status_rule(conn, table, table_id)
        pending = (
            conn.execute(
                select(blocks.c.instant)
                .where(
                    blocks.c.table_id == table_id,
                    blocks.c.status.in_([BlockStatus.UNCOMMITTED, BlockStatus.COMMITTED, BlockStatus.ROLLED_BACK]),
                )
                .distinct()
            )
            .scalars()
            .all()
        )
        desired: dict[BlockStatus, list[str]] = defaultdict(list)
        for instant in pending:
            desired[status_of(instant)].append(instant)
        touched: set[int] = set()  # log files whose blocks change status
        for status, instants in desired.items():
            for part in chunks(instants, 500):
                changes = and_(
                    blocks.c.table_id == table_id,
                    blocks.c.instant.in_(part),
                    blocks.c.status != status,
                    blocks.c.status != BlockStatus.CORRUPT,
                )
                touched.update(conn.execute(select(blocks.c.log_file_id).where(changes).distinct()).scalars())
                conn.execute(update(blocks).where(changes).values(status=status))
        refresh_summaries(conn, table_id, touched)


@dataclass(frozen=True)
class _TimeSources:
    """Where a block's event times may come from, besides its records: the header and the write stats hold for
    the registered field only when `applies`; `zone` is the timeline's, a delete block's time being its instant."""

    applies: bool
    stat_times: StatTimes
    event_field: str | None
    ordering_field: str | None
    zone: dt.tzinfo


def resolve_event_times(
    engine: Engine, table: HudiTable, table_id: int, stats: IndexRunStats, reread_headers: bool = False
) -> None:
    """Give every committed data and delete block a min event time, or record that it has none.

    In order: the header (when the block was indexed before the field changed: `reread_headers`), the write
    stat (both only for the table's own field), else one scan of the block's records.
    """
    tables = hudi_table
    with engine.connect() as conn:
        event_field, ordering_field = conn.execute(
            select(tables.c.event_time_field, tables.c.ordering_field).where(tables.c.id == table_id)
        ).one()
        todo = _unresolved_blocks(conn, table_id)
    if not todo:
        return
    applies = ets.stat_applies(event_field, table.config.event_time_field)
    stat_times = write_stat_times(table, {r.instant for r in todo}) if applies else {}
    # a delete block's time is its instant time, taken in the timeline's zone
    sources = _TimeSources(applies, stat_times, event_field, ordering_field, table.config.timeline_timezone)
    resolved: list[dict[str, Any]] = []  # the "bid" of each is a row of todo, whose log file is files[bid]
    files = {r.id: r.log_file_id for r in todo}
    rescan: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for r in todo:
        found = stat_times.get((r.instant, r.partition_path, r.name))
        if not reread_headers and r.block_type != "delete" and found is not None and found[0] is not None:
            # a block without a header (else it got its time when indexed): the stat, without opening the file
            resolved.append({"bid": r.id, "lo": found[0], "hi": found[1], "src": ets.WRITE_STAT})
        else:
            rescan[(r.partition_path, r.name)].append(r)
    for (part, name), rows in rescan.items():
        resolved.extend(_times_from_file(table, part, name, rows, sources))
    _store_event_times(engine, table_id, resolved, files)
    stats.blocks_event_time_resolved += len(resolved)


def _unresolved_blocks(conn: Connection, table_id: int) -> Sequence[Any]:
    """The committed data and delete blocks without a min event time yet, in file and offset order (each file
    is then read once, front to back)."""
    blocks, log_files = log_block_table, log_file_table
    return conn.execute(
        select(
            blocks.c.id,
            blocks.c.log_file_id,
            blocks.c.offset,
            blocks.c.length,
            blocks.c.block_type,
            blocks.c.instant,
            log_files.c.partition_path,
            log_files.c.name,
        )
        .join(log_files, log_files.c.id == blocks.c.log_file_id)
        .where(
            blocks.c.table_id == table_id,
            blocks.c.min_event_time_source.is_(None),
            blocks.c.status == BlockStatus.COMMITTED,
            blocks.c.block_type.in_(ets.DATA_TYPES),
        )
        .order_by(log_files.c.partition_path, log_files.c.name, blocks.c.offset)
    ).all()


def _times_from_file(
    table: HudiTable, part: str, name: str, rows: list[Any], sources: _TimeSources
) -> list[dict[str, Any]]:
    """The event times of `rows`, blocks of one log file: the header, else the write stat, else a scan of the
    block's records; a block no longer there, or whose records do not decode, is unavailable."""
    path = posixpath.join(table.base_path, part, name) if part else posixpath.join(table.base_path, name)
    blocks = {blk.offset: blk for blk in read_blocks(table.storage, path, rows[0].offset)}
    resolved: list[dict[str, Any]] = []
    with table.storage.open_read(path) as f:
        for r in rows:
            blk = blocks.get(r.offset)
            if blk is None:
                resolved.append({"bid": r.id, "lo": None, "hi": None, "src": ets.UNAVAILABLE})
                continue
            if sources.applies and blk.is_data and blk.min_event_time is not None:
                resolved.append({"bid": r.id, "lo": blk.min_event_time, "hi": None, "src": ets.HEADER})
                continue
            found = sources.stat_times.get((r.instant, part, name))
            if blk.is_data and found is not None and found[0] is not None:
                resolved.append({"bid": r.id, "lo": found[0], "hi": found[1], "src": ets.WRITE_STAT})
                continue
            f.seek(blk.content_offset)
            content = f.read(blk.content_length)
            try:
                times = ets.from_records(blk, content, sources.event_field, sources.ordering_field, sources.zone)
            except BlockDecodeError:
                times = ets.EventTimes(None, None, ets.UNAVAILABLE)
            resolved.append({"bid": r.id, "lo": times.min_ms, "hi": times.max_ms, "src": times.source})
    return resolved


def _store_event_times(engine: Engine, table_id: int, resolved: list[dict[str, Any]], files: dict[int, int]) -> None:
    """Write the resolved times, 1000 blocks a transaction, each refreshing its log files' summaries."""
    blocks = log_block_table
    stmt = (
        update(blocks)
        .where(blocks.c.id == bindparam("bid"))
        .values(
            min_event_time=bindparam("lo"),
            max_event_time=bindparam("hi"),
            min_event_time_source=bindparam("src"),
        )
    )
    for batch in chunks(resolved, 1000):
        with engine.begin() as conn:
            conn.execute(stmt, list(batch))
            refresh_summaries(conn, table_id, {files[r["bid"]] for r in batch})


def stat_times_apply(engine: Engine, table: HudiTable, table_id: int) -> bool:
    """Whether header and write-stat times hold for the registered field (they were computed on the
    table's `hoodie.payload.event.time.field`)."""
    return ets.stat_applies(event_time_field_of(engine, table_id), table.config.event_time_field)


def write_stat_times(table: HudiTable, instants: set[str]) -> StatTimes:
    """(instant, partition, log file) -> (minEventTime, maxEventTime) from deltacommit write stats."""
    out: StatTimes = {}
    tl = table.timeline
    for instant_time in instants:
        instant = tl.instant(instant_time) if instant_time else None
        if instant is None or not instant.is_completed or instant.action != Action.DELTA_COMMIT:
            continue
        for stat in tl.commit_metadata(instant).write_stats():
            for name in stat.log_files or [stat.file_name]:
                # epoch ms already: Java converts the raw value by the same rule
                out[(instant_time, stat.partition_path, name)] = (stat.min_event_time, stat.max_event_time)
    return out
