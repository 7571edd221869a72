"""Timeline archival of version-6 tables (timeline layout 1) into the 0.x archived log (docs/archival.md section 5),
on tables our writer writes:

- with more completed commits than `hoodie.keep.max.commits`, the oldest go down to `hoodie.keep.min.commits`
  (the same plan as on 8 and 9): `.hoodie/archived/.commits_.archive.1_1-0-1` holds an entry per state file of
  each (requested, inflight, completed, with the completed one's commit metadata), the active timeline loses all
  of their state files, `HudiTable.archived` names them (completed at their requested time), and every read
  (snapshot, ro, time travel to every instant, archived ones too, incremental from 0 and from every instant)
  returns what it returned before, ours and hudi-rs's (snapshot, ro); a dry run writes nothing; a second run
  archives nothing, a later one appends to the same file;
- a kill at every step (and in the middle of the append: a torn block) leaves reads as before, and the next run
  finishes the same archival;
- the boundaries hold on layout 1 too: a pending compaction, the latest clean's earliest instant to retain, a
  compaction whose links' targets exist (its plan is archived with it);
- an unfinished merge of small archive files by Java's archiver (`mergeArchivePlan`) is refused in one line, and an
  archived instant that is pending on the active timeline stops the run in one line.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from hudi_meta.errors import CorruptFileError, UnsupportedTableError
from hudi_meta.format import archived_log
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Instant
from hudi_meta.write import archival
from hudi_meta.write.archival import archive_timeline
from hudi_meta.write.writer import WriteClient
from tests.crashes import Crash, crash_at
from tests.write.test_archival import (
    Reads,
    T,
    all_reads,
    cli,
    copy_of,
    hand_timeline,
    planned,
    rs_rows,
    times_of,
    tree,
    write_live_link,
    write_table,
)
from tests.write.test_writer import batch

FIRST_FILE = ".commits_.archive.1_1-0-1"


def active_files(path: Path) -> list[str]:
    return sorted(p.name for p in (path / ".hoodie").iterdir() if p.is_file() and Instant.parse(p.name))


def entries(table: HudiTable) -> list[tuple[Any, ...]]:
    return [
        (e.commit_time, e.action_type, e.action_state, e.payload)
        for e in archived_log.read_entries(table.storage, table.archive_path)
    ]


def final_state(table: HudiTable) -> tuple[list[str], list[tuple[Any, ...]]]:
    return active_files(Path(table.base_path)), entries(table)


# ---------------------------------------------------------------- archiving and reading


def test_the_oldest_commits_move_to_the_archived_log_and_every_read_stays(tmp_path: Path) -> None:
    path = tmp_path / "t"
    table = write_table(path, version=6)
    times = times_of(table)
    before = all_reads(table, times)
    rs_before = (rs_rows(path), rs_rows(path, ro=True))
    assert rs_before == (before["snapshot"], before["ro"])
    completed = table.timeline.completed()
    assert len(completed) == 8 and table.archived == {}

    on_disk = tree(path)
    plan = archive_timeline(table)  # a dry run
    assert tree(path) == on_disk
    assert [i.instant for i in plan.archived] == [i.requested_time for i in completed[:6]]
    assert plan.history_file == FIRST_FILE

    report = archive_timeline(table, dry_run=False)
    assert [i.instant for i in report.archived] == [i.requested_time for i in completed[:6]]
    assert all(i.done and len(i.files) == 3 for i in report.instants)  # requested, inflight, completed
    assert report.history_file == FIRST_FILE
    assert sorted(p.name for p in (path / ".hoodie" / "archived").iterdir()) == [FIRST_FILE]
    kept = completed[6:]
    assert {Instant.parse(n).requested_time for n in active_files(path)} == {  # type: ignore[union-attr]
        i.requested_time for i in kept
    }
    got = entries(table)
    assert [e[:3] for e in got] == [
        (i.requested_time, "deltacommit", state)
        for i in completed[:6]
        for state in ("REQUESTED", "INFLIGHT", "COMPLETED")
    ]
    # the completed entry holds the commit metadata, converted from the JSON the state file held
    insert = got[2][3]
    assert insert is not None and insert[0] == "hoodieCommitMetadata" and insert[1]["operationType"] == "INSERT"
    assert {p for p in insert[1]["partitionToWriteStats"]} == {"region=eu", "region=us"}
    for e in archived_log.read_entries(table.storage, table.archive_path):
        assert e.state_transition_time is not None and e.state_transition_time >= e.commit_time

    after = HudiTable.open(str(path))
    assert after.archived == {i.requested_time: (i.requested_time, "deltacommit") for i in completed[:6]}
    assert after.timeline.first_instant_time == kept[0].requested_time
    assert all_reads(after, times) == before  # time travel and incremental reads across the archive too
    assert (rs_rows(path), rs_rows(path, ro=True)) == rs_before

    again = archive_timeline(after, dry_run=False)
    assert not again.instants and "2 completed commits, not more than hoodie.keep.max.commits=4" in again.plan.summary


def test_a_later_archival_appends_to_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "t"
    table = write_table(path, version=6)
    archive_timeline(table, dry_run=False)
    size = (path / ".hoodie" / "archived" / FIRST_FILE).stat().st_size
    fid = table.file_groups()[0].file_id
    for k in range(3):
        table.reload()
        w = WriteClient(table)
        w.begin()
        w.append_log("region=eu", fid, batch("eu", [40 + k], 9_000 + k))
        w.commit()
    table = HudiTable.open(str(path))
    times = times_of(table)
    before = all_reads(table, times)
    report = archive_timeline(table, dry_run=False)
    assert len(report.archived) == 3 and report.history_file == FIRST_FILE
    assert (path / ".hoodie" / "archived" / FIRST_FILE).stat().st_size > size
    assert len(HudiTable.open(str(path)).archived) == 9
    assert all_reads(HudiTable.open(str(path)), times) == before


# ---------------------------------------------------------------- crashes


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Reads, list[str], Any]:
    """A table, its reads, and its state after an archival nothing interrupted."""
    root = tmp_path_factory.mktemp("reference")
    table = write_table(root / "source", version=6)
    times = times_of(table)
    reads = all_reads(table, times)
    done = copy_of(root / "source", root / "archived")  # copies keep modification times: the same entries
    archive_timeline(done, dry_run=False)
    return root / "source", reads, times, final_state(done)


@pytest.mark.parametrize("step", archival.CRASH_POINTS)
def test_a_crash_at_each_step_reads_as_before_and_the_next_run_finishes(
    tmp_path: Path, reference: tuple[Path, Reads, list[str], Any], step: str
) -> None:
    source, reads, times, finished = reference
    table = copy_of(source, tmp_path / "t")
    with crash_at(archival.set_crash_hook, step), pytest.raises(Crash):
        archive_timeline(table, dry_run=False)
    crashed = HudiTable.open(str(tmp_path / "t"))
    assert all_reads(crashed, times) == reads
    report = archive_timeline(crashed, dry_run=False)
    assert report.finished and not report.archived  # the archive had them: only the deletes were left
    assert final_state(crashed) == finished
    assert all_reads(HudiTable.open(str(tmp_path / "t")), times) == reads


def test_a_kill_in_the_middle_of_the_append_is_written_again(
    tmp_path: Path, reference: tuple[Path, Reads, list[str], Any]
) -> None:
    source, reads, times, finished = reference
    table = copy_of(source, tmp_path / "t")
    with crash_at(archival.set_crash_hook, "after-history"), pytest.raises(Crash):
        archive_timeline(table, dry_run=False)
    log_file = tmp_path / "t" / ".hoodie" / "archived" / FIRST_FILE
    with log_file.open("r+b") as f:
        f.truncate(log_file.stat().st_size // 2)  # the block was torn
    torn = HudiTable.open(str(tmp_path / "t"))
    assert torn.archived == {} and all_reads(torn, times) == reads
    report = archive_timeline(torn, dry_run=False)
    assert len(report.archived) == 6 and not report.finished
    assert final_state(torn) == finished  # the torn bytes are skipped by readers
    assert all_reads(HudiTable.open(str(tmp_path / "t")), times) == reads


@pytest.mark.slow
@pytest.mark.parametrize("step", archival.CRASH_POINTS)
def test_kill_9_at_each_step_then_archive_finishes(
    tmp_path: Path, reference: tuple[Path, Reads, list[str], Any], step: str
) -> None:
    source, reads, times, finished = reference
    copy_of(source, tmp_path / "t")
    out = cli("archive", str(tmp_path / "t"), "--execute", env={archival.CRASH_AT_ENV: step})
    assert out.returncode == -signal.SIGKILL, out.stderr
    lock = tmp_path / "t" / ".hoodie" / "lock"
    assert lock.exists()
    old = time.time() - 120
    os.utime(lock, (old, old))
    assert all_reads(HudiTable.open(str(tmp_path / "t")), times) == reads
    out = cli("archive", str(tmp_path / "t"), "--execute")
    assert out.returncode == 0, out.stderr
    left = 5 if step == "after-completed" else 6
    assert f"finished {left} instants an earlier archival left" in out.stdout, out.stdout
    table = HudiTable.open(str(tmp_path / "t"))
    assert final_state(table) == finished
    assert all_reads(table, times) == reads


# ---------------------------------------------------------------- boundaries and refusals


def test_a_pending_compaction_stops_archival_before_the_newest_commit_before_it(tmp_path: Path) -> None:
    table = hand_timeline(tmp_path / "t", ["d", "d", "d", "pc", "d", "d", "d", "d"], version=6)
    assert planned(table) == [T(1), T(2)]
    report = archive_timeline(table, dry_run=False)
    assert "the newest completed commit before compaction 20260101000000004 is pending" in report.plan.summary
    assert set(HudiTable.open(str(tmp_path / "t")).archived) == {T(1), T(2)}


def test_the_latest_clean_keeps_what_its_plan_retains(tmp_path: Path) -> None:
    table = hand_timeline(tmp_path / "t", ["d", "d", "d", "d", "d", "clean", "d", "d", "d"], version=6)
    assert planned(table) == [T(1), T(2)]
    assert "the latest clean 20260101000000006 retains from 20260101000000003" in archive_timeline(table).plan.summary


def test_a_compaction_holding_live_links_stays_and_goes_with_its_plan(tmp_path: Path) -> None:
    table = hand_timeline(tmp_path / "t", ["d", "d", "d", "c", "d", "d", "d", "d", "d", "c"], version=6)
    target, _ = write_live_link(tmp_path / "t", tmp_path / "t" / ".hoodie")
    assert planned(table) == [T(1), T(2), T(3)]
    assert "compaction 20260101000000004 holds links whose targets still exist" in archive_timeline(table).plan.summary
    target.unlink()  # a clean deleted the target (after the link)
    report = archive_timeline(table, dry_run=False)
    assert [i.instant for i in report.archived] == [T(n) for n in range(1, 9)]
    compaction = [e for e in entries(HudiTable.open(str(tmp_path / "t"))) if e[0] == T(4)]
    assert [e[1:3] for e in compaction] == [
        ("compaction", "REQUESTED"),
        ("compaction", "INFLIGHT"),
        ("commit", "COMPLETED"),
    ]
    plan = compaction[0][3]
    assert plan is not None and plan[0] == "hoodieCompactionPlan"
    assert plan[1]["operations"][0]["symlinkOperations"][0]["target"] == target.name
    assert compaction[1][3] == plan  # the inflight entry holds the plan too (Java reads it from the requested file)


def test_an_unfinished_merge_of_small_archive_files_is_refused(tmp_path: Path) -> None:
    table = write_table(tmp_path / "t", version=6, writes=2)
    (tmp_path / "t" / ".hoodie" / "archived").mkdir()
    (tmp_path / "t" / ".hoodie" / "archived" / "mergeArchivePlan").write_bytes(b"")
    with pytest.raises(UnsupportedTableError, match="a merge of small archive files by Java's archiver") as raised:
        archive_timeline(table)
    assert len(str(raised.value).splitlines()) == 1


def test_an_archived_instant_pending_on_the_active_timeline_stops_the_run(tmp_path: Path) -> None:
    table = write_table(tmp_path / "t", version=6)
    archive_timeline(copy_of(tmp_path / "t", tmp_path / "done"), dry_run=False)
    (tmp_path / "t" / ".hoodie" / "archived").mkdir()
    archived = tmp_path / "done" / ".hoodie" / "archived" / FIRST_FILE
    (tmp_path / "t" / ".hoodie" / "archived" / FIRST_FILE).write_bytes(archived.read_bytes())
    first = table.timeline.completed()[0]
    (tmp_path / "t" / ".hoodie" / first.file_name(1)).unlink()  # pending again on the active timeline
    with pytest.raises(CorruptFileError, match="is archived but pending on the active timeline") as raised:
        archive_timeline(HudiTable.open(str(tmp_path / "t")), dry_run=False)
    assert len(str(raised.value).splitlines()) == 1
