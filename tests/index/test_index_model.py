"""Model test: after every step of a random history, the incrementally maintained index equals a fresh index
of the same files in a new store (`index_fingerprint`).

Steps: writes (new log files, delete blocks, new file groups, blocks without event times), a failed write
rolled back, a compaction scheduled then unscheduled as hudi-cli does when nothing ran, and an archival that
moves the two oldest completed instants into .hoodie/archived/.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.format.block_content import DeleteRecord
from hudi_meta.index.db import make_engine
from hudi_meta.index.fingerprint import index_fingerprint
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.queries import plan_rows, timeline_rows
from hudi_meta.index.registry import table_id_of
from hudi_meta.table.table import HudiTable
from hudi_meta.write.failed_writes import rollback_failed_write
from hudi_meta.write.writer import WriteClient
from tests.index.test_index_state import HOUR_MS, START_MS, _archive, _new_table, _rows, _unschedule


class Model:
    """The random history of one table and the checks after each step."""

    def __init__(self, engine: Engine, tmp_path: Path, seed: int) -> None:
        self.engine = engine
        self.tmp_path = tmp_path
        self.rng = random.Random(seed)
        self.path = str(tmp_path / "t")
        self.groups = _new_table(self.path, groups=3)
        self.keys = 0
        self.fresh_stores = 0
        self.steps: list[str] = []
        self.pending_group: tuple[str, str] | None = None  # a file group the current write creates

    def _data(self, fg: tuple[str, str]) -> pa.Table:
        n = self.rng.randrange(1, 4)
        self.keys += n
        ids = [f"{fg[1]}-{self.keys - i}" for i in range(n)]
        if self.rng.random() < 0.15:
            return _rows(ids, [None] * n, "0")
        return _rows(ids, [START_MS + self.rng.randrange(-HOUR_MS, 3 * HOUR_MS) for _ in ids], "0")

    def _write(self, client: WriteClient) -> None:
        for fg in self.rng.sample(self.groups, self.rng.randrange(1, len(self.groups) + 1)):
            deletes = []
            if self.rng.random() < 0.3:
                deletes = [DeleteRecord(f"{fg[1]}-0", "part=0", START_MS + self.rng.randrange(0, HOUR_MS))]
            client.append_log(*fg, self._data(fg), deletes)
        if self.rng.random() < 0.3:
            self.keys += 1
            stat = client.write_base_file("part=0", _rows([f"new-{self.keys}"], [START_MS], "0"))
            self.pending_group = ("part=0", stat.file_id)

    def write(self) -> None:
        self.pending_group = None
        with WriteClient(HudiTable.open(self.path)) as client:
            client.begin()
            self._write(client)
            client.commit()
        if self.pending_group is not None:
            self.groups.append(self.pending_group)

    def failed_write(self) -> None:
        self.pending_group = None
        with WriteClient(HudiTable.open(self.path)) as client:
            client.begin()
            self._write(client)
        self.check()  # the pending write is indexed as uncommitted first
        rollback_failed_write(HudiTable.open(self.path), client.instant, force=True, dry_run=False)

    def schedule_and_unschedule(self) -> None:
        Indexer(self.engine, HudiTable.open(self.path)).run()
        request = ScheduleRequest(threshold_ms=START_MS + self.rng.randrange(HOUR_MS, 3 * HOUR_MS))
        result = schedule_compaction(self.engine, HudiTable.open(self.path), request)
        assert result.instant is not None, result.reason
        self.check()
        assert [p["state"] for p in plan_rows(self.engine, self.table_id)] == ["requested"]
        _unschedule(self.path, result.instant)

    def archive(self) -> None:
        self.archived = _archive(self.path, 2)

    def index_fresh(self) -> dict[str, list[tuple[object, ...]]]:
        self.fresh_stores += 1
        url = f"sqlite:///{self.tmp_path / f'fresh-{self.fresh_stores}.db'}"
        upgrade(url)
        fresh = make_engine(url)
        try:
            Indexer(fresh, HudiTable.open(self.path)).run()
            found = table_id_of(fresh, self.path)
            assert found is not None
            return index_fingerprint(fresh, found)
        finally:
            fresh.dispose()

    @property
    def table_id(self) -> int:
        found = table_id_of(self.engine, self.path)
        assert found is not None
        return found

    def check(self) -> None:
        Indexer(self.engine, HudiTable.open(self.path)).run()
        incremental = index_fingerprint(self.engine, self.table_id)
        assert incremental == self.index_fresh(), self.steps
        # the model of the timeline: every instant on disk, in its state, plus the archived ones
        on_disk = {i.requested_time: i.state.value for i in HudiTable.open(self.path).timeline.instants}
        stored = {r["requested_time"]: r["state"] for r in timeline_rows(self.engine, self.table_id)}
        archived = set(getattr(self, "archived", []))
        assert stored == {**on_disk, **dict.fromkeys(archived, "completed")}, self.steps

    def run(self) -> None:
        steps: list[tuple[str, Callable[[], None]]] = [("write", self.write) for _ in range(self.rng.randrange(1, 4))]
        steps += [("failed_write", self.failed_write), ("schedule_and_unschedule", self.schedule_and_unschedule)]
        self.rng.shuffle(steps)
        steps = [("write", self.write), *steps, ("archive", self.archive), ("write", self.write)]
        self.check()
        for name, step in steps:
            self.steps.append(name)
            step()
            self.check()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_index_equals_a_fresh_index_after_every_step(engine: Engine, tmp_path: Path, seed: int) -> None:
    model = Model(engine, tmp_path, seed)
    model.run()
    assert "archive" in model.steps and len(model.archived) == 2
