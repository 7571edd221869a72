"""Timeline archival of tables of version 8 and 9 (docs/archival.md), on tables our writer writes:

- with more completed commits than `hoodie.keep.max.commits`, the oldest go down to `hoodie.keep.min.commits`: the
  history holds a row per archived instant (completion time, completed action, the completed file's bytes), the
  active timeline loses all of their state files, and every read (snapshot, ro, time travel to an archived
  instant, incremental from 0 and from every time) returns what it returned before; hudi-rs reads the snapshot
  the same; a dry run writes nothing; a second run archives nothing;
- a log file whose delta commit was archived is sliced by its real completion time, read from the history
  (apache/hudi#14365): requested-time slicing would put it in an older slice and lose its records; incremental
  reads choose archived commits by completion time; hudi-rs 0.5.0, which does not read the history, loses them;
- a history that cannot be read raises one line, never reads as no history;
- a kill at every step (ours and the LSM writer's) leaves reads as before, and the next run finishes the same
  archival; two archivers at once leave one history;
- the rules read from files: a pending compaction, the latest clean's earliest instant to retain, a compaction
  whose links' targets exist.

Version 6 (layout 1, the 0.x archived log) is tested in test_archival_v1.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi import HudiReadOptions
from hudi import HudiTable as RsTable

from hudi_meta.errors import CorruptFileError
from hudi_meta.file_group.fs_view import ViewInputs, build_file_groups
from hudi_meta.format import lsm_timeline as lsm
from hudi_meta.format.commit_metadata import CommitMetadata, WriteStat
from hudi_meta.format.file_names import BaseFileName
from hudi_meta.format.lsm_timeline import read_history
from hudi_meta.format.table_service_metadata import (
    ActionInstant,
    CleanerPlan,
    CleanMetadata,
    CompactionOperation,
    CompactionPlan,
    SymlinkOperation,
)
from hudi_meta.table.table import HudiTable, Query
from hudi_meta.timeline.instant import Action, Instant
from hudi_meta.write import archival
from hudi_meta.write.archival import ArchiveReport, archive_timeline
from hudi_meta.write.markers import delete_markers
from hudi_meta.write.writer import WriteClient, create_table
from tests.crashes import Crash, crash_at
from tests.write.test_writer import batch, rows

PROPS = {  # Java's heartbeat settings: no test here needs a writer to expire, and 200 ms expired under load
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "4",
    "hoodie.clean.commits.retained": "1",
}
Reads = dict[Any, list[dict[str, object]]]


def write_table(path: Path, version: int = 9, writes: int = 8) -> HudiTable:
    """An insert into two partitions, then `writes - 1` delta commits of updates and new keys."""
    table = create_table(str(path), "demo", ["id"], "ts", ["region"], extra_props=PROPS, version=version)
    w = WriteClient(table)
    w.begin()
    fids = {r: w.write_base_file(f"region={r}", batch(r, list(range(6)), 1_000)).file_id for r in ("eu", "us")}
    w.commit("INSERT")
    for k in range(writes - 1):
        region = ("eu", "us")[k % 2]
        w = WriteClient(table)
        w.begin()
        w.append_log(f"region={region}", fids[region], batch(region, [k, 10 + k], 2_000 + 10 * k))
        w.commit()
    return HudiTable.open(str(path))


def copy_of(source: Path, path: Path) -> HudiTable:
    shutil.copytree(source, path, symlinks=True)
    return HudiTable.open(str(path))


def ours(table: HudiTable, query: Query) -> list[dict[str, object]]:
    got = table.read(query)
    return rows(got) if got.num_columns else []


def times_of(table: HudiTable) -> list[str]:
    return sorted({t for i in table.timeline.completed() for t in (i.requested_time, i.completion_time) if t})


def all_reads(table: HudiTable, times: list[str]) -> Reads:
    reads: Reads = {q: ours(table, Query(q)) for q in ("snapshot", "ro")}
    reads |= {("as-of", t): ours(table, Query("time-travel", as_of=t)) for t in times}
    reads |= {("from", t): ours(table, Query("incremental", begin=t)) for t in ["0", *times]}
    return reads


def rs_rows(path: Path, ro: bool = False) -> list[dict[str, object]]:
    opts = {"hoodie.read.use.read_optimized.mode": "true"} if ro else {}
    batches = list(RsTable(str(path)).read(HudiReadOptions(hudi_options=opts)))
    return rows(pa.Table.from_batches(batches)) if batches else []


def timeline_files(path: Path) -> list[str]:
    return sorted(p.name for p in (path / ".hoodie" / "timeline").iterdir() if p.is_file())


def history_rows(table: HudiTable) -> list[tuple[Any, ...]]:
    return sorted(
        (i.requested_time, i.completion_time, i.action, i.metadata, i.plan, i.version)
        for i in read_history(table.storage, table.history_path)
    )


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------- archiving and reading


@pytest.mark.parametrize("version", [8, 9])
def test_the_oldest_commits_move_to_the_history_and_every_read_stays(tmp_path: Path, version: int) -> None:
    table = write_table(tmp_path / "t", version)
    times = times_of(table)
    before = all_reads(table, times)
    rs_before = (rs_rows(tmp_path / "t"), rs_rows(tmp_path / "t", ro=True))
    assert rs_before == (before["snapshot"], before["ro"])
    completed = table.timeline.completed()
    contents = {
        i.requested_time: (tmp_path / "t" / ".hoodie" / "timeline" / i.file_name(2)).read_bytes() for i in completed
    }

    on_disk = tree(tmp_path / "t")
    plan = archive_timeline(table)  # a dry run
    assert tree(tmp_path / "t") == on_disk
    assert [i.instant for i in plan.archived] == [i.requested_time for i in completed[:6]]
    assert plan.history_file == f"{completed[0].requested_time}_{completed[5].requested_time}_0.parquet"

    report = archive_timeline(table, dry_run=False)
    assert [i.instant for i in report.archived] == [i.requested_time for i in completed[:6]]
    assert all(i.done and len(i.files) == 3 for i in report.instants)  # requested, inflight, completed
    kept = completed[6:]
    assert {Instant.parse(n).requested_time for n in timeline_files(tmp_path / "t")} == {  # type: ignore[union-attr]
        i.requested_time for i in kept
    }
    assert history_rows(table) == sorted(
        (i.requested_time, i.completion_time, "deltacommit", contents[i.requested_time], None, 1) for i in completed[:6]
    )
    assert [p.name for p in sorted((tmp_path / "t" / ".hoodie" / "timeline" / "history").iterdir())] == [
        report.history_file,
        "_version_",
        "manifest_1",
    ]

    after = HudiTable.open(str(tmp_path / "t"))
    assert after.timeline.first_instant_time == kept[0].requested_time
    assert all_reads(after, times) == before
    assert (rs_rows(tmp_path / "t"), rs_rows(tmp_path / "t", ro=True)) == rs_before

    again = archive_timeline(after, dry_run=False)
    assert not again.instants and "2 completed commits, not more than hoodie.keep.max.commits=4" in again.plan.summary


def write_late_delta_commit(path: Path) -> tuple[HudiTable, str, str]:
    """Delta commit D (requested at t1) appends to file group F while compaction C (t2 > t1) is scheduled, runs
    and completes; D completes after C was requested, so its log file belongs to slice C (docs/hudi-1x.md 3.2).
    Four more writes follow. The instants are written by hand: our lock keeps our own writers from doing this."""
    table = create_table(str(path), "demo", ["id"], "ts", ["region"], extra_props=PROPS, version=9)
    w = WriteClient(table)
    w.begin()
    stat = w.write_base_file("region=eu", batch("eu", list(range(6)), 1_000))
    w.commit("INSERT")
    fid, base = stat.file_id, BaseFileName.parse(Path(stat.path).name)
    late = WriteClient(table)
    t1 = late.begin()
    late.append_log("region=eu", fid, batch("eu", [1, 2, 30], 5_000))

    table.reload()
    t2 = table.new_instant_time()
    op = CompactionOperation(
        base_instant_time=base.instant,
        file_id=fid,
        partition_path="region=eu",
        data_file_path=base.name,
        metrics={"TOTAL_LOG_FILES_SIZE": 0.0},
    )
    writer = table.timeline_writer()
    writer.request(Action.COMPACTION, t2, CompactionPlan(operations=(op,)).to_bytes())
    writer.start(Action.COMPACTION, t2)
    new_base = BaseFileName(fid, base.write_token, t2).name
    shutil.copy(path / stat.path, path / "region=eu" / new_base)  # C compacts the base file alone
    schema = table.timeline.commit_metadata(table.timeline.completed_writes()[0]).extra_metadata["schema"]
    compaction_stat = WriteStat(file_id=fid, path=f"region=eu/{new_base}", prev_commit=base.instant)
    metadata = CommitMetadata({"region=eu": [compaction_stat]}, True, {"schema": schema}, "COMPACT")
    writer.complete(Action.COMPACTION, t2, metadata.to_bytes(2))

    late_metadata = CommitMetadata({"region=eu": list(late.stats)}, extra_metadata={"schema": schema})
    writer.complete(Action.DELTA_COMMIT, t1, late_metadata.to_bytes(2))
    assert late.heartbeat is not None
    late.heartbeat.stop(delete=True)
    delete_markers(table.storage, table.meta_path, t1)
    for k in range(4):
        w = WriteClient(table)
        w.begin()
        w.append_log("region=eu", fid, batch("eu", [3 + k, 10 + k], 6_000 + 10 * k))
        w.commit()
    return HudiTable.open(str(path)), t1, t2


def test_an_archived_delta_commit_s_log_file_is_sliced_by_its_completion_time(tmp_path: Path) -> None:
    table, t1, t2 = write_late_delta_commit(tmp_path / "t")
    done = table.timeline.completion_time(t1)
    assert done is not None and done > t2  # D completed after C was requested
    c_done = table.timeline.completion_time(t2)
    assert c_done is not None
    times = times_of(table)
    before = all_reads(table, times)
    assert any(r["id"] == "eu-30" for r in before["snapshot"])
    assert any(r["id"] == "eu-30" for r in before[("from", c_done)])  # chosen by completion time
    assert rs_rows(tmp_path / "t") == before["snapshot"]

    report = archive_timeline(table, dry_run=False)
    assert [i.instant for i in report.archived] == [times[0], t1]  # the insert and D; C is the latest compaction
    assert report.plan.boundary is not None and report.plan.boundary.time == t2

    after = HudiTable.open(str(tmp_path / "t"))
    assert after.archived[t1] == (done, "deltacommit")
    (group,) = after.file_groups()
    late_log = next(f for s in group.slices.values() for f in s.log_files if f.parsed.instant == t1)
    assert next(s.base_instant for s in group.slices.values() if late_log in s.log_files) == t2
    assert all_reads(after, times) == before

    # what a reader without the history does: D's log file falls into the insert's slice, which C replaced
    inputs = after.view_inputs()
    blind = ViewInputs(
        inputs.table_version,
        {k: v for k, v in inputs.completed.items() if k not in after.archived},
        inputs.first_active_instant,
        inputs.pending_compactions,
    )
    bases, logs = after._listing
    (blind_group,) = build_file_groups(bases, logs, blind).values()
    assert late_log in blind_group.slices[times[0]].log_files
    # hudi-rs 0.5.0 reads no history (docs/lsm-timeline.md): it loses D's records. When this fails, it reads them
    lost = [r for r in rs_rows(tmp_path / "t") if r["id"] == "eu-30"]
    assert not lost and rs_rows(tmp_path / "t") != before["snapshot"]


def test_a_history_that_cannot_be_read_stops_reads_with_one_line(tmp_path: Path) -> None:
    table = write_table(tmp_path / "t")
    report = archive_timeline(table, dry_run=False)
    assert report.history_file is not None
    (tmp_path / "t" / ".hoodie" / "timeline" / "history" / report.history_file).unlink()
    with pytest.raises(CorruptFileError, match="listed by manifest_1 but missing") as raised:
        HudiTable.open(str(tmp_path / "t")).read(Query("snapshot"))
    assert len(str(raised.value).splitlines()) == 1
    (tmp_path / "t" / ".hoodie" / "timeline" / "history" / "manifest_1").write_text("")
    with pytest.raises(CorruptFileError, match="not an LSM timeline manifest"):
        HudiTable.open(str(tmp_path / "t")).read(Query("incremental", begin="0"))


# ---------------------------------------------------------------- crashes and races


def final_state(table: HudiTable) -> tuple[list[str], list[tuple[Any, ...]], int]:
    """The active timeline's files, the history's rows and its version. (A kill after the first manifest leaves no
    `_version_`: readers take the highest manifest, ours as Java's, so the rerun finds its instants archived.)"""
    path = Path(table.base_path)
    return timeline_files(path), history_rows(table), lsm.latest_version(table.storage, table.history_path)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Reads, list[str], Any]:
    """A table, its reads, and its state after an archival nothing interrupted."""
    root = tmp_path_factory.mktemp("reference")
    table = write_table(root / "source")
    times = times_of(table)
    reads = all_reads(table, times)
    done = copy_of(root / "source", root / "archived")
    archive_timeline(done, dry_run=False)
    return root / "source", reads, times, final_state(done)


