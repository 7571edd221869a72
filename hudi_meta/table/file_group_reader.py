"""The stateless file-group reader: one file slice (base file + log files) in, one Arrow table out.

Blocks are read in log order; a rollback command block drops every earlier block of its target instant;
blocks of instants the caller does not see as committed (or after a time-travel point) are skipped; corrupt
blocks (bad framing) are skipped and counted, as Java does, but a block whose framing is valid and whose
content cannot be decoded stops the read: dropping it would lose committed records.

Records merge by the rules of `table.merge` (the table's payload class or merge mode): first the log records
among themselves in log order, then the log winner of each key with the base record. A record with
`_hoodie_is_deleted = true` that wins is a delete.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from itertools import groupby
from operator import itemgetter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_meta.errors import CorruptFileError, UndecodableBlockError, first_line
from hudi_meta.format.avro_arrow import arrow_schema_from_avro_json
from hudi_meta.format.block_content import (
    BlockDecodeError,
    DeleteRecord,
    conform,
    decode_avro_blocks_together,
    decode_data_block,
    decode_delete_records,
)
from hudi_meta.format.log_block import AVRO_BLOCK_TYPES, BlockType, LogBlock
from hudi_meta.format.log_reader import read_blocks, read_contents
from hudi_meta.storage.base import Storage
from hudi_meta.table.merge import LogRecord, MergeMode, MergeSpec, log_replaces, replaces_base
from hudi_meta.table.record_keys import (
    IS_DELETED_COLUMN,
    ordering_values,
    record_key_array,
)


@dataclass
class ReadStats:
    """Counters a read reports (compaction write stats reuse them)."""

    log_blocks: int = 0
    corrupt_blocks: int = 0
    rollback_blocks: int = 0
    log_records: int = 0  # data records
    log_deletes: int = 0  # delete records (Java's log scanner counts both as log records)
    skipped_blocks: int = 0


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


def visible_blocks(
    blocks: Sequence[tuple[str, LogBlock]], is_visible: Callable[[str], bool], stats: ReadStats
) -> list[tuple[str, LogBlock]]:
    """Apply rollback command blocks and instant visibility to (path, block) pairs in log order."""
    kept: list[tuple[str, LogBlock]] = []
    for path, block in blocks:
        if block.is_corrupt:
            stats.corrupt_blocks += 1
            continue
        if block.block_type == BlockType.COMMAND:
            if block.is_rollback:
                stats.rollback_blocks += 1
                target = block.target_instant_time
                kept = [(p, b) for p, b in kept if b.instant_time != target]
            continue
        stats.log_blocks += 1
        if block.instant_time is None or not is_visible(block.instant_time):
            stats.skipped_blocks += 1
            continue
        kept.append((path, block))
    return kept


RUN_BYTES = 32 << 20  # Avro content decoded in one columnar read at most (raw bytes held until it is decoded)


def decode_log_blocks(
    storage: Storage,
    blocks: Sequence[tuple[str, LogBlock]],
    schema: pa.Schema | None,
    stats: ReadStats,
) -> tuple[list[pa.Table], list[LogPart], pa.Schema | None]:
    """Each visible block's records in log order: a table per data block, deletes as they are. Consecutive
    Avro data blocks of one SCHEMA header are decoded together (`decode_avro_blocks_together`), one by one when
    that does not apply; each file's contents are read through one open file."""
    decoder = _LogDecoder(schema, stats)
    run: list[tuple[str, LogBlock, bytes]] = []  # Avro data blocks of one schema waiting to be decoded
    run_bytes = 0
    for path, file_blocks in groupby(blocks, key=itemgetter(0)):
        in_file = [block for _, block in file_blocks]
        for block, content in zip(in_file, read_contents(storage, path, in_file), strict=True):
            joins = block.block_type in AVRO_BLOCK_TYPES and block.schema is not None
            if run and (not joins or block.schema != run[0][1].schema or run_bytes + len(content) > RUN_BYTES):
                decoder.decode_run(run)
                run, run_bytes = [], 0
            if joins:
                run.append((path, block, content))
                run_bytes += len(content)
            else:
                decoder.decode(path, block, content)
    decoder.decode_run(run)
    return decoder.tables, decoder.parts, decoder.schema


