"""A compaction that streams the old base file writes the new base file the whole-file layout writes (issue 15).

Rule tested: for a plain (not exact) compaction, `stream_new_base_file` gives, row for row and in the same order,
the records of `plan_layout(...).base` with the new file name, or gives up (None) exactly when the rest of the
slice holds a key of the base file or of the compacted logs (the layout decides those keys one by one) or the
base file holds a key twice. Slices are random (tests/file_group/test_reader.py), the base file is
written to Parquet in small row groups so that the stream crosses batches.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings

from hudi_meta.compaction import stream
from hudi_meta.compaction.layout import plan_layout
from hudi_meta.compaction.stream import stream_new_base_file, with_file_name
from hudi_meta.file_group.merge.records import SliceRecords
from hudi_meta.file_group.merge.rules import MergeSpec
from hudi_meta.file_group.record_keys import record_key_array
from hudi_meta.storage import LocalStorage
from tests.compaction.test_layout_snapshot import with_logs
from tests.file_group.test_reader import slices

NAME = "f1_1-0-1_20260101000010000.parquet"


@settings(max_examples=600, deadline=None)
@given(slices(flagged_base=False), slices())
def test_the_streamed_base_file_is_the_layouts(
    compacted: tuple[SliceRecords, MergeSpec, pa.Array | None], kept: tuple[SliceRecords, MergeSpec, pa.Array | None]
) -> None:
    records, spec, _ = compacted
    if records.base is None or records.schema is None:
        return
    rest = with_logs(None, spec, kept[0]) if kept[0].schema == records.schema else None
    logs = SliceRecords(records.schema, None, records.log_rows, records.parts, records.log_keys, spec)
    with tempfile.TemporaryDirectory() as d:
        path = str(Path(d) / "base.parquet")
        pq.write_table(records.base, path, row_group_size=3)
        out = str(Path(d) / NAME)
        stream.BATCH_ROWS, saved = 2, stream.BATCH_ROWS
        try:
            count = stream_new_base_file(LocalStorage(), path, logs, rest, spec, out)
        finally:
            stream.BATCH_ROWS = saved
        got = pq.read_table(out) if count is not None else None
        assert sorted(p.name for p in Path(d).iterdir()) == sorted(
            ["base.parquet", *([NAME] if got is not None else [])]
        )
    ours = {*record_key_array(records.base, spec).to_pylist(), *every_log_key(logs)}
    touched = rest is not None and any(k in ours for k in every_log_key(rest))
    if touched:
        assert count is None  # and nothing was created (checked above)
        return
    assert count is not None and got is not None
    layout = plan_layout(
        records, rest, spec, "", exact=False, carry_allowed=True, event_time_field=None, threshold_ms=None
    )
    assert not layout.carry.num_rows and not layout.carry_deletes
    expected = with_file_name(layout.base, NAME)
    assert count == expected.num_rows == got.num_rows
    assert rows(got) == rows(expected)


def every_log_key(records: SliceRecords) -> list[str]:
    """The keys of every log record, data and delete."""
    return [*records.log_keys.to_pylist(), *(d.record_key for part in records.parts for d in part.deletes)]


def rows(table: pa.Table) -> list[dict[str, object]]:
    """Records with NaN spelled out (NaN != NaN would fail equal rows)."""
    return [{k: "NaN" if v != v else v for k, v in r.items()} for r in table.to_pylist()]
