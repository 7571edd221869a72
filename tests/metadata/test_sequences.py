"""Random sequences of writes, failed writes and their rollbacks on tables with a metadata table (versions 6 and
9): after every step our files-partition reader lists what storage holds, hudi-rs (through the MDT, version 9)
reads what we read, and what we read is what the successful writes wrote."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudi_meta.metadata.init import create_metadata_table
from hudi_meta.table.table import HudiTable
from hudi_meta.write.failed_writes import rollback_failed_write
from hudi_meta.write.writer import WriteClient
from tests.compaction.core import CoreTable, by_id, region_rows
from tests.metadata.helpers import check_readers, commit_hook, rollback_hook, write_failing_after_mdt

REGIONS = ("eu", "us")
step = st.tuples(st.sampled_from(["write", "new-group", "fail-and-roll-back"]), st.sampled_from(REGIONS))


def group_of(path: str, region: str) -> str | None:
    groups = [fg.file_id for fg in HudiTable.open(path).file_groups() if fg.partition == f"region={region}"]
    return groups[0] if groups else None


def run_step(path: str, kind: str, region: str, n: int, expected: dict[str, tuple[int, float]], mdt: bool) -> None:
    """One step; before the metadata table exists every step is a plain write. Keys are per partition, and a new
    file group gets a key of its own (a key lives in one file group)."""
    partition, file_id = f"region={region}", group_of(path, region)
    new_group = kind == "new-group" or file_id is None
    key = f"{region}-g{n}" if new_group else f"{region}-{file_id}-{n % 2}"  # appends keep to their group
    data = region_rows(region, (key, n, float(n)))
    if kind == "fail-and-roll-back" and file_id is not None and mdt:
        instant = write_failing_after_mdt(path, partition, file_id, data)
        check_readers(path)
        rollback = rollback_hook(path)
        rollback_failed_write(HudiTable.open(path), instant, dry_run=False, force=True, metadata_writer=rollback)
        return
    w = WriteClient(HudiTable.open(path), metadata_writer=commit_hook(path) if mdt else None)
    w.begin()
    if new_group:
        w.write_base_file(partition, data)
    else:
        assert file_id is not None
        w.append_log(partition, file_id, data)
    w.commit()
    expected[key] = (n, float(n))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(version=st.sampled_from([6, 9]), steps=st.lists(step, min_size=1, max_size=5), init_at=st.integers(0, 2))
def test_random_sequences(version: int, steps: list[tuple[str, str]], init_at: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t = CoreTable(Path(tmp) / "t", version=version)
        expected: dict[str, tuple[int, float]] = {}
        for n, (kind, region) in enumerate(steps):
            if n == init_at:
                create_metadata_table(t.table)
                check_readers(t.path)
            run_step(t.path, kind, region, n, expected, mdt=n >= init_at)
            if n >= init_at:
                check_readers(t.path)
            assert by_id(t.table.read()) == expected
