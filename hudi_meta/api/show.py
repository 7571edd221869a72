"""What `Table.show` returns: a table's timeline, file slices, log blocks, compaction plans or links as rows, from
the index (`hudi_meta.index.queries`) or read directly from the table's files (timeline, slices and blocks); both
give the same keys, so scripts see one shape whichever source answered."""

from __future__ import annotations

import posixpath
from typing import Any

from sqlalchemy import Engine

from hudi_meta.errors import BadValueError, NotIndexedError
from hudi_meta.format.log_block import LogBlock
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.index.commit_summary import commit_summary
from hudi_meta.index.event_time_source import HEADER
from hudi_meta.index.queries import SHOW_FROM_INDEX
from hudi_meta.index.states import BlockStatus
from hudi_meta.index.table_format import require_current_index
from hudi_meta.table.table import HudiTable


def timeline_rows(table: HudiTable) -> list[dict[str, Any]]:
    tl = table.timeline
    return [
        {
            "requested_time": i.requested_time,
            "action": i.action,
            "state": i.state,
            "completion_time": i.completion_time,
            "is_compaction": tl.is_compaction(i.requested_time),
            "summary": commit_summary(table, i),
        }
        for i in tl.instants
    ]


def slice_rows(table: HudiTable) -> list[dict[str, Any]]:
    inputs = table.view_inputs()
    rows = []
    for fg in table.all_file_groups():
        replaced = (fg.partition, fg.file_id) in inputs.replaced
        for fs in fg.ordered_slices():
            base = fs.base_file
            rows.append(
                {
                    "partition": fg.partition,
                    "file_id": fg.file_id,
                    "base_instant": fs.base_instant,
                    "base_file": base.name if base else None,
                    "base_committed": inputs.is_committed(base.parsed.instant) if base else None,
                    "log_files": [f.name for f in fs.sorted_logs()],
                    "pending_compaction": inputs.pending_compactions.get((fg.partition, fg.file_id)) == fs.base_instant,
                    "replaced": replaced,
                }
            )
    return rows


def block_rows(table: HudiTable) -> list[dict[str, Any]]:
    inputs = table.view_inputs()
    found: list[tuple[str, LogBlock]] = []
    for fg in table.all_file_groups():
        for fs in fg.ordered_slices():
            for lf in fs.sorted_logs():
                path = posixpath.join(table.base_path, lf.path)
                found.extend((lf.path, b) for b in read_blocks(table.storage, path))
    rolled_back = {b.target_instant_time for _, b in found if b.is_rollback}
    rows = []
    for path, b in found:
        if b.is_corrupt:
            status = BlockStatus.CORRUPT
        elif b.instant_time in rolled_back:
            status = BlockStatus.ROLLED_BACK
        elif b.instant_time and inputs.is_committed(b.instant_time):
            status = BlockStatus.COMMITTED
        else:
            status = BlockStatus.UNCOMMITTED
        rows.append(
            {
                "file": path,
                "offset": b.offset,
                "length": b.length,
                "type": b.block_type.label,
                "instant": b.instant_time,
                "target_instant": b.target_instant_time,
                "min_event_time": b.min_event_time,
                "max_event_time": None,
                "min_event_time_source": HEADER if b.min_event_time is not None else None,
                "record_count": b.record_count,
                "status": status,
            }
        )
    return rows


SHOW_FROM_FILES = {"timeline": timeline_rows, "slices": slice_rows, "blocks": block_rows}
SHOWN = tuple(sorted(SHOW_FROM_INDEX))  # what `Table.show` shows from the index
SHOWN_FROM_FILES = tuple(sorted(SHOW_FROM_FILES))  # and what from the table's files


def rows_from_files(table: HudiTable, what: str) -> list[dict[str, Any]]:
    """`what` (one of `SHOWN_FROM_FILES`) read from the table's files."""
    if what not in SHOW_FROM_FILES:
        raise BadValueError(f"from the files: {', '.join(SHOWN_FROM_FILES)} are shown, not {what}")
    return SHOW_FROM_FILES[what](table)


def rows_from_index(engine: Engine, table: HudiTable, what: str) -> list[dict[str, Any]]:
    """`what` (one of `SHOWN`) as the store indexed it; refused in one line when the table was upgraded since it
    was indexed, or never was."""
    if what not in SHOW_FROM_INDEX:
        raise BadValueError(f"{', '.join(SHOWN)} are shown, not {what}")
    table_id = require_current_index(engine, table)
    if table_id is None:
        raise NotIndexedError(table.base_path)
    return SHOW_FROM_INDEX[what](engine, table_id)
