"""The merge of one slice's records, in Arrow: the log records among themselves in log order, then each key's log
winner with its base record, by the rules of `merge.rules`. The file-group reader decodes a slice into
`SliceRecords` and merges it here; the compaction merges the same records, streaming a large base file batch by
batch through `LogMerge` (hudi-rs keeps its merge apart from its reader the same way: `merge/record_merger.rs`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_meta.file_group.merge.rules import LogRecord, MergeMode, MergeSpec, log_replaces, replaces_base
from hudi_meta.file_group.record_keys import IS_DELETED_COLUMN, ordering_values, record_key_array
from hudi_meta.format.block_content import DeleteRecord


@dataclass(frozen=True)
class LogPart:
    """One visible log block's records, in log order: data rows `[start, stop)` of the slice's log rows, or deletes."""

    instant: str
    start: int = 0
    stop: int = 0
    deletes: tuple[DeleteRecord, ...] = ()


@dataclass
class SliceRecords:
    """Everything one slice holds, decoded but not merged: the base records and the log records in log order."""

    schema: pa.Schema | None
    base: pa.Table | None
    log_rows: pa.Table | None  # data rows of every visible data block, concatenated in log order
    parts: list[LogPart] = field(default_factory=list)
    log_keys: pa.Array = field(default_factory=lambda: pa.array([], pa.string()))  # the record key of each log row
    spec: MergeSpec | None = None

    @cached_property
    def log_records(self) -> list[LogRecord]:
        """Every log record, data and delete, in log order."""
        return self.log_records_at(range(self.log_rows.num_rows if self.log_rows is not None else 0))

    def log_records_at(self, rows: Sequence[int]) -> list[LogRecord]:
        """Every delete and the data records of log rows `rows` (ascending), in log order."""
        taken = pa.array(rows, pa.int64())
        keys = pc.take(self.log_keys, taken).to_pylist()
        orderings = [None] * len(rows)
        if self.log_rows is not None and self.spec is not None and len(rows):
            orderings = ordering_values(self.log_rows.take(taken), self.spec)
        records: list[LogRecord] = []
        i = 0
        for part in self.parts:
            records.extend(LogRecord(d.record_key, d.ordering_value, None, part.instant) for d in part.deletes)
            while i < len(rows) and rows[i] < part.stop:
                records.append(LogRecord(keys[i], orderings[i], rows[i], part.instant))
                i += 1
        return records

    def all_log_keys(self) -> pa.Array:
        """The key of every log record, data rows in row order, then deletes (with repeats)."""
        deletes = [d.record_key for part in self.parts for d in part.deletes]
        return pa.concat_arrays([self.log_keys, pa.array(deletes, pa.string())])


@dataclass
class MergedSlice:
    """A merged slice: its records, which base rows and log rows they are, and the keys a delete won."""

    table: pa.Table
    base_rows: pa.Array  # indices into `SliceRecords.base` of the base records kept, in output order
    log_rows: pa.Array  # indices into `SliceRecords.log_rows` of the log records kept, after the base rows
    deletes: dict[str, LogRecord]  # keys whose log winner is a delete, with that delete


def merge_slice(
    records: SliceRecords,
    spec: MergeSpec,
    keep_base: pa.Array | None = None,
    keep_log: Callable[[LogRecord], bool] | None = None,
) -> MergedSlice:
    """Merge base and log records by `spec.merge_mode`; `keep_base` (a boolean mask over the base records) and
    `keep_log` leave records out before merging (exact mode merges only the records at or before T)."""
    schema = records.schema
    rows = merge_rows(records, spec, keep_base, keep_log)
    if schema is None:
        return MergedSlice(pa.table({}), rows.base_rows, rows.log_rows, rows.deletes)
    base_rows, log_rows = rows.base_rows, rows.log_rows
    parts: list[pa.Table] = []
    if records.base is not None:
        parts.append(_rows(records.base, base_rows))
    if len(log_rows) and records.log_rows is not None:
        parts.append(_rows(records.log_rows, log_rows))
    merged = pa.concat_tables(parts) if parts else schema.empty_table()
    if IS_DELETED_COLUMN in merged.column_names and merged.num_rows:
        live = pc.invert(pc.fill_null(merged.column(IS_DELETED_COLUMN), False)).combine_chunks()
        if not pc.all(live).as_py():
            n_base = len(base_rows)
            merged = merged.filter(live)
            base_rows = base_rows.filter(live.slice(0, n_base))
            log_rows = log_rows.filter(live.slice(n_base))
    return MergedSlice(merged, base_rows, log_rows, rows.deletes)


def _rows(table: pa.Table, rows: pa.Array) -> pa.Table:
    """`table.take(rows)` for ascending `rows`; every row is the table itself (no copy: a read-optimized read
    and an untouched base file keep all)."""
    return table if len(rows) == table.num_rows else table.take(rows)


@dataclass(frozen=True)
class MergedRows:
    """Which records a merge keeps, before records flagged `_hoodie_is_deleted` are dropped."""

    base_rows: pa.Array  # int64 indices into `SliceRecords.base`, ascending
    log_rows: pa.Array  # int64 indices into `SliceRecords.log_rows`, ascending
    deletes: dict[str, LogRecord]  # keys whose log winner is a delete, with that delete


def merge_rows(
    records: SliceRecords,
    spec: MergeSpec,
    keep_base: pa.Array | None = None,
    keep_log: Callable[[LogRecord], bool] | None = None,
) -> MergedRows:
    """`merge_slice` without building the merged table (a compaction takes the rows itself)."""
    empty = pa.array([], type=pa.int64())
    if records.schema is None:
        return MergedRows(empty, empty, {})
    merge = LogMerge(records, spec, keep_log)
    base_rows = empty
    if records.base is not None and records.base.num_rows:
        base_rows = pc.indices_nonzero(merge.merge_base(records.base, keep_base)).cast(pa.int64())
    return MergedRows(base_rows, merge.log_rows(), merge.deletes())


class LogMerge:
    """The log side of a slice's merge, folded once; base records then merge against it, the whole base file
    at once or batch after batch in file order (a compaction streams a large base file), with the same result.

    A key with one log record, a data record, merges in Arrow (`_columnar_winners`); the others, and every key
    when `keep_log` is given, fold record by record in log order. `records.base` is not read."""

    def __init__(
        self, records: SliceRecords, spec: MergeSpec, keep_log: Callable[[LogRecord], bool] | None = None
    ) -> None:
        self.records, self.spec = records, spec
        self.columnar = _columnar_winners(records, spec) if keep_log is None else None
        folded = records.log_records if self.columnar is None else self.columnar.folded
        self.winners: dict[str, LogRecord] = {}
        for r in folded:
            if keep_log is not None and not keep_log(r):
                continue
            old = self.winners.get(r.key)
            if old is None or log_replaces(r, old, spec.merge_mode):
                self.winners[r.key] = r
        self.lost = np.zeros(len(self.columnar.rows) if self.columnar is not None else 0, bool)

    def merge_base(self, base: pa.Table, keep: pa.Array | None = None, keys: pa.Array | None = None) -> pa.Array:
        """The mask of `base`'s rows (the next batch of base records) the merge keeps; `keep` leaves rows out,
        `keys` are the batch's `record_key_array` when the caller has them already."""
        keep = keep if keep is not None else pa.array(np.ones(base.num_rows, bool))
        if not base.num_rows:
            return keep
        keys = keys if keys is not None else record_key_array(base, self.spec)
        if self.winners:
            keep = pc.and_(keep, _base_rows_kept(base, keys, keep, self.winners, self.spec))
        if self.columnar is not None and len(self.columnar.rows):
            keep, lost = _merge_with_base(self.records, base, keys, keep, self.columnar.rows, self.spec)
            self.lost |= lost
        return keep

    def log_rows(self) -> pa.Array:
        """The log rows the merge keeps (after every base batch merged), ascending."""
        rows = [w.row for w in self.winners.values() if w.row is not None]
        if self.columnar is not None:
            rows.extend(self.columnar.rows.filter(pa.array(~self.lost)).to_pylist())
        return pa.array(sorted(rows), type=pa.int64())

    def deletes(self) -> dict[str, LogRecord]:
        """Keys whose log winner is a delete, with that delete."""
        return {k: w for k, w in self.winners.items() if w.is_delete}