STEPS = [(archival.set_crash_hook, step) for step in archival.CRASH_POINTS] + [
    (lsm.set_crash_hook, step) for step in lsm.CRASH_POINTS
]


@pytest.mark.parametrize(("set_hook", "step"), STEPS, ids=[s for _, s in STEPS])
def test_a_crash_at_each_step_reads_as_before_and_the_next_run_finishes(
    tmp_path: Path, reference: tuple[Path, Reads, list[str], Any], set_hook: Callable[..., None], step: str
) -> None:
    source, reads, times, finished = reference
    table = copy_of(source, tmp_path / "t")
    with crash_at(set_hook, step), pytest.raises(Crash):
        archive_timeline(table, dry_run=False)
    crashed = HudiTable.open(str(tmp_path / "t"))
    assert all_reads(crashed, times) == reads
    report = archive_timeline(crashed, dry_run=False)
    if step in ("after-history", "after-pending", "after-completed"):
        assert report.finished and not report.archived  # the history had them: only the deletes were left
    assert final_state(crashed) == finished
    assert all_reads(HudiTable.open(str(tmp_path / "t")), times) == reads


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hudi_meta.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "step"),
    [(archival.CRASH_AT_ENV, s) for s in archival.CRASH_POINTS] + [(lsm.CRASH_AT_ENV, s) for s in lsm.CRASH_POINTS],
)
def test_kill_9_at_each_step_then_archive_finishes(
    tmp_path: Path, reference: tuple[Path, Reads, list[str], Any], env: str, step: str
) -> None:
    source, reads, times, finished = reference
    copy_of(source, tmp_path / "t")
    out = cli("archive", str(tmp_path / "t"), "--execute", env={env: step})
    assert out.returncode == -signal.SIGKILL, out.stderr
    lock = tmp_path / "t" / ".hoodie" / "lock"
    assert lock.exists()  # the killed archiver held the table lock: it expires (hoodie.write.lock.filesystem.expire)
    old = time.time() - 120
    os.utime(lock, (old, old))
    assert all_reads(HudiTable.open(str(tmp_path / "t")), times) == reads
    out = cli("archive", str(tmp_path / "t"), "--execute")
    assert out.returncode == 0, out.stderr
    assert not lock.exists()
    if env == archival.CRASH_AT_ENV:
        left = 5 if step == "after-completed" else 6  # killed after the first completed file was deleted
        assert f"finished {left} instants an earlier archival left" in out.stdout, out.stdout
    table = HudiTable.open(str(tmp_path / "t"))
    assert final_state(table) == finished
    assert all_reads(table, times) == reads


