"""Cleaning a real table compacted three times in symlink mode, with each policy: ours and hudi-rs read the
same snapshot and RO, no link dangles, Hudi's clean instants are written, the index follows the deletions,
time travel into cleaned slices is refused; kill -9 at each step of a clean, then `clean --execute` finishes it.
"""

from __future__ import annotations

import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select

from hudi_meta.clean.run import groups_from_index, run_clean
from hudi_meta.errors import CleanedDataError
from hudi_meta.format.avro_container import read_container
from hudi_meta.format.table_service_metadata import CleanerPlan, CleanMetadata
from hudi_meta.index.db import make_engine
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.models import cleaned_file_table, log_file_table, table_service_table
from hudi_meta.index.registry import table_id_of
from hudi_meta.table.table import HudiTable, Query
from hudi_meta.timeline.instant import instant_epoch_ms
from hudi_meta.write.clean import CRASH_AT_ENV, CRASH_POINTS, groups_from_files
from hudi_meta.write.clean_plan import (
    DELETE_LINK,
    KEEP_LATEST_BY_HOURS,
    KEEP_LATEST_COMMITS,
    KEEP_LATEST_FILE_VERSIONS,
    CleanPolicy,
    Policy,
)
from tests.cli.helpers import cli
from tests.compaction.core import CoreTable, TwoRegions, at, by_id, compact_three_times, hudi_rs_read, region_rows
from tests.compaction.helpers import files_of

READS = ("snapshot", "ro")


@dataclass(frozen=True)
class Compacted:
    path: Path
    db: Path
    compactions: tuple[str, ...]
    reads: dict[str, dict[str, tuple[int, float]]]


@pytest.fixture(scope="module")
def compacted(tmp_path_factory: pytest.TempPathFactory) -> Compacted:
    """`compact_three_times`: four links, the table read the same by ours and hudi-rs."""
    root = tmp_path_factory.mktemp("clean")
    db = root / "store.db"
    upgrade(f"sqlite:///{db}")
    engine = make_engine(f"sqlite:///{db}")
    t = TwoRegions(root / "table")
    c1, c2, c3 = compact_three_times(t, engine)
    engine.dispose()
    table = HudiTable.open(str(t.path))
    reads = {q: by_id(table.read(q)) for q in READS}
    for q in READS:
        assert hudi_rs_read(t.path, q) == reads[q], q
    links = [p for p in (root / "table").rglob(".*.log.*") if p.is_symlink()]
    assert len(links) == 4  # eu: C1.log.2, C2.log.2, C3.log.2; us: C1.log.2
    return Compacted(root / "table", db, (c1, c2, c3), reads)


def copy_of(src: Compacted, dst: Path) -> tuple[Path, Path]:
    dst.mkdir()
    shutil.copytree(src.path, dst / "table", symlinks=True)
    shutil.copy(src.db, dst / "store.db")
    return dst / "table", dst / "store.db"


def dangling(path: Path) -> list[Path]:
    return [p for p in path.rglob("*") if p.is_symlink() and not p.exists()]


def check_reads(path: Path, expected: dict[str, dict[str, tuple[int, float]]]) -> None:
    table = HudiTable.open(str(path))
    for q in READS:
        assert by_id(table.read(q)) == expected[q], q
        assert hudi_rs_read(str(path), q) == expected[q], q


