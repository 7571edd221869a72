"""Without polars (the `fast` extra, issue 29) a streamed compaction writes the same new base file, and gives up in
the same cases.

The key hashes of `stream._hash` only find a key the base file holds twice within one call; they are never
stored, so the fallback (Python's string hash) need not equal polars' hash, only find the same repeats. Rules
tested: `_repeats` over the fallback's hashes says what polars' hashes say, which is whether a key repeats
(random keys, batches and repeats); and `stream_new_base_file` on random slices gives the same count and the
same rows with and without polars.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_meta.compaction import stream
from hudi_meta.compaction.stream import stream_new_base_file
from hudi_meta.file_group.merge.records import SliceRecords
from hudi_meta.file_group.merge.rules import MergeSpec
from hudi_meta.storage import LocalStorage
from tests.compaction.test_layout_snapshot import with_logs
from tests.compaction.test_stream import NAME, rows
from tests.file_group.test_reader import slices
from tests.format.test_avro_columnar_fallback import without_polars

KEYS = st.text(min_size=0, max_size=12) | st.sampled_from(["k1", "k2", "key", "e000000001", ""])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(KEYS, max_size=40), min_size=1, max_size=4))
def test_the_fallback_hash_finds_the_same_repeats(batches: list[list[str]]) -> None:
    arrays = [pa.array(keys, pa.string()) for keys in batches]
    repeats = len({k for keys in batches for k in keys}) != sum(map(len, batches))
    fast = stream._repeats([stream._hash(a) for a in arrays])
    with without_polars():
        hashes = [stream._hash(a) for a in arrays]
    assert all(h.dtype.name == "uint64" and len(h) == len(a) for h, a in zip(hashes, arrays, strict=True))
    assert fast == stream._repeats(hashes) == repeats


@settings(max_examples=150, deadline=None)
@given(slices(flagged_base=False), slices())
def test_a_streamed_base_file_is_the_same_without_polars(
    compacted: tuple[SliceRecords, MergeSpec, pa.Array | None], kept: tuple[SliceRecords, MergeSpec, pa.Array | None]
) -> None:
    records, spec, _ = compacted
    if records.base is None or records.schema is None:
        return
    rest = with_logs(None, spec, kept[0]) if kept[0].schema == records.schema else None
    logs = SliceRecords(records.schema, None, records.log_rows, records.parts, records.log_keys, spec)
    results = []
    for polars in (True, False):
        with tempfile.TemporaryDirectory() as d:
            path = str(Path(d) / "base.parquet")
            pq.write_table(records.base, path, row_group_size=3)
            out = str(Path(d) / NAME)
            stream.BATCH_ROWS, saved = 2, stream.BATCH_ROWS
            try:
                if polars:
                    count = stream_new_base_file(LocalStorage(), path, logs, rest, spec, out)
                else:
                    with without_polars():
                        count = stream_new_base_file(LocalStorage(), path, logs, rest, spec, out)
            finally:
                stream.BATCH_ROWS = saved
            results.append((count, rows(pq.read_table(out)) if count is not None else None))
    assert results[0] == results[1]
