"""Compaction of the metadata table's files partition (hudi_meta/metadata/compaction.py): due every N
deltacommits, run before the write's own deltacommit; readers (ours, hudi-rs through the MDT) read the same before
and after, and a compaction killed at any step is finished by the next write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from hudi_meta.metadata.compaction import compact_if_necessary
from hudi_meta.metadata.crash import COMPACTION_POINTS, CRASH_AT_ENV
from hudi_meta.metadata.init import create_metadata_table
from hudi_meta.table.metadata_table import read_files_partition
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action, instant_epoch_ms
from hudi_meta.write.failed_writes import rollback_failed_write
from hudi_meta.write.writer import WriteClient
from tests.compaction.core import CoreTable, by_id, region_rows
from tests.metadata.helpers import check_readers, compacting_hook, rollback_hook, write_failing_after_mdt

ROOT = Path(__file__).resolve().parents[2]


def write(t: CoreTable, n: int, every: int) -> None:
    w = WriteClient(t.table, metadata_writer=compacting_hook(t.path, every))
    w.begin()
    w.append_log(t.partition, t.file_id or "", region_rows("eu", (f"x{n}", n, float(n))))
    w.commit()


def compactions(path: str) -> list[str]:
    mdt = HudiTable.open(f"{path}/.hoodie/metadata")
    return [i.requested_time for i in mdt.timeline.completed() if i.action == Action.COMMIT]


@pytest.mark.parametrize("version", [6, 8, 9])
def test_compaction_every_n_deltacommits(tmp_path: Path, version: int) -> None:
    t = CoreTable(tmp_path / "t", version=version)
    t.write(region_rows("eu", ("a", 1, 1.0)))
    create_metadata_table(t.table)
    for n in range(8):
        write(t, n, every=3)
        check_readers(t.path)
    done = compactions(t.path)
    assert len(done) == 2  # when 3 deltacommits (the init one counts) completed since the last
    if version == 6:
        assert all(len(c) == 20 and c.endswith("001") for c in done)
    listing = read_files_partition(t.table)
    assert listing.base_file is not None and done[-1] in listing.base_file
    assert len(by_id(t.table.read())) == 9


@pytest.mark.slow
@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("step", COMPACTION_POINTS)
def test_kill_while_compacting(tmp_path: Path, version: int, step: str) -> None:
    t = CoreTable(tmp_path / "t", version=version)
    t.write(region_rows("eu", ("a", 1, 1.0)))
    create_metadata_table(t.table)
    write(t, 1, every=100)
    before = by_id(t.table.read())
    env = {**os.environ, "PYTHONPATH": str(ROOT), CRASH_AT_ENV: step}
    out = subprocess.run(
        [sys.executable, "-m", "tests.metadata.crash_child", "compact", t.path],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == -signal.SIGKILL, out.stderr
    assert by_id(HudiTable.open(t.path).read()) == before
    check_readers(t.path)
    write(t, 2, every=100)  # finishes the pending compaction first
    mdt = HudiTable.open(f"{t.path}/.hoodie/metadata")
    assert not mdt.timeline.pending_compactions() and len(compactions(t.path)) == 1
    check_readers(t.path)


@pytest.mark.parametrize("version", [6, 9])
def test_compaction_leaves_a_failed_write_rollbackable(tmp_path: Path, version: int) -> None:
    """A write complete on the MDT but pending on the data table: 1.x compacts at 1 ms below it (its deltacommit
    stays out of the base file and can still be rolled back); 0.x does not compact while it is pending."""
    t = CoreTable(tmp_path / "t", version=version)
    t.write(region_rows("eu", ("a", 1, 1.0)))
    create_metadata_table(t.table)
    write(t, 1, every=100)
    failed = write_failing_after_mdt(t.path, t.partition, t.file_id or "", region_rows("eu", ("a", 5, 9.0)))
    report = compact_if_necessary(HudiTable.open(t.path), max_delta_commits=1)
    if version == 6:
        assert report is None
    else:
        assert report is not None and report.instant < failed
        assert instant_epoch_ms(failed) - instant_epoch_ms(report.instant) == 1
    check_readers(t.path)
    rollback_failed_write(t.table, failed, dry_run=False, force=True, metadata_writer=rollback_hook(t.path))
    check_readers(t.path)
    write(t, 2, every=1)
    check_readers(t.path)
    assert by_id(t.table.read())["a"] == (1, 1.0)
