"""Our writer and our scheduler never cross (docs/concurrency.md section 2.1): a write takes its
instant time and creates its requested file under the table lock, and the scheduler checks for pending writes and
takes its compaction instant under the same lock. So a scheduler that runs while a write is between choosing its
instant and requesting it waits, then sees the write pending and refuses; it never plans a compaction C newer than
a write not yet on the timeline (which the run would then refuse, "still pending and older than compaction", or
take back, "sorts before the links", issue 36 item 10). Checked for table versions 6, 8 and 9, with the metadata
table on, and the records read back by hudi-rs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, ScheduleResult, schedule_compaction
from hudi_meta.compaction.strategies import Strategy
from hudi_meta.errors import WriteInProgressError
from hudi_meta.metadata.init import create_metadata_table
from hudi_meta.metadata.sync import write_client
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import CRASH_AT_ENV, WriteClient, set_crash_hook
from tests.compaction.core import CoreTable, at, hudi_rs_read, rows

SCHEDULER_GRACE_S = 5.0  # far longer than one scheduling of this table takes when nothing holds it back


class PausedWrite:
    """A write begun in a thread of its own that stops at the point where it has chosen its instant time and not yet
    created its requested file (the writer's crash point `instant-chosen`), until `resume`."""

    def __init__(self, t: CoreTable) -> None:
        self.t = t
        self.paused, self._resume = threading.Event(), threading.Event()
        self.client: WriteClient | None = None
        self.thread = threading.Thread(target=self._begin, daemon=True)

    def _hook(self, step: str) -> None:
        if step == "instant-chosen" and threading.current_thread() is self.thread:
            self.paused.set()
            self._resume.wait(60)

    def _begin(self) -> None:
        self.client = self.t.begin()

    def start(self) -> None:
        set_crash_hook(self._hook)
        self.thread.start()
        assert self.paused.wait(30), "the write never reached its instant-chosen point"

    def resume(self) -> WriteClient:
        self._resume.set()
        self.thread.join(60)
        set_crash_hook(None)
        assert self.client is not None
        return self.client


def scheduled_in_thread(engine: Engine, path: str, out: dict[str, object]) -> threading.Thread:
    request = ScheduleRequest(threshold_ms=at(45), strategy=Strategy.EVENT_TIME)

    def run() -> None:
        try:
            out["result"] = schedule_compaction(engine, HudiTable.open(path), request)
        except WriteInProgressError as e:
            out["refused"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("version", [6, 8, 9])
def test_a_scheduler_never_plans_past_a_write_that_has_chosen_its_instant(
    engine: Engine, tmp_path: Path, version: int
) -> None:
    t = CoreTable(tmp_path / "t", version=version)
    create_metadata_table(t.table)
    t.write(rows(("a", 10, 1.0), ("b", 20, 2.0)))
    t.write(rows(("a", 40, 1.1)))
    write = PausedWrite(t)
    out: dict[str, object] = {}
    try:
        write.start()
        scheduler = scheduled_in_thread(engine, t.path, out)
        scheduler.join(SCHEDULER_GRACE_S)
        # the rule: while the write holds the lock between its instant time and its requested file, no plan is made
        assert "result" not in out, (
            f"compaction {getattr(out['result'], 'instant', '')} was planned past a write not on the timeline yet"
        )
        w = write.resume()
        scheduler.join(60)
    finally:
        set_crash_hook(None)
    # the scheduler then saw the write pending and refused (nothing was planned)
    refused = out.get("refused")
    assert isinstance(refused, WriteInProgressError) and w.instant in str(refused), out
    assert not t.table.timeline.pending_compactions()
    assert t.file_id is not None
    w.append_log(t.partition, t.file_id, rows(("b", 50, 2.1), ("c", 30, 3.0)))
    w.commit()
    # scheduled now, the compaction comes after the write, and it runs without being refused or taken back
    result = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(45), strategy=Strategy.EVENT_TIME))
    assert isinstance(result, ScheduleResult) and result.instant is not None, result.reason
    assert result.instant > w.instant
    run_compaction(t.table, result.instant)
    assert t.table.timeline.instant(result.instant).is_completed  # type: ignore[union-attr]
    expected = {"a": (40, 1.1), "b": (50, 2.1), "c": (30, 3.0)}
    assert t.read() == expected == hudi_rs_read(t.path, "snapshot")


@pytest.mark.parametrize("version", [6, 9])
def test_a_write_begun_after_a_plan_takes_an_instant_after_it(engine: Engine, tmp_path: Path, version: int) -> None:
    """A client made before a plan was scheduled (its instant time chosen then) takes a new one when it begins: the
    write is after the compaction, appends into the plan's slice after its links, and the run keeps it."""
    t = CoreTable(tmp_path / "t", version=version)
    create_metadata_table(t.table)
    t.write(rows(("a", 10, 1.0), ("b", 20, 2.0)))
    t.write(rows(("a", 40, 1.1), ("c", 60, 3.0)))
    early = write_client(t.table)  # instant time chosen now, before the plan
    chosen = early.instant
    result = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(45), strategy=Strategy.EVENT_TIME))
    assert result.instant is not None and result.instant > chosen
    with early:
        early.begin()
        assert early.instant > result.instant
        assert t.file_id is not None
        early.append_log(t.partition, t.file_id, rows(("b", 70, 2.2)))
        early.commit()
    run_compaction(t.table, result.instant)
    expected = {"a": (40, 1.1), "b": (70, 2.2), "c": (60, 3.0)}
    assert t.read() == expected == hudi_rs_read(t.path, "snapshot")


@pytest.mark.parametrize("step", ["instant-chosen", "after-requested"])
def test_a_write_killed_inside_begin_leaves_a_lock_the_scheduler_takes_over(
    engine: Engine, tmp_path: Path, step: str
) -> None:
    """kill -9 inside `begin` leaves the table lock file behind; its holder on this host is gone, so the scheduler
    takes it over at once (docs/concurrency.md section 5) and sees the write as it was left: nothing, or pending."""
    t = CoreTable(tmp_path / "t", version=9)
    t.write(rows(("a", 10, 1.0), ("b", 20, 2.0)))
    t.write(rows(("a", 40, 1.1)))
    code = "import sys\nfrom hudi_meta.table.table import HudiTable\nfrom hudi_meta.write.writer import WriteClient\n"
    code += "WriteClient(HudiTable.open(sys.argv[1])).begin()\n"
    killed = subprocess.run([sys.executable, "-c", code, t.path], env={**os.environ, CRASH_AT_ENV: step}, timeout=120)
    assert killed.returncode == -signal.SIGKILL
    assert (Path(t.path) / ".hoodie" / "lock").exists()
    request = ScheduleRequest(threshold_ms=at(45), strategy=Strategy.EVENT_TIME)
    if step == "instant-chosen":  # no instant on the timeline: the plan is made
        assert schedule_compaction(engine, t.table, request).instant is not None
    else:  # a requested write whose heartbeat has not expired yet: the scheduler refuses, it does not wait
        with pytest.raises(WriteInProgressError, match="is still requested"):
            schedule_compaction(engine, t.table, request)
