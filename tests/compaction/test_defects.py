"""Regression tests for issue 8's compaction defects, on small core-written tables with hand-worked answers.

Expected values follow the rules in docs/event-time.md and Java Hudi's merge rules (see `MergeMode`), worked
out by hand in each test; none is computed by the code under test.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.strategies import Strategy
from hudi_meta.errors import HudiMetaError
from hudi_meta.format.links import LinkMode
from hudi_meta.table.table import Query
from tests.compaction.core import (
    DEFAULT_PAYLOAD,
    EVENT_TIME_PAYLOAD,
    OVERWRITE_PAYLOAD,
    CoreTable,
    archive_oldest,
    at,
    by_id,
    hudi_rs_read,
    rows,
)
from tests.compaction.undo_helpers import run_until

# ---- 1. a write inflight at scheduling time ---------------------------------------------------------------


def test_schedule_refuses_while_a_write_is_pending(engine: Engine, tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0)))
    t.write(rows(("c", 3, 1.0)))
    pending = t.write(rows(("d", 4, 1.0), ("e", 5, 1.0)), commit=False)  # an ingest still running
    with pytest.raises(HudiMetaError, match=f"deltacommit {pending.instant} is still inflight"):
        schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(100)))
    assert not t.table.timeline.pending_compactions()  # nothing half-written
    pending.commit()
    t.compact(engine, at(100))
    assert sorted(t.read("ro")) == ["a", "b", "c", "d", "e"]  # the write that was inflight is not lost


# A writer that planned its files before the plan and commits after it: tests/compaction/test_write_conflicts.py


# ---- 2. archived instants ---------------------------------------------------------------------------------


def test_archived_instants_stay_committed_in_a_compaction(engine: Engine, tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0)))
    t.write(rows(("a", 3, 2.0)))  # L1
    t.write(rows(("c", 4, 3.0)))  # L2
    t.write(rows(("d", 5, 4.0)))  # L3
    expected = {"a": (3, 2.0), "b": (2, 1.0), "c": (4, 3.0), "d": (5, 4.0)}
    assert t.read() == expected
    archive_oldest(t.path, 2)  # the base file's commit and L1's deltacommit
    assert t.read() == expected
    t.compact(engine)  # unbounded: every log file merged
    assert t.read("ro") == expected
    assert t.read() == expected


# ---- 5. links are never read twice before the commit ------------------------------------------------------


@pytest.mark.parametrize("mode", ["symlink", "copy"])
def test_links_of_a_running_compaction_are_not_read(engine: Engine, tmp_path: Path, mode: str) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0)))
    t.write(rows(("c", 3, 1.0)))  # L1: merged (event time <= T)
    t.write(rows(("a", 50, 2.0), ("b", 51, 2.0)))  # L2: kept (after T)
    t.write(None, deletes=["a"])  # L3: kept (a delete, now)
    expected = {"b": (51, 2.0), "c": (3, 1.0)}
    assert t.read() == expected
    begin = t.table.timeline.completed()[0].requested_time
    result = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(10), mode=LinkMode(mode)))
    assert result.instant is not None and result.plan is not None
    assert len(result.plan.operations[0].symlink_operations) == 2
    assert run_until(t.table, result.instant, "after-link")
    assert t.read() == expected  # the first link exists, and its records are not read a second time
    assert by_id(t.table.read(Query("incremental", begin=begin))) == {"b": (51, 2.0), "c": (3, 1.0)}
    run_compaction(t.table, result.instant)
    assert t.read() == expected
    assert t.read("ro") == {"a": (1, 1.0), "b": (2, 1.0), "c": (3, 1.0)}
    assert hudi_rs_read(t.path, "snapshot") == expected


# ---- 6. exact mode ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("payload", [DEFAULT_PAYLOAD, OVERWRITE_PAYLOAD])
def test_exact_mode_keeps_keys_updated_or_deleted_after_t(engine: Engine, tmp_path: Path, payload: str) -> None:
    t = CoreTable(tmp_path / "t", payload)
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0), ("c", 3, 1.0), ("f", 8, 1.0)))
    t.write(rows(("a", 20, 2.0), ("d", 5, 1.0), ("f", 4, 2.0)))  # L1: a updated after T; f with a lower ordering
    t.write(rows(("e", 6, 1.0)), deletes=["b"])  # L2: b deleted now (after T)
    t.write(rows(("g", 30, 1.0)))  # L3: after T, linked
    f = (8, 1.0) if payload == DEFAULT_PAYLOAD else (4, 2.0)  # Default: ordering vs base; Overwrite: log wins
    snapshot = {"a": (20, 2.0), "c": (3, 1.0), "d": (5, 1.0), "e": (6, 1.0), "f": f, "g": (30, 1.0)}
    assert t.read() == snapshot
    t.compact(engine, at(10), exact=True)
    # RO is the table as of T: a's and b's versions at T, nothing after T
    assert t.read("ro") == {"a": (1, 1.0), "b": (2, 1.0), "c": (3, 1.0), "d": (5, 1.0), "e": (6, 1.0), "f": f}
    assert t.read() == snapshot  # unchanged
    assert hudi_rs_read(t.path, "snapshot") == snapshot
    assert hudi_rs_read(t.path, "ro") == t.read("ro")


def test_exact_mode_with_a_delete_before_t(engine: Engine, tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0)))
    t.write(rows(("c", 3, 1.0)), deletes=[("a", 4)])  # a deleted at event time 4 (its ordering value)
    t.write(rows(("b", 40, 2.0)))
    t.compact(engine, at(10), exact=True)
    assert t.read("ro") == {"b": (2, 1.0), "c": (3, 1.0)}
    assert t.read() == {"b": (40, 2.0), "c": (3, 1.0)}


# ---- 8. merge rules by payload class ----------------------------------------------------------------------

# (payload, the base record vs a later log update with a lower ordering value, a later delete with a lower one)
MERGE_CASES = [
    (OVERWRITE_PAYLOAD, (40, 2.0), None),  # combineAndGetUpdateValue: the log record wins; a delete wins
    (DEFAULT_PAYLOAD, (50, 1.0), None),  # compares with the base: the base is newer; a delete wins
    (EVENT_TIME_PAYLOAD, (50, 1.0), None),
]


@pytest.mark.parametrize(("payload", "updated", "deleted"), MERGE_CASES)
def test_merge_rules_follow_the_payload_class(
    engine: Engine, tmp_path: Path, payload: str, updated: tuple[int, float], deleted: None
) -> None:
    t = CoreTable(tmp_path / "t", payload)
    t.write(rows(("g", 50, 1.0), ("h", 50, 1.0), ("k", 50, 1.0)))
    t.write(rows(("g", 40, 2.0), ("m", 60, 1.0)))  # an update of g whose ordering value is lower than the base's
    t.write(None, deletes=[("h", 30)])  # a delete of h with a lower ordering value than the base's
    t.write(rows(("m", 55, 2.0)))  # log vs log: a lower ordering value loses (preCombine), for every payload
    expected = {"g": updated, "k": (50, 1.0), "m": (60, 1.0)}
    if deleted is not None:
        expected["h"] = deleted
    assert t.read() == expected
    t.compact(engine)
    assert t.read("ro") == expected  # the executor merges by the same rules
    assert t.read() == expected


# ---- 10. writers never append into links ------------------------------------------------------------------


def test_writes_after_a_copy_mode_compaction_leave_copies_alone(engine: Engine, tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    t.write(rows(("b", 2, 1.0)))
    t.write(rows(("c", 50, 1.0)))  # kept: copied into the new slice
    instant = t.compact(engine, at(10), mode=LinkMode.COPY)
    copies = {p: p.read_bytes() for p in Path(t.path, t.partition).glob(f".*_{instant}.log.*")}
    assert copies
    t.write(rows(("d", 60, 1.0)))
    t.write(rows(("e", 61, 1.0)))
    assert {p: p.read_bytes() for p in copies} == copies  # never written to
    assert sorted(t.read()) == ["a", "b", "c", "d", "e"]


def test_every_write_starts_a_new_log_file(tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    for i in range(3):
        t.write(rows((f"x{i}", 10 + i, 1.0)))
    logs = sorted(p.name for p in Path(t.path, t.partition).glob(".*.log.*"))
    assert len(logs) == 3, logs
    assert not [p for p in os.listdir(Path(t.path, t.partition)) if p.endswith(".tmp")]


# ---- 3. a block that cannot be decoded stops the compaction -------------------------------------------------


def test_an_undecodable_block_stops_a_compaction_with_file_and_offset(engine: Engine, tmp_path: Path) -> None:
    from hudi_meta.errors import UndecodableBlockError
    from hudi_meta.format.log_block import BlockType, HeaderKey, encode_block

    t = CoreTable(tmp_path / "t")
    first = t.write(rows(("a", 1, 1.0)))
    w = t.write(rows(("b", 2, 1.0)))
    log = Path(t.path, w.stats[0].path)
    schema = w.context.avro_schema(t.table.arrow_schema())
    # a committed instant without a write stat for this file: the event times can only come from the records
    header = {int(HeaderKey.INSTANT_TIME): first.instant, int(HeaderKey.SCHEMA): schema}
    offset = log.stat().st_size
    with log.open("ab") as f:  # valid framing, content that is not Avro of that schema
        f.write(encode_block(BlockType.AVRO_DATA, header, b"\x00\x00\x00\x02\x00\x00\x00\x05\xff\xff\xff\xff\xff"))
    with pytest.raises(UndecodableBlockError, match=f"offset {offset} of {log}"):
        t.read()
    with pytest.raises(HudiMetaError, match="cannot guarantee a threshold: .* unresolved event times"):
        schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(100)))  # defect 7: never "after T"
    result = schedule_compaction(engine, t.table, ScheduleRequest(strategy=Strategy.UNBOUNDED))
    assert result.instant is not None
    with pytest.raises(UndecodableBlockError, match="AVRO_DATA"):
        run_compaction(t.table, result.instant)
    assert result.instant not in {i.requested_time for i in t.table.timeline.completed()}  # nothing committed


# ---- issue 15: a flagged winner that shadows a late record of the rest ------------------------------------


def flagged_rows(*records: tuple[str, int, float, bool]) -> pa.Table:
    """`rows` with `_hoodie_is_deleted` (Hudi's soft delete: the record merges like data, then reads absent)."""
    table = rows(*((r[0], r[1], r[2]) for r in records))
    return table.append_column("_hoodie_is_deleted", pa.array([r[3] for r in records], pa.bool_()))


@pytest.mark.parametrize("exact", [False, True])
def test_a_soft_delete_still_shadows_a_late_record_that_stays_a_log(
    engine: Engine, tmp_path: Path, exact: bool
) -> None:
    """Default payload: a@100 flagged deleted beats the later-written a@60 (ordering 60 < 100), so `a` reads absent.
    T = 10 compacts L1 (its min event time is 5) and keeps L2 (60). The new base file cannot hold a flagged record
    (Java drops it from base files, so do we): unless a@100 is carried as a log record, a@60 would come back."""
    t = CoreTable(tmp_path / "t")
    t.write(flagged_rows(("a", 1, 1.0, False), ("b", 2, 1.0, False)))
    t.write(flagged_rows(("a", 100, 2.0, True), ("c", 5, 1.0, False)))  # L1
    t.write(flagged_rows(("a", 60, 3.0, False)))  # L2: late, a lower ordering value than the soft delete
    expected = {"b": (2, 1.0), "c": (5, 1.0)}
    assert t.read() == expected
    t.compact(engine, at(10), exact=exact)
    assert t.read() == expected  # before the fix: a came back as (60, 3.0)
    assert hudi_rs_read(t.path, "snapshot") == expected
    # exact mode's base file is the table as of T: a's version at T is the base record a@1
    assert t.read("ro") == ({**expected, "a": (1, 1.0)} if exact else expected)
