"""How we write Parquet files (base files, and the content of Parquet log blocks): snappy, and dictionary
encoding only for the columns whose values repeat.

Parquet writers (pyarrow's, like Java's parquet-mr) build a dictionary for every column and fall back to plain
encoding once it outgrows its page. A Hudi file always has mostly distinct columns: the record key, twice
(`_hoodie_record_key` and its field), and `_hoodie_commit_seqno`; often event times and amounts too. Building
their dictionaries only to drop them was about half the time of writing a base file, and made larger files
(bench_ingest prints the write time). Readers see no difference: the encoding is per column chunk.

The footer holds the schema's metadata (Hudi's bloom filter and key range, `parquet.avro.schema`) as key-value
entries, as Java's writer leaves them, but no `ARROW:schema` entry: pyarrow's copy of the schema repeats that
metadata, the bloom filter included (about 430 KB a file), and Hudi's readers take the schema from the Parquet
types and `parquet.avro.schema`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

SAMPLE_RUNS, RUN_ROWS = 8, 128  # a column's repetition is judged on 8 runs of 128 consecutive rows, spread evenly
SAMPLE_ROWS = SAMPLE_RUNS * RUN_ROWS


def encode_parquet(table: pa.Table) -> bytes:
    """`table` as a whole Parquet file in memory (`parquet_writer`)."""
    sink = pa.BufferOutputStream()
    with parquet_writer(sink, table.schema, table) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


@contextmanager
def parquet_writer(sink: Any, schema: pa.Schema, sample: pa.Table) -> Iterator[pq.ParquetWriter]:
    """A Parquet writer of `schema` into `sink` (`write_options` judged on `sample`) that puts the schema's
    metadata in the footer as key-value entries when the file is complete."""
    with pq.ParquetWriter(sink, schema, **write_options(sample)) as writer:
        yield writer
        if schema.metadata:
            writer.add_key_value_metadata(schema.metadata)


def write_options(sample: pa.Table) -> dict[str, Any]:
    """Keyword arguments of `pq.write_table` / `pq.ParquetWriter` for a file whose rows are like `sample`'s
    (the file's own rows, or its first batch when it is written as a stream); no `ARROW:schema` (module doc)."""
    return {"compression": "snappy", "use_dictionary": dictionary_columns(sample), "store_schema": False}


def dictionary_columns(sample: pa.Table) -> list[str]:
    """The leaf column paths to dictionary encode: all leaves of a nested column; a flat column when at most
    half of its sampled values are distinct (nulls aside). The sample is the whole table up to `SAMPLE_ROWS`
    rows, else `SAMPLE_RUNS` runs of consecutive rows spread over it: counting a whole column's distinct
    values costs most of what skipping its dictionary saves."""
    n = sample.num_rows
    picked = None
    if n > SAMPLE_ROWS:  # runs, so that values repeated next to each other (sorted data) are seen repeating
        starts = np.linspace(0, n - RUN_ROWS, SAMPLE_RUNS, dtype=np.int64)
        picked = pa.array((starts[:, None] + np.arange(RUN_ROWS)).ravel())
    chosen: list[str] = []
    for field, leaves in _leaf_paths(sample.schema):
        if pa.types.is_nested(field.type):
            chosen.extend(leaves)
            continue
        column = sample.column(field.name)
        values = column.take(picked) if picked is not None else column
        present = len(values) - values.null_count
        if 2 * pc.count_distinct(values).as_py() <= present:
            chosen.extend(leaves)
    return chosen


@lru_cache(maxsize=64)
def _leaf_paths(schema: pa.Schema) -> tuple[tuple[pa.Field, tuple[str, ...]], ...]:
    """Each top-level field with the Parquet paths of its leaf columns ("s.x", "l.list.element"), as the
    writer names them: those of an empty file written with `schema`, whose leaves come field after field."""
    sink = pa.BufferOutputStream()
    pq.write_table(schema.empty_table(), sink)
    parquet_schema = pq.ParquetFile(pa.BufferReader(sink.getvalue())).schema
    paths = [parquet_schema.column(i).path for i in range(len(parquet_schema))]
    out, start = [], 0
    for field in schema:
        count = _leaf_count(field.type)
        out.append((field, tuple(paths[start : start + count])))
        start += count
    assert start == len(paths), (start, len(paths))
    return tuple(out)


def _leaf_count(data_type: pa.DataType) -> int:
    if pa.types.is_map(data_type):
        return _leaf_count(data_type.key_type) + _leaf_count(data_type.item_type)
    if pa.types.is_struct(data_type):
        return sum(_leaf_count(data_type.field(i).type) for i in range(data_type.num_fields))
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type) or pa.types.is_fixed_size_list(data_type):
        return _leaf_count(data_type.value_type)
    return 1
