"""Read times: ISO-8601, epoch ms or instant times, turned into instants in the table's timeline zone (issue 9)."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest

from hudi_meta.errors import HudiMetaError, ParameterError
from hudi_meta.table.table import Query
from hudi_meta.table.times import parse_instant
from tests.compaction.core import CoreTable, by_id, rows


def iso(instant: str) -> str:
    """An instant (UTC) as ISO-8601 with its milliseconds, computed independently of the code under test."""
    t = dt.datetime.strptime(instant, "%Y%m%d%H%M%S%f").replace(tzinfo=dt.UTC)
    return t.isoformat().replace("+00:00", "Z")


@pytest.fixture
def table(tmp_path: Path) -> tuple[CoreTable, list[str]]:
    t = CoreTable(tmp_path / "t")
    instants = [t.write(rows(("a", 1, float(i)), (f"k{i}", i, 1.0))).instant for i in range(3)]
    return t, instants


def test_times_in_every_form_read_the_same(table: tuple[CoreTable, list[str]]) -> None:
    t, instants = table
    middle = instants[1]
    expected = {"a": (1, 1.0), "k0": (0, 1.0), "k1": (1, 1.0)}  # as of the second write
    assert by_id(t.table.read(Query("time-travel", as_of=middle))) == expected
    assert by_id(t.table.read(Query("time-travel", as_of=iso(middle)))) == expected
    ms = int(dt.datetime.strptime(middle, "%Y%m%d%H%M%S%f").replace(tzinfo=dt.UTC).timestamp() * 1000)
    assert by_id(t.table.read(Query("time-travel", as_of=str(ms)))) == expected
    after_all = iso(instants[-1]).replace(iso(instants[-1])[:4], str(int(iso(instants[-1])[:4]) + 1))
    assert by_id(t.table.read(Query("time-travel", as_of=after_all))) == t.read()  # after the last: the latest
    incremental = by_id(t.table.read(Query("incremental", begin=iso(instants[0]), end=iso(middle))))
    assert incremental == {"a": (1, 1.0), "k1": (1, 1.0)}


@pytest.mark.parametrize(
    "query",
    [
        Query("time-travel", as_of="banana"),
        Query("incremental", begin="banana"),
        Query("incremental", begin="20260101000000000", end="yesterday"),
        Query("time-travel", as_of="20261399000000000"),  # month 13
    ],
)
def test_bad_times_are_refused(table: tuple[CoreTable, list[str]], query: Query) -> None:
    with pytest.raises(HudiMetaError, match="not a time|not an instant"):
        table[0].table.read(query)


def test_query_shapes_are_checked() -> None:
    with pytest.raises(ParameterError, match="needs begin"):
        Query("incremental")
    with pytest.raises(HudiMetaError, match="takes no"):
        Query("snapshot", as_of="20260101000000000")


def test_the_timeline_zone_is_used() -> None:
    plus2 = dt.timezone(dt.timedelta(hours=2))
    assert parse_instant("2026-01-01T00:00:00Z", plus2) == "20260101020000000"
    assert parse_instant("2026-01-01T00:00:00Z", dt.UTC) == "20260101000000000"


def test_cli_bad_time_is_one_line(table: tuple[CoreTable, list[str]]) -> None:
    command = [sys.executable, "-m", "hudi_meta.cli.main", "read", table[0].path, "--query", "time-travel"]
    out = subprocess.run([*command, "--as-of", "banana"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().splitlines() == [
        "hudi-meta read: error: argument --as-of: not a time or an instant time: 'banana' "
        "(use ISO-8601, epoch milliseconds or yyyyMMddHHmmss[SSS])"
    ]
