"""A metadata table (MDT) that another writer left half-done or that is damaged is never written over (issue 36).

Rules (docs/metadata-table.md section 6.7):
- An MDT compaction that started and did not complete (its completed file missing, as a Java writer killed inside
  its MDT compaction leaves it) is rolled back before it runs again, as Java does before running any inflight
  compaction (`BaseHoodieTableServiceClient.compact` -> `HoodieTable.rollbackInflightCompaction`): afterwards each
  file group holds one base file of that instant, and hudi-rs reads the table through the MDT.
- An MDT that cannot be read as Java and hudi-rs read it (bytes flipped in an HFile or a log block, a file
  truncated, its properties or its folder gone, two base files of one instant, a lost compacted base file) is
  refused by every command that writes, in one line with exit 2, and the table stays byte for byte as it was.

Expected outcomes come from what each test does to a copy of a Java-written table and from hudi-rs, not from
hudi-meta's own reader.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import hudi_meta
from hudi_meta.check.files import MDT_DUPLICATE_BASE_FILE, MDT_LOST_BASE_FILE, MDT_UNREADABLE
from hudi_meta.format.file_names import BaseFileName
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.metadata.compaction import compact_if_necessary
from hudi_meta.metadata.crash import set_crash_hook as set_mdt_crash_hook
from hudi_meta.metadata.integrity import (
    DUPLICATE_BASE_FILE,
    LOST_BASE_FILE,
    MISSING,
    UNREADABLE,
    MetadataTableDamagedError,
    metadata_damage,
)
from hudi_meta.metadata.sync import write_client
from hudi_meta.storage.local import LocalStorage
from hudi_meta.table.table import HudiTable
from tests.cli.helpers import cli
from tests.crashes import Crash, crash_at
from tests.hudi_rs import rs_read_table
from tests.metadata.helpers import file_digests
from tests.table.test_metadata_table import MDT_ZIPS

THRESHOLD = "2026-01-01T00:00:00Z"  # after every record of the fixtures: every log file is compacted


def _java_table(fixture_table: Callable[[Path], Path], tmp_path: Path, stem: str) -> Path:
    archive = next(a for a in MDT_ZIPS if a.stem == stem and "/mor/" in str(a))
    return Path(shutil.copytree(fixture_table(archive), tmp_path / stem, symlinks=True))


def _mdt(table: Path) -> Path:
    return table / ".hoodie" / "metadata"


def _newest_mdt_compaction(table: Path) -> tuple[str, Path]:
    """(instant, completed file) of the MDT's newest completed compaction (layout 2: `<t>_<c>.commit`)."""
    done = sorted((_mdt(table) / ".hoodie" / "timeline").glob("*_*.commit"))
    return done[-1].name.split("_")[0], done[-1]


@pytest.mark.parametrize("stem", ["v8_trips_8i3u1d", "v9_txns_simple_meta"])
def test_a_failed_java_mdt_compaction_is_rolled_back_before_it_is_redone(
    stem: str, fixture_table: Callable[[Path], Path], tmp_path: Path
) -> None:
    table = _java_table(fixture_table, tmp_path, stem)
    instant, completed = _newest_mdt_compaction(table)
    completed.unlink()  # a Java writer killed inside its MDT compaction: inflight, with its base files written
    java_bases = {p.name for p in _mdt(table).rglob(f"*_{instant}.hfile")}
    assert java_bases
    t = hudi_meta.open_table(str(table), f"sqlite:///{tmp_path / 's.db'}")
    t.index(event_time_field="ts" if stem.startswith("v8") else "txn_datetime")
    if t.schedule_compaction(threshold=THRESHOLD).instant is not None:
        t.run_compaction()  # its MDT deltacommit finishes the MDT's pending compaction first
    else:  # nothing of the data table to compact: the MDT's table services alone, as before any MDT deltacommit
        compact_if_necessary(HudiTable.open(str(table)))
    per_group: dict[tuple[str, str], list[str]] = {}
    for p in _mdt(table).rglob(f"*_{instant}.hfile"):
        per_group.setdefault((p.parent.name, BaseFileName.parse(p.name).file_id), []).append(p.name)
    assert per_group and all(len(names) == 1 for names in per_group.values()), per_group
    assert not java_bases & {n for names in per_group.values() for n in names}  # Java's partial files went
    timeline = _mdt(table) / ".hoodie" / "timeline"
    assert list(timeline.glob(f"{instant}_*.commit")), "the compaction was redone and completed"
    assert list(timeline.glob("*.rollback")), "under a rollback instant, as Java rolls an inflight compaction back"
    # hudi-rs lists the files partition through the MDT and reads what hudi-meta reads
    through_mdt = rs_read_table(str(table), metadata=True)
    assert through_mdt.num_rows == rs_read_table(str(table), metadata=False).num_rows
    assert metadata_damage(HudiTable.open(str(table))) == []


