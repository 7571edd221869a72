"""Rollback of a failed write: markers drive it, reads return to the state before, the next write works."""

from __future__ import annotations

import time
from pathlib import Path

from hudi_meta.format.block_content import DeleteRecord
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action
from hudi_meta.write.failed_writes import rollback_failed_write, rollback_failed_writes
from hudi_meta.write.markers import list_markers
from hudi_meta.write.writer import WriteClient
from tests.write.test_writer import EXPIRY_S, batch, hudi_rs_rows, rows, write_demo


def failed_write(table: HudiTable) -> WriteClient:
    fg = next(fg for fg in table.file_groups() if fg.partition == "region=eu")
    w = WriteClient(table)
    w.begin()
    w.append_log("region=eu", fg.file_id, batch("eu", [1, 70], 9_000), [DeleteRecord("eu-0", "region=eu")])
    w.write_base_file("region=apac", batch("apac", [1, 2], 9_000))
    assert w.heartbeat is not None
    w.heartbeat.stop(delete=False)  # the writer died here: no more beats, no commit
    time.sleep(EXPIRY_S * 2)  # its heartbeat is now older than interval * tolerable misses
    return w


def as_timeline_server_markers(meta: Path, instant: str) -> None:
    """Rewrite a write's direct markers as Java's timeline server leaves them (`MarkerUtils`): their names, one per
    line relative to the marker folder, in `MARKERS<n>` files, and the kind in `MARKERS.type`."""
    root = meta / ".temp" / instant
    names = sorted(str(p.relative_to(root)) for p in root.rglob("*.marker.*"))
    for p in root.rglob("*.marker.*"):
        p.unlink()
    (root / "MARKERS0").write_text("\n".join(names[:1]) + "\n")
    (root / "MARKERS1").write_text("\n".join(names[1:]) + "\n")
    (root / "MARKERS.type").write_text("TIMELINE_SERVER_BASED")


def test_a_java_write_with_timeline_server_markers_is_rolled_back_from_them(tmp_path: Path) -> None:
    """Rule: Java's default markers live in `MARKERS<n>` files; a failed write marked that way is rolled back as one
    with direct markers: the same reads as before it (ours and hudi-rs), its base file gone, no marker left."""
    path = tmp_path / "demo"
    table = write_demo(path)
    before = rows(table.read("snapshot"))
    w = failed_write(table)
    direct = list_markers(table.storage, table.meta_path, w.instant)
    as_timeline_server_markers(path / ".hoodie", w.instant)
    assert list_markers(table.storage, table.meta_path, w.instant) == direct
    table = HudiTable.open(str(path))
    report = rollback_failed_write(table, w.instant, dry_run=False)
    assert sorted(a.operation for a in report.actions) == ["append_rollback_block", "delete"]
    table = HudiTable.open(str(path))
    assert rows(table.read("snapshot")) == before == hudi_rs_rows(path, "snapshot")
    assert not list((path / "region=apac").glob("*.parquet"))
    assert not [p for p in (path / ".hoodie" / ".temp" / w.instant).rglob("*") if p.is_file()]


def test_rollback_restores_reads_and_unblocks_writes(tmp_path: Path) -> None:
    path = tmp_path / "demo"
    table = write_demo(path)
    before = rows(table.read("snapshot"))
    w = failed_write(table)
    assert {m.kind for m in list_markers(table.storage, table.meta_path, w.instant)} == {"APPEND", "CREATE"}

    table = HudiTable.open(str(path))
    dry = rollback_failed_write(table, w.instant, dry_run=True)
    assert sorted(a.operation for a in dry.actions) == ["append_rollback_block", "delete"]
    assert not any(a.done for a in dry.actions)

    reports = rollback_failed_writes(table)
    assert [r.target for r in reports] == [w.instant] and all(a.done for a in reports[0].actions)
    table = HudiTable.open(str(path))
    assert rows(table.read("snapshot")) == before == hudi_rs_rows(path, "snapshot")
    assert not list((path / "region=apac").glob("*.parquet"))
    assert table.timeline.instant(w.instant) is None
    rollback = table.timeline.instants[-1]
    assert rollback.action == Action.ROLLBACK and rollback.is_completed
    eu_log = path / w.stats[0].path  # the failed write's own log file
    assert any(b.is_rollback and b.target_instant_time == w.instant for b in read_blocks(table.storage, str(eu_log)))
    assert list_markers(table.storage, table.meta_path, w.instant) == []

    nxt = WriteClient(table)
    nxt.begin()
    fg = next(fg for fg in table.file_groups() if fg.partition == "region=eu")
    nxt.append_log("region=eu", fg.file_id, batch("eu", [70], 9_500))
    nxt.commit()
    after = rows(HudiTable.open(str(path)).read("snapshot"))
    assert [r["id"] for r in after if r["id"] == "eu-70"] == ["eu-70"]
    assert after == hudi_rs_rows(path, "snapshot")


def test_rollback_is_idempotent_after_a_crash_midway(tmp_path: Path) -> None:
    path = tmp_path / "demo"
    table = write_demo(path)
    before = rows(table.read("snapshot"))
    w = failed_write(table)
    table = HudiTable.open(str(path))
    first = rollback_failed_write(table, w.instant, dry_run=False)
    # simulate a crash before the failed instant's files were removed: it looks pending again
    (path / ".hoodie" / f"{w.instant}.deltacommit.inflight").write_bytes(b"")
    table = HudiTable.open(str(path))
    again = rollback_failed_writes(HudiTable.open(str(path)))
    assert again and again[0].target == w.instant and again[0].instant != first.instant
    assert rows(HudiTable.open(str(path)).read("snapshot")) == before


def test_a_marker_whose_log_file_was_never_written_rolls_back(tmp_path: Path) -> None:
    """A writer killed after it marked an append but before the log file's first byte (seen in CI: kill -9 during
    ingest) leaves a marker for a file that does not exist; the rollback completes and the next write works."""
    path = tmp_path / "demo"
    table = write_demo(path)
    before = rows(table.read("snapshot"))
    w = failed_write(table)
    appended = next(m for m in list_markers(table.storage, table.meta_path, w.instant) if m.kind == "APPEND")
    (path / appended.path).unlink()  # as if the kill came between the marker and the file

    reports = rollback_failed_writes(HudiTable.open(str(path)))
    assert [r.target for r in reports] == [w.instant] and all(a.done for a in reports[0].actions)
    table = HudiTable.open(str(path))
    assert rows(table.read("snapshot")) == before == hudi_rs_rows(path, "snapshot")
    assert not (path / appended.path).exists()  # a rollback block would have created it
    assert table.timeline.instant(w.instant) is None and table.timeline.instants[-1].action == Action.ROLLBACK

    nxt = WriteClient(table)
    nxt.begin()
    fg = next(fg for fg in table.file_groups() if fg.partition == "region=eu")
    nxt.append_log("region=eu", fg.file_id, batch("eu", [70], 9_500))
    nxt.commit()
    assert rows(HudiTable.open(str(path)).read("snapshot")) == hudi_rs_rows(path, "snapshot")
