"""File groups, file slices and log files in the store, and the scan of log files into blocks.

A log file is scanned from its indexed offset when it grew since the last scan; unchanged files are never
opened. Each batch of scanned files is one transaction that also advances the files' offsets, so a run killed
at any point leaves a consistent index that the next run completes.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy import Connection, Engine, delete, select, update

from hudi_meta.file_group.fs_view import FileGroup, LogFile, ViewInputs
from hudi_meta.format.log_block import BlockType, LogBlock
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.index import event_time_source as ets
from hudi_meta.index.event_times import StatTimes, StatusRule, stat_times_apply, status_rule, write_stat_times
from hudi_meta.index.log_file_summary import refresh_summaries
from hudi_meta.index.models import file_group_table, file_slice_table, log_block_table, log_file_table
from hudi_meta.index.run_stats import IndexRunStats
from hudi_meta.index.sql import chunks, insert_ignore, insert_ignore_tuples
from hudi_meta.index.states import BlockStatus
from hudi_meta.progress import Report, silent
from hudi_meta.table.table import HudiTable


def sync_files(
    engine: Engine,
    table: HudiTable,
    table_id: int,
    stats: IndexRunStats,
    batch_files: int = 200,
    progress: Report = silent,
) -> None:
    """Make the stored file groups, slices and log files those on disk, then scan the log files that grew
    (from their indexed offset), `batch_files` files a transaction."""
    groups = table.all_file_groups()
    with engine.begin() as conn:
        slice_ids = _sync_slices(conn, table_id, groups, table.view_inputs())
        to_scan = _sync_log_files(conn, table_id, groups, slice_ids, stats)
        status_of = status_rule(conn, table, table_id)  # once: each batch adds the rollbacks it scans
    done = 0
    for batch in chunks(to_scan, batch_files):
        progress("index: log files scanned", done, len(to_scan))
        _scan_batch(engine, table, table_id, stats, batch, status_of)
        done += len(batch)
    if to_scan:
        progress("index: log files scanned", done, len(to_scan))


SliceKey = tuple[str, str, str]
"""(partition, file id, base instant): a file slice as Hudi names it."""
_SliceRow = dict[str, Any]
_StoredSlice = tuple[int, str | None, bool, int | None]
"""(slice id, base file, base committed, base file size) of a stored slice."""


def _sync_slices(
    conn: Connection, table_id: int, groups: Sequence[FileGroup], inputs: ViewInputs
) -> dict[SliceKey, int]:
    """Store the file groups and slices on disk, drop those gone; (partition, file id, base instant) -> slice id."""
    group_ids = _sync_groups(conn, table_id, groups, inputs)
    slice_rows = _slice_rows(groups, group_ids, inputs)
    existing = _stored_slices(conn, table_id)
    insert_ignore(
        conn,
        file_slice_table,
        [r for r in slice_rows if (r["file_group_id"], r["base_instant"]) not in existing],
    )
    group_ids = _drop_stale_slices(conn, groups, group_ids, slice_rows, existing)
    _update_changed_slices(conn, slice_rows, existing)
    return _slice_ids(conn, table_id, group_ids)


def _sync_groups(
    conn: Connection, table_id: int, groups: Sequence[FileGroup], inputs: ViewInputs
) -> dict[tuple[str, str], tuple[int, bool]]:
    """Store the file groups on disk and their replaced flag (a replace commit may come after the group);
    (partition, file id) -> (group id, replaced) of every stored group, gone ones included."""
    file_groups = file_group_table
    rows = [
        {
            "table_id": table_id,
            "partition_path": fg.partition,
            "file_id": fg.file_id,
            "replaced": (fg.partition, fg.file_id) in inputs.replaced,
        }
        for fg in groups
    ]
    insert_ignore(conn, file_groups, rows)
    group_ids = {
        (r.partition_path, r.file_id): (r.id, r.replaced)
        for r in conn.execute(
            select(file_groups.c.id, file_groups.c.partition_path, file_groups.c.file_id, file_groups.c.replaced).where(
                file_groups.c.table_id == table_id
            )
        )
    }
    for fg in groups:
        gid, replaced = group_ids[(fg.partition, fg.file_id)]
        if replaced != ((fg.partition, fg.file_id) in inputs.replaced):
            conn.execute(update(file_groups).where(file_groups.c.id == gid).values(replaced=not replaced))
    return group_ids


def _slice_rows(
    groups: Sequence[FileGroup], group_ids: dict[tuple[str, str], tuple[int, bool]], inputs: ViewInputs
) -> list[_SliceRow]:
    """The slice rows the disk holds; a base file counts as committed only once its instant completed."""
    slice_rows: list[_SliceRow] = []
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
    return slice_rows


def _stored_slices(conn: Connection, table_id: int) -> dict[tuple[int, str], _StoredSlice]:
    """(file group id, base instant) -> the stored slice, to tell new, changed and gone slices apart."""
    file_groups, slices = file_group_table, file_slice_table
    return {
        (r.file_group_id, r.base_instant): (r.id, r.base_file, r.base_committed, r.base_file_size)
        for r in conn.execute(
            select(
                slices.c.id,
                slices.c.file_group_id,
                slices.c.base_instant,
                slices.c.base_file,
                slices.c.base_committed,
                slices.c.base_file_size,
            )
            .join(file_groups, file_groups.c.id == slices.c.file_group_id)
            .where(file_groups.c.table_id == table_id)
        )
    }


def _drop_stale_slices(
    conn: Connection,
    groups: Sequence[FileGroup],
    group_ids: dict[tuple[str, str], tuple[int, bool]],
    slice_rows: list[_SliceRow],
    existing: dict[tuple[int, str], _StoredSlice],
) -> dict[tuple[str, str], tuple[int, bool]]:
    """Drop the slices and file groups gone from disk; the groups still on disk."""
    file_groups, slices, log_files = file_group_table, file_slice_table, log_file_table
    # slices and file groups gone from disk (a rollback deleted their files, an unschedule their pending
    # compaction) leave the index; their log files' rows follow (`_sync_log_files`) or move to another slice
    wanted = {(r["file_group_id"], r["base_instant"]) for r in slice_rows}
    stale_slices = [sid for key, (sid, _, _, _) in existing.items() if key not in wanted]
    for part in chunks(stale_slices, 500):
        conn.execute(update(log_files).where(log_files.c.file_slice_id.in_(part)).values(file_slice_id=None))
        conn.execute(delete(slices).where(slices.c.id.in_(part)))
    on_disk_groups = {(fg.partition, fg.file_id) for fg in groups}
    stale_groups = [gid for key, (gid, _) in group_ids.items() if key not in on_disk_groups]
    for part in chunks(stale_groups, 500):
        conn.execute(delete(slices).where(slices.c.file_group_id.in_(part)))
        conn.execute(delete(file_groups).where(file_groups.c.id.in_(part)))
    return {key: v for key, v in group_ids.items() if key in on_disk_groups}


def _update_changed_slices(
    conn: Connection, slice_rows: list[_SliceRow], existing: dict[tuple[int, str], _StoredSlice]
) -> None:
    """Update the stored slices whose base file appeared, changed size or got committed."""
    slices = file_slice_table
    for r in slice_rows:
        old = existing.get((r["file_group_id"], r["base_instant"]))
        if old is not None and (old[1], old[2], old[3]) != (
            r["base_file"],
            r["base_committed"],
            r["base_file_size"],
        ):
            conn.execute(
                update(slices)
                .where(slices.c.id == old[0])
                .values(
                    base_file=r["base_file"],
                    base_file_size=r["base_file_size"],
                    base_committed=r["base_committed"],
                )
            )


def _slice_ids(
    conn: Connection, table_id: int, group_ids: dict[tuple[str, str], tuple[int, bool]]
) -> dict[SliceKey, int]:
    """(partition, file id, base instant) -> slice id of every stored slice."""
    file_groups, slices = file_group_table, file_slice_table
    by_group = {gid: key for key, (gid, _) in group_ids.items()}
    slice_ids: dict[SliceKey, int] = {}
    for found in conn.execute(
        select(slices.c.id, slices.c.file_group_id, slices.c.base_instant)
        .join(file_groups, file_groups.c.id == slices.c.file_group_id)
        .where(file_groups.c.table_id == table_id)
    ):
        part, fid = by_group[found.file_group_id]
        slice_ids[(part, fid, found.base_instant)] = found.id
    return slice_ids


def _sync_log_files(
    conn: Connection,
    table_id: int,
    groups: Sequence[FileGroup],
    slice_ids: dict[SliceKey, int],
    stats: IndexRunStats,
) -> list[tuple[int, int, LogFile]]:
    """Store the log files on disk in their slices, drop those gone, reset those rewritten shorter; the files
    to scan as (file id, indexed offset, file)."""
    log_files = log_file_table
    known = {
        (r.partition_path, r.name): r
        for r in conn.execute(
            select(
                log_files.c.id,
                log_files.c.partition_path,
                log_files.c.name,
                log_files.c.size,
                log_files.c.indexed_offset,
                log_files.c.file_slice_id,
            ).where(log_files.c.table_id == table_id)
        )
    }
    on_disk = _log_files_on_disk(groups, slice_ids)
    new_rows = []
    for (part, name), (log, sid) in on_disk.items():
        row = known.get((part, name))
        if row is None:
            new_rows.append(_new_log_file_row(table_id, sid, log))
        elif row.file_slice_id != sid:
            conn.execute(update(log_files).where(log_files.c.id == row.id).values(file_slice_id=sid))
    insert_ignore(conn, log_files, new_rows)
    stats.log_files_added += len(new_rows)
    gone = [row.id for key, row in known.items() if key not in on_disk]
    for ids in chunks(gone, 500):
        conn.execute(delete(log_block_table).where(log_block_table.c.log_file_id.in_(ids)))
        conn.execute(delete(log_files).where(log_files.c.id.in_(ids)))
    stats.log_files_removed += len(gone)
    # a file now shorter than what was indexed was replaced (an earlier attempt of a write rewritten):
    # its blocks are no longer there, index it again from the start
    shrunk = [row.id for key, row in known.items() if key in on_disk and on_disk[key][0].size < row.indexed_offset]
    for ids in chunks(shrunk, 500):
        conn.execute(delete(log_block_table).where(log_block_table.c.log_file_id.in_(ids)))
        conn.execute(update(log_files).where(log_files.c.id.in_(ids)).values(indexed_offset=0, size=0))
    refresh_summaries(conn, table_id, shrunk)
    return _files_to_scan(conn, table_id, on_disk)


def _log_files_on_disk(
    groups: Sequence[FileGroup], slice_ids: dict[SliceKey, int]
) -> dict[tuple[str, str], tuple[LogFile, int]]:
    """(partition, name) -> (log file, id of the slice it belongs to) of every log file on disk."""
    on_disk: dict[tuple[str, str], tuple[LogFile, int]] = {}
    for fg in groups:
        for fs in fg.ordered_slices():
            for log in fs.log_files:
                on_disk[(log.partition, log.name)] = (log, slice_ids[(fg.partition, fg.file_id, fs.base_instant)])
    return on_disk


def _new_log_file_row(table_id: int, slice_id: int, log: LogFile) -> dict[str, object]:
    """The row of a log file first seen: nothing indexed yet (size and offset 0), so the scan reads it all."""
    return {
        "table_id": table_id,
        "file_slice_id": slice_id,
        "partition_path": log.partition,
        "name": log.name,
        "file_id": log.parsed.file_id,
        "base_instant": log.parsed.instant,
        "version": log.parsed.version,
        "write_token": log.parsed.write_token,
        "size": 0,
        "indexed_offset": 0,
        "is_link": log.link_target is not None,
        "link_target": log.link_target,
    }


def _files_to_scan(
    conn: Connection, table_id: int, on_disk: dict[tuple[str, str], tuple[LogFile, int]]
) -> list[tuple[int, int, LogFile]]:
    """(file id, indexed offset, file) of the log files that grew since their last scan, in name order."""
    log_files = log_file_table
    offsets = {
        (r.partition_path, r.name): (r.id, r.indexed_offset, r.size)
        for r in conn.execute(
            select(
                log_files.c.id,
                log_files.c.partition_path,
                log_files.c.name,
                log_files.c.indexed_offset,
                log_files.c.size,
            ).where(log_files.c.table_id == table_id)
        )
    }
    # A file is scanned when it grew since the last scan (bytes past the indexed offset that did not change
    # size, e.g. the torn tail of a killed writer, are not reread on every run).
    return [
        (offsets[key][0], offsets[key][1], log)
        for key, (log, _) in sorted(on_disk.items())
        if log.size > offsets[key][1] and log.size != offsets[key][2]
    ]


def _scan_batch(
    engine: Engine,
    table: HudiTable,
    table_id: int,
    stats: IndexRunStats,
    batch: Sequence[tuple[int, int, LogFile]],
    status_of: StatusRule,
) -> None:
    """Read the new blocks of a batch of log files and store them with the files' new offsets, in one transaction."""
    log_files = log_file_table
    found: list[tuple[int, LogFile, LogBlock]] = []
    advanced: list[tuple[int, int, int, int]] = []  # (file id, old offset, new offset, size)
    for file_id, start, log in batch:
        path = posixpath.join(table.base_path, log.path)
        blocks = read_blocks(table.storage, path, start)
        if blocks and blocks[-1].is_corrupt:
            blocks = blocks[:-1]  # a torn tail may be a write in progress: rescan it when the file grows
        end = blocks[-1].offset + blocks[-1].length if blocks else start
        found.extend((file_id, log, b) for b in blocks)
        advanced.append((file_id, start, end, log.size))
        stats.log_files_scanned += 1
    # Header and write-stat event times count when the registered field is the table's own: store them
    # with the block (write stats exist for blocks of completed deltacommits only).
    applies = stat_times_apply(engine, table, table_id)
    stat_times = (
        write_stat_times(table, {b.instant_time for _, _, b in found if b.is_data and b.instant_time})
        if applies
        else {}
    )
    # each block stored with its instant's status now (resolve_status corrects what changes later): one write
    # of each row, not an insert and an update of all of them
    status_of.rolled_back.update(
        b.target_instant_time for _, _, b in found if b.block_type is BlockType.COMMAND and b.target_instant_time
    )
    rows = _block_rows(table_id, found, status_of, applies, stat_times)
    ours: set[int] = set()  # files this run advanced: their blocks are the ones it adds
    with engine.begin() as conn:
        for file_id, old, new, size in advanced:
            # optimistic: another indexer that already advanced this file wins, ours is a no-op
            advance = update(log_files).where(log_files.c.id == file_id, log_files.c.indexed_offset == old)
            if conn.execute(advance.values(indexed_offset=new, size=size)).rowcount:
                ours.add(file_id)
        insert_ignore_tuples(conn, log_block_table, BlockRow._fields, rows)
        # every file of the batch: rows of a file another indexer advanced may still have been added here
        refresh_summaries(conn, table_id, [file_id for file_id, *_ in advanced])
    added = [r for r in rows if r.log_file_id in ours]
    stats.blocks_added += len(added)
    stats.blocks_event_time_resolved += sum(1 for r in added if r.min_event_time_source is not None)


