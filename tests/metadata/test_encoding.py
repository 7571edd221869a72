"""MDT log blocks as Java writes them (hudi_meta/metadata/encoding.py), checked byte for byte against every log
block of the Java-written fixtures' metadata tables: the records of each block decoded, then encoded again by us."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from hudi_meta.format.block_content import decode_delete_records, decode_hfile_records
from hudi_meta.format.log_block import BlockType, LogBlock
from hudi_meta.format.log_reader import read_blocks, read_contents, scan_blocks
from hudi_meta.metadata.encoding import hfile_bytes, hfile_data_block, mdt_delete_block
from hudi_meta.metadata.record import MetadataRecord
from hudi_meta.storage import storage_for
from tests.conftest import table_id
from tests.table.test_metadata_table import MDT_ZIPS

# Hudi 1.0 (table version 8) writes HFiles with HBase's writer, which ours reproduces; 1.1's native writer differs
# on purpose (docs/hfile.md). Column and partition stats re-encode differently only because decoding drops the
# union branch names of their min/max wrappers, which their records (another module) carry.
EXACT_PARTITIONS = ("files", "record_index")


def mdt_blocks(base: Path, kind: BlockType) -> list[tuple[str, LogBlock, bytes]]:
    """(MDT partition, block, content) of every block of `kind` in the table's metadata table log files."""
    storage, _ = storage_for(str(base))
    out = []
    for log in sorted((base / ".hoodie/metadata").glob("*/.*.log.*")):
        blocks = [b for b in read_blocks(storage, str(log)) if b.block_type == kind]
        out += [(log.parent.name, b, c) for b, c in zip(blocks, read_contents(storage, str(log), blocks), strict=True)]
    return out


@pytest.mark.parametrize("archive", [z for z in MDT_ZIPS if "/v8_" in str(z)], ids=table_id)
def test_hfile_blocks_are_javas(archive: Path, fixture_table) -> None:  # type: ignore[no-untyped-def]
    found = 0
    for partition, block, content in mdt_blocks(fixture_table(archive), BlockType.HFILE_DATA):
        if partition not in EXACT_PARTITIONS:
            continue
        assert block.schema is not None and block.instant_time is not None
        records = [MetadataRecord(partition, r.key, r.record) for r in decode_hfile_records(content, block.schema)]
        assert hfile_bytes(records, block.schema, base_file=False) == content
        ours = hfile_data_block(records, block.schema, block.instant_time).data
        (framed,) = scan_blocks(io.BytesIO(ours), len(ours), 0, "ours")
        assert dict(framed.header) == dict(block.header)  # same entries (Java's order follows a HashMap)
        found += 1
    assert found >= 10


@pytest.mark.parametrize("archive", MDT_ZIPS, ids=table_id)
def test_delete_blocks_are_javas(archive: Path, fixture_table) -> None:  # type: ignore[no-untyped-def]
    for partition, block, content in mdt_blocks(fixture_table(archive), BlockType.DELETE):
        deletes = decode_delete_records(content)
        if not deletes:  # a file group's empty first block: tests/metadata/test_writer.py
            continue
        assert all(d.partition_path == partition and d.is_natural_order for d in deletes)
        records = [MetadataRecord(partition, d.record_key, None) for d in deletes]
        ours = mdt_delete_block(records, block.schema or "", block.instant_time or "").data
        (framed,) = scan_blocks(io.BytesIO(ours), len(ours), 0, "ours")
        assert ours[framed.content_offset : framed.content_offset + framed.content_length] == content
