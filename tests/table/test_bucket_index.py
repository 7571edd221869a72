"""Hudi's BUCKET index hashing: Java's String/List hashCode, vectorised and per key alike."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_meta.errors import BadValueError
from hudi_meta.table.bucket_index import (
    MAX_BUCKETS,
    bucket_id,
    bucket_id_array,
    bucket_of_file_id,
    check_buckets,
    java_list_hash,
    java_string_hash,
    new_bucket_file_id,
)


def test_java_hash_values() -> None:
    assert java_string_hash("hello") == 99162322  # "hello".hashCode()
    assert java_string_hash("polygenelubricants") == -(2**31)  # a known Integer.MIN_VALUE hash
    assert java_list_hash(["hello"]) == 31 + 99162322
    assert java_string_hash("𝄞") == java_string_hash("\ud834\udd1e".encode("utf-16", "surrogatepass").decode("utf-16"))


@settings(deadline=None)  # timings vary under load; the property is about values
@given(
    st.lists(
        st.text(st.characters(min_codepoint=32, max_codepoint=0x2FFFF, exclude_categories=["Cs"]), max_size=40),
        max_size=50,
    ),
    st.integers(1, 64),
)
def test_vectorised_buckets_equal_per_key(keys: list[str], buckets: int) -> None:
    assert bucket_id_array(pa.array(keys, pa.string()), buckets, ("id",)).to_pylist() == [
        bucket_id(k, buckets, ("id",)) for k in keys
    ]


@settings(deadline=None)
@given(
    st.lists(st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=60), max_size=200),
    st.integers(1, 1000),
)
def test_vectorised_ascii_path(keys: list[str], buckets: int) -> None:
    keys = [k.replace(":", "_") for k in keys]
    assert bucket_id_array(pa.array(keys, pa.string()), buckets, ("id",)).to_pylist() == [
        bucket_id(k, buckets, ("id",)) for k in keys
    ]


def test_complex_keys_hash_on_the_hash_fields() -> None:
    key = "event_id:e1,region:eu"
    assert bucket_id(key, 8, ("event_id",)) == (java_list_hash(["e1"]) & 0x7FFFFFFF) % 8
    assert bucket_id(key, 8, ("event_id", "region")) == (java_list_hash(["e1", "eu"]) & 0x7FFFFFFF) % 8


def test_bucket_file_ids() -> None:
    fid = new_bucket_file_id(7)
    assert fid.startswith("00000007-") and fid.endswith("-0") and bucket_of_file_id(fid) == 7
    assert bucket_of_file_id("abcdefgh-0") is None


def test_a_bucket_count_stays_within_eight_digit_file_ids() -> None:
    """Java writes a bucket as `%08d` and reads back the first 8 characters: the last bucket of MAX_BUCKETS
    round-trips, one more would read as another bucket (issue 25: `--buckets 1000000000000` was written)."""
    last = new_bucket_file_id(MAX_BUCKETS - 1)
    assert bucket_of_file_id(last) == MAX_BUCKETS - 1
    assert bucket_of_file_id(new_bucket_file_id(MAX_BUCKETS)) != MAX_BUCKETS
    assert check_buckets(1) == 1 and check_buckets(MAX_BUCKETS) == MAX_BUCKETS
    for bad in (0, -1, MAX_BUCKETS + 1, 10**12, True):
        with pytest.raises(BadValueError, match="buckets must be from 1 to 100000000"):
            check_buckets(bad)


def test_a_slice_of_a_key_array_hashes_its_own_keys() -> None:
    """Arrow arrays can be views (an offset into shared buffers): the hash must read the view's keys only."""
    keys = pa.array([f"key-{i}" for i in range(100)], pa.string())
    view = keys.slice(37, 20)
    assert bucket_id_array(view, 7, ("id",)).to_pylist() == [bucket_id(f"key-{i}", 7, ("id",)) for i in range(37, 57)]
    assert bucket_id_array(pa.array([], pa.string()), 7, ("id",)).to_pylist() == []
