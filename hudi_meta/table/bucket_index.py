"""Hudi's simple BUCKET index: a record key's hash picks its bucket, a bucket is one file group.

The hash is Java's `List<String>.hashCode()` over the index key field values, masked to a non-negative
int and taken modulo the bucket count; a bucket's file id starts with the bucket number in 8 digits.
"""

from __future__ import annotations

import uuid

import numpy as np

INDEX_TYPE = "hoodie.index.type"
NUM_BUCKETS = "hoodie.bucket.index.num.buckets"
HASH_FIELD = "hoodie.bucket.index.hash.field"
_INT_MASK = 0xFFFFFFFF


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


def bucket_ids(record_keys: list[str], num_buckets: int, hash_fields: tuple[str, ...]) -> list[int]:
    """`bucket_id` for many keys; simple ASCII keys are hashed vectorised (same values), others one by one."""
    simple = all(k and k.isascii() and ":" not in k for k in record_keys)
    if not simple or not record_keys:
        return [bucket_id(k, num_buckets, hash_fields) for k in record_keys]
    data = np.frombuffer("".join(record_keys).encode("ascii"), dtype=np.uint8).astype(np.uint32)
    lengths = np.fromiter((len(k) for k in record_keys), dtype=np.int64, count=len(record_keys))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    ends = starts + lengths
    position = np.arange(len(data), dtype=np.int64)
    exponent = np.repeat(ends, lengths) - 1 - position
    # 31^j modulo 2^32: uint32 array arithmetic wraps like Java's int arithmetic
    powers = np.ones(int(lengths.max()), dtype=np.uint32)
    powers[1:] = np.cumprod(np.full(len(powers) - 1, 31, dtype=np.uint32), dtype=np.uint32)
    string_hash = np.add.reduceat(data * powers[exponent], starts, dtype=np.uint32)
    list_hash = np.uint32(31) + string_hash  # List.hashCode of one element: 31 * 1 + hash
    return ((list_hash & np.uint32(0x7FFFFFFF)) % np.uint32(num_buckets)).astype(np.int64).tolist()  # type: ignore[no-any-return]
