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
from collections.abc import Iterator, Sequence
from typing import BinaryIO

from hudi_meta.format.log_block import (
    AVRO_BLOCK_TYPES,
    INT32,
    INT32_PAIR,
    INT64,
    MAGIC,
    BlockType,
    LogBlock,
    decode_header,
)
from hudi_meta.storage.base import Storage

log = logging.getLogger(__name__)

SCAN_WINDOW = 1 << 20
READ_WINDOW = 256 * 1024  # bytes read at once at a block start: a file of small blocks costs one read per window
_MIN_BLOCK_SIZE = 4 + 4 + 4 + 8 + 4 + 8  # version, type, empty header, content length, empty footer, pointer
_HEADER_CHUNK = 16 * 1024
_HEAD = len(MAGIC) + 8  # magic and block size
_ON_DISK_TYPES = {t.value: t for t in BlockType if t != BlockType.CORRUPT}


class _File:
    """A seekable file of known size, read through a window that moves forward at block starts.

    Each access returns a buffer and the index in it where the asked bytes start (fewer bytes than asked at
    the end of the file), so blocks are parsed in place: no copy per block, no read per field."""

    def __init__(self, f: BinaryIO, size: int, window: int = READ_WINDOW) -> None:
        self.f = f
        self.size = size
        self.window = window
        self.buf = b""
        self.start = 0  # file offset of buf[0]

    def read_at(self, offset: int, length: int) -> bytes:
        self.f.seek(offset)
        return self.f.read(length)

    def _holds(self, offset: int, length: int) -> bool:
        rel = offset - self.start
        end = self.start + len(self.buf)
        return rel >= 0 and (rel + length <= len(self.buf) or end >= self.size)

    def view(self, offset: int, length: int) -> tuple[bytes, int]:
        """The bytes at `offset`: from the window, else the window moves there (at least `window` bytes)."""
        if not self._holds(offset, length):
            self.buf, self.start = self.read_at(offset, max(length, self.window)), offset
        return self.buf, offset - self.start

    def peek(self, offset: int, length: int) -> tuple[bytes, int]:
        """The bytes at `offset`: from the window, else read alone (the window stays where it is)."""
        if self._holds(offset, length):
            return self.buf, offset - self.start
        return self.read_at(offset, length), 0

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
    buf, i = file.view(pos, _HEAD)
    if buf[i : i + len(MAGIC)] != MAGIC:
        return "no magic at the block start"
    if len(buf) - i < _HEAD:
        return "file ends inside the block size"
    (block_size,) = INT64.unpack_from(buf, i + len(MAGIC))
    body_start = pos + _HEAD
    block_end = body_start + block_size
    if block_size < _MIN_BLOCK_SIZE:
        return f"block size {block_size} too small"
    if block_end > file.size:
        return f"block size {block_size} runs past the end of the file"
    if file.start + len(buf) >= min(block_end + len(MAGIC), file.size):
        tail, t = buf, block_end - 8 - file.start  # the whole block and the next magic are in the window
    else:
        tail, t = file.peek(block_end - 8, 8 + len(MAGIC))
    (reverse_pointer,) = INT64.unpack_from(tail, t)
    if reverse_pointer != block_size + len(MAGIC):
        return f"reverse pointer {reverse_pointer} does not match block size {block_size}"
    # Java reads the next magic with readFully: fewer than 6 bytes left counts as the end of the file.
    if file.size - block_end >= len(MAGIC) and tail[t + 8 : t + 8 + len(MAGIC)] != MAGIC:
        return "no magic after the block"

    buf, b = file.view(body_start, min(block_size, _HEADER_CHUNK))
    try:
        return _parse_body(file, buf, b, pos, block_end)
    except (ValueError, struct.error) as e:
        if len(buf) - b >= block_size:
            return f"bad block body: {e}"
    # A header longer than the window holds of the body (e.g. a very wide schema): read the whole body once.
    try:
        return _parse_body(file, file.read_at(body_start, block_size), 0, pos, block_end)
    except (ValueError, struct.error) as e:
        return f"bad block body: {e}"


def _bytes_at(file: _File, buf: bytes, shift: int, offset: int, length: int) -> tuple[bytes, int]:
    """The bytes at file `offset` from `buf` (where file offset x is at index x + shift) when it holds them."""
    rel = offset + shift
    if rel + length <= len(buf):
        return buf, rel
    return file.peek(offset, length)


def _parse_body(file: _File, buf: bytes, base: int, offset: int, block_end: int) -> LogBlock:
    """The block whose body (after magic and size) starts at `buf[base]`; `buf` may end before the body does."""
    body_start = offset + _HEAD
    version, type_ordinal = INT32_PAIR.unpack_from(buf, base)
    if version != 1:
        raise ValueError(f"unsupported log format version {version}")
    block_type = _ON_DISK_TYPES.get(type_ordinal)
    if block_type is None:
        corrupt = type_ordinal == BlockType.CORRUPT
        raise ValueError("corrupt block type on disk" if corrupt else f"unknown block type {type_ordinal}")
    limit = base + min(len(buf) - base, block_end - body_start)
    header, p = decode_header(buf, base + 8, limit)
    if p + 8 > limit:
        raise ValueError("content length past chunk")
    (content_length,) = INT64.unpack_from(buf, p)
    content_offset = body_start + p - base + 8
    footer_start = content_offset + content_length
    if content_length < 0 or footer_start + 4 + 8 > block_end:
        raise ValueError("content past block end")
    footer_len = block_end - 8 - footer_start
    fbuf, f = _bytes_at(file, buf, base - body_start, footer_start, footer_len)
    footer, end = decode_header(fbuf, f, f + footer_len)
    if end != f + footer_len:
        raise ValueError("footer does not end at the reverse pointer")
    record_count = None
    if block_type in AVRO_BLOCK_TYPES and content_length >= 8:
        cbuf, c = _bytes_at(file, buf, base - body_start, content_offset + 4, 4)
        (record_count,) = INT32.unpack_from(cbuf, c)
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


def scan_blocks(
    f: BinaryIO, size: int, start: int = 0, name: str = "<log file>", window: int = READ_WINDOW
) -> Iterator[LogBlock]:
    """Yield every block from `start` to the end of the file, CORRUPT blocks included (each logged).

    `window`: bytes read at once at a block start (the blocks found do not depend on it)."""
    file = _File(f, size, window)
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


def read_contents(storage: Storage, path: str, blocks: Sequence[LogBlock]) -> Iterator[bytes]:
    """The raw content bytes of `blocks` of one file, in their order, through one open file (a file of 10^4
    small blocks was opened 10^4 times; on an object store, each open is a request)."""
    if not blocks:
        return
    with storage.open_read(path) as f:
        for block in blocks:
            f.seek(block.content_offset)
            yield f.read(block.content_length)


def written_only_by(storage: Storage, path: str, instant: str) -> bool:
    """Whether every block of the log file at `path` belongs to `instant` (a file only that write wrote)."""
    try:
        blocks = read_blocks(storage, path)
    except FileNotFoundError:
        return False
    return bool(blocks) and all(b.instant_time == instant for b in blocks)
