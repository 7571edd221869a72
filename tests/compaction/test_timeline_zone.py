"""A delete without an ordering value happens at its block's instant time, and that time is read in the table's
timeline zone (docs/event-time.md section 2). On a `LOCAL` table written west of UTC, reading the instant as UTC
puts a delete made after T hours before T: an exact compaction would then drop from RO a key that existed at T."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.format.block_content import DeleteRecord
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import WriteClient, create_table

HOUR_MS = 3_600_000


def rows(ids: list[str], ts: int) -> pa.Table:
    return pa.table({"id": ids, "ts": pa.array([ts] * len(ids), pa.int64()), "region": ["eu"] * len(ids)})


@pytest.mark.usefixtures("los_angeles")
def test_a_delete_after_t_keeps_its_key_in_an_exact_ro_view(tmp_path: Path, engine: Engine) -> None:
    now = int(dt.datetime.now(dt.UTC).timestamp() * 1000)
    table = create_table(
        str(tmp_path / "t"),
        "t",
        ["id"],
        "ts",
        ["region"],
        event_time_field="ts",
        extra_props={"hoodie.table.timeline.timezone": "LOCAL"},
    )
    w = WriteClient(table)
    w.begin()
    fid = w.write_base_file("region=eu", rows(["a"], now - 2 * HOUR_MS)).file_id
    w.commit("INSERT")
    w = WriteClient(HudiTable.open(table.base_path))
    w.begin()  # now (its instant in Los Angeles time): after T
    w.append_log("region=eu", fid, rows(["b"], now - 90 * 60_000), [DeleteRecord("a", "region=eu")])
    w.commit()
    threshold = now - HOUR_MS  # a existed at T; it was deleted after T; b was written before T
    result = schedule_compaction(
        engine, HudiTable.open(table.base_path), ScheduleRequest(threshold_ms=threshold, exact=True)
    )
    assert result.instant is not None
    run_compaction(HudiTable.open(table.base_path), result.instant)
    done = HudiTable.open(table.base_path)
    assert sorted(done.read("ro").column("id").to_pylist()) == ["a", "b"]  # the table as of T
    assert sorted(done.read("snapshot").column("id").to_pylist()) == ["b"]
