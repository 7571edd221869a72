"""Hudi's simple BUCKET index: a record key's hash picks its bucket, a bucket is one file group.

The hash is Java's `List<String>.hashCode()` over the index key field values, masked to a non-negative
int and taken modulo the bucket count; a bucket's file id starts with the bucket number in 8 digits.
"""

from __future__ import annotations

import uuid

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_meta.errors import BadValueError

_INT_MASK = 0xFFFFFFFF
# hoodie.bucket.index.num.buckets is a Java int, but a file id holds its bucket in 8 digits (Java's
# BucketIdentifier writes `%08d` and reads back the first 8 characters): bucket 10^8 would read as bucket 10^7
MAX_BUCKETS = 10**8
DEFAULT_BUCKETS = 4  # buckets per partition of a table `hudi-meta ingest --create` makes


def check_buckets(count: int) -> int:
    """`count` when a table can hold that many buckets (1 to MAX_BUCKETS)."""
    if isinstance(count, bool) or not 1 <= count <= MAX_BUCKETS:
        raise BadValueError(f"buckets must be from 1 to {MAX_BUCKETS}, got {count}")
    return count


def java_string_hash(text: str) -> int:
    """`String.hashCode()`: 31-based over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _INT_MASK
    return h - (1 << 32) if h & 0x80000000 else h


def java_list_hash(values: list[str | None]) -> int:
    """`List.hashCode()` of strings, as a signed 32-bit int."""
    h = 1
    for v in values:
        h = (31 * h + (java_string_hash(v) if v is not None else 0)) & _INT_MASK
    return h - (1 << 32) if h & 0x80000000 else h


def hash_key_values(record_key: str, hash_fields: tuple[str, ...]) -> list[str | None]:
    """Values of the hash fields inside a record key: `v` for simple keys, `f1:v1,f2:v2` for complex ones."""
    if ":" not in record_key:
        return [record_key]
    pairs = dict(part.split(":", 1) for part in record_key.split(",") if ":" in part)
    if not all(f in pairs for f in hash_fields):
        return [record_key]
    return [pairs[f] for f in hash_fields]


def bucket_id(record_key: str, num_buckets: int, hash_fields: tuple[str, ...] = ("",)) -> int:
    return (java_list_hash(hash_key_values(record_key, hash_fields)) & 0x7FFFFFFF) % num_buckets


def bucket_of_file_id(file_id: str) -> int | None:
    head = file_id[:8]
    return int(head) if head.isdigit() else None


def new_bucket_file_id(bucket: int) -> str:
    """A new file id for `bucket`: a random UUID whose first 8 characters are the bucket number."""
    return f"{bucket:08d}{str(uuid.uuid4())[8:]}-0"


def bucket_id_array(record_keys: pa.Array, num_buckets: int, hash_fields: tuple[str, ...]) -> pa.Array:
    """`bucket_id` of each key as an int32 array: non-empty ASCII keys without ':' (simple keys, the common
    case) are hashed on the array's bytes with numpy (the same values), other keys one by one."""
    keys = record_keys.cast(pa.string())
    if not _simple_ascii(keys):
        return pa.array([bucket_id(k, num_buckets, hash_fields) for k in keys.to_pylist()], pa.int32())
    offsets = np.frombuffer(keys.buffers()[1], dtype=np.int32)[keys.offset : keys.offset + len(keys) + 1]
    data = np.frombuffer(keys.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]].astype(np.uint32)
    starts = (offsets[:-1] - offsets[0]).astype(np.int64)
    lengths = np.diff(offsets).astype(np.int64)
    ends = starts + lengths
    exponent = np.repeat(ends, lengths) - 1 - np.arange(len(data), dtype=np.int64)
    # 31^j modulo 2^32: uint32 array arithmetic wraps like Java's int arithmetic
    powers = np.ones(int(lengths.max()), dtype=np.uint32)
    powers[1:] = np.cumprod(np.full(len(powers) - 1, 31, dtype=np.uint32), dtype=np.uint32)
    string_hash = np.add.reduceat(data * powers[exponent], starts, dtype=np.uint32)
    list_hash = np.uint32(31) + string_hash  # List.hashCode of one element: 31 * 1 + hash
    return pa.array(((list_hash & np.uint32(0x7FFFFFFF)) % np.uint32(num_buckets)).astype(np.int32))


def _simple_ascii(keys: pa.Array) -> bool:
    """Keys `bucket_id` hashes whole (no ':'), each non-empty (numpy's reduceat needs one byte per key), ASCII
    (one UTF-16 unit per byte)."""
    return (
        len(keys) > 0
        and keys.null_count == 0
        and pc.min(pc.binary_length(keys)).as_py() > 0
        and pc.all(pc.string_is_ascii(keys)).as_py()
        and not pc.any(pc.match_substring(keys, ":")).as_py()
    )