class BlockRow(NamedTuple):
    """A new block's `log_block` row (its fields are the columns): a tuple, as a first index builds 10^5."""

    table_id: int
    log_file_id: int
    offset: int
    length: int
    block_type: str
    instant: str | None
    target_instant: str | None
    record_count: int | None
    min_event_time: int | None
    max_event_time: int | None
    min_event_time_source: str | None
    status: BlockStatus


def _block_rows(
    table_id: int,
    found: Sequence[tuple[int, LogFile, LogBlock]],
    status_of: StatusRule,
    stat_applies: bool,
    stat_times: StatTimes,
) -> list[BlockRow]:
    """New blocks' rows, each with its instant's status; header and write-stat times only when they hold for
    the registered field."""
    rows = []
    for file_id, log, block in found:
        instant = block.instant_time
        lo: int | None = None
        hi: int | None = None
        source: str | None = None
        if stat_applies and block.is_data:
            lo = block.min_event_time
            if lo is not None:
                source = ets.HEADER
            else:
                times = stat_times.get((instant or "", log.partition, log.name))
                if times is not None and times[0] is not None:
                    lo, hi, source = times[0], times[1], ets.WRITE_STAT
        status = BlockStatus.CORRUPT if block.block_type is BlockType.CORRUPT else status_of(instant)
        rows.append(
            BlockRow(
                table_id,
                file_id,
                block.offset,
                block.length,
                block.block_type.label,
                instant,
                block.target_instant_time,
                block.record_count,
                lo,
                hi,
                source,
                status,
            )
        )
    return rows
