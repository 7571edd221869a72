"""The service's log (issue 29): one line per table per round, `key=value` pairs that split back, no dicts or
reprs; a round that changed something logs at info, an idle round at debug; a failure is one error line."""

from __future__ import annotations

import logging
import shlex
from pathlib import Path

import pytest
from sqlalchemy import Engine

from hudi_meta.service.config import LoopSettings, ServiceConfig, SparkSettings, TableSettings
from hudi_meta.service.loop import Service
from hudi_meta.service.runner import LocalRunner
from tests.service.helpers import HOUR_MS, MINUTE_MS, Groups

LOGGER = "hudi_meta.service"


def _pairs(line: str) -> dict[str, str]:
    """The line split as a shell splits it (quoted values keep their spaces), each word one `key=value`."""
    words = shlex.split(line)
    assert all("=" in w for w in words), line
    return dict(w.split("=", 1) for w in words)


def test_one_key_value_line_per_table_per_round(
    tmp_path: Path, engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    t = Groups(tmp_path / "t", 2, "t")
    t.batch(5 * HOUR_MS)
    t.batch(4 * HOUR_MS)
    t.batch(10 * MINUTE_MS)
    loop = LoopSettings(interval_s=0)
    settings = (TableSettings(t.path, data_latency_ms=HOUR_MS, sync=False, clean=False),)
    config = ServiceConfig("test", None, SparkSettings(engine="local"), None, loop=loop, tables=settings)
    service = Service(config, engine, LocalRunner(), "w1")
    caplog.set_level(logging.DEBUG, logger=LOGGER)

    service.round()  # indexes, schedules and runs a compaction: something happened
    lines = [r for r in caplog.records if r.name == LOGGER]
    assert len(lines) == 1 and lines[0].levelno == logging.INFO, [r.getMessage() for r in lines]
    pairs = _pairs(lines[0].getMessage())
    assert pairs["table"] == t.path and pairs["index"] == "ok" and pairs["schedule"] == "scheduled"
    assert pairs["compaction"] == "completed" and pairs["compaction.instant"] == pairs["schedule.instant"]
    assert pairs["schedule.threshold"].endswith("Z") and pairs["schedule.threshold"][:4].isdigit()
    assert pairs["index.instants_added"].isdigit()  # counts stay numbers
    assert not any(c in lines[0].getMessage() for c in "{}") and "None" not in lines[0].getMessage()

    caplog.clear()
    service.round()  # nothing new: the idle round is one debug line
    lines = [r for r in caplog.records if r.name == LOGGER]
    assert len(lines) == 1 and lines[0].levelno == logging.DEBUG, lines[0].getMessage()
    assert _pairs(lines[0].getMessage())["schedule"] in ("skipped", "ok") or "schedule" not in lines[0].getMessage()

    caplog.clear()
    Path(t.path, ".hoodie", "hoodie.properties").write_bytes(b"not = a hudi table\n")
    service.round()  # a failure: one error line with the error and the backoff
    lines = [r for r in caplog.records if r.name == LOGGER]
    assert len(lines) == 1 and lines[0].levelno == logging.ERROR
    pairs = _pairs(lines[0].getMessage())
    assert pairs["table"] == t.path and "hoodie.properties" in pairs["error"] and pairs["retry_in_s"].isdigit()
