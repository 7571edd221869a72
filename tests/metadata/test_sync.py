"""hudi-meta's commands on a table with a metadata table, killed with SIGKILL inside the metadata table's part of
their commit, as a user would meet it: `compaction run`, `clean` and `rollback` each write the MDT deltacommit (or
the MDT rollback) first and complete the data-table instant after it (docs/metadata-table.md section 7).

Rule (the design's crash contract): after a kill at any step, nothing a reader believes changed (our reads and
hudi-rs's, which lists through the MDT, equal the reads before the command; the MDT lists exactly the committed
files on storage), and running the same command again finishes it, after which the same holds with the command's
effect in place.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hudi_meta.format.file_names import log_file_name
from hudi_meta.metadata.crash import CRASH_AT_ENV
from hudi_meta.metadata.init import create_metadata_table
from hudi_meta.table.metadata_table import read_files_partition
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action
from hudi_meta.write.write_targets import FileGroupTarget
from hudi_meta.write.writer import append_to_file_group
from tests.cli.helpers import cli
from tests.compaction.core import T0, CoreTable, foreign_commit, region_rows
from tests.metadata.helpers import by_key, check_readers, rs_read

KILLED = -9


def _table(path: Path, version: int) -> CoreTable:
    """A table with its MDT, a base file and two log files (event times 10 s and 50 s after T0)."""
    t = CoreTable(path, version=version)
    create_metadata_table(t.table)
    t.write(region_rows("eu", ("a", 1, 1.0), ("b", 2, 2.0)))
    t.write(region_rows("eu", ("a", 10, 3.0)))
    t.write(region_rows("eu", ("b", 50, 4.0)))
    return t


def _reads(path: str) -> dict[str, object]:
    table = HudiTable.open(path)
    out: dict[str, object] = {q: by_key(table.read(q)) for q in ("snapshot", "ro")}
    if table.config.version >= 8:  # hudi-rs reads no version-6 metadata table
        out.update({f"rs-{q}": rs_read(path, q) for q in ("snapshot", "ro")})
    return out


def _killed_then_finished(t: CoreTable, db: str, step: str, *command: str, undone_first: bool = False) -> None:
    """`command` killed at MDT step `step`: reads unchanged, MDT listing = storage; run again: it finishes.
    `undone_first`: a rollback of a completed compaction, which takes the compaction's commit away first (its
    effect is what readers see from then on: the reads after the kill are those after the rollback)."""
    before = _reads(t.path)
    killed = cli("--db", db, *command, env={CRASH_AT_ENV: step})
    assert killed.returncode == KILLED, (step, killed.stdout, killed.stderr)
    at_kill = _reads(t.path)
    if not undone_first:
        assert at_kill == before, step
    check_readers(t.path)
    done = cli("--db", db, *command)
    assert done.returncode == 0, done.stderr
    check_readers(t.path)
    if undone_first:
        assert at_kill == _reads(t.path), step


@pytest.fixture
def store(tmp_path: Path) -> str:
    db = f"sqlite:///{tmp_path / 'store.db'}"
    assert cli("--db", db, "init-db").returncode == 0
    return db


@pytest.mark.parametrize(
    ("version", "step"),
    [
        (9, "after-requested"),
        (9, "after-log-file"),
        (9, "before-complete"),
        (9, "after-complete"),
        (6, "after-complete"),
    ],
)
def test_compaction_killed_inside_its_metadata_deltacommit(tmp_path: Path, store: str, version: int, step: str) -> None:
    t = _table(tmp_path / "t", version)
    threshold = str(T0 + 30_000)  # a's update is merged, b's stays a link
    scheduled = cli("--db", store, "compaction", "schedule", t.path, "--threshold", threshold, "--json")
    assert scheduled.returncode == 0, scheduled.stderr
    _killed_then_finished(t, store, step, "compaction", "run", t.path, "--engine", "local")
    table = t.table
    assert [i.action for i in table.timeline.completed()][-1] == Action.COMMIT
    assert by_key(table.read("ro"))["a"] != by_key(table.read("snapshot"))["b"]  # RO holds a's update, not b's
    mdt = HudiTable.open(str(Path(t.path) / ".hoodie" / "metadata"))
    assert mdt.timeline.is_completed(table.timeline.completed()[-1].requested_time)


@pytest.mark.parametrize("version", [6, 9])
def test_unschedule_clean_and_rollback_with_the_metadata_table(tmp_path: Path, store: str, version: int) -> None:
    """A plan taken back before it ran changes nothing the MDT lists; a completed compaction rolled back and a
    clean, each killed inside their MDT step, then finished."""
    t = _table(tmp_path / "t", version)
    assert cli("--db", store, "compaction", "schedule", t.path, "--strategy", "unbounded").returncode == 0
    before = _reads(t.path)
    plan = t.table.timeline.pending_compactions()[0].requested_time
    unscheduled = cli("--db", store, "compaction", "unschedule", t.path, plan, "--execute")
    assert unscheduled.returncode == 0, unscheduled.stderr
    assert _reads(t.path) == before
    check_readers(t.path)
    for i in range(2):  # two full compactions: the first one's slice is cleanable once the second is rolled back
        if i:
            t.write(region_rows("eu", ("c", 55, 4.5)))
        assert cli("--db", store, "compaction", "schedule", t.path, "--strategy", "unbounded").returncode == 0
        assert cli("--db", store, "compaction", "run", t.path, "--engine", "local").returncode == 0
    last = [i for i in t.table.timeline.completed() if i.action == Action.COMMIT][-1].requested_time
    rollback = ("rollback", t.path, last, "--completed-compaction", "--execute")
    step = "rollback-after-files" if version == 6 else "rollback-after-unpublish"
    _killed_then_finished(t, store, step, *rollback, undone_first=True)
    assert t.table.timeline.instant(last) is None
    t.write(region_rows("eu", ("c", 60, 5.0)))
    clean = ("clean", t.path, "--policy", "keep-latest-file-versions", "--retained", "1", "--execute")
    _killed_then_finished(t, store, "after-complete", *clean)
    cleans = [i for i in t.table.timeline.completed() if i.action == Action.CLEAN]
    assert cleans, "the clean completed"


@pytest.mark.parametrize("killed_at", [None, "after-log-file"])
def test_version_6_unschedule_records_the_renamed_log_files(tmp_path: Path, store: str, killed_at: str | None) -> None:
    """Version 6 names a log file by its slice: a write after the plan lands in the plan's slice, and taking the
    plan back renames it into the slice before. On a table with a metadata table that is done as a rollback (its
    instant is what the MDT records the renames at): afterwards the MDT lists the new names, not the old ones, and
    the table reads as before. Killed between its moves and its MDT deltacommit, the MDT lags storage (nothing a
    storage-listing reader sees changed); `check` names the pending rollback to finish, and running the unschedule
    again records the renames."""
    t = _table(tmp_path / "t", 6)
    assert cli("--db", store, "compaction", "schedule", t.path, "--strategy", "unbounded").returncode == 0
    plan = t.table.timeline.pending_compactions()[0].requested_time
    t.write(region_rows("eu", ("d", 70, 7.0)))  # into the plan's slice
    in_plan_slice = [p.name for p in (Path(t.path) / "region=eu").glob(f".*_{plan}.log.*")]
    assert in_plan_slice
    before = _reads(t.path)
    check_readers(t.path)
    unschedule = ("--db", store, "compaction", "unschedule", t.path, plan, "--execute")
    if killed_at:
        killed = cli(*unschedule, env={CRASH_AT_ENV: killed_at})
        assert killed.returncode == KILLED, (killed.stdout, killed.stderr)
        assert _reads(t.path) == before
        found = cli("--db", store, "check", t.path)
        assert found.returncode == 3, (found.stdout, found.stderr)
        lines = found.stdout.splitlines()
        assert any("mdt-missing-file" in line for line in lines), found.stdout
        assert all("is pending: finish it" in line for line in lines if "mdt-" in line), found.stdout
    done = cli(*unschedule)
    assert done.returncode == 0, done.stderr
    assert _reads(t.path) == before
    check_readers(t.path)
    listed = read_files_partition(t.table).files["region=eu"]
    assert not set(in_plan_slice) & set(listed), "the old names are gone from the metadata table"
    assert [i.action for i in t.table.timeline.completed()][-1] == Action.ROLLBACK


def test_version_6_run_killed_taking_its_plan_back_is_finished_by_the_next_run(tmp_path: Path, store: str) -> None:
    """A writer that did not know the plan (Java without a lock) took the carry log's name in the plan's slice: the
    run takes the plan back, on a version-6 table with an MDT as a rollback that renames the file into the slice
    before. Killed between the renames and the rollback's MDT deltacommit (the plan is gone by then), `compaction
    run <instant>` again finishes the take-back: nothing lost, the MDT lists the new names (the model test found a
    run that refused, "not a compaction", and left the rollback pending)."""
    t = _table(tmp_path / "t", 6)
    assert cli("--db", store, "compaction", "schedule", t.path, "--strategy", "unbounded").returncode == 0
    plan = t.table.timeline.pending_compactions()[0].requested_time
    assert t.file_id is not None
    w = t.begin()
    carry_name = log_file_name(t.file_id, plan, 1, "1-0-1")
    target = FileGroupTarget(t.partition, t.file_id, plan, None, carry_name, 0)
    w.stats.append(append_to_file_group(w.context, target, region_rows("eu", ("d", 70, 7.0))))
    foreign_commit(w)
    before = _reads(t.path)
    run = ("--db", store, "compaction", "run", t.path, "--engine", "local")
    killed = cli(*run, "--instant", plan, env={CRASH_AT_ENV: "after-log-file"})
    assert killed.returncode == KILLED, (killed.stdout, killed.stderr)
    assert t.table.timeline.instant(plan) is None and _reads(t.path) == before
    again = cli(*run)  # the oldest pending compaction: the one whose take-back was interrupted
    assert again.returncode != 0 and "taken back" in again.stderr, (again.returncode, again.stderr)
    assert "Traceback" not in again.stderr  # one error line (and the lock's warning that its holder is gone)
    assert _reads(t.path) == before
    check_readers(t.path)
    assert not [i for i in t.table.timeline.instants if not i.is_completed]
    assert carry_name not in read_files_partition(t.table).files["region=eu"]
