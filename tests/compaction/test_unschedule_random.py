"""Randomized: writes (updates with higher and lower ordering values, deletes with and without one) under every
payload, a compaction scheduled with a random threshold, mode and exactness, writes appended into its slice,
then one of: unschedule, a run killed at a random crash point then unschedule or rollback, or a completed run
with more writes then `rollback --completed-compaction`. After it our reader reads what it read before, hudi-rs
reads what it reads of the same writes never compacted, nothing of the compaction is left, and the table
compacts again to the same records. A completed compaction that writes appended to (while pending or after it)
is kept: the rollback is refused and nothing changes.
HUDI_META_UNDO_SEQUENCES sets the number of sequences (default 12)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pyarrow as pa
import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.rollback import rollback_compaction
from hudi_meta.compaction.run import CRASH_POINTS, run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.unschedule import unschedule_compaction
from hudi_meta.errors import HudiMetaError
from hudi_meta.format.links import LinkMode
from tests.compaction.core import DEFAULT_PAYLOAD, EVENT_TIME_PAYLOAD, OVERWRITE_PAYLOAD, CoreTable, at, hudi_rs_read
from tests.compaction.undo_helpers import data_files, leftovers, run_until

SEQUENCES = int(os.environ.get("HUDI_META_UNDO_SEQUENCES", "12"))
KEYS = [f"k{i}" for i in range(8)]
Write = tuple[list[tuple[str, int, float]], list[str | tuple[str, int]]]


def region_rows(records: list[tuple[str, int, float]]) -> pa.Table:
    return pa.table(
        {
            "id": [r[0] for r in records],
            "ts": pa.array([at(r[1]) for r in records], pa.int64()),
            "region": ["eu"] * len(records),
            "amount": [r[2] for r in records],
        }
    )


def random_write(rng: random.Random, n: int) -> Write:
    """Upserts of some keys and deletes of others. Every write upserts one key at least (a commit records the
    schema only when it writes data, and stock readers need one), and a write's deletes all carry an ordering
    value or none do (hudi-rs refuses a delete block that mixes them)."""
    keys = rng.sample(KEYS, rng.randint(1, 4))
    upserts = [(k, rng.randint(0, 100), float(n)) for k in keys[: rng.randint(1, len(keys))]]
    ordered = rng.random() < 0.5
    deletes: list[str | tuple[str, int]] = [(k, rng.randint(0, 100)) if ordered else k for k in keys[len(upserts) :]]
    return upserts, deletes


def apply(t: CoreTable, w: Write) -> None:
    upserts, deletes = w
    t.write(region_rows(upserts) if upserts else None, deletes=deletes)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(SEQUENCES))
def test_random_sequences(engine: Engine, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    payload = rng.choice([DEFAULT_PAYLOAD, OVERWRITE_PAYLOAD, EVENT_TIME_PAYLOAD])
    t, twin = CoreTable(tmp_path / "t", payload), CoreTable(tmp_path / "twin", payload)
    base = [(k, rng.randint(0, 100), 0.0) for k in KEYS[:5]]
    for table in (t, twin):
        table.write(region_rows(base))
    writes = [random_write(rng, n) for n in range(1, rng.randint(2, 5))]
    for w in writes:
        apply(t, w)
    # a threshold at or after some written event time, so that there is a log file to compact
    lowest = min(r[1] for w in writes for r in w[0])
    threshold = at(rng.randint(lowest + 1, 101))
    request = ScheduleRequest(threshold_ms=threshold, mode=rng.choice(list(LinkMode)), exact=rng.random() < 0.4)
    result = schedule_compaction(engine, t.table, request)
    assert result.instant is not None, (seed, result.reason)
    instant = result.instant
    appended = [random_write(rng, 10 + n) for n in range(rng.randint(0, 2))]
    for w in appended:
        apply(t, w)
    outcome = rng.choice(["unschedule", "crash-unschedule", "crash-rollback", "completed"])
    if outcome.startswith("crash"):
        run_until(t.table, instant, rng.choice(CRASH_POINTS))
        if t.table.timeline.instant(instant).is_completed:  # type: ignore[union-attr]
            outcome = "completed"  # the crash point was never reached (no link to make)
    later: list[Write] = []
    if outcome == "completed":
        if not t.table.timeline.instant(instant).is_completed:  # type: ignore[union-attr]
            run_compaction(t.table, instant)
        later = [random_write(rng, 20 + n) for n in range(rng.randint(0, 2))]
        for w in later:
            apply(t, w)
    for w in [*writes, *appended, *later]:
        apply(twin, w)
    before = t.read()
    # writes after a completed compaction merge against its new base file: under ordering-based rules that can
    # differ from the same writes never compacted, and then the rollback must be refused
    as_never_compacted = twin.read() == before
    assert as_never_compacted or outcome == "completed", (seed, outcome)
    files = data_files(t.path)

    if outcome in ("unschedule", "crash-unschedule"):
        unschedule_compaction(t.table, instant, dry_run=False)
    elif outcome == "crash-rollback":
        if t.table.timeline.instant(instant).state.value == "requested":  # type: ignore[union-attr]
            unschedule_compaction(t.table, instant, dry_run=False)  # the run died before it started
        else:
            rollback_compaction(t.table, instant, dry_run=False)
    else:
        # writes into its slice (while it was pending or after it) keep a completed compaction (as Java)
        try:
            rollback_compaction(t.table, instant, completed=True, dry_run=False)
        except HudiMetaError as e:
            assert "appended to its slice" in str(e) and (appended or later), (seed, e)
            assert data_files(t.path) == files and t.read() == before  # refused: nothing changed
            return
        assert not (appended or later), (seed, "rolled back although writes went into its slice")
        assert as_never_compacted, (seed, "rolled back although the records change")

    assert t.table.timeline.instant(instant) is None, (seed, outcome)
    assert not [f for f in data_files(t.path) if instant in f], (seed, outcome)
    assert leftovers(t.path) == []
    assert t.read() == before, (seed, outcome)
    assert hudi_rs_read(t.path, "snapshot") == hudi_rs_read(twin.path, "snapshot"), (seed, outcome)
    try:
        again = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=threshold))
    except HudiMetaError:
        return  # no threshold can be guaranteed for what is there now
    if again.instant is not None:
        run_compaction(t.table, again.instant)
        assert t.read() == before, (seed, outcome, "after compacting again")
