"""Arrow rows with maps and nested structs survive the trip into an Avro block and back."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from hudi_meta.format.avro_arrow import arrow_to_avro_record, arrow_to_avro_records
from hudi_meta.format.block_content import decode_data_block
from hudi_meta.format.log_reader import read_blocks, read_content
from hudi_meta.format.log_writer import avro_data_block
from hudi_meta.storage import LocalStorage


def test_map_and_struct_columns_round_trip(tmp_path: Path) -> None:
    table = pa.table(
        {
            "id": ["a", "b"],
            "tags": pa.array([[("k", 1.5)], None], pa.map_(pa.string(), pa.float64())),
            "nested": pa.array(
                [{"m": [("x", 1.0)], "n": 2}, None],
                pa.struct([("m", pa.map_(pa.string(), pa.float64())), ("n", pa.int64())]),
            ),
        }
    )
    schema_json = json.dumps(arrow_to_avro_record(table.schema, "r", "ns"))
    path = tmp_path / ".f-0_20260101000000000.log.1_1-0-1"
    path.write_bytes(avro_data_block(arrow_to_avro_records(table), schema_json, "20260101000000000").data)
    storage = LocalStorage()
    (block,) = read_blocks(storage, str(path))
    decoded = decode_data_block(block, read_content(storage, str(path), block), table.schema)
    assert decoded.to_pylist() == table.to_pylist()