def test_two_archivers_at_once_write_one_history(tmp_path: Path, reference: tuple[Path, Reads, list[str], Any]) -> None:
    """The second archiver waits for the table lock while the first one is between its history file and its
    deletes; then it finds nothing left to archive."""
    source, reads, times, finished = reference
    table = copy_of(source, tmp_path / "t")
    second: list[ArchiveReport] = []
    threads: list[threading.Thread] = []

    def start_second(step: str) -> None:
        if step == "after-history" and not threads:
            thread = threading.Thread(
                target=lambda: second.append(archive_timeline(HudiTable.open(str(tmp_path / "t")), dry_run=False))
            )
            threads.append(thread)
            thread.start()
            time.sleep(0.5)  # the second one is waiting for the lock

    archival.set_crash_hook(start_second)
    try:
        first = archive_timeline(table, dry_run=False)
    finally:
        archival.set_crash_hook(None)
    threads[0].join(timeout=60)
    assert len(first.archived) == 6 and second and not second[0].instants
    assert final_state(table) == finished
    assert all_reads(HudiTable.open(str(tmp_path / "t")), times) == reads


@pytest.mark.slow
def test_archivers_in_several_processes_leave_one_history(
    tmp_path: Path, reference: tuple[Path, Reads, list[str], Any]
) -> None:
    source, reads, times, finished = reference
    copy_of(source, tmp_path / "t")
    command = [sys.executable, "-m", "hudi_meta.cli.main", "archive", str(tmp_path / "t"), "--execute"]
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    assert sum("archived 6 instants" in out for out, _ in outs) == 1, outs
    table = HudiTable.open(str(tmp_path / "t"))
    assert final_state(table) == finished
    assert all_reads(table, times) == reads