POLICIES = {
    KEEP_LATEST_COMMITS: CleanPolicy(KEEP_LATEST_COMMITS, commits_retained=2),
    KEEP_LATEST_FILE_VERSIONS: CleanPolicy(KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1),
    KEEP_LATEST_BY_HOURS: CleanPolicy(KEEP_LATEST_BY_HOURS, hours_retained=1),
}


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_each_policy_keeps_the_table_readable(compacted: Compacted, tmp_path: Path, name: Policy) -> None:
    path, db = copy_of(compacted, tmp_path / "t")
    engine = make_engine(f"sqlite:///{db}")
    c1, c2, c3 = compacted.compactions
    now = instant_epoch_ms(c3) + 3_600_000  # KEEP_LATEST_BY_HOURS, 1 hour: the earliest commit to retain is C3
    table = HudiTable.open(str(path))
    dry = run_clean(engine, table, POLICIES[name], dry_run=True, now_ms=now)
    assert dry.plan is not None and dry.plan.deletions and dry.instant is None
    before = files_of(str(path))

    outcome = run_clean(engine, HudiTable.open(str(path)), POLICIES[name], dry_run=False, now_ms=now)
    assert outcome.instant is not None and outcome.plan is not None
    assert [r.path for r in outcome.reports] == [r.path for r in dry.reports]  # executes what the dry run showed
    assert all(r.done and r.error is None for r in outcome.reports)
    after = files_of(str(path))
    deleted = {a.path for a in outcome.plan.deletions}
    kept = {a.path for a in outcome.plan.kept}
    assert deleted and not deleted & after.keys() and deleted | after.keys() == before.keys()
    assert kept <= after.keys()
    assert not dangling(path)
    assert {a.path for a in outcome.plan.deletions if a.operation == DELETE_LINK} == {
        p for p in deleted if before[p][0] == "link"
    }
    check_reads(path, compacted.reads)

    # Hudi's three clean instants, as Java writes them
    hoodie = path / ".hoodie"
    t = outcome.instant
    requested = CleanerPlan.from_bytes((hoodie / f"{t}.clean.requested").read_bytes())
    assert CleanerPlan.from_bytes((hoodie / f"{t}.clean.inflight").read_bytes()) == requested
    assert requested.policy == name and requested.version == 2 and not requested.files_to_be_deleted_per_partition
    planned = [info.file_path for infos in requested.file_paths_to_be_deleted_per_partition.values() for info in infos]
    assert sorted(os.path.relpath(p, path) for p in planned) == sorted(deleted)
    metadata = CleanMetadata.from_bytes((hoodie / f"{t}.clean").read_bytes())
    raw = read_container((hoodie / f"{t}.clean").read_bytes(), "HoodieCleanMetadata")
    assert raw is not None and raw["version"] == 2
    assert metadata.start_clean_time == t and metadata.total_files_deleted == len(deleted)
    assert sorted(f for pm in metadata.partition_metadata.values() for f in pm.success_delete_files) == sorted(
        os.path.basename(p) for p in deleted
    )
    assert all(pm.policy == name and not pm.failed_delete_files for pm in metadata.partition_metadata.values())
    if name == KEEP_LATEST_FILE_VERSIONS:
        assert metadata.earliest_commit_to_retain == "" and requested.earliest_instant_to_retain is None
        assert kept  # us: the late log file of its first slice, linked by its newest slice
    else:
        retain = requested.earliest_instant_to_retain
        assert retain is not None and retain.state == "COMPLETED"
        assert metadata.earliest_commit_to_retain == retain.timestamp
    if name == KEEP_LATEST_BY_HOURS:
        assert retain is not None and (retain.timestamp, retain.action) == (c3, "commit")

    # the index follows: its files are the table's files
    table_id = table_id_of(engine, str(path))
    assert table_id is not None
    assert _names(groups_from_index(engine, table_id)) == _names(groups_from_files(HudiTable.open(str(path))))
    lf = log_file_table
    with engine.connect() as conn:
        indexed = {
            f"{r.partition_path}/{r.name}"
            for r in conn.execute(select(lf.c.partition_path, lf.c.name).where(lf.c.table_id == table_id))
        }
    assert not indexed & deleted
    # and records what the clean removed (for lineage): exactly the files that left the disk
    c = cleaned_file_table
    with engine.connect() as conn:
        recorded = {
            (r.clean_instant, f"{r.partition_path}/{r.name}")
            for r in conn.execute(select(c).where(c.c.table_id == table_id))
        }
    assert recorded == {(t, p) for p in before.keys() - after.keys()}

    # cleaning again with the same policy deletes nothing and writes no instant
    again = run_clean(engine, HudiTable.open(str(path)), POLICIES[name], dry_run=False, now_ms=now)
    assert again.instant is None and not again.plan.deletions  # type: ignore[union-attr]
    assert files_of(str(path)) == after
    engine.dispose()


def _names(groups: list) -> set[tuple[str, str, str, str | None]]:  # type: ignore[type-arg]
    return {(g.partition, s.base_instant, f.name, f.link_target) for g in groups for s in g.slices for f in s.files}