def _base_rows_kept(
    base: pa.Table, keys: pa.Array, keep: pa.Array, winners: dict[str, LogRecord], spec: MergeSpec
) -> pa.Array:
    """Mask of the base rows no folded winner replaces; a winner that loses to its base record leaves `winners`."""
    mask = np.ones(base.num_rows, bool)
    touched = pc.and_(keep, pc.is_in(keys, value_set=pa.array(list(winners), type=pa.string())))
    rows = pc.indices_nonzero(touched).to_pylist()
    if rows:
        key_list = pc.take(keys, pa.array(rows, pa.int64())).to_pylist()
        orderings = ordering_values(base.take(pa.array(rows, pa.int64())), spec)
        for i, key, ordering in zip(rows, key_list, orderings, strict=True):
            if replaces_base(winners[key], ordering, spec.merge_mode):
                mask[i] = False
            else:
                del winners[key]  # the base record stays: the log record is dropped
    return pa.array(mask)


@dataclass(frozen=True)
class _ColumnarWinners:
    """Log records split for merging: `rows`, data rows whose key no other log record has (each its key's
    winner, merged with the base in Arrow), and `folded`, every other log record in log order."""

    rows: pa.Array  # int64 indices into the slice's log rows
    folded: list[LogRecord]


# Ordering types whose Arrow comparison orders values as Python's `>=` on the values `to_pylist` gives.
def _comparable_in_arrow(dtype: pa.DataType) -> bool:
    return bool(
        pa.types.is_integer(dtype)
        or pa.types.is_floating(dtype)
        or pa.types.is_string(dtype)
        or pa.types.is_large_string(dtype)
        or pa.types.is_binary(dtype)
        or pa.types.is_boolean(dtype)
        or pa.types.is_decimal(dtype)
        or pa.types.is_date(dtype)
        or pa.types.is_timestamp(dtype)
        or pa.types.is_time(dtype)
    )


