"""Log block framing (Hudi log format version 1): enums, the header map codec and one block's bytes.

Layout of a block (big-endian): magic `#HUDI#`, int64 block size, int32 format version, int32 block type,
header map, int64 content length, content, footer map, int64 reverse pointer (= block size + 6).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from enum import IntEnum
from types import MappingProxyType
from typing import NamedTuple

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1
BLOCK_CONTENT_VERSION = 3  # HoodieLogBlock.version written inside data and delete blocks
INT32 = struct.Struct(">i")
INT32_PAIR = struct.Struct(">ii")
INT64 = struct.Struct(">q")


class BlockType(IntEnum):
    """HoodieLogBlockType, serialised by ordinal."""

    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {t: t.name.lower() for t in BlockType}  # Enum's `name` is a descriptor: slow at 10^5 blocks per run
# blocks whose content is Avro: a format version, a record count, then length-prefixed datums
AVRO_BLOCK_TYPES = (BlockType.AVRO_DATA, BlockType.CDC_DATA)
_DATA_TYPES = frozenset((BlockType.AVRO_DATA, BlockType.PARQUET_DATA, BlockType.HFILE_DATA))


class HeaderKey(IntEnum):
    """HeaderMetadataType ordinals; MIN_EVENT_TIME (9) is hudi-meta's opt-in key, unknown to stock Hudi."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8
    MIN_EVENT_TIME = 9


STOCK_HEADER_KEYS = frozenset(k for k in HeaderKey if k != HeaderKey.MIN_EVENT_TIME)
ROLLBACK_COMMAND = "0"  # HoodieCommandBlockTypeEnum.ROLLBACK_BLOCK
# the header keys `LogBlock` reads, as plain ints (an enum member is looked up on its class at every use)
_INSTANT_TIME = int(HeaderKey.INSTANT_TIME)
_TARGET_INSTANT_TIME = int(HeaderKey.TARGET_INSTANT_TIME)
_SCHEMA = int(HeaderKey.SCHEMA)
_MIN_EVENT_TIME = int(HeaderKey.MIN_EVENT_TIME)

Header = Mapping[int, str]
_NO_ENTRIES: Header = MappingProxyType({})  # the header or footer of a block that has none (read-only: shared)


def encode_header(header: Header) -> bytes:
    """Encode a header/footer map: int32 count, then (int32 ordinal, int32 length, UTF-8 bytes)."""
    parts = [struct.pack(">i", len(header))]
    for key in sorted(header):
        value = header[key].encode("utf-8")
        parts.append(struct.pack(">ii", int(key), len(value)))
        parts.append(value)
    return b"".join(parts)


def decode_header(buf: bytes, pos: int, end: int) -> tuple[dict[int, str], int]:
    """Decode a header map from `buf[pos:end]`; raise ValueError if it runs past `end`."""
    if pos + 4 > end:
        raise ValueError("header count past block end")
    (count,) = INT32.unpack_from(buf, pos)
    pos += 4
    if count < 0 or count * 8 > end - pos:
        raise ValueError(f"bad header entry count {count}")
    header: dict[int, str] = {}
    for _ in range(count):
        if pos + 8 > end:
            raise ValueError("header entry past block end")
        key, length = INT32_PAIR.unpack_from(buf, pos)
        pos += 8
        if length < 0 or pos + length > end:
            raise ValueError("header value past block end")
        header[key] = buf[pos : pos + length].decode("utf-8", errors="replace")
        pos += length
    return header, pos


class LogBlock(NamedTuple):
    """One block as found on disk. Content is not decoded here: see `block_content`.

    `offset` is the position of the magic; `length` the bytes the block occupies on disk.
    A CORRUPT block spans the unreadable bytes up to the next magic (or the end of the file).
    A named tuple: immutable like a frozen dataclass, and built in half the time (a header scan builds 10^5).
    """

    offset: int
    length: int
    block_type: BlockType
    header: Mapping[int, str] = _NO_ENTRIES
    content_offset: int = 0
    content_length: int = 0
    footer: Mapping[int, str] = _NO_ENTRIES
    format_version: int = LOG_FORMAT_VERSION
    record_count: int | None = None  # Avro data blocks carry it in their first content bytes

    @property
    def instant_time(self) -> str | None:
        return self.header.get(_INSTANT_TIME)

    @property
    def target_instant_time(self) -> str | None:
        return self.header.get(_TARGET_INSTANT_TIME)

    @property
    def schema(self) -> str | None:
        return self.header.get(_SCHEMA)

    @property
    def min_event_time(self) -> int | None:
        """The MIN_EVENT_TIME header (epoch ms), when the block carries one."""
        value = self.header.get(_MIN_EVENT_TIME)
        try:
            return int(value) if value is not None else None
        except ValueError:
            return None

    @property
    def is_corrupt(self) -> bool:
        return self.block_type == BlockType.CORRUPT

    @property
    def is_rollback(self) -> bool:
        return (
            self.block_type == BlockType.COMMAND and self.header.get(HeaderKey.COMMAND_BLOCK_TYPE) == ROLLBACK_COMMAND
        )

    @property
    def is_data(self) -> bool:
        return self.block_type in _DATA_TYPES


def encode_block(block_type: BlockType, header: Header, content: bytes, footer: Header | None = None) -> bytes:
    """Frame one block exactly as HoodieLogFormatWriter does."""
    header_bytes = encode_header(header)
    footer_bytes = encode_header(footer or {})
    block_size = 4 + 4 + len(header_bytes) + 8 + len(content) + len(footer_bytes) + 8
    return b"".join(
        (
            MAGIC,
            struct.pack(">q", block_size),
            struct.pack(">ii", LOG_FORMAT_VERSION, int(block_type)),
            header_bytes,
            struct.pack(">q", len(content)),
            content,
            footer_bytes,
            struct.pack(">q", block_size + len(MAGIC)),
        )
    )