def test_time_travel_into_cleaned_slices_is_refused(compacted: Compacted, tmp_path: Path) -> None:
    path, db = copy_of(compacted, tmp_path / "t")
    c1, c2, c3 = compacted.compactions
    table = HudiTable.open(str(path))
    as_of_c2 = by_id(table.read(Query("time-travel", as_of=c2)))
    as_of_c1 = by_id(table.read(Query("time-travel", as_of=c1)))
    engine = make_engine(f"sqlite:///{db}")
    run_clean(engine, table, POLICIES[KEEP_LATEST_COMMITS], dry_run=False)
    engine.dispose()
    table = HudiTable.open(str(path))
    retain = CleanMetadata.from_bytes(next(path.glob(".hoodie/*.clean")).read_bytes()).earliest_commit_to_retain
    assert retain == c3  # 2 commits retained: C3 and the deltacommit after it
    assert by_id(table.read(Query("time-travel", as_of=c2))) == as_of_c2  # C2's slice serves reads as of C3
    with pytest.raises(CleanedDataError, match=rf"as of {c1} needs slice {c1} .* read as of {c2} or later"):
        table.read(Query("time-travel", as_of=c1))
    with pytest.raises(CleanedDataError, match="incremental read"):
        table.read(Query("incremental", begin="0", end=c1))
    assert as_of_c1  # (what the read returned before the clean)


def test_copy_mode_links_are_ordinary_files(tmp_path: Path) -> None:
    upgrade(f"sqlite:///{tmp_path / 'store.db'}")
    engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    t = CoreTable(tmp_path / "table")
    t.write(region_rows("eu", ("a", 1, 1.0)))
    t.write(region_rows("eu", ("a", 3, 1.5)))
    t.write(region_rows("eu", ("c", 100, 3.0)))
    t.compact(engine, at(10), mode="copy")
    t.write(region_rows("eu", ("d", 200, 4.0)))
    expected = {q: t.read(q) for q in READS}
    outcome = run_clean(
        engine, t.table, CleanPolicy(KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1), dry_run=False
    )
    assert outcome.plan is not None and not outcome.plan.kept  # the copy needs nothing of the old slice
    assert {a.operation for a in outcome.plan.deletions} == {"delete-file"}
    assert len(t.table.all_file_groups()[0].slices) == 1
    for q in READS:
        assert t.read(q) == expected[q] == hudi_rs_read(t.path, q)
    engine.dispose()


@pytest.mark.slow
@pytest.mark.parametrize("step", CRASH_POINTS)
def test_kill_9_at_each_step_then_clean_finishes(compacted: Compacted, tmp_path: Path, step: str) -> None:
    args = ["clean", "--policy", "KEEP_LATEST_FILE_VERSIONS", "--retained", "1", "--execute"]
    ref_path, ref_db = copy_of(compacted, tmp_path / "reference")
    assert cli("--db", str(ref_db), *args[:1], str(ref_path), *args[1:]).returncode == 0

    path, db = copy_of(compacted, tmp_path / "crashed")
    out = cli("--db", str(db), "clean", str(path), *args[1:], env={CRASH_AT_ENV: step})
    assert out.returncode == -signal.SIGKILL, out.stderr
    pending = [p.name for p in (path / ".hoodie").glob("*.clean*")]
    assert not any(n.endswith(".clean") for n in pending)
    out = cli("--db", str(db), "clean", str(path), *args[1:])
    assert out.returncode == 0, out.stderr
    if step != "after-requested" or pending:
        assert "finished pending clean" in out.stdout

    assert files_of(str(path)) == files_of(str(ref_path))
    assert not dangling(path)
    cleans = sorted(p.name for p in (path / ".hoodie").glob("*.clean*"))
    assert len(cleans) == 3 and cleans[0].endswith(".clean")  # one clean: requested, inflight, completed
    metadata = CleanMetadata.from_bytes((path / ".hoodie" / cleans[0]).read_bytes())
    reference = CleanMetadata.from_bytes(next(ref_path.glob(".hoodie/*.clean")).read_bytes())
    assert metadata.total_files_deleted == reference.total_files_deleted
    check_reads(path, compacted.reads)
    again = cli("--db", str(db), "clean", str(path), *args[1:])
    assert again.returncode == 0 and "nothing to clean" in again.stdout, again.stdout


