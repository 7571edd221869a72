"""Scan a log file block by block, reading headers only, and detect corrupt or torn blocks as Java does.

A block is corrupt when its size field runs past the end of the file, its reverse pointer does not match,
or the bytes right after it are neither a magic nor the end of the file. The reader then scans forward
for the next magic and reports the bytes in between as one CORRUPT block, and goes on from there.
Each CORRUPT block is logged at WARNING (file, offset, length, reason): readers skip it, so its records are gone.

Only framing is checked here. A block with valid framing whose content cannot be decoded is not corrupt: its
decoder raises BlockDecodeError and readers stop with an UndecodableBlockError (see block_content).
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterator
from typing import BinaryIO

from hudi_meta.format.log_block import MAGIC, BlockType, LogBlock, decode_header
from hudi_meta.storage.base import Storage

log = logging.getLogger(__name__)

SCAN_WINDOW = 1 << 20
_MIN_BLOCK_SIZE = 4 + 4 + 4 + 8 + 4 + 8  # version, type, empty header, content length, empty footer, pointer
_HEADER_CHUNK = 16 * 1024


class _File:
    """A seekable file of known size with exact-read helpers."""

    def __init__(self, f: BinaryIO, size: int) -> None:
        self.f = f
        self.size = size

    def read_at(self, offset: int, length: int) -> bytes:
        self.f.seek(offset)
        return self.f.read(length)

    def find_magic(self, start: int) -> int:
        """Offset of the next magic at or after `start`, or the file size if there is none."""
        pos = start
        while pos < self.size:
            window = self.read_at(pos, SCAN_WINDOW + len(MAGIC) - 1)
            hit = window.find(MAGIC)
            if hit >= 0:
                return pos + hit
            pos += SCAN_WINDOW
        return self.size


def _corrupt(offset: int, end: int) -> LogBlock:
    return LogBlock(offset=offset, length=end - offset, block_type=BlockType.CORRUPT)


def _read_block(file: _File, pos: int) -> LogBlock | str:
    """The valid block starting at `pos`, or why the bytes there do not form one."""
    head = file.read_at(pos, len(MAGIC) + 8)
    if head[: len(MAGIC)] != MAGIC:
        return "no magic at the block start"
    if len(head) < len(MAGIC) + 8:
        return "file ends inside the block size"
    (block_size,) = struct.unpack_from(">q", head, len(MAGIC))
    body_start = pos + len(MAGIC) + 8
    block_end = body_start + block_size
    if block_size < _MIN_BLOCK_SIZE:
        return f"block size {block_size} too small"
    if block_end > file.size:
        return f"block size {block_size} runs past the end of the file"
    tail = file.read_at(block_end - 8, 8 + len(MAGIC))
    (reverse_pointer,) = struct.unpack_from(">q", tail, 0)
    if reverse_pointer != block_size + len(MAGIC):
        return f"reverse pointer {reverse_pointer} does not match block size {block_size}"
    # Java reads the next magic with readFully: fewer than 6 bytes left counts as the end of the file.
    if file.size - block_end >= len(MAGIC) and tail[8:] != MAGIC:
        return "no magic after the block"

    chunk = file.read_at(body_start, min(block_size, _HEADER_CHUNK))
    try:
        return _parse_body(file, chunk, pos, body_start, block_end)
    except (ValueError, struct.error) as e:
        if len(chunk) == block_size:
            return f"bad block body: {e}"
    # A header larger than the first chunk (e.g. a very wide schema): read the whole block body once.
    try:
        return _parse_body(file, file.read_at(body_start, block_size), pos, body_start, block_end)
    except (ValueError, struct.error) as e:
        return f"bad block body: {e}"


def _at(file: _File, chunk: bytes, body_start: int, offset: int, length: int) -> bytes:
    """Bytes at file `offset`: from the chunk already read when they lie in it, else from the file."""
    rel = offset - body_start
    if rel + length <= len(chunk):
        return chunk[rel : rel + length]
    return file.read_at(offset, length)


def _parse_body(file: _File, chunk: bytes, offset: int, body_start: int, block_end: int) -> LogBlock:
    version, type_ordinal = struct.unpack_from(">ii", chunk, 0)
    if version != 1:
        raise ValueError(f"unsupported log format version {version}")
    block_type = BlockType(type_ordinal)  # ValueError for unknown ordinals
    if block_type == BlockType.CORRUPT:
        raise ValueError("corrupt block type on disk")
    limit = min(len(chunk), block_end - body_start)
    header, p = decode_header(chunk, 8, limit)
    if p + 8 > limit:
        raise ValueError("content length past chunk")
    (content_length,) = struct.unpack_from(">q", chunk, p)
    content_offset = body_start + p + 8
    footer_start = content_offset + content_length
    if content_length < 0 or footer_start + 4 + 8 > block_end:
        raise ValueError("content past block end")
    footer_len = block_end - 8 - footer_start
    footer_bytes = _at(file, chunk, body_start, footer_start, footer_len)
    footer, end = decode_header(footer_bytes, 0, footer_len)
    if end != footer_len:
        raise ValueError("footer does not end at the reverse pointer")
    record_count = None
    if block_type in (BlockType.AVRO_DATA, BlockType.CDC_DATA) and content_length >= 8:
        (record_count,) = struct.unpack_from(">i", _at(file, chunk, body_start, content_offset + 4, 4), 0)
    return LogBlock(
        offset=offset,
        length=block_end - offset,
        block_type=block_type,
        header=header,
        content_offset=content_offset,
        content_length=content_length,
        footer=footer,
        format_version=version,
        record_count=record_count,
    )


def scan_blocks(f: BinaryIO, size: int, start: int = 0, name: str = "<log file>") -> Iterator[LogBlock]:
    """Yield every block from `start` to the end of the file, CORRUPT blocks included (each logged)."""
    file = _File(f, size)
    pos = start
    while pos < size:
        block = _read_block(file, pos)
        if isinstance(block, str):
            end = file.find_magic(pos + 1)
            log.warning(
                "corrupt log block in %s at offset %d (%d bytes, skipped by readers): %s", name, pos, end - pos, block
            )
            yield _corrupt(pos, end)
            pos = end
            continue
        yield block
        pos = block.offset + block.length


def read_blocks(storage: Storage, path: str, start: int = 0) -> list[LogBlock]:
    """All blocks of the log file at `path` (headers only), starting at byte `start`."""
    size = storage.size(path)
    with storage.open_read(path) as f:
        return list(scan_blocks(f, size, start, path))


def read_content(storage: Storage, path: str, block: LogBlock) -> bytes:
    """The raw content bytes of one block, read at its indexed offset."""
    return storage.read_range(path, block.content_offset, block.content_length)