def _flip_hfile(table: Path) -> str:
    _, completed = _newest_mdt_compaction(table)
    instant = completed.name.split("_")[0]
    path = next((_mdt(table) / "files").glob(f"files-0000-0_*_{instant}.hfile"))
    data = bytearray(path.read_bytes())
    for i in range(100, 116):  # inside the first data block (its checksum no longer matches)
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    return UNREADABLE


def _flip_log_block(table: Path) -> str:
    """Flip bytes inside the content of the newest `files` log block of the latest slice (after the compaction)."""
    _, completed = _newest_mdt_compaction(table)
    done = completed.name.split("_")[1].split(".")[0]
    logs = [p for p in (_mdt(table) / "files").glob(".files-0000-0_*.log.*") if p.name.split("_")[1] > done[:8]]
    path = max(logs or (_mdt(table) / "files").glob(".files-0000-0_*.log.*"), key=lambda p: p.name)
    block = [b for b in read_blocks(LocalStorage(), str(path)) if b.content_length][-1]
    data = bytearray(path.read_bytes())
    for i in range(block.content_offset + 100, block.content_offset + 116):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    return UNREADABLE


def _truncate(fraction: float) -> Callable[[Path], str]:
    def damage(table: Path) -> str:
        _, completed = _newest_mdt_compaction(table)
        instant = completed.name.split("_")[0]
        path = next((_mdt(table) / "files").glob(f"files-0000-0_*_{instant}.hfile"))
        path.write_bytes(path.read_bytes()[: int(path.stat().st_size * fraction)])
        return UNREADABLE

    return damage


def _remove_properties(table: Path) -> str:
    (_mdt(table) / ".hoodie" / "hoodie.properties").unlink()
    return MISSING


def _remove_mdt(table: Path) -> str:
    shutil.rmtree(_mdt(table))
    return MISSING


def _duplicate_base_file(table: Path) -> str:
    """A second base file of the newest compaction's instant in the files group (what hudi-meta wrote before the
    fix: the same content under another write token)."""
    instant, _ = _newest_mdt_compaction(table)
    path = next((_mdt(table) / "files").glob(f"files-0000-0_*_{instant}.hfile"))
    shutil.copyfile(path, path.with_name(f"files-0000-0_1-0-1_{instant}.hfile"))
    return DUPLICATE_BASE_FILE


def _lose_base_file(table: Path) -> str:
    instant, _ = _newest_mdt_compaction(table)
    next((_mdt(table) / "files").glob(f"files-0000-0_*_{instant}.hfile")).unlink()
    return LOST_BASE_FILE


DAMAGES: dict[str, Callable[[Path], str]] = {
    "flipped-hfile": _flip_hfile,
    "flipped-log-block": _flip_log_block,
    "hfile-half": _truncate(0.5),
    "hfile-empty": _truncate(0.0),
    "no-mdt-properties": _remove_properties,
    "no-mdt": _remove_mdt,
    "two-base-files-of-one-instant": _duplicate_base_file,
    "lost-compacted-base-file": _lose_base_file,
}