# ---------------------------------------------------------------- rules read from the files


def T(n: int) -> str:  # noqa: N802 (an instant time, as the docs write them)
    return f"20260101000000{n:03d}"


def hand_timeline(path: Path, kinds: list[str], version: int = 9) -> HudiTable:
    """A table whose timeline alone is written (planning reads no data files): `kinds[n]` is instant T(n + 1):
    `d` a completed delta commit, `p` a pending one, `c` a completed compaction, `pc` a pending one, `clean`."""
    table = create_table(str(path), "demo", ["id"], "ts", ["region"], extra_props=PROPS, version=version)
    writer = table.timeline_writer()
    for n, kind in enumerate(kinds, 1):
        action = {"c": Action.COMPACTION, "pc": Action.COMPACTION, "clean": Action.CLEAN}.get(kind, Action.DELTA_COMMIT)
        plan = b""
        if action == Action.COMPACTION:
            plan = CompactionPlan(operations=()).to_bytes()
        if action == Action.CLEAN:
            retain = ActionInstant(T(3), "deltacommit", "COMPLETED")
            plan = CleanerPlan(earliest_instant_to_retain=retain, policy="KEEP_LATEST_COMMITS").to_bytes()
        writer.request(action, T(n), plan)
        writer.start(action, T(n))
        if kind in ("p", "pc"):
            continue
        content = CommitMetadata(operation_type="UPSERT").to_bytes(table.config.timeline_layout)
        if action == Action.CLEAN:
            content = CleanMetadata(
                start_clean_time=T(n), time_taken_in_millis=0, total_files_deleted=0, earliest_commit_to_retain=T(3)
            ).to_bytes()
        writer.complete(action, T(n), content)
    return HudiTable.open(str(path))