def _columnar_winners(records: SliceRecords, spec: MergeSpec) -> _ColumnarWinners | None:
    """Split the log records as `_ColumnarWinners` says, or None when the merge must go record by record."""
    log_rows = records.log_rows
    if log_rows is None or not log_rows.num_rows:
        return None
    ordering = spec.ordering_field
    if ordering in log_rows.column_names and not _comparable_in_arrow(log_rows.schema.field(ordering).type):
        return None
    counts = pc.value_counts(records.all_log_keys())
    repeated = counts.field("values").filter(pc.greater(counts.field("counts"), 1))
    shared = pc.is_in(records.log_keys, value_set=repeated)
    rows = pc.indices_nonzero(pc.invert(shared)).cast(pa.int64())
    return _ColumnarWinners(rows, records.log_records_at(pc.indices_nonzero(shared).to_pylist()))


def _merge_with_base(
    records: SliceRecords, base: pa.Table, keys: pa.Array, keep: pa.Array, rows: pa.Array, spec: MergeSpec
) -> tuple[pa.Array, np.ndarray]:
    """`keep` less the rows of `base` that the log rows `rows` (each its key's only log record) replace, and the
    mask over `rows` of those their base record beats: `replaces_base` for data records, in Arrow.

    Under ordering, a null on either side replaces, as in `_at_least`; `_comparable_in_arrow` makes sure Arrow's
    `>=` is Python's on these types."""
    assert records.log_rows is not None
    log = records.log_rows
    winner_of = pc.index_in(keys, value_set=pc.take(records.log_keys, rows))  # per base row: index into rows
    matched = pc.indices_nonzero(pc.and_(keep, pc.is_valid(winner_of)))
    lost = np.zeros(len(rows), bool)
    if not len(matched):
        return keep, lost
    winner = pc.take(winner_of, matched)
    ordering = spec.ordering_field
    by_ordering = spec.merge_mode in (MergeMode.DEFAULT_PAYLOAD, MergeMode.EVENT_TIME_ORDERING)
    if by_ordering and ordering is not None and ordering in log.column_names and ordering in base.column_names:
        new = pc.take(log.column(ordering), pc.take(rows, winner))
        old = pc.take(base.column(ordering), matched)
        replaced = np.asarray(pc.fill_null(pc.greater_equal(new, old), True).to_numpy(zero_copy_only=False), bool)
    else:
        replaced = np.ones(len(matched), bool)
    kept = np.asarray(keep.to_numpy(zero_copy_only=False), bool).copy()
    kept[np.asarray(matched)[replaced]] = False
    lost[np.asarray(winner)[~replaced]] = True
    return pa.array(kept), lost
