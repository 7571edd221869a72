"""Sequences the model test found failing, shrunk to plain tests: each keeps its defect fixed.

Expected values are worked out by hand from Java Hudi 0.x's merge rules and docs/event-time.md, and the
whole table is also compared with the model (`ModelTable.check_reads`).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from hudi_meta.compaction.run import LAYOUT_ATTEMPTS, run_compaction, set_crash_hook
from hudi_meta.errors import HudiMetaError
from hudi_meta.format.links import EXACT_RESULT_KEY
from hudi_meta.write.clean_plan import Policy
from tests.model.harness import ModelTable, Op, hudi_rs_rows, read_rows
from tests.model.model import DEFAULT_PAYLOAD, EVENT_TIME_PAYLOAD, OVERWRITE_PAYLOAD, at


def first(n: int) -> int:
    return n - 1


def bootstrap(t: ModelTable) -> None:
    """One base file per (partition, bucket): k00 (p0/0), k01 (p1/1), k10 (p0/1), k11 (p1/0)."""
    t.bootstrap([Op("k00", 1, 1.0), Op("k01", 1, 1.0), Op("k10", 60, 1.0), Op("k11", 1, 1.0)])


def snapshot_of(t: ModelTable) -> dict[str, tuple[int | None, float | None]]:
    return {r[0]: (r[3], r[4]) for r in read_rows(t.table.read("snapshot"))}


def test_exact_log_followed_by_a_delete_and_an_older_reinsert(tmp_path: Path) -> None:
    """Found by the model test (seed 9, EventTimeAvroPayload). Rule (design 5, and Java 0.x's merge): an exact
    compaction leaves the snapshot as it was; a later write merges over the files as they are, log records by
    `preCombine` and the log scanner, the winner against the base record by `combineAndGetUpdateValue`.
    T=10: k10's base record (ts 60) is after T, so the new base file has no k10 and the exact log holds it. The
    delete (natural order) after it wins in the log scanner, then the re-insert (41) after the delete wins, and
    no base record competes: k10 = (41, 6.0). (Before this fix the model expected the base record to come back
    as it would over a plain compaction's base file; Java's result depends on where the record sits, which is
    why a plain compaction in Java changes later results the same way.)"""
    for payload in (DEFAULT_PAYLOAD, EVENT_TIME_PAYLOAD):
        t = ModelTable(str(tmp_path / payload.rsplit(".", 1)[1]), payload)
        try:
            bootstrap(t)
            t.write([Op("k12", 6, 4.0)])  # same file group as k10 (p0, bucket 1): L1, min event time <= T
            t.write([Op("k10", None, None)])  # L2: k10 deleted now (after T): linked
            before = snapshot_of(t)
            assert "k10" not in before
            assert t.schedule(10, "symlink", exact=True) is not None
            t.run()
            assert snapshot_of(t) == before
            t.write([Op("k10", 41, 6.0)])  # L3
            assert snapshot_of(t)["k10"] == (at(41), 6.0)
            t.check_reads(first)
        finally:
            t.close()


def test_exact_log_then_an_update_with_a_lower_ordering_value_overwrite_payload(tmp_path: Path) -> None:
    """Found by the model test (seed 101, OverwriteWithLatestAvroPayload), same rule. T=26: k01's base record
    (ts 83) is after T, so it moves to the exact log. A later update with ts 8 meets it log against log, where
    OverwriteWithLatestAvroPayload's `preCombine` keeps the larger ordering value: k01 = (83, 1.0), as Java reads
    a table where ts 83 was written after the last compaction."""
    t = ModelTable(str(tmp_path / "t"), OVERWRITE_PAYLOAD)
    try:
        t.bootstrap([Op("k00", 0, 1.0), Op("k01", 83, 1.0), Op("k10", 37, 1.0), Op("k11", 52, 1.0)])
        t.write([Op("k05", 22, 9.0)])  # same file group as k01 (p1, bucket 1), before T: compacted
        before = snapshot_of(t)
        assert t.schedule(26, "symlink", exact=True) is not None
        t.run()
        assert snapshot_of(t) == before
        assert "k01" not in {r[0] for r in read_rows(t.table.read("ro"))}
        t.write([Op("k01", 8, 0.0)])
        assert snapshot_of(t)["k01"] == (at(83), 1.0)
        t.check_reads(first)
    finally:
        t.close()


def test_a_key_that_cannot_be_exact_keeps_its_latest_version_and_the_commit_says_so(tmp_path: Path) -> None:
    """Design 5 with DefaultHoodieRecordPayload: k00 = base ts 1, then ts 5, a delete, ts 3 (T=10). As of T the
    key is ts 5 (`A`, the larger ordering value among the versions at or before T); the snapshot is ts 3 (`W`:
    the record after the delete wins in the log scanner, and 3 >= the base's 1). With `A` in the base file, no
    log record with ts 3 can win against it (`combineAndGetUpdateValue` keeps the larger ordering value), so
    the key cannot be exact: the base file holds `W`, the snapshot stays, and the commit records
    `hoodie.compaction.event.time.exact=false`."""
    t = ModelTable(str(tmp_path / "t"), DEFAULT_PAYLOAD)
    try:
        bootstrap(t)
        t.write([Op("k00", 5, 5.0)])
        t.write([Op("k00", None, None)])
        t.write([Op("k00", 3, 3.0)])
        before = snapshot_of(t)
        assert before["k00"] == (at(3), 3.0)
        instant = t.schedule(10, "symlink", exact=True)
        assert instant is not None
        t.run()  # asserts the commit's exact flag against the model (false here)
        assert snapshot_of(t) == before
        ro = {r[0]: (r[3], r[4]) for r in read_rows(t.table.read("ro"))}
        assert ro["k00"] == (at(3), 3.0)
        done = next(i for i in t.table.timeline.completed() if i.requested_time == instant)
        assert t.table.timeline.commit_metadata(done).extra_metadata[EXACT_RESULT_KEY] == "false"
        t.check_reads(first)
    finally:
        t.close()


def test_a_delete_appended_while_the_plan_is_pending_still_deletes(tmp_path: Path) -> None:
    """Found by the model test's check that a compaction leaves the snapshot as it was (seed 3004817987,
    DefaultHoodieRecordPayload, shrunk). k10: base ts 44, then ts 34 in the compacted log (both after T=30), then a
    delete with ordering value 41 appended into the plan's slice while it was pending. Before the compaction the
    log scanner lets the delete (41 >= 34) win and a log delete beats the base record: k10 is gone. Carrying the
    merged version (the base record, ts 44) before the delete would let it survive (44 > 41 among log records);
    the layout must carry what keeps the key deleted."""
    t = ModelTable(str(tmp_path / "t"), DEFAULT_PAYLOAD)
    try:
        t.bootstrap([Op("k00", 1, 1.0), Op("k01", 1, 1.0), Op("k10", 44, 1.0), Op("k11", 1, 1.0)])
        t.write([Op("k10", 34, 3.0), Op("k12", 9, 1.0)])  # k12: same file group, before T
        assert t.schedule(30, "symlink", exact=True) is not None
        t.write([Op("k10", 41, None)])
        assert "k10" not in snapshot_of(t)
        t.run()  # asserts the snapshot did not change
        assert "k10" not in snapshot_of(t)
        t.check_reads(first)
    finally:
        t.close()


def test_carried_deletes_of_both_kinds_read_with_hudi_rs(tmp_path: Path) -> None:
    """Found by the long model run (seed 202): an exact compaction carried a natural-order delete and a delete
    with an ordering value of the same file group in one delete block, which hudi-rs refuses to read ("Delete
    block mixes ordering types"; Java's writers never mix them in a block). The carry log now writes one delete
    block per kind."""
    t = ModelTable(str(tmp_path / "t"), DEFAULT_PAYLOAD)
    try:
        t.bootstrap([Op("k00", 1, 1.0), Op("k01", 1, 1.0), Op("k10", 1, 1.0), Op("k11", 1, 1.0), Op("k12", 2, 1.0)])
        t.write([Op("k10", None, None), Op("k14", 3, 1.0)])  # p0/1: a natural delete after T, a record before T
        t.write([Op("k12", 40, None), Op("k16", 4, 1.0)])  # p0/1: a delete ordered after T, a record before T
        assert t.schedule(10, "symlink", exact=True) is not None
        t.run()
        assert {"k10", "k12"} <= {r[0] for r in read_rows(t.table.read("ro"))}  # RO as of T still has them
        assert {r for r in hudi_rs_rows(t.path, "snapshot")} == read_rows(t.table.read("snapshot"))
        t.check_reads(first)
    finally:
        t.close()


def test_unschedule_moves_logs_appended_into_the_pending_slice_and_check_accepts_them(tmp_path: Path) -> None:
    """Found by the model test (CI seed 3309760097): a write appended into a pending copy-mode slice, then the
    plan was unscheduled. Rule (design 7, as Java's unschedule with repair): the appended log file moves back
    into the previous slice under a new name and reads as before; its write stats keep the old name, and
    `hudi-meta check` must not call the moved file an orphan (it did: "log file with blocks of ..., whose write
    stats do not list it")."""
    t = ModelTable(str(tmp_path / "t"), DEFAULT_PAYLOAD)
    try:
        t.bootstrap([Op("k00", 0, 1.0), Op("k01", 75, 1.0), Op("k10", 52, 1.0), Op("k11", 53, 1.0)])
        t.write([Op("k22", 30, None), Op("k05", 2, None)])
        assert t.schedule(37, "copy", exact=True) is not None
        writer = t.open_writer([Op("k00", 15, 1.0), Op("k14", None, None), Op("k22", 38, 2.0)], "parquet")
        t.commit_open_writer(writer)
        before = snapshot_of(t)
        t.unschedule()
        assert t.pending is None
        assert snapshot_of(t) == before
        t.check_reads(first)
        t.check_links()
        t.check_table()
    finally:
        t.close()


def test_a_resumed_compaction_recomputes_its_layout_for_writes_appended_since(tmp_path: Path) -> None:
    """Found by the model test (seed 8383, OverwriteWithLatestAvroPayload). Rule (design 5): a completed
    compaction leaves the snapshot as it was. k16's base record has ts 77, after T=48, so exact mode carries it
    to the carry log. The run is killed before its commit, then a write appends k16 ts 62 into the pending slice:
    over the old base record that log record wins (62). A resumed run reused the base file and carry log of the
    killed attempt, made before the append, so 77 sat in the carry log, where it beat 62 log against log
    (preCombine keeps the larger ordering value) and the compaction changed k16 to 77."""
    t = ModelTable(str(tmp_path / "t"), OVERWRITE_PAYLOAD)
    try:
        t.bootstrap([Op("k00", 0, 1.0), Op("k01", 0, 1.0), Op("k10", 30, 1.0), Op("k11", 47, 1.0), Op("k16", 77, 0.0)])
        t.write([Op(k, 5, 2.0) for k in ("k00", "k01", "k10", "k11", "k02", "k12", "k14", "k20")])
        assert t.schedule(48, "copy", exact=True) is not None
        t.run("before-commit")  # killed with every base file and carry log written
        t.write([Op("k16", 62, 0.0)])
        assert snapshot_of(t)["k16"] == (at(62), 0.0)
        t.run()  # asserts that the snapshot is unchanged
        assert snapshot_of(t)["k16"] == (at(62), 0.0)
        t.check_reads(first)
    finally:
        t.close()


@pytest.mark.parametrize("at_step", ["after-base-file", "before-commit"])
def test_a_write_committed_while_the_compaction_runs_is_in_its_layout(tmp_path: Path, at_step: str) -> None:
    """The same rule and table as above, with the write committed while the run goes on (a writer beside the
    executor) instead of between a killed run and its resume: the layout made before the write would change k16
    to 77, so the run lays that slice out again before it commits."""
    t = ModelTable(str(tmp_path / "t"), OVERWRITE_PAYLOAD)
    try:
        t.bootstrap([Op("k00", 0, 1.0), Op("k01", 0, 1.0), Op("k10", 30, 1.0), Op("k11", 47, 1.0), Op("k16", 77, 0.0)])
        t.write([Op(k, 5, 2.0) for k in ("k00", "k01", "k10", "k11", "k02", "k12", "k14", "k20")])
        assert t.schedule(48, "copy", exact=True) is not None
        t.run_while_writing(at_step, lambda: t.write([Op("k16", 62, 0.0)]))  # asserts the snapshot is unchanged
        assert snapshot_of(t)["k16"] == (at(62), 0.0)
        assert any(f"a write at {at_step}" in line for line in t.log)
        t.check_reads(first)
    finally:
        t.close()


def test_writes_into_the_slices_at_every_layout_stop_the_run_and_a_rerun_commits(tmp_path: Path) -> None:
    """A compaction whose slices gain a write after every layout gives up after LAYOUT_ATTEMPTS more layouts,
    in one line and with nothing committed; run again once the writes stop, it commits and keeps the snapshot."""
    t = ModelTable(str(tmp_path / "t"), OVERWRITE_PAYLOAD)
    try:
        t.bootstrap([Op("k00", 0, 1.0), Op("k10", 30, 1.0), Op("k16", 77, 0.0)])
        t.write([Op(k, 5, 2.0) for k in ("k00", "k10", "k16")])
        instant = t.schedule(48, "copy", exact=True)
        assert instant is not None
        writes: list[str] = []

        def writer(step: str) -> None:
            if step == "after-base-file":
                writes.append(t.write([Op("k16", 50 + len(writes), 0.0)]))

        set_crash_hook(writer)
        try:
            with pytest.raises(HudiMetaError, match=f"writes kept landing in the slices of compaction {instant}"):
                run_compaction(t.table, instant)
        finally:
            set_crash_hook(None)
        assert len(writes) >= LAYOUT_ATTEMPTS + 1  # the first layout and each one made again (of k16's slice)
        assert not t.table.timeline.is_completed(instant)
        t.run()  # asserts the snapshot is unchanged
        assert snapshot_of(t)["k16"] == (at(50 + len(writes) - 1), 0.0)
        t.check_reads(first)
    finally:
        t.close()


def test_a_delete_only_write_into_a_pending_slice_leaves_the_table_readable_after_a_clean(tmp_path: Path) -> None:
    """Found by the model test (seed 7101). Rule (docs/hudi-format.md, Java's append handle): a log block written
    into a pending compaction's slice has no base file yet, and every commit records the table's schema.
    The write stat of a delete-only write into slice C named the previous slice's base file, and its commit
    had no schema, so hudi-rs opened that base file for the schema. Once C completed and a clean deleted the
    previous slice, hudi-rs failed: "Object ... .parquet not found"."""
    t = ModelTable(str(tmp_path / "t"), DEFAULT_PAYLOAD)
    try:
        t.bootstrap([Op("k00", 51, 1.0), Op("k01", 59, 1.0), Op("k10", 55, 1.0), Op("k11", 100, 1.0)])
        t.write([Op("k22", 43, 0.0), Op("k00", 34, 0.0), Op("k21", 0, 0.0), Op("k04", 40, None)])
        assert t.schedule(1, "symlink", exact=False) is not None
        t.run_while_writing("before-commit", lambda: t.write([Op("k23", None, None)], "parquet"))
        t.clean(Policy.KEEP_LATEST_BY_HOURS, 1)
        t.check_reads(first)  # hudi-rs included
    finally:
        t.close()


def test_a_delete_only_write_commits_after_the_instants_it_saw_were_archived(tmp_path: Path) -> None:
    """Found by CI's model run (seed 20261123) right after the fix above: a delete-only write that began
    before an archival took the table's schema from the timeline it listed when it began, and failed on an
    archived instant's file. Rule: the schema comes from the timeline as it is at the commit."""
    t = ModelTable(str(tmp_path / "t"), DEFAULT_PAYLOAD)
    try:
        t.bootstrap([Op("k00", 41, 1.0), Op("k01", 32, 1.0), Op("k10", 0, 1.0), Op("k11", 35, 1.0)])
        writer = t.open_writer([Op("k18", None, None)])  # deletes only
        t.write([Op("k19", 96, 0.0)])
        t.write([Op("k23", 80, 0.0)])
        assert t.archive_as_java(2)  # the instants the writer saw when it began
        t.commit_open_writer(writer)
        t.check_reads(first)
    finally:
        t.close()


def test_a_version_both_in_the_base_file_and_the_exact_log_is_one_version(tmp_path: Path) -> None:
    """Found by the long model run (seed 9404, DefaultHoodieRecordPayload). Rule (design 5): a key is exact when the
    new base file holds its version as of T. An exact compaction copies a key's base record into the exact log too
    (A = W), so the next compaction sees that one version twice: in the base file and in a compacted log. With a
    delete (51 s) and an older re-insert (14 s) written into the pending slice, the current version is the base
    file's (Java's payload keeps the base record over the re-insert's lower ordering value); keeping the log's
    copy of the same record in the new base file keeps the snapshot. Before this fix the executor compared rows,
    not versions, kept the old base row instead and published `exact=false` for a table that was exact.

    Since issue 25 (defect 2) an exact compaction carries a version only where it differs from A, so the first
    compaction leaves no copy and a second one at the same T plans nothing; a later write makes it plan again."""
    t = ModelTable(str(tmp_path / "t"), DEFAULT_PAYLOAD)
    try:
        bootstrap(t)
        t.write([Op("k00", 24, 6.0)])
        assert t.schedule(100, "symlink", exact=True) is not None
        t.run()
        assert t.schedule(100, "symlink", exact=True) is None  # k00 (24 s) is in the base file, not carried
        t.write([Op("k00", 20, 7.0)])  # lower ordering value: the base record (24 s) stays the current version
        second = t.schedule(100, "symlink", exact=True)
        assert second is not None
        t.write([Op("k00", 51, None)])  # written into the pending slice
        t.write([Op("k00", 14, 8.0)])
        before = snapshot_of(t)
        assert before["k00"] == (at(24), 6.0)
        t.run()  # the harness checks the commit's exact flag against the model
        tl = t.table.timeline
        commit = next(i for i in tl.completed() if i.requested_time == second)
        assert tl.commit_metadata(commit).extra_metadata[EXACT_RESULT_KEY] == "true"
        assert snapshot_of(t) == before
        t.check_reads(first)  # ours and hudi-rs against the model: snapshot, RO as of T, incremental, time travel
    finally:
        t.close()


@pytest.mark.parametrize("version", [6, 9])
def test_another_writers_failed_mdt_compaction_and_a_damaged_mdt(tmp_path: Path, version: int) -> None:
    """The model's metadata-table steps (issue 36), as plain calls. Rule (docs/metadata-table.md 6.7): an MDT
    compaction another writer left inflight, with base files under its own write token, is rolled back before it
    is run again (Java's `rollbackInflightCompaction`), so each file group ends with one base file of that instant
    and every read (ours, hudi-rs's through the MDT on 1.x) equals the model; a damaged MDT file makes every write
    refuse with nothing written. Without the rollback the redo wrote a second base file of the instant beside the
    foreign one (`check_table`'s `metadata_damage` finds it)."""
    t = ModelTable(str(tmp_path / "t"), version=version, metadata_table=True)
    try:
        bootstrap(t)
        t.write([Op("k12", 6, 4.0)])
        instant = None
        for n in range(3):  # an MDT compaction is due once a deltacommit followed the last one
            t.write([Op("k00", 7 + n, 2.0)])
            instant = t.leave_failed_mdt_compaction()
            if instant is not None:
                break
        assert instant is not None, t.log
        mdt = Path(t.path, ".hoodie", "metadata")
        assert list(mdt.rglob(f"*_0-77-777_{instant}.hfile"))
        t.check_table()
        t.check_reads(first)
        t.write([Op("k10", 8, 3.0)])  # our next MDT deltacommit finishes the foreign compaction first
        assert not list(mdt.rglob(f"*_0-77-777_{instant}.hfile"))
        assert list(mdt.rglob(f"*_{instant}.hfile"))
        t.check_table()
        t.check_reads(first)
        for nth in range(3):  # different files of the latest slices
            t.try_writes_on_damaged_mdt(functools.partial(_nth_of, nth))
            t.check_table()
        t.write([Op("k11", 9, 5.0)])
        t.check_table()
        t.check_reads(first)
    finally:
        t.close()


def _nth_of(nth: int, n: int) -> int:
    return nth % n
