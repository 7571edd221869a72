"""MDT records as Java writes them: Avro datums in the metadata record schema inside HFiles (a partition's base
file, and the content of HFILE_DATA log blocks), and removed keys in DELETE blocks.

The writer schema is `HoodieMetadataRecord` with the five `_hoodie_*` meta fields in front
(`HoodieAvroUtils.addMetadataFields`), all null; the `key` field is written as "" because the HFile cell row holds
the key (HUDI-2763). A file group whose base file already names a schema gets its log blocks in that very schema:
hudi-rs decodes log values with the base file's schema, so they must be byte-compatible with it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

import fastavro

from hudi_meta.format.avro_container import load_schema
from hudi_meta.format.block_content import DeleteRecord, encode_delete_records, parsed_schema
from hudi_meta.format.hfile import MAX_RECORD_KEY, MIN_RECORD_KEY, SCHEMA_KEY, write_hfile
from hudi_meta.format.log_block import BlockType, HeaderKey, encode_block
from hudi_meta.format.log_writer import EncodedBlock, delete_block
from hudi_meta.metadata.record import MetadataRecord
from hudi_meta.write.writer import META_COLUMNS

META_FIELDS = META_COLUMNS  # the `_hoodie_*` fields, null in every MDT record


def record_schema_json() -> str:
    """`HoodieMetadataRecord` alone: what an MDT commit records as its `schema` extra metadata."""
    return json.dumps(load_schema("HoodieMetadata"), separators=(",", ":"))


def writer_schema_json() -> str:
    """The schema MDT datums are written in: the record schema with the meta fields in front."""
    schema = load_schema("HoodieMetadata")
    meta = [{"name": n, "type": ["null", "string"], "doc": "", "default": None} for n in META_FIELDS]
    schema["fields"] = meta + [f for f in schema["fields"] if f["name"] not in META_FIELDS]
    return json.dumps(schema, separators=(",", ":"))


def _datum(record: MetadataRecord, schema: Any) -> bytes:
    assert record.payload is not None
    value = {name: None for name in META_FIELDS} | dict(record.payload) | {"key": ""}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, schema, value)
    return buf.getvalue()


def sorted_upserts(records: Sequence[MetadataRecord]) -> list[MetadataRecord]:
    """The records in HFile order (unsigned UTF-8 bytes, what Java's TreeMap<String> gives for the keys Hudi
    writes). Raises ValueError for a key given twice: an HFile holds a key once, and Java refuses the same."""
    ordered = sorted(records, key=lambda r: r.key.encode("utf-8"))
    for a, b in zip(ordered, ordered[1:], strict=False):
        if a.key == b.key:
            raise ValueError(f"MDT partition {a.partition}: key {a.key!r} given twice in one commit")
    return ordered


def hfile_bytes(records: Sequence[MetadataRecord], schema_json: str, base_file: bool) -> bytes:
    """An HFile of `records` (upserts only) in `schema_json`; a base file also carries its key range
    (`HoodieAvroHFileWriter.close`)."""
    ordered = sorted_upserts(records)
    schema = parsed_schema(schema_json)
    info = {SCHEMA_KEY: schema_json.encode("utf-8")}
    if base_file and ordered:
        info[MIN_RECORD_KEY] = ordered[0].key.encode("utf-8")
        info[MAX_RECORD_KEY] = ordered[-1].key.encode("utf-8")
    return write_hfile(((r.key, _datum(r, schema)) for r in ordered), file_info=info)


def hfile_data_block(records: Sequence[MetadataRecord], schema_json: str, instant: str) -> EncodedBlock:
    """An HFILE_DATA log block: header INSTANT_TIME and SCHEMA, content the HFile (`HoodieHFileDataBlock`)."""
    header = {int(HeaderKey.INSTANT_TIME): instant, int(HeaderKey.SCHEMA): schema_json}
    content = hfile_bytes(records, schema_json, base_file=False)
    return EncodedBlock(encode_block(BlockType.HFILE_DATA, header, content), BlockType.HFILE_DATA, len(records))


def mdt_delete_block(records: Sequence[MetadataRecord], schema_json: str, instant: str) -> EncodedBlock:
    """A DELETE block of removed keys, each with the MDT partition as its partition path and natural order
    (IntWrapper 0), header INSTANT_TIME and SCHEMA (what Java writes for record-index and secondary-index
    removals)."""
    deletes = [DeleteRecord(r.key, r.partition, 0) for r in sorted(records, key=lambda r: r.key.encode("utf-8"))]
    header = {int(HeaderKey.INSTANT_TIME): instant, int(HeaderKey.SCHEMA): schema_json}
    data = encode_block(BlockType.DELETE, header, encode_delete_records(deletes))
    return EncodedBlock(data, BlockType.DELETE, len(deletes))


def empty_delete_block(instant: str) -> EncodedBlock:
    """The block every MDT file group starts with: an empty DELETE block, header INSTANT_TIME only
    (`HoodieBackedTableMetadataWriter.initializeFileGroups`; byte for byte the fixtures' 80-byte files)."""
    return delete_block([], instant)
