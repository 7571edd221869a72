"""Freshness from the index (issue 11 part 1), on a table whose event times are chosen so that every figure is
known by hand from docs/event-time.md section 6: threshold = the T the newest completed event-time compaction
published; watermark = min(T, smallest min event time of committed data blocks not in a base file); late data =
such blocks committed after that compaction with a min event time below T; a rolled-back compaction takes its
threshold with it. The promise itself is checked against RO as read: every key whose current version has an
event time below the watermark has that version in RO."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hudi_meta.freshness import Freshness, freshness
from hudi_meta.index.db import make_engine
from hudi_meta.index.freshness_inputs import completed_compactions, pending_blocks
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.registry import table_id_of
from hudi_meta.table.table import HudiTable
from tests.conftest import table_id, table_zips
from tests.model.harness import ModelTable, Op, read_rows, store_template
from tests.model.model import at

NOW = at(1000)


def measure(t: ModelTable) -> Freshness:
    t.index()
    table_id = table_id_of(t.engine, t.table.base_path)
    assert table_id is not None
    return freshness(completed_compactions(t.engine, table_id), pending_blocks(t.engine, table_id), NOW)


def assert_promise(t: ModelTable, f: Freshness) -> int:
    """Every key whose snapshot version is below the watermark has that version in RO (as read). Returns how
    many keys that covered."""
    assert f.watermark_ms is not None
    snapshot = {r[0]: r for r in read_rows(t.table.read("snapshot"))}
    ro = {r[0]: r for r in read_rows(t.table.read("ro"))}
    below = [k for k, r in snapshot.items() if r[3] is not None and r[3] < f.watermark_ms]
    for key in below:
        assert ro.get(key) == snapshot[key], (key, snapshot[key], ro.get(key), f.watermark_ms)
    return len(below)


def test_threshold_watermark_late_data_and_rollback(tmp_path: Path) -> None:
    t = ModelTable(str(tmp_path / "t"))
    try:
        t.bootstrap([Op("k00", 10, 1.0), Op("k01", 10, 1.0), Op("k10", 10, 1.0), Op("k11", 10, 1.0)])
        t.write([Op("k02", 20, 1.0), Op("k03", 30, 1.0), Op("k12", 25, 1.0), Op("k13", 35, 1.0)])
        t.write([Op("k04", 80, 1.0), Op("k05", 90, 1.0), Op("k14", 85, 1.0), Op("k15", 95, 1.0)])
        before = measure(t)
        assert before.threshold_ms is None and before.watermark_ms is None  # no event-time compaction yet
        assert before.min_pending_event_time_ms == at(20)

        first = t.schedule(50, "symlink", exact=False)
        assert first is not None
        t.run()
        f = measure(t)
        # the logs with event times 20..35 are merged; the ones with 80..95 stay as links (counted once each)
        assert (f.compaction_instant, f.threshold_ms, f.watermark_ms) == (first, at(50), at(50))
        assert f.min_pending_event_time_ms == at(80)
        assert f.late_blocks == 0 and f.latest_late_instant is None and f.unknown_event_time_blocks == 0
        assert f.lag_ms == NOW - at(50)
        assert assert_promise(t, f) == 8  # the 4 bootstrap keys and the 4 merged ones

        late = t.write([Op("k06", 5, 2.0)])  # late data: event time 5, below T
        f = measure(t)
        assert (f.threshold_ms, f.watermark_ms) == (at(50), at(5))
        assert (f.late_blocks, f.late_records, f.latest_late_instant) == (1, 1, late)
        assert assert_promise(t, f) == 0  # nothing is older than the late record

        second = t.schedule(60, "symlink", exact=False)  # covers the late log (5 <= 60), not 80..95
        assert second is not None
        t.run()
        f = measure(t)
        assert (f.compaction_instant, f.threshold_ms, f.watermark_ms, f.late_blocks) == (second, at(60), at(60), 0)
        assert assert_promise(t, f) == 9

        t.rollback_completed()  # takes `second` back: freshness is the first compaction's again
        f = measure(t)
        assert (f.compaction_instant, f.threshold_ms, f.watermark_ms) == (first, at(50), at(5))
        assert (f.late_blocks, f.latest_late_instant) == (1, late)

        out = subprocess.run(
            [sys.executable, "-m", "hudi_meta.cli.main", "--db", f"sqlite:///{t.root}/store.db"]
            + ["freshness", t.table.base_path, "--json"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr
        cli = json.loads(out.stdout)
        assert (cli["threshold_ms"], cli["watermark_ms"], cli["late_records"]) == (at(50), at(5), 1)
        assert cli["compaction_instant"] == first
    finally:
        t.close()


def test_unknown_table_and_bad_store_are_one_line(tmp_path: Path) -> None:
    for args in (["freshness", str(tmp_path / "nope")], ["--db", "bogus://x", "freshness", str(tmp_path)]):
        out = subprocess.run(
            [sys.executable, "-m", "hudi_meta.cli.main", *args], capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 2 and len(out.stderr.splitlines()) == 1, out.stderr


@pytest.mark.parametrize("archive", [a for a in table_zips() if "/mor/" in str(a)], ids=table_id)
def test_java_written_tables_publish_no_threshold(archive: Path, fixture_table: Any, tmp_path: Path) -> None:
    """Tables Java wrote have no event-time compaction: no threshold and no watermark, whatever their logs."""
    engine = make_engine(f"sqlite:///{shutil.copy(store_template(), tmp_path / 'store.db')}")
    table = HudiTable.open(str(fixture_table(archive)))
    indexer = Indexer(engine, table)
    indexer.run()
    assert indexer.table_id is not None
    f = freshness(completed_compactions(engine, indexer.table_id), pending_blocks(engine, indexer.table_id), NOW)
    assert (f.threshold_ms, f.watermark_ms, f.compaction_instant, f.late_blocks) == (None, None, None, 0)
    engine.dispose()


def test_a_linked_delete_only_log_file_is_a_leftover_that_keeps_the_watermark(tmp_path: Path) -> None:
    """As in the quickstart: the newest log file of a slice holds only deletes, after T, and is kept as a link.
    It is a log file not compacted yet (leftover), but RO lacks no record because of it: the watermark is T."""
    t = ModelTable(str(tmp_path / "t"))
    try:
        t.bootstrap([Op("k00", 10, 1.0), Op("k01", 10, 1.0), Op("k10", 10, 1.0), Op("k11", 10, 1.0)])
        t.write([Op("k02", 20, 1.0), Op("k03", 20, 1.0), Op("k12", 20, 1.0), Op("k13", 20, 1.0)])
        t.write([Op("k00", 90, None)])  # a delete ordered at 90 s: after T, one log file of one file group
        first = t.schedule(50, "symlink", exact=False)
        assert first is not None
        t.run()
        f = measure(t)
        assert (f.threshold_ms, f.watermark_ms, f.min_pending_event_time_ms) == (at(50), at(50), None)
        assert (f.leftover_files, f.leftover_slices) == (1, 1) and f.leftover_bytes > 0
        assert assert_promise(t, f) == 7  # all but k00, deleted in the snapshot (RO still has it)
    finally:
        t.close()
