"""Metrics (docs/catalog-and-freshness.md section 2): pure values from a freshness and the last runs, rendered in the
Prometheus text format and read back with prometheus-client's own parser; then `hudi-meta metrics` on a compacted table
after a failed sync, with values worked out by hand."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine

from hudi_meta.demo.local_servers import free_port
from hudi_meta.freshness import Freshness
from hudi_meta.index.sync_runs import SyncRun
from hudi_meta.metrics import ServiceRun, last_run, metric_values, render
from hudi_meta.timeline.instant import Action, Instant, State
from tests.cli.helpers import cli
from tests.compaction.core import at, rows
from tests.sync.helpers import compacted_table


def parse(text: str) -> dict[str, float]:
    return {s.name: s.value for family in text_string_to_metric_families(text) for s in family.samples}


def test_values_and_their_rendering() -> None:
    f = Freshness(10_000, 6_000, "c1", False, 4_000, 2, 300, 1, 6_000, 0, 1, 7, 7, "d3")
    sync = SyncRun("hms", "thrift://h:1", dt.datetime.now(dt.UTC), 1500, "failed", 0, "down")
    values = metric_values(f, 2_000, ServiceRun(True, 4.5), None, sync, 10_000)
    got = parse(render({"events": values}).decode())
    assert got == {
        "hudi_meta_log_min_event_time_seconds": 6.0,
        "hudi_meta_leftover_slices": 1.0,
        "hudi_meta_leftover_log_files": 2.0,
        "hudi_meta_leftover_log_bytes": 300.0,
        "hudi_meta_threshold_seconds": 10.0,
        "hudi_meta_watermark_seconds": 6.0,
        "hudi_meta_lag_seconds": 4.0,
        "hudi_meta_late_records": 7.0,
        "hudi_meta_late_records_at_most": 7.0,
        "hudi_meta_late_blocks": 1.0,
        "hudi_meta_pending_plan_age_seconds": 8.0,
        "hudi_meta_last_compaction_success": 1.0,
        "hudi_meta_last_compaction_duration_seconds": 4.5,
        "hudi_meta_last_sync_success": 0.0,
        "hudi_meta_last_sync_duration_seconds": 1.5,
    }  # unknown values (no clean yet) are left out, not given as 0
    assert 'hudi_meta_threshold_seconds{table="events"} 10.0' in render({"events": values}).decode()
    uncounted = parse(
        render({"events": metric_values(replace(f, late_records=None), None, None, None, None, 0)}).decode()
    )
    assert "hudi_meta_late_records" not in uncounted and uncounted["hudi_meta_late_records_at_most"] == 7.0


def test_the_last_run_is_the_newest_started_one() -> None:
    done = Instant("20261123000000000", Action.COMPACTION, State.COMPLETED, "20261123000004500")
    requested = Instant("20261123000010000", Action.COMPACTION, State.REQUESTED)
    assert last_run([done, requested]) == ServiceRun(True, 4.5)  # a plan not started is not a run
    died = Instant("20261123000020000", Action.COMPACTION, State.INFLIGHT)
    assert last_run([done, requested, died]) == ServiceRun(False, None)
    assert last_run([Instant("20261123000000000", Action.CLEAN, State.COMPLETED)]) == ServiceRun(True, None)  # v6
    assert last_run([]) is None


def test_the_metrics_command(engine: Engine, tmp_path: Path) -> None:
    t, _ = compacted_table(tmp_path / "t", engine)
    t.write(rows(("d", 3, 1.0)))  # late: below T = 10 s
    db = str(engine.url)
    down = f"thrift://127.0.0.1:{free_port()}"
    failed = cli("--db", db, "sync", t.path, "--mode", "hms", "--uri", down, "--timeout", "1")
    assert failed.returncode == 4  # the catalog unreachable: run again later
    out = cli("--db", db, "metrics", t.path)
    assert out.returncode == 0, out.stderr
    got = parse(out.stdout)
    assert got["hudi_meta_threshold_seconds"] == at(10) / 1000
    assert got["hudi_meta_watermark_seconds"] == at(3) / 1000  # d is not in a base file
    assert got["hudi_meta_log_min_event_time_seconds"] == at(3) / 1000
    assert got["hudi_meta_leftover_log_files"] == 2 and got["hudi_meta_leftover_slices"] == 1  # c's file, d's file
    assert got["hudi_meta_late_records"] == got["hudi_meta_late_records_at_most"] == got["hudi_meta_late_blocks"] == 1
    assert got["hudi_meta_last_compaction_success"] == 1
    assert got["hudi_meta_last_sync_success"] == 0
    assert "hudi_meta_pending_plan_age_seconds" not in got and 'table="core"' in out.stdout