def planned(table: HudiTable) -> list[str]:
    return [i.instant for i in archive_timeline(table).archived]


def test_a_pending_compaction_stops_archival_before_the_newest_commit_before_it(tmp_path: Path) -> None:
    table = hand_timeline(tmp_path / "t", ["d", "d", "d", "pc", "d", "d", "d", "d"])
    assert planned(table) == [T(1), T(2)]
    report = archive_timeline(table)
    assert "the newest completed commit before compaction 20260101000000004 is pending" in report.plan.summary


def test_the_latest_clean_keeps_what_its_plan_retains(tmp_path: Path) -> None:
    table = hand_timeline(tmp_path / "t", ["d", "d", "d", "d", "d", "clean", "d", "d", "d"])
    assert planned(table) == [T(1), T(2)]  # the clean retains from T(3)
    assert "the latest clean 20260101000000006 retains from 20260101000000003" in archive_timeline(table).plan.summary


def write_live_link(path: Path, timeline: Path) -> tuple[Path, bytes]:
    """Compaction T(4) made a link to a log file of the slice it compacted, and that file is still there: the
    link's target, and the plan written to T(4)'s requested file in `timeline`."""
    target = path / "region=eu" / ".f1_20260101000000001.log.1_1-0-1"
    target.parent.mkdir()
    target.write_bytes(b"")
    link = SymlinkOperation(".f1_20260101000000004.log.2_1-0-1", target.name)
    op = CompactionOperation(
        base_instant_time=T(1), file_id="f1", partition_path="region=eu", symlink_operations=(link,)
    )
    plan = CompactionPlan(operations=(op,)).to_bytes()
    (timeline / f"{T(4)}.compaction.requested").write_bytes(plan)
    return target, plan


def test_a_compaction_holding_live_links_stays_with_everything_after_it(tmp_path: Path) -> None:
    table = hand_timeline(tmp_path / "t", ["d", "d", "d", "c", "d", "d", "d", "d", "d", "c"])
    assert planned(table) == [T(n) for n in range(1, 9)]
    target, plan_bytes = write_live_link(tmp_path / "t", tmp_path / "t" / ".hoodie" / "timeline")
    assert planned(table) == [T(1), T(2), T(3)]
    assert "compaction 20260101000000004 holds links whose targets still exist" in archive_timeline(table).plan.summary
    target.unlink()  # a clean deleted the target (after the link)
    assert planned(table) == [T(n) for n in range(1, 9)]
    report = archive_timeline(table, dry_run=False)
    rows_ = {i.requested_time: i for i in read_history(table.storage, table.history_path)}
    assert rows_[T(4)].action == "commit" and rows_[T(4)].plan == plan_bytes  # a compaction, with its plan
    assert [i.instant for i in report.archived] == [T(n) for n in range(1, 9)]
