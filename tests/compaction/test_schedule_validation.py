"""Scheduling refuses bad values before writing anything (issue 9: bad input cannot poison a table or store)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.strategies import Strategy
from hudi_meta.compaction.triggers import Trigger
from hudi_meta.errors import BadValueError, HudiMetaError
from hudi_meta.format.links import LinkMode
from hudi_meta.spelling import Spelled
from tests.compaction.core import CoreTable, at, rows

NOW = at(3600)


@pytest.fixture
def table(tmp_path: Path) -> CoreTable:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    t.write(rows(("b", 2, 1.0)))
    t.write(rows(("c", 3000, 1.0)))
    return t


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (ScheduleRequest(threshold_ms=NOW + 1), "is after now"),
        (ScheduleRequest(threshold_ms=-1), "1969-12-31T23:59:59.999Z is before 1970"),
        (ScheduleRequest(threshold_ms=10**20), "is after now"),
        (ScheduleRequest(threshold_ms=at(10), data_latency_ms=1000), "not both"),
        (ScheduleRequest(data_latency_ms=NOW + 1), "out of range"),
        (ScheduleRequest(data_latency_ms=-5), "out of range"),
        (ScheduleRequest(threshold_ms=at(10), strategy=Strategy.UNBOUNDED), "takes no threshold"),
        (ScheduleRequest(strategy=Strategy.UNBOUNDED, exact=True), "exact mode needs"),
    ],
)
def test_bad_requests_write_nothing(engine: Engine, table: CoreTable, request_: ScheduleRequest, message: str) -> None:
    with pytest.raises(HudiMetaError, match=message):
        schedule_compaction(engine, table.table, request_, now_ms=NOW)
    assert not list(Path(table.path, ".hoodie").glob("*.compaction.*"))
    result = schedule_compaction(engine, table.table, ScheduleRequest(threshold_ms=at(10)), now_ms=NOW)
    assert result.instant is not None  # the table and the store still work


def test_a_threshold_beyond_int64_is_one_line_and_leaves_nothing(tmp_path: Path, table: CoreTable) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "hudi_meta.cli.main", "--db", db, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=120)

    assert cli("init-db").returncode == 0
    out = cli("compaction", "schedule", table.path, "--threshold", "99999999999999999999")
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1 and "is after 9999-12-31" in out.stderr, out.stderr
    assert not list(Path(table.path, ".hoodie").glob("*.compaction.*"))
    assert cli("index", table.path).returncode == 0
    again = cli("compaction", "schedule", table.path, "--threshold", str(at(10)))
    assert again.returncode == 0, again.stderr


@pytest.mark.parametrize(
    ("kind", "text"), [(LinkMode, "hardlink"), (Trigger, "SOMETIMES"), (Strategy, "DayBasedCompactionStrategy")]
)
def test_an_unknown_spelling_is_refused_naming_the_choices(kind: type[Spelled], text: str) -> None:
    with pytest.raises(BadValueError, match=f"--x: expected one of {', '.join(kind.spellings())}, got {text!r}"):
        kind.parse(text, "--x")
