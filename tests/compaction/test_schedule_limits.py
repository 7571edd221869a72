"""The triggers' and the log-file-size strategy's limits reach them (issue 25 item 6): a request's value, else the
table's hoodie.properties (Hudi's names), else Hudi's defaults (5 delta commits, 3600 s, 0 bytes). Each is
checked on the timeline by hand: how many delta commits since the last compaction, how many seconds, how many
log bytes a slice holds."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.schedule import MAX_DELTA_COMMITS, ScheduleRequest, schedule_compaction
from hudi_meta.compaction.strategies import Strategy
from hudi_meta.compaction.triggers import Trigger
from hudi_meta.errors import HudiMetaError
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import instant_epoch_ms
from tests.cli.helpers import cli, tree
from tests.compaction.core import CoreTable, rows


def three_delta_commits(t: CoreTable) -> None:
    """A base file and two log files: three delta commits, never compacted."""
    t.write(rows(("a", 1, 1.0)))
    t.write(rows(("b", 2, 1.0)))
    t.write(rows(("c", 3, 1.0)))


def num_commits(engine: Engine, t: CoreTable, given: int | None = None) -> str | None:
    request = ScheduleRequest(trigger=Trigger.NUM_COMMITS, max_delta_commits=given, strategy=Strategy.UNBOUNDED)
    return schedule_compaction(engine, t.table, request).instant


def test_max_delta_commits_given_reaches_the_trigger(tmp_path: Path, engine: Engine) -> None:
    t = CoreTable(tmp_path / "t")
    three_delta_commits(t)
    assert num_commits(engine, t, 4) is None  # 3 delta commits, 4 needed
    assert num_commits(engine, t) is None  # Hudi's default: 5
    assert num_commits(engine, t, 3) is not None


def test_max_delta_commits_from_the_table_unless_given(tmp_path: Path, engine: Engine) -> None:
    t = CoreTable(tmp_path / "t", props={"hoodie.compact.inline.max.delta.commits": "3"})
    three_delta_commits(t)
    assert num_commits(engine, t, 4) is None  # the request's value wins over the table's
    assert num_commits(engine, t) is not None  # the table's 3


@pytest.mark.parametrize(
    ("props", "given", "scheduled"),
    [
        ({}, 200, False),
        ({}, None, False),  # Hudi's default: 3600 s
        ({}, 100, True),
        ({"hoodie.compact.inline.max.delta.seconds": "60"}, None, True),
        ({"hoodie.compact.inline.max.delta.seconds": "60"}, 200, False),  # the request's value wins
    ],
)
def test_max_delta_seconds_reaches_the_trigger(
    tmp_path: Path, engine: Engine, props: dict[str, str], given: int | None, scheduled: bool
) -> None:
    t = CoreTable(tmp_path / "t", props=props)
    three_delta_commits(t)
    last = t.compact(engine)  # the clock starts at this compaction's instant
    t.write(rows(("d", 4, 1.0)))
    later = instant_epoch_ms(last) + 100_000  # 100 s after it
    request = ScheduleRequest(trigger=Trigger.TIME_ELAPSED, max_delta_seconds=given, strategy=Strategy.UNBOUNDED)
    result = schedule_compaction(engine, t.table, request, now_ms=later)
    assert (result.instant is not None) == scheduled, result.reason


def log_file_size(engine: Engine, t: CoreTable, given: int | None = None) -> str | None:
    request = ScheduleRequest(strategy=Strategy.LOG_FILE_SIZE, log_file_size_threshold=given)
    return schedule_compaction(engine, t.table, request).instant


def log_bytes(t: CoreTable) -> int:
    """The log bytes of the one slice, from the files themselves."""
    (group,) = HudiTable.open(t.path).file_groups()
    return sum(f.size for f in group.ordered_slices()[-1].log_files)


@pytest.mark.parametrize("source", ["request", "table"])
def test_log_file_size_threshold_reaches_the_strategy(tmp_path: Path, engine: Engine, source: str) -> None:
    t = CoreTable(tmp_path / "t")
    three_delta_commits(t)
    size = log_bytes(t)

    def schedule(threshold: int) -> str | None:
        if source == "request":
            return log_file_size(engine, t, threshold)
        table = CoreTable(
            tmp_path / f"t{threshold}", props={"hoodie.compaction.logfile.size.threshold": str(threshold)}
        )
        three_delta_commits(table)
        assert log_bytes(table) == size
        return log_file_size(engine, table)

    assert schedule(size + 1) is None  # the slice holds fewer log bytes than that
    assert schedule(size) is not None


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (ScheduleRequest(trigger=Trigger.NUM_COMMITS, max_delta_commits=0, strategy=Strategy.UNBOUNDED), "from 1 to"),
        (ScheduleRequest(trigger=Trigger.TIME_ELAPSED, max_delta_seconds=-1, strategy=Strategy.UNBOUNDED), "from 1 to"),
        (ScheduleRequest(strategy=Strategy.LOG_FILE_SIZE, log_file_size_threshold=-1), "from 0 to"),
        (ScheduleRequest(threshold_ms=1, max_delta_commits=3), "used by the num-commits trigger only"),
        (
            ScheduleRequest(trigger=Trigger.NUM_COMMITS, max_delta_seconds=9, strategy=Strategy.UNBOUNDED),
            "time-elapsed trigger",
        ),
        (ScheduleRequest(log_file_size_threshold=9, strategy=Strategy.UNBOUNDED), "log-file-size strategy only"),
    ],
)
def test_a_limit_out_of_range_or_unused_is_refused(
    tmp_path: Path, engine: Engine, request_: ScheduleRequest, message: str
) -> None:
    t = CoreTable(tmp_path / "t")
    three_delta_commits(t)
    with pytest.raises(HudiMetaError, match=message):
        schedule_compaction(engine, t.table, request_)
    assert not list(Path(t.path, ".hoodie").glob("*.compaction.*"))


def test_a_table_limit_that_is_no_number_is_one_line(tmp_path: Path, engine: Engine) -> None:
    t = CoreTable(tmp_path / "t", props={"hoodie.compact.inline.max.delta.commits": "five"})
    three_delta_commits(t)
    with pytest.raises(HudiMetaError, match="hoodie.compact.inline.max.delta.commits='five' in hoodie.properties"):
        num_commits(engine, t)
    assert num_commits(engine, t, 3) is not None  # given, the table's value is not read


def test_the_cli_takes_the_limits_and_refuses_bad_ones_before_reading_or_writing(tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    three_delta_commits(t)
    db = tmp_path / "store.db"
    schedule = ("--db", str(db), "compaction", "schedule", t.path, "--strategy", "unbounded")
    before = tree(tmp_path)
    for bad, says in (
        (("--trigger", "num-commits", "--max-delta-commits", "0"), "max_delta_commits = 0: expected a whole number"),
        (("--max-delta-seconds", "60"), "used by the time-elapsed trigger only (the trigger is event-time)"),
        (("--log-file-size-threshold", "-5"), "log_file_size_threshold = -5"),
        (("--trigger", "num-commits", "--max-delta-commits", "x"), "invalid int value"),
    ):
        out = cli(*schedule, *bad)
        assert out.returncode == 2 and says in out.stderr and out.stdout == "", (bad, out.stderr)
        assert len(out.stderr.splitlines()) == 1 and "Traceback" not in out.stderr
        assert tree(tmp_path) == before  # no store made, nothing of the table touched
    waits = cli(*schedule, "--trigger", "num-commits", "--max-delta-commits", "4")
    assert waits.returncode == 0 and "3 delta commits since the last compaction (need 4)" in waits.stdout, waits
    done = cli(*schedule, "--trigger", "NUM_COMMITS", "--max-delta-commits", "3")
    assert done.returncode == 0 and done.stdout.startswith("scheduled compaction"), done.stderr


@pytest.mark.parametrize("text", ["²", "１２", "+5", "5.0"])
def test_a_table_limit_is_read_in_ascii_digits_only(text: str) -> None:
    """hoodie.properties limits are read by `values.ascii_integer` (issue 37): '²' passes `isdigit` but not `int`,
    '１２' passes `int`; both are refused in one line, never a ValueError."""
    request = ScheduleRequest(trigger=Trigger.NUM_COMMITS, strategy=Strategy.UNBOUNDED)
    with pytest.raises(HudiMetaError, match="is not a whole number from 1 to 1000000"):
        MAX_DELTA_COMMITS.of(request, {MAX_DELTA_COMMITS.key: text})


def test_time_since_the_last_compaction_reads_its_instant_in_the_timeline_zone(
    tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rule (Java's `HoodieInstantTimeGenerator.parseDateFromInstantTime`): an instant time is read in the table's
    timeline zone (`hoodie.table.timeline.timezone`, LOCAL: the machine's). On a UTC+9 machine, a LOCAL-zone
    compaction 100 s ago is 100 s ago; read as UTC it looked 9 hours in the future and the trigger never fired."""
    monkeypatch.setenv("TZ", "Etc/GMT-9")  # POSIX sign: nine hours east of UTC
    time.tzset()
    try:
        t = CoreTable(tmp_path / "t", props={"hoodie.table.timeline.timezone": "LOCAL"})
        three_delta_commits(t)
        last = t.compact(engine)
        t.write(rows(("d", 4, 1.0)))
        later = instant_epoch_ms(last, dt.datetime.now().astimezone().tzinfo or dt.UTC) + 100_000
        request = ScheduleRequest(trigger=Trigger.TIME_ELAPSED, max_delta_seconds=60, strategy=Strategy.UNBOUNDED)
        result = schedule_compaction(engine, t.table, request, now_ms=later)
        assert result.instant is not None, result.reason
    finally:
        monkeypatch.undo()
        time.tzset()
