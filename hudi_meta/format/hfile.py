"""HFile version 3 as Hudi reads and writes it: the metadata table's base files and the content of its
HFILE_DATA log blocks.

Layout (big-endian): data blocks, meta blocks, root data index, meta index, file info, then a 4096-byte trailer.
Every block is a 33-byte header, a payload compressed with the file's codec, and the checksums of header plus
payload. A data block holds KeyValues sorted by row key; the root index gives each data block's first key. The
reader also follows HBase's multi-level indexes (intermediate and leaf index blocks), which Hudi never writes.
The writer writes what Hudi 0.x/1.0 (HBase 2.4's writer) writes: minor version 3, CRC32C checksums, full KeyValue
keys in the index and `hfile.LASTKEY`, `prevBlockOffset` chained per block type. docs/hfile.md gives each rule with
its Java source.
"""

from __future__ import annotations

import bisect
import struct
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from hudi_meta.errors import CorruptFileError
from hudi_meta.format.avro_container import unsigned_varint

TRAILER_SIZE = 4096  # HFileTrailer: fixed size of a version 3 trailer
HEADER_SIZE = 33  # magic 8, onDiskSizeWithoutHeader 4, uncompressedSizeWithoutHeader 4, prevBlockOffset 8,
# checksum type 1, bytesPerChecksum 4, onDiskDataSizeWithHeader 4
BYTES_PER_CHECKSUM = 16 * 1024
DEFAULT_BLOCK_SIZE = 1 << 20  # hoodie.hfile.block.size
BLOCK_CACHE_SIZE = 16  # decoded data blocks a reader keeps
MAJOR_VERSION = 3
MINOR_VERSION = 3  # HBase's minor version with protobuf trailer and checksums (Hudi 1.1's native writer wrote 0)
LATEST_TIMESTAMP = 0x7FFFFFFFFFFFFFFF  # HConstants.LATEST_TIMESTAMP: the timestamp of every Hudi cell
PUT = 4  # KeyValue.Type.Put
COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"

DATA_MAGIC = b"DATABLK*"
META_MAGIC = b"METABLKc"
ROOT_INDEX_MAGIC = b"IDXROOT2"
INTERMEDIATE_INDEX_MAGIC = b"IDXINTE2"
LEAF_INDEX_MAGIC = b"IDXLEAF2"
FILE_INFO_MAGIC = b"FILEINF2"
TRAILER_MAGIC = b'TRABLK"$'
PBUF_MAGIC = b"PBUF"

# file info keys (HFileInfo; the last two without the `hfile.` prefix, as HBase spells them)
LAST_KEY = b"hfile.LASTKEY"
AVG_KEY_LEN = b"hfile.AVG_KEY_LEN"
AVG_VALUE_LEN = b"hfile.AVG_VALUE_LEN"
CREATE_TIME_TS = b"hfile.CREATE_TIME_TS"
MAX_TAGS_LEN = b"hfile.MAX_TAGS_LEN"
KEY_VALUE_VERSION = b"KEY_VALUE_VERSION"
MAX_MEMSTORE_TS_KEY = b"MAX_MEMSTORE_TS_KEY"
KEY_VALUE_VERSION_WITH_MVCC = 1
# what Hudi puts in (HoodieAvroHFileWriter, HFileUtils)
SCHEMA_KEY = b"schema"
BLOOM_FILTER_BLOCK = "bloomFilter"
BLOOM_TYPE_CODE_KEY = b"bloomFilterTypeCode"
MIN_RECORD_KEY = b"minRecordKey"
MAX_RECORD_KEY = b"maxRecordKey"

_HEADER = struct.Struct(">8siiqbii")
_INDEX_ENTRY_HEAD = struct.Struct(">qi")
_KV_LENGTHS = struct.Struct(">ii")


class Codec(IntEnum):
    """Compression.Algorithm ordinals as the trailer stores them; this module reads and writes NONE and GZ."""

    LZO = 0
    GZ = 1
    NONE = 2
    SNAPPY = 3
    LZ4 = 4
    BZIP2 = 5
    ZSTD = 6


class ChecksumType(IntEnum):
    """ChecksumType codes of the block header."""

    NULL = 0
    CRC32 = 1
    CRC32C = 2


