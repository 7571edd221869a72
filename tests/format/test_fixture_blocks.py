"""Every log block of every Java-written fixture table decodes: header, type and content."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudi_meta.format.block_content import decode_data_block, decode_delete_records
from hudi_meta.format.file_names import LogFileName
from hudi_meta.format.log_block import BlockType, HeaderKey
from hudi_meta.format.log_reader import read_blocks, read_content
from hudi_meta.storage import LocalStorage
from tests.conftest import table_id, table_zips


def data_log_files(base: Path) -> list[Path]:
    """Log files of the data table (the metadata table under .hoodie/ holds HFile blocks)."""
    return sorted(p for p in base.rglob(".*") if LogFileName.try_parse(p.name) and ".hoodie" not in p.parts)


@pytest.mark.parametrize("archive", table_zips(), ids=table_id)
def test_every_block_decodes(archive: Path, fixture_table: Any) -> None:
    storage = LocalStorage()
    for path in data_log_files(fixture_table(archive)):
        blocks = read_blocks(storage, str(path))
        assert blocks and sum(b.length for b in blocks) == path.stat().st_size
        for block in blocks:
            assert block.block_type != BlockType.CORRUPT, path
            assert block.instant_time is not None and len(block.instant_time) == 17
            content = read_content(storage, str(path), block)
            if block.block_type == BlockType.DELETE:
                assert decode_delete_records(content)
            elif block.block_type == BlockType.COMMAND:
                assert block.is_rollback and block.header[HeaderKey.TARGET_INSTANT_TIME]
            else:
                assert decode_data_block(block, content).num_rows > 0


def test_metadata_table_block_headers_decode(fixture_table: Any) -> None:
    """Metadata-table logs (HFile content, not decoded here) still frame and scan cleanly."""
    storage = LocalStorage()
    scanned = 0
    for archive in table_zips():
        base = fixture_table(archive)
        for path in sorted((base / ".hoodie" / "metadata").rglob(".*.log.*")):
            for block in read_blocks(storage, str(path)):
                assert block.block_type != BlockType.CORRUPT
                scanned += 1
    assert scanned > 0
