"""Build log blocks of each type with exact framing and append them to log files.

Headers use ordinals 0..8 only, unless the caller passes `min_event_time` (the table opted into the
MIN_EVENT_TIME header, ordinal 9, which stock readers reject).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from hudi_meta.format.avro_arrow import arrow_to_avro_records
from hudi_meta.format.avro_columnar import encode_flat_avro
from hudi_meta.format.block_content import (
    DeleteRecord,
    encode_avro_records,
    encode_delete_records,
    encode_parquet,
)
from hudi_meta.format.log_block import ROLLBACK_COMMAND, BlockType, HeaderKey, encode_block
from hudi_meta.storage.base import Storage


@dataclass(frozen=True)
class EncodedBlock:
    """A framed block ready to append, with what the writer needs to report about it."""

    data: bytes
    block_type: BlockType
    record_count: int


def _data_header(instant: str | None, schema_json: str, min_event_time: int | None) -> dict[int, str]:
    header = (
        {HeaderKey.SCHEMA: schema_json}
        if instant is None
        else {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: schema_json}
    )
    if min_event_time is not None:
        header[HeaderKey.MIN_EVENT_TIME] = str(min_event_time)
    return {int(k): v for k, v in header.items()}


def avro_data_block(
    records: Sequence[dict[str, Any]], schema_json: str, instant: str | None, min_event_time: int | None = None
) -> EncodedBlock:
    """An Avro data block of `records`; `instant` None leaves the INSTANT_TIME header out (Java's archiver writes
    only the SCHEMA header)."""
    content = encode_avro_records(list(records), schema_json)
    header = _data_header(instant, schema_json, min_event_time)
    return EncodedBlock(encode_block(BlockType.AVRO_DATA, header, content), BlockType.AVRO_DATA, len(records))


def arrow_avro_data_block(
    table: pa.Table, schema_json: str, instant: str, min_event_time: int | None = None
) -> EncodedBlock:
    """An Avro data block of `table`'s rows: encoded column by column for flat schemas (byte for byte what the
    record-by-record encoder writes), record by record otherwise."""
    content = encode_flat_avro(table, schema_json)
    if content is None:
        content = encode_avro_records(arrow_to_avro_records(table), schema_json)
    header = _data_header(instant, schema_json, min_event_time)
    return EncodedBlock(encode_block(BlockType.AVRO_DATA, header, content), BlockType.AVRO_DATA, table.num_rows)


def parquet_data_block(
    table: pa.Table, schema_json: str, instant: str, min_event_time: int | None = None
) -> EncodedBlock:
    content = encode_parquet(table)
    header = _data_header(instant, schema_json, min_event_time)
    return EncodedBlock(encode_block(BlockType.PARQUET_DATA, header, content), BlockType.PARQUET_DATA, table.num_rows)


def delete_block(deletes: Sequence[DeleteRecord], instant: str, min_event_time: int | None = None) -> EncodedBlock:
    header = {int(HeaderKey.INSTANT_TIME): instant}
    if min_event_time is not None:
        header[int(HeaderKey.MIN_EVENT_TIME)] = str(min_event_time)
    content = encode_delete_records(list(deletes))
    return EncodedBlock(encode_block(BlockType.DELETE, header, content), BlockType.DELETE, len(deletes))


def rollback_block(rollback_instant: str, target_instant: str) -> EncodedBlock:
    """A command block that tells readers to ignore every block of `target_instant` before it."""
    header = {
        int(HeaderKey.INSTANT_TIME): rollback_instant,
        int(HeaderKey.TARGET_INSTANT_TIME): target_instant,
        int(HeaderKey.COMMAND_BLOCK_TYPE): ROLLBACK_COMMAND,
    }
    return EncodedBlock(encode_block(BlockType.COMMAND, header, b""), BlockType.COMMAND, 0)


def append_blocks(storage: Storage, path: str, blocks: Sequence[EncodedBlock]) -> list[int]:
    """Append `blocks` to the log file at `path` in one durable write; return each block's offset."""
    data = b"".join(b.data for b in blocks)
    start = storage.append(path, data)
    offsets = []
    pos = start
    for b in blocks:
        offsets.append(pos)
        pos += len(b.data)
    return offsets