FINDING = {
    UNREADABLE: MDT_UNREADABLE,
    MISSING: MDT_UNREADABLE,
    DUPLICATE_BASE_FILE: MDT_DUPLICATE_BASE_FILE,
    LOST_BASE_FILE: MDT_LOST_BASE_FILE,
}
THROUGH_THE_CLI = {"flipped-log-block", "no-mdt-properties"}  # every writing command, one line each (slower)


@pytest.mark.parametrize("damage", DAMAGES, ids=list(DAMAGES))
def test_a_damaged_mdt_is_refused_by_every_writing_command(
    damage: str, fixture_table: Callable[[Path], Path], tmp_path: Path
) -> None:
    table = _java_table(fixture_table, tmp_path, "v8_trips_8i3u1d")
    db = f"sqlite:///{tmp_path / 's.db'}"
    assert cli("--db", db, "index", str(table), "--event-time-field", "ts").returncode == 0
    scheduled = cli("--db", db, "compaction", "schedule", str(table), "--threshold", THRESHOLD, "--json")
    assert scheduled.returncode == 0, scheduled.stderr
    pending = HudiTable.open(str(table)).timeline.pending_compactions()[0].requested_time
    kind = DAMAGES[damage](table)
    found = metadata_damage(HudiTable.open(str(table)))
    assert [d.kind for d in found] == [kind], found
    before = file_digests(table)
    with pytest.raises(MetadataTableDamagedError):
        write_client(HudiTable.open(str(table)))  # what ingest and the Spark writer write through
    t = hudi_meta.open_table(str(table), db)
    for call in (
        lambda: t.schedule_compaction(threshold=THRESHOLD),
        lambda: t.run_compaction(),
        lambda: t.clean(dry_run=False),
    ):
        with pytest.raises(MetadataTableDamagedError):
            call()
    assert file_digests(table) == before
    findings = {(f.kind, f.path) for f in t.check(index=False).findings}  # check names what the writers refused
    assert {(FINDING[kind], d.path) for d in found} <= findings, findings
    assert file_digests(table) == before
    if damage not in THROUGH_THE_CLI:
        return
    for args in (
        ["compaction", "schedule", str(table), "--threshold", THRESHOLD],
        ["compaction", "run", str(table), "--engine", "local"],
        ["compaction", "unschedule", str(table), pending],
        ["rollback", str(table), pending],
        ["clean", str(table), "--execute"],
        ["archive", str(table), "--execute"],
    ):
        out = cli("--db", db, *args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and "metadata table" in lines[0] and "Traceback" not in out.stderr, (args, out.stderr)
        assert file_digests(table) == before, args
    check = cli("--db", db, "check", str(table))
    assert check.returncode == 3, check.stdout + check.stderr


@pytest.mark.parametrize("step", ["rollback-after-requested", "rollback-after-files", "rollback-after-complete"])
def test_a_kill_inside_the_rollback_of_a_failed_mdt_compaction_is_finished_by_the_next_call(
    step: str, fixture_table: Callable[[Path], Path], tmp_path: Path
) -> None:
    """Rule (docs/metadata-table.md 6.7): a kill at any step of that rollback leaves it pending (or the compaction
    inflight again); the next call finishes the rollback and the compaction, with one base file per group of the
    instant, and hudi-rs reads through the MDT."""
    table = _java_table(fixture_table, tmp_path, "v9_txns_simple_meta")
    instant, completed = _newest_mdt_compaction(table)
    completed.unlink()
    with pytest.raises(Crash), crash_at(set_mdt_crash_hook, step):
        compact_if_necessary(HudiTable.open(str(table)))
    compact_if_necessary(HudiTable.open(str(table)))
    names = [BaseFileName.parse(p.name).file_id for p in _mdt(table).rglob(f"*_{instant}.hfile")]
    assert names and len(names) == len(set(names)), names
    assert list((_mdt(table) / ".hoodie" / "timeline").glob(f"{instant}_*.commit"))
    assert metadata_damage(HudiTable.open(str(table))) == []
    assert rs_read_table(str(table), metadata=True).num_rows == rs_read_table(str(table), metadata=False).num_rows