class _LogDecoder:
    """The decoded records of a slice's log blocks, appended in log order."""

    def __init__(self, schema: pa.Schema | None, stats: ReadStats) -> None:
        self.schema, self.stats = schema, stats
        self.tables: list[pa.Table] = []
        self.parts: list[LogPart] = []
        self.rows = 0

    def decode_run(self, run: Sequence[tuple[str, LogBlock, bytes]]) -> None:
        """Avro data blocks of one SCHEMA header: together if that applies, else one by one."""
        if len(run) > 1:
            self._infer_schema(run[0][1])
            together = decode_avro_blocks_together([b for _, b, _ in run], [c for _, _, c in run], self.schema)
            if together is not None:
                for (_, block, _), table in zip(run, together, strict=True):
                    self._add(block, table)
                return
        for path, block, content in run:
            self.decode(path, block, content)

    def decode(self, path: str, block: LogBlock, content: bytes) -> None:
        try:
            if block.block_type == BlockType.DELETE:
                deletes = tuple(decode_delete_records(content))
                self.stats.log_deletes += len(deletes)
                self.parts.append(LogPart(block.instant_time or "", self.rows, self.rows, deletes))
                return
            self._infer_schema(block)
            table = decode_data_block(block, content, self.schema)
        except BlockDecodeError as e:
            raise UndecodableBlockError(path, block.offset, block.block_type.name, str(e)) from e
        self._add(block, table)

    def _infer_schema(self, block: LogBlock) -> None:
        """The slice's schema from the first Avro block, when the caller gave none (a Parquet block has its own)."""
        if self.schema is None and block.schema is not None and block.block_type != BlockType.PARQUET_DATA:
            self.schema = arrow_schema_from_avro_json(block.schema)

    def _add(self, block: LogBlock, table: pa.Table) -> None:
        if self.schema is None:
            self.schema = table.schema
        self.stats.log_records += table.num_rows
        self.parts.append(LogPart(block.instant_time or "", self.rows, self.rows + table.num_rows))
        self.tables.append(table)
        self.rows += table.num_rows


def read_base_file(storage: Storage, path: str, columns: Sequence[str] | None = None) -> pa.Table:
    with base_file_errors(path), storage.open_arrow(path) as f:
        # one file, read whole: no dataset layer and no pre-buffering IO threads (much faster on small files)
        return pq.ParquetFile(f, pre_buffer=False).read(columns=list(columns) if columns else None)


@contextmanager
def base_file_errors(path: str) -> Iterator[None]:
    """Turn a failure to read the base file `path` into one CorruptFileError line naming it."""
    try:
        yield
    except (pa.ArrowException, OSError) as e:
        raise CorruptFileError(f"unreadable base file {path}: {first_line(e)}") from e


def read_slice_records(
    storage: Storage,
    base_path: str,
    base_file: str | None,
    log_files: Sequence[str],
    spec: MergeSpec,
    is_visible: Callable[[str], bool],
    stats: ReadStats | None = None,
    schema: pa.Schema | None = None,
) -> SliceRecords:
    """Decode one slice without merging. Paths are relative to `base_path`; logs must be in log order."""
    stats = stats if stats is not None else ReadStats()
    base = read_base_file(storage, posixpath.join(base_path, base_file)) if base_file else None
    if base is not None:
        schema = base.schema if schema is None else schema
        base = conform(base, schema)
    found: list[tuple[str, LogBlock]] = []
    for rel in log_files:
        path = posixpath.join(base_path, rel)
        found.extend((path, b) for b in read_blocks(storage, path))
    tables, parts, schema = decode_log_blocks(storage, visible_blocks(found, is_visible, stats), schema, stats)
    log_rows = pa.concat_tables([conform(t, schema) for t in tables]) if tables and schema is not None else None
    keys = record_key_array(log_rows, spec) if log_rows is not None else pa.array([], pa.string())
    return SliceRecords(schema, base, log_rows, parts, keys, spec)


def read_file_slice(
    storage: Storage,
    base_path: str,
    base_file: str | None,
    log_files: Sequence[str],
    spec: MergeSpec,
    is_visible: Callable[[str], bool],
    stats: ReadStats | None = None,
    schema: pa.Schema | None = None,
) -> pa.Table:
    """Merge one slice. Paths are relative to `base_path`; logs must be in log order."""
    records = read_slice_records(storage, base_path, base_file, log_files, spec, is_visible, stats, schema)
    return merge_slice(records, spec).table


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
