"""The Parquet files we write (issue 15: dictionary encoding only where values repeat).

Rules tested, from the module's contract, each checked in the written file itself (pyarrow's reader and the
column chunks' metadata), not in what the module computes:

- whatever the table (flat and nested types, nulls, any repetition), the file reads back equal to it, with the
  same schema, and is snappy-compressed;
- a flat column whose sampled values are mostly distinct (a record key, a sequence number) has no dictionary
  page; one whose values repeat (also only next to each other, as in sorted data) has one; every leaf of a
  nested column keeps its dictionary;
- the leaf paths match the file's own column paths for every nesting (structs, lists, maps), also where a
  field name holds a dot.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_meta.format.parquet_file import SAMPLE_ROWS, _leaf_paths, encode_parquet

FLAT_TYPES = [pa.string(), pa.int64(), pa.int32(), pa.float64(), pa.bool_(), pa.binary(), pa.date32()]
NESTED_TYPES = [
    pa.struct([("x", pa.int32()), ("y", pa.list_(pa.string()))]),
    pa.list_(pa.int64()),
    pa.map_(pa.string(), pa.int64()),
]


def _chunks(content: bytes) -> dict[str, pq.ColumnChunkMetaData]:
    """Each leaf column path's chunk in the first row group."""
    meta = pq.ParquetFile(pa.BufferReader(content)).metadata
    group = meta.row_group(0)
    return {group.column(i).path_in_schema: group.column(i) for i in range(group.num_columns)}


def _value(data_type: pa.DataType, i: int) -> object:
    if pa.types.is_string(data_type):
        return f"v{i}"
    if pa.types.is_binary(data_type):
        return f"v{i}".encode()
    if pa.types.is_boolean(data_type):
        return i % 2 == 0
    if pa.types.is_floating(data_type):
        return i / 7
    if pa.types.is_struct(data_type):
        return {"x": i, "y": [f"s{i}", f"s{i % 3}"]}
    if pa.types.is_map(data_type):
        return [(f"k{i % 4}", i)]
    if pa.types.is_list(data_type):
        return [i, i % 5]
    return i


@st.composite
def tables(draw: st.DrawFn) -> pa.Table:
    rows = draw(st.integers(0, 300))
    columns = {}
    for j in range(draw(st.integers(1, 5))):
        data_type = draw(st.sampled_from(FLAT_TYPES + NESTED_TYPES))
        distinct = draw(st.integers(1, max(1, rows)))
        nulls = draw(st.booleans())
        values = [
            None if nulls and draw(st.integers(0, 4)) == 0 else _value(data_type, draw(st.integers(0, distinct - 1)))
            for _ in range(rows)
        ]
        columns[f"c{j}" if j % 2 else f"c.{j}"] = pa.array(values, data_type)
    return pa.table(columns)


@settings(max_examples=60, deadline=None)
@given(tables())
def test_any_table_reads_back_equal(table: pa.Table) -> None:
    content = encode_parquet(table)
    back = pq.read_table(pa.BufferReader(content))
    assert back.schema == table.schema
    assert back.equals(table)
    assert {c.compression for c in _chunks(content).values()} <= {"SNAPPY"}


def test_mostly_distinct_columns_are_written_plain_and_repeating_ones_with_a_dictionary() -> None:
    n = 3 * SAMPLE_ROWS + 17  # more rows than the sample: the sample is spread over them
    table = pa.table(
        {
            "_hoodie_record_key": [f"key-{i:08d}" for i in range(n)],
            "_hoodie_commit_seqno": [f"20261125000000000_0_{i}" for i in range(n)],
            "_hoodie_partition_path": ["region=eu"] * n,
            "ts": list(range(n)),
            "region": [("eu", "us", "ap")[i % 3] for i in range(n)],
            "thrice": [i // 3 for i in range(n)],  # each value three times in a row: worth a dictionary
            "tags": [[f"t{i % 3}"] for i in range(n)],
        }
    )
    chunks = _chunks(encode_parquet(table))
    plain = {"_hoodie_record_key", "_hoodie_commit_seqno", "ts"}
    assert {path for path, c in chunks.items() if not c.has_dictionary_page} == plain
    assert chunks["tags.list.element"].has_dictionary_page


def test_a_file_of_mostly_distinct_values_is_smaller_without_their_dictionaries() -> None:
    n = 20_000
    table = pa.table({"key": [f"key-{i:08d}" for i in range(n)], "seq": [f"0_{i}" for i in range(n)]})
    everything = pa.BufferOutputStream()
    pq.write_table(table, everything, compression="snappy")  # pyarrow's default: a dictionary for every column
    assert len(encode_parquet(table)) < everything.getvalue().size


def test_leaf_paths_are_the_files_column_paths() -> None:
    schema = pa.schema(
        [
            ("a", pa.string()),
            ("a.b", pa.int32()),  # a dot in a top-level name: not a leaf of "a"
            ("s", pa.struct([("x", pa.int32()), ("y", pa.list_(pa.string()))])),
            ("m", pa.map_(pa.string(), pa.struct([("p", pa.int8()), ("q", pa.string())]))),
            ("f", pa.list_(pa.int8(), 2)),
            ("n", pa.null()),
        ]
    )
    sink = pa.BufferOutputStream()
    pq.write_table(schema.empty_table(), sink)
    file_paths = list(_chunks_of_empty(sink.getvalue()))
    leaves = {field.name: paths for field, paths in _leaf_paths(schema)}
    assert [p for paths in leaves.values() for p in paths] == file_paths
    assert leaves["a"] == ("a",) and leaves["a.b"] == ("a.b",)
    assert leaves["m"] == ("m.key_value.key", "m.key_value.value.p", "m.key_value.value.q")


def _chunks_of_empty(content: pa.Buffer) -> list[str]:
    schema = pq.ParquetFile(pa.BufferReader(content)).schema
    return [schema.column(i).path for i in range(len(schema))]
