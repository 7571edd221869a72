"""Tables with a pending compaction and log files appended into its slice, and the comparisons the unschedule,
rollback and repair tests make (files as they are, timelines with rollback instants set aside, reads)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from hudi_meta.compaction import undo as compaction_undo
from hudi_meta.compaction.run import run_compaction, set_crash_hook
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.format.links import LinkMode
from hudi_meta.table.table import HudiTable
from tests.compaction.core import DEFAULT_PAYLOAD, CoreTable, at, rows
from tests.crashes import Crash, crash_at

ROLLBACK_FILE = re.compile(r"^\d{17}\.rollback(\.requested|\.inflight)?$")


class Stop(Exception):
    """Stands for a kill -9 after a step of an undo."""


def stop_after(n: int) -> Callable[[int, str], None]:
    def hook(step: int, name: str) -> None:
        if step == n:
            raise Stop(f"step {n}: {name}")

    return hook


def count_steps(action: Callable[[], Any]) -> int:
    """How many steps `action` (an undo) takes."""
    seen: list[int] = []
    compaction_undo.set_crash_hook(lambda n, _: seen.append(n))
    try:
        action()
    finally:
        compaction_undo.set_crash_hook(None)
    return len(seen)


def stopped_after(n: int, action: Callable[[], Any]) -> None:
    """Run `action` and stop it after its n-th step, as a kill -9 would."""
    compaction_undo.set_crash_hook(stop_after(n))
    try:
        action()
    except Stop:
        return
    finally:
        compaction_undo.set_crash_hook(None)
    raise AssertionError(f"the action finished before step {n}")


def run_until(table: HudiTable, instant: str, step: str) -> bool:
    """Run compaction `instant` and stop it at crash point `step`, as a kill -9 there would (False: the run
    finished without reaching the step, e.g. "after-link" in a plan without links)."""
    with crash_at(set_crash_hook, step):
        try:
            run_compaction(table, instant)
        except Crash:
            return True
    return False


def stopped_at_each_step_then_finished(
    source: CoreTable,
    work: Path,
    action: Callable[[HudiTable], object],
    reads_while_stopped: dict[str, Any] | None = None,
    through_last: bool = False,
) -> int:
    """Run `action` (an undo or a repair) on copies of `source`, each stopped after one of its steps as a kill -9
    would, then run again: every copy must end with the files, timeline and snapshot of an uninterrupted run and
    nothing left under `.hoodie/.temp`. With `reads_while_stopped`, readers must see those records at every stop.
    Stops after each step but the last (after which nothing is left to do) unless `through_last`. Returns the
    action's step count."""
    reference = open_core(copy_table(source.path, work / "reference"))
    steps = count_steps(lambda: action(reference.table))
    for n in range(1, steps + 1 if through_last else steps):
        t = open_core(copy_table(source.path, work / f"stopped-{n}"))
        stopped_after(n, lambda t=t: action(t.table))  # type: ignore[misc]
        if reads_while_stopped is not None:
            assert t.read() == reads_while_stopped, n
        action(t.table)
        assert data_files(t.path) == data_files(reference.path), n
        assert timeline_files(t.path) == timeline_files(reference.path), n
        assert leftovers(t.path) == [], n
        assert t.read() == reference.read(), n
    return steps


def data_files(path: str | Path) -> dict[str, Any]:
    """Every file outside `.hoodie` (relative path -> ("link", target) or ("file", sha1 of its bytes))."""
    out: dict[str, Any] = {}
    root = Path(path)
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".hoodie"]
        for name in names:
            full = Path(dirpath, name)
            rel = str(full.relative_to(root))
            if full.is_symlink():
                out[rel] = ("link", os.readlink(full))
            else:
                out[rel] = ("file", hashlib.sha1(full.read_bytes()).hexdigest())
    return out


def timeline_files(path: str | Path) -> list[str]:
    """Instant files (rollback instants as `R.rollback...`, their times differ from run to run)."""
    names = [p.name for p in Path(path, ".hoodie").iterdir() if p.is_file() and p.name[:1].isdigit()]
    return sorted(("R" + n[17:]) if ROLLBACK_FILE.match(n) else n for n in names)


def leftovers(path: str | Path) -> list[str]:
    """Files under `.hoodie/.temp` (markers, move journals): none once a command finished."""
    return sorted(str(p.relative_to(path)) for p in Path(path, ".hoodie", ".temp").rglob("*") if p.is_file())


def copy_table(src: str | Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


def open_core(path: Path, payload: str = DEFAULT_PAYLOAD) -> CoreTable:
    """A CoreTable object for an existing (copied) core table."""
    t = CoreTable.__new__(CoreTable)
    t.path = str(path)
    fg = t.table.file_groups()
    t.file_id = fg[0].file_id if fg else None
    return t


def pending_with_appends(
    engine: Engine | None,
    path: Path,
    payload: str = DEFAULT_PAYLOAD,
    mode: str = "symlink",
    exact: bool = False,
    version: int = 6,
) -> tuple[CoreTable, str]:
    """A table whose pending event-time compaction (T = 10 s) merges one log file and links two, with two log
    files writers appended into its slice after it was planned (one updates a key with a lower ordering value
    than a linked update: the merge order matters). Without `engine`: the same writes, never compacted (what
    stock readers must read after the plan is taken back); the instant returned is then empty. A table of
    `version` 6, 8 or 9."""
    t = CoreTable(path, payload, version=version)
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0), ("c", 3, 1.0)))
    t.write(rows(("a", 5, 2.0), ("e", 6, 1.0)))  # L1: at or before T, compacted
    t.write(rows(("b", 50, 2.0)))  # L2: after T, linked
    t.write(None, deletes=["c"])  # L3: a delete now (after T), linked
    instant = ""
    if engine is not None:
        result = schedule_compaction(
            engine, t.table, ScheduleRequest(threshold_ms=at(10), mode=LinkMode(mode), exact=exact)
        )
        assert result.instant is not None and result.plan is not None, result.reason
        assert len(result.plan.operations[0].symlink_operations) == 2
        instant = result.instant
    t.write(rows(("a", 60, 3.0), ("d", 61, 1.0)))  # A1: appended into the plan's slice
    t.write(rows(("b", 40, 9.0), ("e", 7, 2.0)))  # A2: b lower than L2's b, e updated
    return t, instant
