"""The writer of the soak test (test_soak.py), run as its own process: `python -m tests.service.soak_writer TABLE
SECONDS OUT`. For SECONDS it writes one delta commit about every second through our WriteClient (the metadata
table kept in step), each a new record and an update of one hot record per file group, at event times
alternately before and after the service's T (now - 1 h), then writes OUT (JSON): the model of the snapshot
(key -> [ts, amount], the higher ts wins as DefaultHoodieRecordPayload merges), the instants it committed and the
writes our conflict check rolled back (each written again)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pyarrow as pa

from hudi_meta.errors import WriteConflictError
from hudi_meta.metadata.sync import write_client
from hudi_meta.table.table import HudiTable

REGIONS = ("r00", "r01")
OLD_MS, FRESH_MS = 2 * 3_600_000, 5 * 60_000  # event time before T (compacted), after it (linked)


class SoakWriter:
    def __init__(self, path: str) -> None:
        self.path = path
        self.file_ids: dict[str, str] = {}
        self.model: dict[str, tuple[int, float]] = {}
        self.instants: list[str] = []
        self.conflicts: list[str] = []

    def batch(self, n: int) -> None:
        """Write `n`: written again after a conflict (the conflict rolled all of it back)."""
        ts = int(time.time() * 1000) - (OLD_MS if n % 2 else FRESH_MS)
        data = {r: self._rows(r, n, ts) for r in REGIONS}
        while True:
            try:
                self.instants.append(self._write(data))
                break
            except WriteConflictError as e:
                self.conflicts.append(str(e))
        for table in data.values():
            for key, t, amount in zip(*(table.column(c).to_pylist() for c in ("id", "ts", "amount")), strict=True):
                old = self.model.get(key)
                if old is None or t >= old[0]:
                    self.model[key] = (t, amount)

    def _rows(self, region: str, n: int, ts: int) -> pa.Table:
        keys = [f"{region}-{n}", f"{region}-hot"]
        return pa.table(
            {
                "id": keys,
                "ts": pa.array([ts] * len(keys), pa.int64()),
                "region": [region] * len(keys),
                "amount": [float(n)] * len(keys),
            }
        )

    def _write(self, data: dict[str, pa.Table]) -> str:
        with write_client(HudiTable.open(self.path)) as w:
            w.begin()
            for region, table in data.items():
                partition = f"region={region}"
                if partition not in self.file_ids:
                    w.write_base_file(partition, table)
                else:
                    w.append_log(partition, self.file_ids[partition], table)
            w.commit()
            for stat in w.stats:
                self.file_ids.setdefault(stat.partition_path, stat.file_id)
            return w.instant


def main(path: str, seconds: float, out: str) -> None:
    writer = SoakWriter(path)
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        started = time.monotonic()
        n += 1
        writer.batch(n)
        time.sleep(max(0.0, 1.0 - (time.monotonic() - started)))
    result = {"model": writer.model, "instants": writer.instants, "conflicts": writer.conflicts}
    Path(out).write_text(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), sys.argv[3])