def test_which_reads_need_a_cleaned_slice() -> None:
    """Slices 10, 20 (cleaned), 30 (partly cleaned: a kept link target), 40, 50 (a pending compaction's slice)."""
    from hudi_meta.file_group.cleaned import cleaned_need
    from hudi_meta.file_group.fs_view import FileGroup, ViewInputs

    group = FileGroup("p", "f")
    for base in ("30", "40", "50"):
        group.slice_at(base)
    inputs = ViewInputs(6, {b: b for b in ("10", "20", "30", "40")}, "10", {("p", "f"): "50"})
    cleaned = {("p", "f"): {"10": "60", "20": "60", "30": "60"}}
    assert cleaned_need([group], cleaned, inputs, "05") is None  # before the file group existed
    for as_of, slice_ in (("10", "10"), ("25", "20"), ("39", "30")):
        need = cleaned_need([group], cleaned, inputs, as_of)
        assert need is not None and (need.slice, need.clean, need.readable_from) == (slice_, "60", "40")
    assert cleaned_need([group], cleaned, inputs, "40") is None
    assert cleaned_need([group], cleaned, inputs, "55") is None  # the pending slice reads slice 40 with it
    replaced = ViewInputs(6, inputs.completed, "10", {}, frozenset({("p", "f")}))
    assert cleaned_need([group], cleaned, replaced, "25") is None  # readers skip replaced file groups


def test_a_pending_compaction_keeps_its_slice_and_runs_after_the_clean(compacted: Compacted, tmp_path: Path) -> None:
    from hudi_meta.compaction.run import run_compaction
    from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction

    path, db = copy_of(compacted, tmp_path / "t")
    engine = make_engine(f"sqlite:///{db}")
    scheduled = schedule_compaction(engine, HudiTable.open(str(path)), ScheduleRequest(threshold_ms=at(600)))
    assert scheduled.instant is not None and scheduled.plan is not None
    ops = scheduled.plan.operations
    reads = {op.partition_path: {*op.delta_file_paths, op.data_file_path or ""} - {""} for op in ops}
    outcome = run_clean(engine, HudiTable.open(str(path)), POLICIES[KEEP_LATEST_FILE_VERSIONS], dry_run=False)
    assert outcome.plan is not None and outcome.plan.deletions
    planned = {a.path for a in outcome.plan.actions}
    for part, names in reads.items():  # nothing the compaction reads (its slice and what its links show) goes
        for name in names:
            target = (path / part / str(name)).resolve()
            assert f"{part}/{name}" not in planned and target.exists(), name
    check_reads(path, compacted.reads)
    run_compaction(HudiTable.open(str(path)), scheduled.instant)
    snapshot = compacted.reads["snapshot"]
    ro = {k: v for k, v in snapshot.items() if k != "w"}  # all but us's late record (after T) is in RO now
    check_reads(path, {"snapshot": snapshot, "ro": ro})
    assert not dangling(path)
    engine.dispose()


def test_a_clean_indexed_before_cleaned_files_were_recorded_is_read_again(compacted: Compacted, tmp_path: Path) -> None:
    """A store upgraded from schema 0002 holds completed cleans with an empty summary and no cleaned files: the
    next index run reads their metadata and records what they deleted."""
    path, db = copy_of(compacted, tmp_path / "t")
    engine = make_engine(f"sqlite:///{db}")
    now = instant_epoch_ms(compacted.compactions[2]) + 3_600_000
    outcome = run_clean(engine, HudiTable.open(str(path)), POLICIES[KEEP_LATEST_COMMITS], dry_run=False, now_ms=now)
    assert outcome.instant is not None
    c, s = cleaned_file_table, table_service_table
    with engine.begin() as conn:
        expected = sorted(conn.execute(select(c.c.clean_instant, c.c.partition_path, c.c.name)).all())
        conn.execute(c.delete())
        conn.execute(s.update().where(s.c.action == "clean").values(summary="{}"))
    assert expected
    Indexer(engine, HudiTable.open(str(path))).run()
    with engine.connect() as conn:
        assert sorted(conn.execute(select(c.c.clean_instant, c.c.partition_path, c.c.name)).all()) == expected
        summary = conn.execute(select(s.c.summary).where(s.c.action == "clean")).scalar_one()
    assert '"files_deleted": ' + str(len(expected)) in summary
    engine.dispose()
