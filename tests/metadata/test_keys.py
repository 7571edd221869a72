"""MDT keys: XXH64 against published vectors, Java's String.hashCode, and the keys the fixtures hold."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.metadata.keys import (
    bloom_filter_key,
    column_stats_key,
    escape_secondary_part,
    file_group_index,
    hash_id_64,
    java_string_hash,
    partition_stats_key,
    secondary_file_group_index,
    secondary_index_key,
    secondary_key_prefix,
    xxh64,
)

# XXH64 reference vectors (xxHash's own test values and python-xxhash's README).
VECTORS = [
    (b"", 0, 0xEF46DB3751D8E999),
    (b"a", 0, 0xD24EC4F1A98C6E5B),
    (b"abc", 0, 0x44BC2CF5AD770999),
    (b"Nobody inspects the spammish repetition", 0, 0xFBCEA83C8A378BF1),
]


def test_xxh64_vectors() -> None:
    for data, seed, expected in VECTORS:
        assert xxh64(data, seed) == expected


def test_fixture_keys() -> None:
    """Keys read from the fixtures' MDT files (v8_trips_8i3u1d, v9_txns_simple_meta)."""
    assert hash_id_64("driver") == "AjpJ7N1gBZc="
    assert hash_id_64("city=sao_paulo") == "6Hj+sBy+gvM="
    assert hash_id_64(".") == "FXThHwelITM="
    name = "3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0_1-27-53_20260307162557587.parquet"
    assert column_stats_key("fee_amount", "region=us", name) == "5RNSbpYG6oU=431THTTwO5Q=F01d3NbdD9QcFpSCtykrRA=="
    assert partition_stats_key("region", "region=eu") == "KYuVooVbzP4=bOOVnCDQlm8="
    assert bloom_filter_key("", name).startswith("FXThHwelITM=")
    # record_index: TXN-008 is in record-index-0001, TXN-001 in 0008 (v9_txns_simple_meta, 10 file groups)
    assert file_group_index("TXN-008", 10) == 1
    assert file_group_index("TXN-001", 10) == 8
    assert file_group_index("c8abbe79-8d89-47ea-b4ce-4d224bae5bfa", 10) == 3


@given(st.binary(max_size=100), st.integers(0, 2**64 - 1))
def test_xxh64_is_64_bit(data: bytes, seed: int) -> None:
    assert 0 <= xxh64(data, seed) < 2**64


@given(st.text())
def test_java_string_hash(text: str) -> None:
    units = struct.unpack(f">{len(text.encode('utf-16-be')) // 2}H", text.encode("utf-16-be"))
    h = 0
    for u in units:
        h = (h * 31 + u) % 2**32
    assert java_string_hash(text) == (h - 2**32 if h >= 2**31 else h)


@given(st.text(), st.integers(1, 10_000))
def test_file_group_index_in_range(key: str, n: int) -> None:
    assert 0 <= file_group_index(key, n) < n


@given(st.one_of(st.none(), st.text()), st.text())
def test_secondary_key_prefix(value: str | None, record_key: str) -> None:
    key = secondary_index_key(value, record_key)
    head = "\0" if value is None else escape_secondary_part(value)
    assert secondary_key_prefix(key) == head + "$"
    assert secondary_file_group_index(key, 10, "V2") == file_group_index(head + "$", 10)
    assert secondary_file_group_index(key, 10, "V1") == file_group_index(key, 10)


def test_null_secondary_value() -> None:
    assert secondary_index_key(None, "TXN-003") == "\0$TXN-003"
