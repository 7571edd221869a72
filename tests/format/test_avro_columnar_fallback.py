"""Without polars (the `fast` extra, issue 29) Avro data blocks decode record by record, to the very tables the
columnar path gives with it.

polars is made absent by `without_polars()` (`import polars` then raises ImportError, as when it is not
installed). Rules tested:

- a block of a flat schema with enough records to go columnar (hypothesis: random flat schemas, 256-400
  records) decodes, through `decode_data_block`, to the same table with and without polars, and without it the
  columnar decoder declines at once;
- a run of such blocks: `decode_avro_blocks_together` declines without polars, and decoding each block alone
  then gives what the run's columnar read gives with polars;
- the encoder never needed polars: it writes the same bytes without it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_meta.format import avro_columnar
from hudi_meta.format.avro_columnar import MIN_DECODE_RECORDS, decode_flat_avro, encode_flat_avro
from hudi_meta.format.block_content import decode_avro_blocks_together, decode_data_block
from hudi_meta.format.log_block import BlockType, HeaderKey, LogBlock
from tests.format.test_avro_columnar import encode, equal, flat_schemas, oracle


@contextmanager
def without_polars() -> Iterator[None]:
    """`import polars` fails inside (a None entry in sys.modules makes the import raise ImportError)."""
    missing = object()
    saved = sys.modules.get("polars", missing)
    sys.modules["polars"] = None  # type: ignore[assignment]
    try:
        assert avro_columnar.polars_module() is None
        yield
    finally:
        if saved is missing:
            del sys.modules["polars"]
        else:
            sys.modules["polars"] = saved  # type: ignore[assignment]


@st.composite
def columnar_blocks(draw: st.DrawFn) -> tuple[str, bytes]:
    """(schema JSON, block content) of a random flat schema with enough records for the columnar path: a few
    drawn records repeated (drawing hundreds one by one would make each example slow)."""
    schema, records = draw(flat_schemas())
    some = draw(st.lists(records, min_size=1, max_size=8))
    copies = -(-draw(st.integers(MIN_DECODE_RECORDS, 400)) // len(some))
    return json.dumps(schema), encode(schema, some * copies)


def block(schema_json: str, content: bytes) -> LogBlock:
    return LogBlock(0, len(content), BlockType.AVRO_DATA, {HeaderKey.SCHEMA: schema_json})


@settings(max_examples=60, deadline=None)
@given(columnar_blocks())
def test_a_block_decodes_the_same_without_polars(case: tuple[str, bytes]) -> None:
    schema_json, content = case
    assert decode_flat_avro(content, schema_json) is not None  # with polars: the columnar path takes it
    fast = decode_data_block(block(schema_json, content), content)
    with without_polars():
        assert decode_flat_avro(content, schema_json) is None
        slow = decode_data_block(block(schema_json, content), content)
    assert equal(fast, slow) and equal(slow, oracle(content, schema_json))


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_a_run_of_blocks_decodes_the_same_one_by_one_without_polars(data: st.DataObject) -> None:
    schema, records = data.draw(flat_schemas())
    schema_json = json.dumps(schema)
    sizes = data.draw(st.lists(st.integers(0, 120), min_size=2, max_size=5).filter(lambda s: sum(s) >= 256))
    some = data.draw(st.lists(records, min_size=1, max_size=6))
    contents = [encode(schema, (some * (n // len(some) + 1))[:n]) for n in sizes]
    blocks = [block(schema_json, c) for c in contents]
    together = decode_avro_blocks_together(blocks, contents)
    assert together is not None
    with without_polars():
        assert decode_avro_blocks_together(blocks, contents) is None
        one_by_one = [decode_data_block(b, c) for b, c in zip(blocks, contents, strict=True)]
    assert len(together) == len(one_by_one)
    assert all(equal(a, b) for a, b in zip(together, one_by_one, strict=True))


def test_the_encoder_needs_no_polars() -> None:
    schema: dict[str, Any] = {
        "type": "record",
        "name": "rec",
        "fields": [{"name": "k", "type": "string"}, {"name": "v", "type": ["null", "double"]}],
    }
    table = pa.table({"k": [f"key{i}" for i in range(300)], "v": [float(i) if i % 3 else None for i in range(300)]})
    with_it = encode_flat_avro(table, json.dumps(schema))
    with without_polars():
        without_it = encode_flat_avro(table, json.dumps(schema))
    assert with_it is not None and with_it == without_it == encode(schema, table.to_pylist())
