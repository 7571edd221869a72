"""The latest event time a base file may hold, from its Parquet footer alone (no rows read): what an exact plan
needs to know of every base file in the read-optimized view (docs/event-time.md section 3).

The footer keeps, per row group and column, min, max and null count; Java's column-stats index
(`HoodieMetadataColumnStats` in the metadata table) is built from the same footer statistics. A bound is given
only where the footer proves it: a missing column, a null in it (a record of unknown event time counts as after
T), a row group without statistics, a string column (ISO-8601 texts with offsets do not sort as times) or numbers
spanning two of the units `to_epoch_ms` reads (seconds, ms, us) leave it unknown (None).
"""

from __future__ import annotations

import datetime as dt
import posixpath
from collections.abc import Iterable, Mapping

import pyarrow.parquet as pq

from hudi_meta.compaction.plan_records import SliceInfo
from hudi_meta.file_group.reader import base_file_errors
from hudi_meta.storage import Storage
from hudi_meta.table.event_time import number_unit, to_epoch_ms


def _bound_ms(low: object, high: object) -> int | None:
    """The latest epoch ms of values between a column's footer min and max; None when the footer cannot tell."""
    if isinstance(high, bool | str | bytes):
        return None
    if isinstance(high, int | float) and isinstance(low, int | float):
        if number_unit(low) != number_unit(high):  # to_epoch_ms is monotonic within one unit only
            return None
        return to_epoch_ms(high)
    if isinstance(high, dt.datetime | dt.date):
        return to_epoch_ms(high)
    return None


def footer_max_event_time(metadata: pq.FileMetaData, field: str) -> int | None:
    """The latest event time of `field` over a Parquet file's rows from its footer; None when unknown."""
    path = tuple(field.split("."))
    index = next(
        (i for i in range(metadata.num_columns) if tuple(metadata.schema.column(i).path.split(".")) == path), None
    )
    if index is None:
        return None
    latest: int | None = None
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        if group.num_rows == 0:
            continue
        stats = group.column(index).statistics
        if stats is None or not stats.has_min_max or not stats.has_null_count or stats.null_count:
            return None
        bound = _bound_ms(stats.min, stats.max)
        if bound is None:
            return None
        latest = bound if latest is None else max(latest, bound)
    return latest


def base_file_max_event_times(
    storage: Storage, base_path: str, slices: Iterable[SliceInfo], field: str
) -> Mapping[tuple[str, str], int | None]:
    """(partition, file id) -> the latest event time its slice's base file may hold (None: unknown), for each
    slice with a base file. A file with no rows holds none: it maps to the earliest time there is."""
    out: dict[tuple[str, str], int | None] = {}
    for s in slices:
        if s.base_file is None:
            continue
        path = (
            posixpath.join(base_path, s.partition, s.base_file)
            if s.partition
            else posixpath.join(base_path, s.base_file)
        )
        with base_file_errors(path), storage.open_arrow(path) as f:
            metadata = pq.ParquetFile(f).metadata
        out[(s.partition, s.file_id)] = footer_max_event_time(metadata, field) if metadata.num_rows else -(2**63)
    return out
