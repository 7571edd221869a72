"""The new base file of a plain compaction, with the old base file read batch by batch.

A plain (not exact) compaction of a slice whose log files left after it (the rest) hold none of its keys puts,
per key, the merge of base + L1..Lk in the new base file and carries nothing (compaction/layout.py: the first
candidate always keeps the snapshot). That is `LogMerge`: the log records are folded once, then the base
file's batches merge against them in file order, and each batch's kept rows are written before the next
batch is read. Memory holds the log records and one batch, not the base file whole (on local disk the new
file is written as it goes: `Storage.create_atomic_stream`).

It gives up (returns None) when a key of the rest turns up in the base file or the base file holds a key
twice (hashes of every key are kept to see that); the caller then lays the slice out whole, which decides
those keys one by one. The hashes live for one call and are never persisted (so polars, which computes them
fastest, is optional: `_hash`).
"""

from __future__ import annotations

import itertools
import posixpath
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_meta.compaction.layout import FILE_NAME_COLUMN
from hudi_meta.file_group.merge.records import LogMerge, SliceRecords
from hudi_meta.file_group.merge.rules import MergeSpec
from hudi_meta.file_group.reader import base_file_errors
from hudi_meta.file_group.record_keys import drop_soft_deleted, record_key_array
from hudi_meta.format.avro_columnar import polars_module
from hudi_meta.format.block_content import conform
from hudi_meta.format.parquet_file import parquet_writer
from hudi_meta.storage import Storage

BATCH_ROWS = 65_536


def stream_new_base_file(
    storage: Storage,
    base_file: str,
    logs: SliceRecords,
    rest: SliceRecords | None,
    spec: MergeSpec,
    path: str,
) -> int | None:
    """Write the new base file `path` merging `base_file` with `logs` (L1..Lk, decoded in the base file's
    schema) and return its record count, or create nothing and return None (see the module doc)."""
    schema = logs.schema
    assert schema is not None
    held_by_rest = pc.unique(rest.all_log_keys()) if rest is not None else pa.array([], pa.string())
    if len(held_by_rest) and pc.any(pc.is_in(logs.all_log_keys(), value_set=held_by_rest)).as_py():
        return None
    merge = LogMerge(logs, spec)
    name = posixpath.basename(path)
    hashes: list[np.ndarray] = []
    written = 0
    batches = _batches(storage, base_file, schema)
    head = list(itertools.islice(batches, 1))  # the writer's options are judged on the first batch
    sample = head[0] if head else schema.empty_table()
    try:
        with storage.create_atomic_stream(path) as out, parquet_writer(out, schema, sample) as writer:
            for base in itertools.chain(head, batches):
                keys = record_key_array(base, spec)
                if len(held_by_rest) and pc.any(pc.is_in(keys, value_set=held_by_rest)).as_py():
                    raise _GiveUp
                hashes.append(_hash(keys))
                written += _write(writer, base.filter(merge.merge_base(base, keys=keys)), name)
            if _repeats(hashes):
                raise _GiveUp
            if logs.log_rows is not None:
                written += _write(writer, logs.log_rows.take(merge.log_rows()), name)
    except _GiveUp:
        return None
    return written


class _GiveUp(Exception):
    """Raised inside the file being written so that it is not created."""


def _batches(storage: Storage, path: str, schema: pa.Schema) -> Iterator[pa.Table]:
    """The base file's records, batch after batch (read errors name the file; the caller's are its own)."""
    with base_file_errors(path), storage.open_arrow(path) as f:
        for batch in pq.ParquetFile(f, pre_buffer=False).iter_batches(batch_size=BATCH_ROWS):
            yield conform(pa.Table.from_batches([batch]), schema)


def with_file_name(records: pa.Table, name: str) -> pa.Table:
    """`records` as the base file `name` holds them: `_hoodie_file_name` says where a record sits."""
    if FILE_NAME_COLUMN not in records.column_names:
        return records
    i = records.column_names.index(FILE_NAME_COLUMN)
    return records.set_column(i, FILE_NAME_COLUMN, pa.array([name] * records.num_rows, pa.string()))


def _write(writer: pq.ParquetWriter, records: pa.Table, name: str) -> int:
    records = with_file_name(drop_soft_deleted(records), name)
    if records.num_rows:
        writer.write_table(records)
    return int(records.num_rows)


def _hash(keys: pa.Array) -> np.ndarray:
    """A 64-bit hash of each key, only ever compared with the other hashes of one call (`_repeats`): never
    stored, so any good 64-bit hash will do and the two below need not agree. polars' is vectorised (pyarrow has
    none; polars is the `fast` extra); without it, Python's own string hash (SipHash, 64 bits, fixed within a
    process), about 4x slower (bench/bench_polars.py)."""
    pl = polars_module()
    if pl is None:
        return np.fromiter(map(hash, keys.to_pylist()), np.int64, len(keys)).view(np.uint64)
    hashed: np.ndarray = pl.Series(keys).hash(seed=0).to_numpy()
    return hashed


def _repeats(hashes: list[np.ndarray]) -> bool:
    """Whether two keys share a hash: a key held twice (or, rarely, a collision: both mean "lay out whole").
    Sorted in place, compared with the neighbour: no copies but the one concatenation (8 bytes a key)."""
    every = np.concatenate(hashes) if hashes else np.array([], np.uint64)
    hashes.clear()
    every.sort()
    return bool(np.any(every[1:] == every[:-1]))
