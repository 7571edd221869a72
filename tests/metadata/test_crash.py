"""Kill -9 at every step of the metadata-table writer (a child process, HUDI_META_MDT_CRASH_AT): the metadata
table left behind is without the killed instant or holds it complete, readers (ours, and hudi-rs listing through
the metadata table) never read a half-written instant, and the next run repairs what the kill left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from hudi_meta.metadata.crash import COMMIT_POINTS, CRASH_AT_ENV, INIT_POINTS, ROLLBACK_POINTS
from hudi_meta.metadata.init import create_metadata_table, metadata_partitions_now
from hudi_meta.table.table import HudiTable
from hudi_meta.write.failed_writes import rollback_failed_write
from tests.compaction.core import CoreTable, by_id, region_rows
from tests.metadata.helpers import by_key, check_readers, rollback_hook, rs_read, write_failing_after_mdt

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def child(*args: str, step: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if step is not None:
        env[CRASH_AT_ENV] = step
    return subprocess.run(
        [sys.executable, "-m", "tests.metadata.crash_child", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def killed(out: subprocess.CompletedProcess[str], path: str) -> None:
    """The child died by SIGKILL; the table lock it may have held is taken over (its holder is gone)."""
    assert out.returncode == -signal.SIGKILL, out.stderr


def table_with_mdt(path: Path, version: int) -> CoreTable:
    t = CoreTable(path, version=version)
    t.write(region_rows("eu", ("a", 1, 1.0), ("b", 2, 2.0)))
    create_metadata_table(t.table)
    return t


def mdt(path: str) -> HudiTable:
    return HudiTable.open(f"{path}/.hoodie/metadata")


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("step", INIT_POINTS)
def test_kill_while_creating(tmp_path: Path, version: int, step: str) -> None:
    """Until the data table's properties name it, readers list storage; creating again starts over."""
    t = CoreTable(tmp_path / "t", version=version)
    t.write(region_rows("eu", ("a", 1, 1.0)))
    before = by_id(t.table.read())
    killed(child("init", t.path, step=step), t.path)
    assert metadata_partitions_now(t.table) == ()
    assert by_id(t.table.read()) == before
    if version >= 8:
        assert rs_read(t.path, "snapshot", metadata=False) == by_key(t.table.read())
    create_metadata_table(HudiTable.open(t.path))
    check_readers(t.path)


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("step", COMMIT_POINTS)
def test_kill_while_writing(tmp_path: Path, version: int, step: str) -> None:
    """A write killed at any MDT step: T is pending on the data table; the MDT holds T complete or not at all as
    readers see it; rolling the failed write back takes T off the MDT; the next write is read by everyone."""
    t = table_with_mdt(tmp_path / "t", version)
    before = by_id(t.table.read())
    killed(child("write", t.path, "1", step=step), t.path)
    table = HudiTable.open(t.path)
    (failed,) = table.timeline.pending_writes()
    instant = mdt(t.path).timeline.instant(failed.requested_time)
    assert (instant is not None and instant.is_completed) == (step == "after-complete")
    assert by_id(table.read()) == before
    check_readers(t.path)
    rollback_failed_write(
        table, failed.requested_time, dry_run=False, force=True, metadata_writer=rollback_hook(t.path)
    )
    assert mdt(t.path).timeline.instant(failed.requested_time) is None
    check_readers(t.path)
    out = child("write", t.path, "2")
    assert out.returncode == 0, out.stderr
    after = by_id(HudiTable.open(t.path).read())
    assert set(after) == set(before) | {"e2", "u2"}
    check_readers(t.path)


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("step", ROLLBACK_POINTS)
def test_kill_while_rolling_back(tmp_path: Path, version: int, step: str) -> None:
    """A data-table rollback killed inside its MDT rollback: readers still skip T; running it again finishes."""
    t = table_with_mdt(tmp_path / "t", version)
    before = by_id(t.table.read())
    instant = write_failing_after_mdt(t.path, t.partition, t.file_id or "", region_rows("eu", ("a", 5, 9.0)))
    killed(child("rollback", t.path, instant, step=step), t.path)
    assert by_id(HudiTable.open(t.path).read()) == before
    check_readers(t.path)
    rollback_failed_write(
        HudiTable.open(t.path), instant, dry_run=False, force=True, metadata_writer=rollback_hook(t.path)
    )
    assert mdt(t.path).timeline.instant(instant) is None
    assert not [i for i in mdt(t.path).timeline.pending()]
    check_readers(t.path)
