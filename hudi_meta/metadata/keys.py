"""Record keys of the metadata table's partitions, and which file group of a partition holds a key.

Java computes the column_stats, partition_stats and bloom_filters keys from hashes (`HashID`, `ColumnIndexID`,
`PartitionIndexID`, `FileIndexID`): XXH64 of the UTF-8 text with Hudi's seed for column names and partition
paths, MD5 for file names, each Base64-encoded with padding, concatenated. A key's file group is Java's
`String.hashCode` of the key modulo the partition's file-group count (`mapRecordKeyToFileGroupIndex`); secondary
index V2 hashes only the escaped secondary value and its `$`. XXH64 is written out here (a few lines, no
dependency); docs/metadata-table.md gives the sources.
"""

from __future__ import annotations

import base64
import hashlib
import struct

from hudi_meta.table.metadata_table import NON_PARTITIONED_KEY

NON_PARTITIONED_ID = NON_PARTITIONED_KEY  # the partition id of a non-partitioned table
HUDI_XXH64_SEED = 0xDABADABA - (1 << 32) + (1 << 64)  # HashID's int seed 0xdabadaba, sign-extended to 64 bits

_MASK = (1 << 64) - 1
_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _MASK, 31) * _P1) & _MASK


def _merge(h: int, acc: int) -> int:
    return (((h ^ _round(0, acc)) * _P1) + _P4) & _MASK


def _stripes(data: bytes, seed: int) -> tuple[int, int]:
    """The accumulated hash of the 32-byte stripes of `data`, and how many bytes they took."""
    if len(data) < 32:
        return (seed + _P5) & _MASK, 0
    acc = [(seed + _P1 + _P2) & _MASK, (seed + _P2) & _MASK, seed, (seed - _P1) & _MASK]
    end = len(data) - len(data) % 32
    for pos in range(0, end, 32):
        lanes = struct.unpack_from("<4Q", data, pos)
        acc = [_round(a, lane) for a, lane in zip(acc, lanes, strict=True)]
    h = (_rotl(acc[0], 1) + _rotl(acc[1], 7) + _rotl(acc[2], 12) + _rotl(acc[3], 18)) & _MASK
    for a in acc:
        h = _merge(h, a)
    return h, end


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 of `data` (unsigned 64-bit), as the reference implementation and Hudi's `XXHash64` compute it."""
    seed &= _MASK
    h, pos = _stripes(data, seed)
    h = (h + len(data)) & _MASK
    while pos + 8 <= len(data):
        (lane,) = struct.unpack_from("<Q", data, pos)
        h = ((_rotl(h ^ _round(0, lane), 27) * _P1) + _P4) & _MASK
        pos += 8
    if pos + 4 <= len(data):
        (word,) = struct.unpack_from("<I", data, pos)
        h = ((_rotl(h ^ ((word * _P1) & _MASK), 23) * _P2) + _P3) & _MASK
        pos += 4
    for byte in data[pos:]:
        h = (_rotl(h ^ ((byte * _P5) & _MASK), 11) * _P1) & _MASK
    h = ((h ^ (h >> 33)) * _P2) & _MASK
    h = ((h ^ (h >> 29)) * _P3) & _MASK
    return h ^ (h >> 32)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def hash_id_64(text: str) -> str:
    """`ColumnIndexID` / `PartitionIndexID` as key text: Base64 of XXH64 (Hudi's seed) as 8 big-endian bytes."""
    return _b64(xxh64(text.encode("utf-8"), HUDI_XXH64_SEED).to_bytes(8, "big"))


def hash_id_128(text: str) -> str:
    """`FileIndexID` as key text: Base64 of the MD5 of the UTF-8 text."""
    return _b64(hashlib.md5(text.encode("utf-8"), usedforsecurity=False).digest())


def partition_id(partition_path: str) -> str:
    """The partition identifier Java hashes: the path, `.` for a non-partitioned table (`getPartitionIdentifier`)."""
    return partition_path or NON_PARTITIONED_ID


def column_stats_key(column: str, partition_path: str, file_name: str) -> str:
    """column_stats key of one column of one file (`HoodieMetadataPayload.getColumnStatsIndexKey`)."""
    return hash_id_64(column) + hash_id_64(partition_id(partition_path)) + hash_id_128(file_name)


def partition_stats_key(column: str, partition_path: str) -> str:
    """partition_stats key of one column of one data partition (`getPartitionStatsIndexKey`)."""
    return hash_id_64(column) + hash_id_64(partition_id(partition_path))


def bloom_filter_key(partition_path: str, base_file_name: str) -> str:
    """bloom_filters key of one base file (`getBloomFilterIndexKey`)."""
    return hash_id_64(partition_id(partition_path)) + hash_id_128(base_file_name)


# ---- secondary index keys ---------------------------------------------------------------------------------

SECONDARY_KEY_SEPARATOR = "$"
_ESCAPE = "\\"
NULL_SECONDARY_VALUE = "\0"  # how a null secondary value is written (SecondaryIndexKeyUtils)


def escape_secondary_part(text: str) -> str:
    """`text` with `\\`, `$` and NUL prefixed by `\\` (SecondaryIndexKeyUtils.escapeSpecialChars)."""
    return "".join(_ESCAPE + c if c in (_ESCAPE, SECONDARY_KEY_SEPARATOR, "\0") else c for c in text)


def secondary_index_key(secondary_value: str | None, record_key: str) -> str:
    """`escape(value) $ escape(record key)`; a null value is the single NUL character, unescaped."""
    head = NULL_SECONDARY_VALUE if secondary_value is None else escape_secondary_part(secondary_value)
    return head + SECONDARY_KEY_SEPARATOR + escape_secondary_part(record_key)


def secondary_key_prefix(key: str) -> str:
    """The part of a secondary index key up to and including its first unescaped `$`."""
    i = 0
    while i < len(key):
        if key[i] == _ESCAPE:
            i += 2
            continue
        if key[i] == SECONDARY_KEY_SEPARATOR:
            return key[: i + 1]
        i += 1
    raise ValueError(f"secondary index key {key!r} has no unescaped {SECONDARY_KEY_SEPARATOR!r}")


# ---- file group of a key ----------------------------------------------------------------------------------


def java_string_hash(text: str) -> int:
    """Java's `String.hashCode`: over UTF-16 code units, 32-bit two's complement."""
    units = text.encode("utf-16-be")
    h = 0
    for (unit,) in struct.iter_unpack(">H", units):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _java_abs(n: int) -> int:
    """Math.abs on an int: Integer.MIN_VALUE stays negative."""
    return n if n == -(1 << 31) else abs(n)


def _java_rem(a: int, b: int) -> int:
    """Java's `%` (the sign follows the dividend)."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def file_group_index(key: str, file_group_count: int) -> int:
    """Index (in fileId order) of the file group holding `key` (`mapRecordKeyToFileGroupIndex`)."""
    if file_group_count <= 0:
        raise ValueError(f"a partition with {file_group_count} file groups holds no key")
    return abs(_java_rem(_java_abs(java_string_hash(key)), file_group_count))


def secondary_file_group_index(key: str, file_group_count: int, index_version: str) -> int:
    """File group of a secondary index key: V1 hashes the whole key, V2 (table version 9) its secondary-value
    prefix with the `$` (`getSecondaryKeyToFileGroupMappingFunction`)."""
    hashed = key if index_version == "V1" else secondary_key_prefix(key)
    return file_group_index(hashed, file_group_count)
