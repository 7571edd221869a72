"""The stateless file-group reader: one file slice (base file + log files) in, one Arrow table out.

Merge rules, as Hudi's log scanner applies them:
- blocks are read in log order; a rollback command block drops every earlier block of its target instant;
- blocks of instants the caller does not see as committed (or after a time-travel point) are skipped;
- records merge by record key on the ordering field: the larger value wins, ties go to the later record;
- a delete with no ordering value (Java writes 0, "natural order") always wins; otherwise by ordering;
- corrupt blocks are skipped (and counted).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_meta.errors import CorruptFileError
from hudi_meta.format.avro_arrow import arrow_schema_from_avro_json
from hudi_meta.format.block_content import (
    BlockDecodeError,
    conform,
    decode_data_block,
    decode_delete_records,
)
from hudi_meta.format.log_block import BlockType, LogBlock
from hudi_meta.format.log_reader import read_blocks, read_content
from hudi_meta.storage.base import Storage

RECORD_KEY_COLUMN = "_hoodie_record_key"


@dataclass(frozen=True)
class MergeSpec:
    """What the reader needs to know about the table to merge records."""

    record_key_fields: tuple[str, ...]
    ordering_field: str | None
    populate_meta_fields: bool = True
    complex_key: bool = False


@dataclass
class ReadStats:
    """Counters a read reports (compaction write stats reuse them)."""

    log_blocks: int = 0
    corrupt_blocks: int = 0
    rollback_blocks: int = 0
    log_records: int = 0
    skipped_blocks: int = 0


@dataclass
class _Entry:
    ordering: Any
    row: int | None  # index into the concatenated log rows; None for a delete


@dataclass
class _LogState:
    tables: list[pa.Table] = field(default_factory=list)
    rows: int = 0
    entries: dict[str, _Entry] = field(default_factory=dict)


def record_keys(table: pa.Table, spec: MergeSpec, use_meta_column: bool = True) -> list[str]:
    """Record keys of `table`: the meta column, or built from the key fields as the key generators do."""
    if use_meta_column and spec.populate_meta_fields and RECORD_KEY_COLUMN in table.column_names:
        return [str(k) for k in table.column(RECORD_KEY_COLUMN).to_pylist()]
    columns = [table.column(f).to_pylist() for f in spec.record_key_fields]
    if not spec.complex_key and len(columns) == 1:
        return [str(v) for v in columns[0]]
    return [
        ",".join(f"{name}:{value}" for name, value in zip(spec.record_key_fields, values, strict=True))
        for values in zip(*columns, strict=True)
    ]


def _ordering_values(table: pa.Table, spec: MergeSpec) -> list[Any]:
    if spec.ordering_field and spec.ordering_field in table.column_names:
        return list(table.column(spec.ordering_field).to_pylist())
    return [None] * table.num_rows


def _newer_wins(new: Any, old: Any) -> bool:
    """True if a later record with ordering `new` replaces one with `old` (ties: the later one)."""
    if new is None or old is None:
        return True
    try:
        return bool(new >= old)
    except TypeError:
        return True


def _delete_wins(ordering: Any, old: Any) -> bool:
    natural = ordering is None or (isinstance(ordering, int) and not isinstance(ordering, bool) and ordering == 0)
    return natural or _newer_wins(ordering, old)


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


def _merge_logs(
    storage: Storage,
    blocks: Sequence[tuple[str, LogBlock]],
    schema: pa.Schema | None,
    spec: MergeSpec,
    stats: ReadStats,
) -> tuple[_LogState, pa.Schema | None]:
    state = _LogState()
    for path, block in blocks:
        try:
            content = read_content(storage, path, block)
            if block.block_type == BlockType.DELETE:
                for d in decode_delete_records(content):
                    old = state.entries.get(d.record_key)
                    if old is None or _delete_wins(d.ordering_value, old.ordering):
                        state.entries[d.record_key] = _Entry(d.ordering_value, None)
                continue
            if schema is None and block.schema is not None and block.block_type != BlockType.PARQUET_DATA:
                schema = arrow_schema_from_avro_json(block.schema)
            table = decode_data_block(block, content, schema)
        except BlockDecodeError:
            stats.corrupt_blocks += 1
            continue
        if schema is None:
            schema = table.schema
        stats.log_records += table.num_rows
        for i, (key, ordering) in enumerate(zip(record_keys(table, spec), _ordering_values(table, spec), strict=True)):
            old = state.entries.get(key)
            if old is None or _newer_wins(ordering, old.ordering):
                state.entries[key] = _Entry(ordering, state.rows + i)
        state.tables.append(table)
        state.rows += table.num_rows
    return state, schema


def read_base_file(storage: Storage, path: str, columns: Sequence[str] | None = None) -> pa.Table:
    try:
        with storage.open_read(path) as f:
            return pq.read_table(f, columns=list(columns) if columns else None)
    except (pa.ArrowException, OSError) as e:
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CorruptFileError(f"unreadable base file {path}: {first_line}") from e


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
    stats = stats if stats is not None else ReadStats()
    base = read_base_file(storage, posixpath.join(base_path, base_file)) if base_file else None
    if base is not None:
        schema = base.schema if schema is None else schema
        base = conform(base, schema)
    found: list[tuple[str, LogBlock]] = []
    for rel in log_files:
        path = posixpath.join(base_path, rel)
        found.extend((path, b) for b in read_blocks(storage, path))
    state, schema = _merge_logs(storage, visible_blocks(found, is_visible, stats), schema, spec, stats)
    if schema is None:
        return pa.table({})
    return _apply(base, state, schema, spec)


def _apply(base: pa.Table | None, state: _LogState, schema: pa.Schema, spec: MergeSpec) -> pa.Table:
    entries = state.entries
    keep_base = pa.array([], type=pa.bool_())
    if base is not None and base.num_rows:
        keys = record_keys(base, spec)
        candidates = pc.is_in(pa.array(keys, type=pa.string()), value_set=pa.array(list(entries), type=pa.string()))
        keep = [True] * base.num_rows
        orderings = _ordering_values(base, spec)
        for i in pc.indices_nonzero(candidates).to_pylist():
            entry = entries[keys[i]]
            wins = (
                _delete_wins(entry.ordering, orderings[i])
                if entry.row is None
                else _newer_wins(entry.ordering, orderings[i])
            )
            if wins:
                keep[i] = False
            else:
                entries.pop(keys[i])  # the base record is newer: the log record is dropped
        keep_base = pa.array(keep, type=pa.bool_())
    rows = sorted(e.row for e in entries.values() if e.row is not None)
    parts = []
    if base is not None:
        parts.append(base.filter(keep_base) if base.num_rows else base)
    if rows:
        logs = pa.concat_tables([conform(t, schema) for t in state.tables])
        parts.append(logs.take(pa.array(rows, type=pa.int64())))
    if not parts:
        return schema.empty_table()
    return pa.concat_tables(parts)
