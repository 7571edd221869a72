"""`check/files.py`: a table compacted three times (symlink and copy mode) checks clean; what a cleaner that
ignores links, an edited copy, a dropped file, a killed compaction or a lost base file leaves is found, every
file named. Java-written fixture tables check clean. Expected findings are worked out from the layout each
test builds, never taken from the code under test."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from hudi_meta.check.files import (
    COPY_DIFFERS,
    DANGLING_LINK,
    LINK_TO_LINK,
    MISSING_LINK,
    ORPHAN,
    PLAN_INPUT_MISSING,
    UNCOMMITTED_LINK,
    UNSUPPORTED_FRESHNESS,
    Finding,
    ListedFile,
    TimelineFacts,
    check_files,
    orphan_by_blocks,
)
from hudi_meta.check.index_drift import check_table
from hudi_meta.clean.run import run_clean
from hudi_meta.compaction.run import CRASH_POINTS, run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.format.file_names import BaseFileName, LogFileName
from hudi_meta.format.links import SYMLINK_OPERATIONS_KEY, LinkMode
from hudi_meta.index.indexer import Indexer
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import instant_epoch_ms
from hudi_meta.write.clean_plan import (
    KEEP_LATEST_BY_HOURS,
    KEEP_LATEST_COMMITS,
    KEEP_LATEST_FILE_VERSIONS,
    CleanPolicy,
    Policy,
)
from tests.compaction.core import CoreTable, at, rows
from tests.compaction.undo_helpers import run_until
from tests.conftest import table_id, table_zips

HOUR_MS = 3_600_000


def compacted_three_times(path: Path, engine: Engine, mode: str) -> tuple[CoreTable, list[str]]:
    """One file group compacted three times at rising thresholds; each compaction links the late log files
    written after its last old one: 1, 2 and 3 links. Returns the table and the compaction instants."""
    t = CoreTable(path)
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0)))
    instants = []
    late = 1000
    for round_, links in enumerate((1, 2, 3)):
        t.write(rows((f"old{round_}", 10 * round_ + 3, float(round_))))  # at or before T: merged
        for _ in range(links):  # after T: kept as links
            late += 1
            t.write(rows((f"late{late}", late, 1.0)))
        instants.append(t.compact(engine, at(10 * round_ + 5), mode=LinkMode(mode)))
    return t, instants


def links_of(table: HudiTable, instant: str) -> list[tuple[str, str]]:
    """(link path, target path) of a completed compaction, as its commit records them."""
    tl = table.timeline
    completed = tl.instant(instant)
    assert completed is not None and completed.is_completed
    import json

    ops = json.loads(tl.commit_metadata(completed).extra_metadata[SYMLINK_OPERATIONS_KEY])
    return [(f"{op['partition_path']}/{op['symlink']}", f"{op['partition_path']}/{op['target']}") for op in ops]


def data_files(path: str) -> list[Path]:
    return sorted(p for p in Path(path, CoreTable.partition).iterdir() if p.name != ".hoodie_partition_metadata")


def slice_instant(p: Path) -> str:
    log = LogFileName.try_parse(p.name)
    if log is not None:
        return log.instant
    return BaseFileName.parse(p.name).instant


def foreign_clean(path: str, keep: str) -> list[str]:
    """A cleaner that ignores links (Java's, on a table compacted with links): every file of every slice older
    than `keep` goes, link targets included. Returns the deleted names."""
    deleted = []
    for p in data_files(path):
        if slice_instant(p) < keep:
            p.unlink()
            deleted.append(p.name)
    return deleted


def kinds(findings: list[Finding]) -> list[tuple[str, str]]:
    return sorted((f.kind, f.path) for f in findings)


# ---- a healthy table -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["symlink", "copy"])
def test_three_compactions_check_clean(engine: Engine, tmp_path: Path, mode: str) -> None:
    t, instants = compacted_three_times(tmp_path / "t", engine, mode)
    assert [len(links_of(t.table, i)) for i in instants] == [1, 2, 3]
    links = [Path(t.path, link) for link, _ in links_of(t.table, instants[-1])]
    assert all(p.is_symlink() == (mode == "symlink") for p in links)
    assert check_files(t.table) == []


def test_archived_instants_count_as_committed(engine: Engine, tmp_path: Path) -> None:
    t, instants = compacted_three_times(tmp_path / "t", engine, "symlink")
    meta = Path(t.path, ".hoodie")
    archived = meta / "archived"
    archived.mkdir()
    # what Java's archiver leaves: the oldest completed instants (the first compaction among them) move out
    # of the active timeline; the files they wrote stay, with no write stats left to name them
    times = sorted({p.name.split(".")[0] for p in meta.iterdir() if p.is_file() and p.name[:1].isdigit()})
    moved = [tm for tm in times if tm <= instants[0]]
    for p in list(meta.iterdir()):
        if p.is_file() and p.name.split(".")[0] in moved:
            shutil.move(str(p), archived / p.name)
    assert HudiTable.open(t.path).timeline.first_instant_time > instants[0]  # type: ignore[operator]
    assert check_files(HudiTable.open(t.path)) == []


@pytest.mark.parametrize("archive", table_zips(), ids=table_id)
def test_java_written_fixture_tables_check_clean(archive: Path, fixture_table: Any) -> None:
    assert check_files(HudiTable.open(str(fixture_table(archive)))) == []


CLEAN_POLICIES = {
    KEEP_LATEST_COMMITS: CleanPolicy(KEEP_LATEST_COMMITS, commits_retained=2),
    KEEP_LATEST_FILE_VERSIONS: CleanPolicy(KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1),
    KEEP_LATEST_BY_HOURS: CleanPolicy(KEEP_LATEST_BY_HOURS, hours_retained=1),
}


@pytest.mark.parametrize("policy", sorted(CLEAN_POLICIES))
@pytest.mark.parametrize("mode", ["symlink", "copy"])
def test_a_clean_that_knows_links_leaves_nothing_to_find(
    engine: Engine, tmp_path: Path, mode: str, policy: Policy
) -> None:
    t, instants = compacted_three_times(tmp_path / "t", engine, mode)
    Indexer(engine, t.table).run()
    assert check_table(t.table, engine).findings == []
    before = set(data_files(t.path))
    now = instant_epoch_ms(instants[-1]) + HOUR_MS  # KEEP_LATEST_BY_HOURS, 1 hour: the third compaction is kept
    outcome = run_clean(engine, HudiTable.open(t.path), CLEAN_POLICIES[policy], dry_run=False, now_ms=now)
    assert outcome.instant is not None and set(data_files(t.path)) < before  # it deleted something
    report = check_table(HudiTable.open(t.path), engine)  # the clean indexed the table again
    assert report.index_checked and report.findings == []


# ---- a cleaner that ignores links ----------------------------------------------------------------------------


def test_foreign_cleaner_leaves_every_link_named_as_dangling(engine: Engine, tmp_path: Path) -> None:
    t, instants = compacted_three_times(tmp_path / "t", engine, "symlink")
    expected = links_of(t.table, instants[-1])
    assert len(expected) == 3
    deleted = foreign_clean(t.path, keep=instants[-1])
    assert {Path(target).name for _, target in expected} <= set(deleted)
    findings = check_files(HudiTable.open(t.path))
    assert kinds(findings) == sorted((DANGLING_LINK, link) for link, _ in expected)
    for f in findings:
        assert f.target == dict(expected)[f.path] and f.instant == instants[-1]
        assert f"target {f.target} is gone" in f.detail


def test_foreign_cleaner_of_older_slices_only(engine: Engine, tmp_path: Path) -> None:
    t, instants = compacted_three_times(tmp_path / "t", engine, "symlink")
    # slices that are not the latest: time travel still reads their links
    for i, keep in enumerate(instants[:2]):
        foreign_clean(t.path, keep=keep)  # the slice before `keep` held the targets of keep's links
        expected = [(DANGLING_LINK, link) for link, _ in links_of(t.table, keep)]
        assert kinds(check_files(HudiTable.open(t.path))) == sorted(expected), i


def test_copies_survive_a_foreign_cleaner(engine: Engine, tmp_path: Path) -> None:
    t, instants = compacted_three_times(tmp_path / "t", engine, "copy")
    before = t.read()
    foreign_clean(t.path, keep=instants[-1])
    assert check_files(HudiTable.open(t.path)) == []  # a copy holds its own bytes
    assert t.read() == before


# ---- copies, links ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("same_size", [True, False], ids=["flipped-byte", "appended"])
def test_an_edited_copy_is_reported(engine: Engine, tmp_path: Path, same_size: bool) -> None:
    t, instants = compacted_three_times(tmp_path / "t", engine, "copy")
    link, target = links_of(t.table, instants[-1])[1]
    copy = Path(t.path, link)
    data = bytearray(copy.read_bytes())
    if same_size:
        data[-20] ^= 0xFF
    else:
        data += b"x"
    copy.write_bytes(bytes(data))
    findings = check_files(HudiTable.open(t.path))
    assert kinds(findings) == [(COPY_DIFFERS, link)]
    assert findings[0].target == target and findings[0].instant == instants[-1]
    assert ("same size" in findings[0].detail) == same_size


def test_a_lost_link_and_a_link_to_a_link(engine: Engine, tmp_path: Path) -> None:
    t, instants = compacted_three_times(tmp_path / "t", engine, "symlink")
    (l1, _), (l2, _), (l3, _) = links_of(t.table, instants[-1])
    Path(t.path, l1).unlink()  # the slice's base file is still there: the snapshot lost records
    Path(t.path, l2).unlink()
    os.symlink(Path(l3).name, Path(t.path, l2))  # a link of a link
    assert kinds(check_files(HudiTable.open(t.path))) == [(LINK_TO_LINK, l2), (MISSING_LINK, l1)]


# ---- orphans -----------------------------------------------------------------------------------------------------


def set_mtime(path: Path, ms: int) -> None:
    os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))


def test_orphans_are_reported_with_their_age(engine: Engine, tmp_path: Path) -> None:
    t, instants = compacted_three_times(tmp_path / "t", engine, "symlink")
    part = Path(t.path, CoreTable.partition)
    assert t.file_id is not None
    base = next(p for p in data_files(t.path) if p.name.endswith(f"_{instants[-1]}.parquet"))
    log = next(p for p in data_files(t.path) if not p.is_symlink() and p.name.startswith("."))
    future = "29990101000000000"
    dropped = {
        # a base file of an instant that is on no timeline (a rolled-back or never committed write)
        f"{t.file_id}_1-0-1_{future}.parquet": base,
        # a second base file of a completed compaction: its commit lists one (a failed attempt's duplicate)
        f"{t.file_id}_0-7-9_{instants[-1]}.parquet": base,
        # a log file in the latest slice holding a committed write's blocks that the write never listed
        LogFileName(t.file_id, instants[-1], 9).name: log,
        # a log file of a new file group named by an instant that is on no timeline
        LogFileName("f00d-0", future, 1).name: log,
        # an atomic create killed between writing its temporary file and publishing it
        f".{t.file_id}_1-0-1_{future}.parquet.{'ab' * 16}.tmp": base,
    }
    written_ms = 1_800_000_000_000
    for name, source in dropped.items():
        shutil.copyfile(source, part / name)
        set_mtime(part / name, written_ms)
    now = written_ms + 3 * HOUR_MS + 5 * 60_000
    findings = check_files(HudiTable.open(t.path), now_ms=now)
    assert kinds(findings) == sorted((ORPHAN, f"{CoreTable.partition}/{n}") for n in dropped)
    by_name = {Path(f.path).name: f for f in findings}
    assert all(f.age_ms == 3 * HOUR_MS + 5 * 60_000 and "3h 05m ago" in f.detail for f in findings)
    assert "not on the timeline" in by_name[f"{t.file_id}_1-0-1_{future}.parquet"].detail
    assert "does not list" in by_name[f"{t.file_id}_0-7-9_{instants[-1]}.parquet"].detail
    assert "write stats do not list it" in by_name[LogFileName(t.file_id, instants[-1], 9).name].detail
    assert "temporary file" in by_name[f".{t.file_id}_1-0-1_{future}.parquet.{'ab' * 16}.tmp"].detail


def facts(**kw: Any) -> TimelineFacts:
    defaults: dict[str, Any] = dict(
        table_version=6,
        base_extension=".parquet",
        completed=frozenset({"20260101000000100", "20260101000000300"}),
        pending={"20260101000000400": "deltacommit inflight"},
        first_active_instant="20260101000000100",
        written={},
        stats_of=frozenset({"20260101000000100"}),  # 300 is a rollback: no write stats
        rolled_back={"20260101000000200": "20260101000000300"},
        rollback_files=frozenset(),
    )
    return TimelineFacts(**{**defaults, **kw})


@pytest.mark.parametrize(
    ("blocks", "orphan"),
    [
        (["20260101000000050"], False),  # archived: older than the first active instant
        (["20260101000000400"], False),  # a pending write is appending
        (["20260101000000200", "20260101000000300"], False),  # rolled back, with the rollback's command block
        (["20260101000000200"], False),  # rolled back only: Hudi keeps the file until its slice is cleaned
        (["20260101000000100"], True),  # a completed write whose stats do not list the file
        (["20260101000000250"], True),  # on no timeline
        ([], True),  # no readable block
    ],
)
def test_version_6_log_files_are_judged_by_their_blocks(blocks: list[str], orphan: bool) -> None:
    f = ListedFile("p", LogFileName("f-0", "20260101000000100", 3).name, 10)
    assert (orphan_by_blocks(f, blocks, facts()) is not None) == orphan


# ---- pending and completed compactions ---------------------------------------------------------------------------


def pending_with_links(path: Path, engine: Engine, mode: str = "symlink") -> tuple[CoreTable, str, list[str]]:
    """A table with a scheduled compaction that merges one log file and links three."""
    t = CoreTable(path)
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0)))
    t.write(rows(("a", 3, 2.0)))
    for late in (101, 102, 103):
        t.write(rows((f"late{late}", late, 1.0)))
    result = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(10), mode=LinkMode(mode)))
    assert result.instant is not None and result.plan is not None
    links = [f"{CoreTable.partition}/{s.symlink}" for op in result.plan.operations for s in op.symlink_operations]
    assert len(links) == 3
    return t, result.instant, links


@pytest.mark.parametrize("step", CRASH_POINTS)
@pytest.mark.parametrize("mode", ["symlink", "copy"])
def test_links_of_a_killed_compaction_are_reported(engine: Engine, tmp_path: Path, step: str, mode: str) -> None:
    t, instant, links = pending_with_links(tmp_path / "t", engine, mode)
    assert check_files(t.table) == []  # scheduled: nothing on disk yet
    assert run_until(t.table, instant, step)
    made = {"after-base-file": 0, "after-link": 1, "before-commit": 3}[step]  # links are made in plan order
    findings = check_files(HudiTable.open(t.path))
    assert kinds(findings) == [(UNCOMMITTED_LINK, link) for link in links[:made]]
    assert all(f.instant == instant and "inflight" in f.detail for f in findings)
    run_compaction(HudiTable.open(t.path), instant)  # the next run finishes it
    assert check_files(HudiTable.open(t.path)) == []


def test_a_plan_whose_input_is_gone(engine: Engine, tmp_path: Path) -> None:
    t, instant, _ = pending_with_links(tmp_path / "t", engine)
    plan = t.table.compaction_plan(instant)
    (op,) = plan.operations
    merged = f"{op.partition_path}/{op.delta_file_paths[0]}"
    target = f"{op.partition_path}/{op.symlink_operations[0].target}"
    Path(t.path, merged).unlink()
    Path(t.path, target).unlink()
    findings = check_files(HudiTable.open(t.path))
    assert kinds(findings) == sorted([(PLAN_INPUT_MISSING, merged), (PLAN_INPUT_MISSING, target)])
    assert all(f.instant == instant and f"compaction unschedule {instant}" in f.detail for f in findings)


def test_a_published_freshness_without_its_base_file(engine: Engine, tmp_path: Path) -> None:
    t, instants = compacted_three_times(tmp_path / "t", engine, "symlink")
    base = next(p for p in data_files(t.path) if p.name.endswith(f"_{instants[-1]}.parquet"))
    base.unlink()  # RO now reads the slice before: records up to the threshold are missing from it
    findings = check_files(HudiTable.open(t.path))
    assert kinds(findings) == [(UNSUPPORTED_FRESHNESS, f"{CoreTable.partition}/{base.name}")]
    assert "2026-01-01T00:00:25.000Z" in findings[0].detail  # T of the third compaction: T0 + 25 s


def test_an_older_compaction_losing_its_base_file_is_not_a_freshness_problem(engine: Engine, tmp_path: Path) -> None:
    t, instants = compacted_three_times(tmp_path / "t", engine, "symlink")
    base = next(p for p in data_files(t.path) if p.name.endswith(f"_{instants[1]}.parquet"))
    base.unlink()  # a newer base file (the third compaction's) holds everything it held
    assert check_files(HudiTable.open(t.path)) == []