_CHECKSUM_CODES = frozenset(int(c) for c in ChecksumType)

# ---- small codecs -----------------------------------------------------------------------------------


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), as java.util.zip.CRC32C computes it."""
    crc = 0xFFFFFFFF
    table = _CRC32C
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _checksums(kind: ChecksumType, data: bytes, per_chunk: int) -> bytes:
    """The checksum bytes of a block's header and on-disk payload: one int32 per chunk of `per_chunk` bytes."""
    chunks = [data[i : i + per_chunk] for i in range(0, len(data), per_chunk)]
    if kind == ChecksumType.NULL:
        return bytes(4 * len(chunks))
    fn = zlib.crc32 if kind == ChecksumType.CRC32 else crc32c
    return b"".join(struct.pack(">I", fn(chunk)) for chunk in chunks)


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """A protobuf (base 128, low bits first) varint at `pos`: (value, position after it)."""
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return result, pos


def varint(n: int) -> bytes:
    """Protobuf varint of a non-negative int (a negative int64 is written as its 64-bit two's complement)."""
    return unsigned_varint(n & ((1 << 64) - 1))


def read_hadoop_vint(buf: bytes, pos: int) -> tuple[int, int]:
    """A Hadoop `WritableUtils` VInt/VLong at `pos`: (value, position after it)."""
    first = struct.unpack_from(">b", buf, pos)[0]
    if first >= -112:
        return first, pos + 1
    negative = first < -120
    size = -(first + 120) if negative else -(first + 112)
    if pos + 1 + size > len(buf):
        raise ValueError("truncated vint")
    value = int.from_bytes(buf[pos + 1 : pos + 1 + size], "big")
    return (~value if negative else value), pos + 1 + size


def hadoop_vint(n: int) -> bytes:
    """Hadoop `WritableUtils.writeVLong` of `n`."""
    if -112 <= n <= 127:
        return struct.pack(">b", n)
    first = -120 if n < 0 else -112
    if n < 0:
        n = ~n
    size = (n.bit_length() + 7) // 8
    return struct.pack(">b", first - size) + n.to_bytes(size, "big")


