"""Tables for the service tests: many file groups written batch by batch with the core writer at event times
relative to now (so that `now - data latency` cuts between batches), with a model of what each holds, and
`hudi-meta serve --config` run as a user runs it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pyarrow as pa

from hudi_meta.metadata.init import create_metadata_table
from hudi_meta.metadata.sync import write_client
from hudi_meta.table.table import HudiTable
from tests.compaction.core import create_core_table
from tests.hudi_rs import rs_read_table

T = TypeVar("T")
HOUR_MS = 3_600_000
MINUTE_MS = 60_000
NOW_MS = int(time.time() * 1000)


class Groups:
    """A MOR table (table `version` 6, 8 or 9) with `n` file groups (partitions region=r00..), a model of its
    snapshot (key -> ts, amount), and every write one log file per file group (the first, base files)."""

    def __init__(
        self,
        path: Path,
        n: int,
        name: str,
        props: dict[str, str] | None = None,
        version: int = 6,
        metadata_table: bool = False,
    ) -> None:
        self.path = str(path)
        self.n = n
        create_core_table(self.path, name, props=props, version=version)
        if metadata_table:
            create_metadata_table(HudiTable.open(self.path))
        self.file_ids: dict[str, str] = {}
        self.model: dict[str, tuple[int, float]] = {}
        self.writes = 0

    def batch(self, ago_ms: int) -> str:
        """One write of a new record per file group (and an update of the first group's first key), all at event
        time now - `ago_ms`; the instant."""
        self.writes += 1
        ts = NOW_MS - ago_ms
        w = write_client(HudiTable.open(self.path))
        w.begin()
        for i in range(self.n):
            region = f"r{i:02d}"
            keys = [f"{region}-{self.writes}"] + ([f"{region}-1"] if i == 0 and self.writes > 1 else [])
            data = pa.table(
                {
                    "id": keys,
                    "ts": pa.array([ts] * len(keys), pa.int64()),
                    "region": [region] * len(keys),
                    "amount": [float(self.writes)] * len(keys),
                }
            )
            partition = f"region={region}"
            if partition not in self.file_ids:
                self.file_ids[partition] = w.write_base_file(partition, data).file_id
            else:
                w.append_log(partition, self.file_ids[partition], data, [])
            for key in keys:
                old = self.model.get(key)
                if old is None or ts >= old[0]:  # DefaultHoodieRecordPayload: the higher ordering value wins
                    self.model[key] = (ts, float(self.writes))
        w.commit()
        return w.instant

    def read(self, query: str = "snapshot") -> dict[str, tuple[int, float]]:
        return by_id(HudiTable.open(self.path).read(query))


def by_id(table: pa.Table) -> dict[str, tuple[int, float]]:
    if not table.num_columns:
        return {}
    return {r["id"]: (r["ts"], r["amount"]) for r in table.select(["id", "ts", "amount"]).to_pylist()}


def hudi_rs(path: str, query: str = "snapshot") -> dict[str, tuple[int, float]]:
    return by_id(rs_read_table(path, query))  # through the metadata table when the table has one


class Served:
    """`hudi-meta serve --config FILE` in its own process, its output in a file."""

    def __init__(self, config: Path, log: Path, env: dict[str, str] | None = None) -> None:
        self.log = log
        self.out = open(log, "w")  # noqa: SIM115  (closed in stop)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hudi_meta.cli.main", "serve", "--config", str(config)],
            stdout=self.out,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self.url = wait_for(lambda: _url(log), 60, f"the UI URL in {log}")

    @property
    def worker(self) -> str:
        return wait_for(lambda: _worker(self.log), 60, "the worker name")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 120) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout=timeout)
        finally:
            self.out.close()
        return code

    def output(self) -> str:
        return self.log.read_text()


def _url(log: Path) -> str | None:
    found = re.search(r"hudi-meta UI on (http://\S+?)/ ", log.read_text())
    return found[1] if found else None


def _worker(log: Path) -> str | None:
    found = re.search(r"hudi-meta service: \d+ tables from \S+ \((\S+)\)", log.read_text())
    return found[1] if found else None


def wait_for(probe: Callable[[], T | None], seconds: float, what: str, every: float = 0.05) -> T:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"gave up after {seconds} s waiting for {what}")
