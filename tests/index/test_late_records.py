"""Late data counted in records (issue 25 item 8): records committed after the last completed event-time
compaction with an event time below its threshold T. A table is written with the core writer, compacted with
`schedule_compaction`/`run_compaction`, and the figures are checked against counts made here from the records
written: one write's block may hold records on both sides of T, so a block's record count overstates."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from hudi_meta.freshness import Freshness
from tests.index.test_freshness_inputs import measure
from tests.model.harness import KEYS, ModelTable, Op, bucket_of, partition_of
from tests.model.model import at


def late(writes: Sequence[Sequence[Op]], threshold_s: int) -> tuple[int, int]:
    """(late records, blocks holding them) of writes made after a compaction at T = `threshold_s`, by hand:
    upserts (deletes are no records the read-optimized view lacks) with an event time below T, and the file
    groups of each write they went to (a write appends one data block per file group)."""
    records = blocks = 0
    for ops in writes:
        below = [o for o in ops if o.amount is not None and o.seconds is not None and o.seconds < threshold_s]
        records += len(below)
        blocks += len({(partition_of(o.key), bucket_of(o.key)) for o in below})
    return records, blocks


def figures(f: Freshness) -> tuple[int | None, int, int]:
    return f.late_records, f.late_records_at_most, f.late_blocks


def test_late_records_are_counted_record_by_record_and_recounted_as_t_moves(tmp_path: Path) -> None:
    t = ModelTable(str(tmp_path / "t"))
    try:
        t.bootstrap([Op(k, 10, 1.0) for k in KEYS])
        t.write([Op("k00", 20, 2.0), Op("k01", 30, 2.0), Op("k02", 35, 2.0), Op("k03", 90, 2.0)])
        first = t.schedule(50, "symlink", exact=False)
        assert first is not None
        t.run()
        assert figures(measure(t)) == (0, 0, 0)

        # late and on-time records side by side in the same blocks; 50 itself is not below T; deletes are no records
        after_first = [
            [Op(k, s, 3.0) for k, s in zip(KEYS[:12], (5, 60, 7, 70, 49, 50, 51, 3, 80, 12, 95, 45), strict=True)],
            [Op("k12", 1, 4.0), Op("k13", 99, 4.0), Op("k14", 2, None), Op("k15", 55, 4.0)],
        ]
        for ops in after_first:
            t.write(ops)
        records, blocks = late(after_first, 50)
        written = sum(1 for ops in after_first for o in ops if o.amount is not None)
        assert (records, written) == (7, 15)  # a block's record count would say more
        f = measure(t)
        assert figures(f) == (records, records, blocks) and f.threshold_ms == at(50)
        t.check_index()  # the counts of an incremental index are a fresh index's

        second = t.schedule(60, "symlink", exact=False)  # merges every log file above (min <= 60)
        assert second is not None
        t.run()
        assert figures(measure(t)) == (0, 0, 0)  # nothing was committed after it
        t.rollback_completed()  # `second` goes: `first` and its T are current again, and so are the counts at 50
        f = measure(t)
        assert f.compaction_instant == first and figures(f) == (records, records, blocks)
        t.check_index()

        third = t.schedule(60, "symlink", exact=False)
        assert third is not None
        t.run()
        after_third = [[Op("k16", 55, 5.0), Op("k17", 65, 5.0), Op("k18", 59, 5.0), Op("k19", 61, 5.0)]]
        t.write(after_third[0])
        records, blocks = late(after_third, 60)
        f = measure(t)
        assert f.compaction_instant == third and figures(f) == (records, records, blocks) == (2, 2, blocks)
        t.check_index()

        out = subprocess.run(
            [sys.executable, "-m", "hudi_meta.cli.main", "--db", f"sqlite:///{t.root}/store.db"]
            + ["freshness", t.table.base_path, "--json"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr
        cli = json.loads(out.stdout)
        assert (cli["late_records"], cli["late_records_at_most"], cli["late_blocks"]) == (2, 2, blocks)
    finally:
        t.close()


def test_counts_made_against_an_archived_compaction_are_history(tmp_path: Path) -> None:
    """Found by the model test: once the last event-time compaction is archived, the store that saw it still
    knows its T (and counts late records against it), a fresh index of the files does not. The counts are then
    history, as the archived instant is: the two indexes still agree on everything the files say."""
    t = ModelTable(str(tmp_path / "t"))
    try:
        t.bootstrap([Op(k, 10, 1.0) for k in KEYS])
        t.write([Op("k00", 20, 2.0)])
        assert t.schedule(30, "copy", exact=False) is not None
        t.run()
        writes = [
            [Op("k01", 5, 3.0), Op("k02", 40, 3.0), Op("k03", 6, 3.0)],
            [Op("k04", 50, 3.0)],
            [Op("k05", 60, 3.0)],
        ]
        for ops in writes:
            t.write(ops)
        records, blocks = late(writes, 30)
        assert figures(measure(t)) == (records, records, blocks) == (2, 2, blocks)
        archived = t.archive_as_java(3)  # the bootstrap, the write and the compaction leave the active timeline
        assert len(archived) == 3
        f = measure(t)
        assert f.threshold_ms == at(30) and figures(f) == (records, records, blocks)  # this store saw it
        t.check_index()
    finally:
        t.close()