def _proto_fields(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of a protobuf message holding varint and length-delimited fields only."""
    pos = 0
    while pos < len(buf):
        tag, pos = read_varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = read_varint(buf, pos)
            yield number, value
        elif wire == 2:
            length, pos = read_varint(buf, pos)
            if pos + length > len(buf):
                raise ValueError("truncated protobuf field")
            yield number, buf[pos : pos + length]
            pos += length
        else:
            raise ValueError(f"unexpected protobuf wire type {wire}")


def _proto_varint_field(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def _proto_bytes_field(number: int, value: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(value)) + value


def gzip_compress(data: bytes) -> bytes:
    """A gzip stream as java.util.zip.GZIPOutputStream writes it (mtime 0, no flags, OS 0)."""
    deflater = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = deflater.compress(data) + deflater.flush()
    tail = struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00" + body + tail


def _decompress(codec: Codec, payload: bytes, size: int) -> bytes:
    if codec == Codec.NONE:
        return payload
    if codec == Codec.GZ:
        out = zlib.decompress(payload, 16 + zlib.MAX_WBITS)
        if len(out) != size:
            raise ValueError(f"block inflates to {len(out)} bytes, header says {size}")
        return out
    raise ValueError(f"compression codec {codec.name} is not supported (Hudi writes GZ or NONE)")


def _compress(codec: Codec, data: bytes) -> bytes:
    if codec == Codec.NONE:
        return data
    if codec == Codec.GZ:
        return gzip_compress(data)
    raise ValueError(f"compression codec {codec.name} is not supported (Hudi writes GZ or NONE)")


# ---- keys -------------------------------------------------------------------------------------------


def full_key(row: bytes) -> bytes:
    """The KeyValue key Hudi's cells have: row length, row, empty family, latest timestamp, type Put."""
    return struct.pack(">h", len(row)) + row + b"\x00" + struct.pack(">qb", LATEST_TIMESTAMP, PUT)


def key_row(key: bytes) -> bytes:
    """The row of a KeyValue key (also of Hudi 1.1's shortened `int16 length + row` keys)."""
    if len(key) < 2:
        return key
    (length,) = struct.unpack_from(">H", key, 0)
    return key[2 : 2 + length]


def _as_bytes(key: str | bytes) -> bytes:
    return key.encode("utf-8") if isinstance(key, str) else key


# ---- trailer ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trailer:
    """The fixed trailer: where the load-on-open section is, counts, codec (TrailerProto fields 1-12)."""

    file_info_offset: int
    load_on_open_offset: int
    uncompressed_data_index_size: int
    total_uncompressed_bytes: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    num_data_index_levels: int
    first_data_block_offset: int
    last_data_block_offset: int
    comparator: str
    codec: Codec
    major_version: int = MAJOR_VERSION
    minor_version: int = MINOR_VERSION

    @classmethod
    def parse(cls, tail: bytes) -> Trailer:
        if len(tail) != TRAILER_SIZE or tail[:8] != TRAILER_MAGIC:
            raise ValueError("no HFile trailer at the end of the file")
        major = int.from_bytes(tail[-3:], "big")
        if major != MAJOR_VERSION:
            raise ValueError(f"HFile major version {major}: only version 3 is read")
        length, pos = read_varint(tail, 8)
        fields: dict[int, int | bytes] = dict(_proto_fields(tail[pos : pos + length]))

        def num(n: int, default: int = 0) -> int:
            value = fields.get(n, default)
            if not isinstance(value, int):
                raise ValueError(f"trailer field {n} is not a number")
            return value - (1 << 64) if value >= 1 << 63 else value

        comparator = fields.get(11, b"")
        return cls(
            file_info_offset=num(1),
            load_on_open_offset=num(2),
            uncompressed_data_index_size=num(3),
            total_uncompressed_bytes=num(4),
            data_index_count=num(5),
            meta_index_count=num(6),
            entry_count=num(7),
            num_data_index_levels=num(8, 1),
            first_data_block_offset=num(9, -1),
            last_data_block_offset=num(10),
            comparator=comparator.decode("utf-8") if isinstance(comparator, bytes) else "",
            codec=Codec(num(12, Codec.NONE)),
            major_version=major,
            minor_version=tail[-4],
        )

    def encode(self) -> bytes:
        message = b"".join(
            (
                _proto_varint_field(1, self.file_info_offset),
                _proto_varint_field(2, self.load_on_open_offset),
                _proto_varint_field(3, self.uncompressed_data_index_size),
                _proto_varint_field(4, self.total_uncompressed_bytes),
                _proto_varint_field(5, self.data_index_count),
                _proto_varint_field(6, self.meta_index_count),
                _proto_varint_field(7, self.entry_count),
                _proto_varint_field(8, self.num_data_index_levels),
                _proto_varint_field(9, self.first_data_block_offset),
                _proto_varint_field(10, self.last_data_block_offset),
                _proto_bytes_field(11, self.comparator.encode("utf-8")),
                _proto_varint_field(12, int(self.codec)),
            )
        )
        body = TRAILER_MAGIC + varint(len(message)) + message
        version = bytes([self.minor_version]) + self.major_version.to_bytes(3, "big")
        return body + bytes(TRAILER_SIZE - len(body) - 4) + version


# ---- blocks -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """One block as read: its header fields and its uncompressed payload."""

    magic: bytes
    offset: int
    on_disk_size: int  # header + on-disk payload + checksums
    prev_block_offset: int
    checksum_type: int
    payload: bytes


@dataclass(frozen=True)
class IndexEntry:
    """A block index entry: where a block is and its first key (a full KeyValue key for data blocks)."""

    offset: int
    size: int
    key: bytes

    @property
    def row(self) -> bytes:
        return key_row(self.key)


def _root_index_entries(payload: bytes, count: int) -> list[IndexEntry]:
    """`count` entries of a root-format index block (int64 offset, int32 size, VInt key length, key); what
    follows them (HBase's mid-key data of a multi-level index) is ignored."""
    entries = []
    pos = 0
    for _ in range(count):
        offset, size = _INDEX_ENTRY_HEAD.unpack_from(payload, pos)
        length, pos = read_hadoop_vint(payload, pos + 12)
        if length < 0 or pos + length > len(payload):
            raise ValueError("index entry key past the block end")
        entries.append(IndexEntry(offset, size, payload[pos : pos + length]))
        pos += length
    return entries


def _non_root_index_entries(payload: bytes) -> list[IndexEntry]:
    """Entries of an intermediate or leaf index block: int32 count, count + 1 int32 entry offsets (relative to
    the end of that list), then per entry int64 offset, int32 size and the key (its length from the offsets)."""
    (count,) = struct.unpack_from(">i", payload, 0)
    if count < 0 or 4 * (count + 2) > len(payload):
        raise ValueError(f"bad index entry count {count}")
    positions = struct.unpack_from(f">{count + 1}i", payload, 4)
    base = 4 * (count + 2)
    entries = []
    for i in range(count):
        start, end = base + positions[i], base + positions[i + 1]
        if not 0 <= start <= end - 12 or end > len(payload):
            raise ValueError("index entry past the block end")
        offset, size = _INDEX_ENTRY_HEAD.unpack_from(payload, start)
        entries.append(IndexEntry(offset, size, payload[start + 12 : end]))
    return entries


def _file_info(payload: bytes) -> dict[bytes, bytes]:
    """The file info map: `PBUF`, a varint length, then InfoProto{repeated BytesBytesPair{first, second}}."""
    if payload[:4] != PBUF_MAGIC:
        raise ValueError("file info block without the PBUF magic")
    length, pos = read_varint(payload, 4)
    info: dict[bytes, bytes] = {}
    for number, pair in _proto_fields(payload[pos : pos + length]):
        if number != 1 or not isinstance(pair, bytes):
            continue
        parts = {n: v for n, v in _proto_fields(pair) if isinstance(v, bytes)}
        info[parts.get(1, b"")] = parts.get(2, b"")
    return info


def _encode_file_info(info: Mapping[bytes, bytes]) -> bytes:
    pairs = b"".join(
        _proto_bytes_field(1, _proto_bytes_field(1, k) + _proto_bytes_field(2, v)) for k, v in sorted(info.items())
    )
    return PBUF_MAGIC + varint(len(pairs)) + pairs


# ---- reader -----------------------------------------------------------------------------------------


@dataclass
class HFileReader:
    """An HFile held in memory: trailer, file info and indexes read at once, data blocks when first needed.

    Keys are row keys (bytes); `get` and `scan_prefix` find the block through the index. Raises CorruptFileError
    naming `name` for bytes that are not a readable HFile.
    """

    data: bytes
    name: str = "<hfile>"
    verify_checksums: bool = True
    trailer: Trailer = field(init=False)
    file_info: dict[bytes, bytes] = field(init=False)
    data_index: list[IndexEntry] = field(init=False)  # one entry per data block, in key order
    meta_index: dict[str, IndexEntry] = field(init=False)
    _rows: list[bytes] = field(init=False, repr=False)
    _blocks: dict[int, list[tuple[bytes, bytes]]] = field(init=False, default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        try:
            self._open()
        except CorruptFileError:
            raise
        except (ValueError, struct.error, IndexError, zlib.error) as e:
            raise CorruptFileError(f"{self.name}: not a readable HFile: {e}") from e

    def _open(self) -> None:
        if len(self.data) < TRAILER_SIZE:
            raise ValueError(f"{len(self.data)} bytes: shorter than the trailer")
        self.trailer = Trailer.parse(self.data[-TRAILER_SIZE:])
        t = self.trailer
        root = self.block_at(t.load_on_open_offset, ROOT_INDEX_MAGIC)
        meta = self.block_at(root.offset + root.on_disk_size, ROOT_INDEX_MAGIC)
        info = self.block_at(t.file_info_offset, FILE_INFO_MAGIC)
        self.file_info = _file_info(info.payload)
        entries = _root_index_entries(root.payload, t.data_index_count)
        for _ in range(t.num_data_index_levels - 1):
            entries = [e for parent in entries for e in self._child_index(parent)]
        self.data_index = entries
        self._rows = [e.row for e in entries]
        meta_entries = _root_index_entries(meta.payload, t.meta_index_count)
        self.meta_index = {e.key.decode("utf-8"): e for e in meta_entries}

    def _child_index(self, parent: IndexEntry) -> list[IndexEntry]:
        block = self.block_at(parent.offset)
        if block.magic not in (INTERMEDIATE_INDEX_MAGIC, LEAF_INDEX_MAGIC):
            raise ValueError(f"index entry at {parent.offset} points at a {block.magic!r} block")
        return _non_root_index_entries(block.payload)

    def block_at(self, offset: int, magic: bytes | None = None) -> Block:
        """The block at `offset`, its checksums verified (unless switched off) and its payload uncompressed."""
        d = self.data
        if offset < 0 or offset + HEADER_SIZE > len(d) - TRAILER_SIZE:
            raise ValueError(f"block offset {offset} outside the file")
        found, on_disk, uncompressed, prev, checksum, per_chunk, with_header = _HEADER.unpack_from(d, offset)
        if magic is not None and found != magic:
            raise ValueError(f"expected a {magic.decode()} block at {offset}, found {found!r}")
        end = offset + HEADER_SIZE + on_disk
        if on_disk < 0 or end > len(d) - TRAILER_SIZE or not HEADER_SIZE <= with_header <= HEADER_SIZE + on_disk:
            raise ValueError(f"block at {offset} has bad sizes")
        if checksum not in _CHECKSUM_CODES:
            raise ValueError(f"block at {offset}: unknown checksum type {checksum}")
        if self.verify_checksums and checksum != ChecksumType.NULL:
            if per_chunk <= 0:
                raise ValueError(f"block at {offset}: bytesPerChecksum {per_chunk}")
            stored = d[offset + with_header : end]
            if _checksums(ChecksumType(checksum), d[offset : offset + with_header], per_chunk) != stored:
                raise ValueError(f"checksum mismatch in the {found.decode(errors='replace')} block at {offset}")
        payload = _decompress(self.trailer.codec, d[offset + HEADER_SIZE : offset + with_header], uncompressed)
        return Block(found, offset, HEADER_SIZE + on_disk, prev, checksum, payload)

    # ---- file info and meta blocks

    @property
    def entry_count(self) -> int:
        return self.trailer.entry_count

    @property
    def schema(self) -> str | None:
        """The Avro schema (JSON) Hudi stores in the file info, if any."""
        value = self.file_info.get(SCHEMA_KEY)
        return value.decode("utf-8") if value is not None else None

    @property
    def last_key(self) -> bytes | None:
        """The row of the last key, from the file info (`hfile.LASTKEY`)."""
        value = self.file_info.get(LAST_KEY)
        return key_row(value) if value else None

    def meta_block(self, name: str) -> bytes | None:
        """The payload of the meta block `name`, None if the file has none of that name."""
        entry = self.meta_index.get(name)
        if entry is None:
            return None
        try:
            return self.block_at(entry.offset, META_MAGIC).payload
        except (ValueError, struct.error, zlib.error) as e:
            raise CorruptFileError(f"{self.name}: meta block {name!r}: {e}") from e

    @property
    def bloom_filter(self) -> bytes | None:
        """The serialized bloom filter Hudi base files carry (`BloomFilter.serializeToString()` as UTF-8)."""
        return self.meta_block(BLOOM_FILTER_BLOCK)

    # ---- key/values

    def _cells(self, i: int) -> list[tuple[bytes, bytes]]:
        cells = self._blocks.get(i)
        if cells is None:
            entry = self.data_index[i]
            try:
                block = self.block_at(entry.offset, DATA_MAGIC)
                cells = self._parse_cells(block.payload)
            except (ValueError, struct.error, zlib.error) as e:
                raise CorruptFileError(f"{self.name}: data block at {entry.offset}: {e}") from e
            if len(self._blocks) >= BLOCK_CACHE_SIZE:  # drop the oldest: scans go forward, lookups cluster
                del self._blocks[next(iter(self._blocks))]
            self._blocks[i] = cells
        return cells

    def _parse_cells(self, payload: bytes) -> list[tuple[bytes, bytes]]:
        mvcc = self.file_info.get(KEY_VALUE_VERSION) == struct.pack(">i", KEY_VALUE_VERSION_WITH_MVCC)
        tags = MAX_TAGS_LEN in self.file_info
        cells = []
        pos, end = 0, len(payload)
        while pos < end:
            key_len, value_len = _KV_LENGTHS.unpack_from(payload, pos)
            key_start = pos + 8
            value_start = key_start + key_len
            pos = value_start + value_len
            if key_len < 12 or value_len < 0 or pos > end:
                raise ValueError("key/value past the block end")
            (row_len,) = struct.unpack_from(">H", payload, key_start)
            cells.append((payload[key_start + 2 : key_start + 2 + row_len], payload[value_start:pos]))
            if tags:
                (tags_len,) = struct.unpack_from(">H", payload, pos)
                pos += 2 + tags_len
            if mvcc:
                _, pos = read_hadoop_vint(payload, pos)
        return cells

    def items(self) -> Iterator[tuple[bytes, bytes]]:
        """Every (row key, value) in key order; CorruptFileError if they are not as many as the trailer says."""
        count = 0
        for i in range(len(self.data_index)):
            cells = self._cells(i)
            count += len(cells)
            yield from cells
        if count != self.trailer.entry_count:
            raise CorruptFileError(f"{self.name}: {count} key/values, the trailer says {self.trailer.entry_count}")

    def row_keys(self) -> Iterator[bytes]:
        return (k for k, _ in self.items())

    def _first_block_for(self, key: bytes) -> int:
        return max(bisect.bisect_right(self._rows, key) - 1, 0)

    def get(self, key: str | bytes) -> bytes | None:
        """The value of `key`, None if absent."""
        k = _as_bytes(key)
        if not self.data_index:
            return None
        cells = self._cells(self._first_block_for(k))
        i = bisect.bisect_left(cells, k, key=lambda c: c[0])
        return cells[i][1] if i < len(cells) and cells[i][0] == k else None

    def scan_prefix(self, prefix: str | bytes) -> Iterator[tuple[bytes, bytes]]:
        """Every (row key, value) whose key starts with `prefix`, in key order."""
        p = _as_bytes(prefix)
        for i in range(self._first_block_for(p), len(self.data_index)):
            cells = self._cells(i)
            for k, v in cells[bisect.bisect_left(cells, p, key=lambda c: c[0]) :]:
                if not k.startswith(p):
                    return
                yield k, v


# ---- writer -----------------------------------------------------------------------------------------


@dataclass
class _BlockWriter:
    """Frames blocks one after the other, chaining `prevBlockOffset` per block magic as HBase does."""

    codec: Codec
    checksum: ChecksumType
    parts: list[bytes] = field(default_factory=list)
    offset: int = 0
    total_uncompressed: int = 0
    _last_of: dict[bytes, int] = field(default_factory=dict)

    def write(self, magic: bytes, payload: bytes) -> tuple[int, int]:
        """Append one block; its (offset, on-disk size)."""
        compressed = _compress(self.codec, payload)
        with_header = HEADER_SIZE + len(compressed)
        chunks = -(-with_header // BYTES_PER_CHECKSUM)
        kind = self.checksum
        header = _HEADER.pack(
            magic,
            len(compressed) + 4 * chunks,
            len(payload),
            self._last_of.get(magic, -1),
            kind,
            BYTES_PER_CHECKSUM,
            with_header,
        )
        block = header + compressed
        block += _checksums(kind, block, BYTES_PER_CHECKSUM)
        offset = self.offset
        self._last_of[magic] = offset
        self.parts.append(block)
        self.offset += len(block)
        self.total_uncompressed += HEADER_SIZE + len(payload)
        return offset, len(block)


def _root_index_payload(entries: Iterable[tuple[int, int, bytes]]) -> bytes:
    return b"".join(_INDEX_ENTRY_HEAD.pack(o, s) + hadoop_vint(len(k)) + k for o, s, k in entries)


@dataclass
class _DataBlocks:
    """What the data blocks written tell the rest of the file: the root index entries (offset, size, first
    key), and the cell count, key and value totals and last key that the file info and trailer record."""

    index: list[tuple[int, int, bytes]] = field(default_factory=list)
    count: int = 0
    key_total: int = 0
    value_total: int = 0
    last_key: bytes = b""


def _write_data_blocks(out: _BlockWriter, cells: Iterable[tuple[str | bytes, bytes]], block_size: int) -> _DataBlocks:
    """Write `cells` as data blocks, each closed once it holds `block_size` uncompressed bytes or more (HBase's
    rule), after checking the keys ascend strictly and fit an HFile row."""
    data = _DataBlocks()
    block: list[bytes] = []
    block_bytes = 0
    first_key = b""
    previous: bytes | None = None

    def flush() -> None:
        nonlocal block, block_bytes
        if block:
            offset, size = out.write(DATA_MAGIC, b"".join(block))
            data.index.append((offset, size, first_key))
            block, block_bytes = [], 0

    for raw_key, value in cells:
        row = _as_bytes(raw_key)
        if previous is not None and row <= previous:
            raise ValueError(f"HFile keys must be strictly ascending: {row!r} after {previous!r}")
        if len(row) > 0x7FFF:
            raise ValueError(f"row key of {len(row)} bytes: longer than an HFile row may be")
        previous = row
        if block_bytes >= block_size:
            flush()
        key = full_key(row)
        if not block:
            first_key = key
        block.append(_KV_LENGTHS.pack(len(key), len(value)) + key + value + b"\x00")
        block_bytes += 8 + len(key) + len(value) + 1
        data.last_key = key
        data.count += 1
        data.key_total += len(key)
        data.value_total += len(value)
    flush()
    return data


def _with_standard_file_info(
    file_info: Mapping[bytes, bytes] | None, data: _DataBlocks, create_time_ms: int
) -> dict[bytes, bytes]:
    """`file_info` plus the entries every HFile has (key-value version, memstore timestamp, average key and
    value lengths, creation time, and the last key when there are cells)."""
    info = dict(file_info or {})
    info[KEY_VALUE_VERSION] = struct.pack(">i", KEY_VALUE_VERSION_WITH_MVCC)
    info[MAX_MEMSTORE_TS_KEY] = struct.pack(">q", 0)
    info[AVG_KEY_LEN] = struct.pack(">i", data.key_total // data.count if data.count else 0)
    info[AVG_VALUE_LEN] = struct.pack(">i", data.value_total // data.count if data.count else 0)
    info[CREATE_TIME_TS] = struct.pack(">q", create_time_ms)
    if data.count:
        info[LAST_KEY] = data.last_key
    return info


def write_hfile(
    cells: Iterable[tuple[str | bytes, bytes]],
    *,
    file_info: Mapping[bytes, bytes] | None = None,
    meta_blocks: Mapping[str, bytes] | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    codec: Codec = Codec.GZ,
    checksum: ChecksumType = ChecksumType.CRC32C,
    create_time_ms: int = 0,
) -> bytes:
    """An HFile of `cells` (row key, value), which must come in strictly ascending key order (unsigned bytes).

    A data block is closed once it holds `block_size` uncompressed bytes or more (HBase's rule), so equal keys
    could never straddle blocks; `file_info` entries are added to the ones every HFile has, and each of
    `meta_blocks` (e.g. Hudi's `bloomFilter`) is one meta block. Raises ValueError for unsorted or duplicate keys.
    """
    out = _BlockWriter(codec, checksum)
    data = _write_data_blocks(out, cells, block_size)
    index = data.index
    first_data = index[0][0] if index else -1
    last_data = index[-1][0] if index else -1  # HBase writes -1 for a file without data blocks

    metas = []
    for name in sorted(meta_blocks or {}, key=lambda n: n.encode("utf-8")):
        offset, size = out.write(META_MAGIC, (meta_blocks or {})[name])
        metas.append((offset, size, name.encode("utf-8")))

    root_payload = _root_index_payload(index)
    root_offset, _ = out.write(ROOT_INDEX_MAGIC, root_payload)
    out.write(ROOT_INDEX_MAGIC, _root_index_payload(metas))
    info = _with_standard_file_info(file_info, data, create_time_ms)
    info_offset, _ = out.write(FILE_INFO_MAGIC, _encode_file_info(info))
    trailer = Trailer(
        file_info_offset=info_offset,
        load_on_open_offset=root_offset,
        uncompressed_data_index_size=len(root_payload),
        # HBase counts every block but the root data index (header + uncompressed payload), plus the trailer
        total_uncompressed_bytes=out.total_uncompressed - HEADER_SIZE - len(root_payload) + TRAILER_SIZE,
        data_index_count=len(index),
        meta_index_count=len(metas),
        entry_count=data.count,
        num_data_index_levels=1,
        first_data_block_offset=first_data,
        last_data_block_offset=last_data,
        comparator=COMPARATOR,
        codec=codec,
    )
    return b"".join(out.parts) + trailer.encode()
