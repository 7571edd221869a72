"""The Python API (`hudi_meta.open_table`, docs/python-api.md). The CLI's tests run through it too (every
table command calls these methods); here: what a Python user sees. Expected records come from what the test
wrote, never from hudi-meta's reader, by the design's rule (docs/event-time.md section 4): after an event-time
compaction at T, the read-optimized view holds every record with event time <= T."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

import hudi_meta
from hudi_meta.api import CompactionSummary, as_duration_ms, as_time_ms
from hudi_meta.errors import BadValueError, NotIndexedError, ParameterError, TableNotFoundError
from tests.compaction.core import T0, CoreTable, at, region_rows
from tests.compaction.helpers import SPEC, write_events


def _table(tmp_path: Path) -> CoreTable:
    """One file group: a base file, a log file before T (a updated) and one after T (c, late only in its name)."""
    t = CoreTable(tmp_path / "t", version=9)
    t.write(region_rows("eu", ("a", 1, 1.0), ("b", 2, 2.0)))
    t.write(region_rows("eu", ("a", 10, 3.0)))
    t.write(region_rows("eu", ("c", 50, 4.0)))
    return t


def test_index_schedule_run_freshness_read_clean_check(tmp_path: Path) -> None:
    t = _table(tmp_path)
    with hudi_meta.open_table(t.path, store=f"sqlite:///{tmp_path / 's.db'}") as table:
        stats = table.index()
        assert stats.instants_added == 3 and stats.log_files_added == 2  # three writes, two of them log files
        threshold = dt.datetime.fromtimestamp(at(30) / 1000, dt.UTC)
        plan = table.schedule_compaction(threshold=threshold)
        assert plan.instant is not None and plan.threshold_ms == at(30)
        done = table.run_compaction()  # the oldest pending: the one just planned
        assert isinstance(done, CompactionSummary) and done.instant == plan.instant
        base = next((Path(t.path) / "region=eu").glob(f"*_{plan.instant}.parquet"))
        assert done.records_written == pq.read_metadata(base).num_rows == 2 and done.links == 1
        fresh = table.freshness()
        assert fresh.threshold_ms == at(30) and fresh.compaction_instant == plan.instant
        ro = {r["id"]: r["amount"] for r in table.read("ro").to_pylist()}
        assert ro == {"a": 3.0, "b": 2.0}  # every record with event time <= T, the newest version of a
        snapshot = {r["id"]: r["amount"] for r in table.read("snapshot", columns=["id", "amount"]).to_pylist()}
        assert snapshot == {"a": 3.0, "b": 2.0, "c": 4.0}
        assert sum(b.num_rows for b in table.scan("read_optimized")) == 2  # Hudi's spelling of the query
        # complete before T: the RO view; after T (c is not in it): the snapshot view, or with strict an error
        assert table.read("ro", complete_before=at(30)).num_rows == 2
        assert table.read("ro", complete_before="2026-01-01T00:01:00Z").num_rows == 3
        with pytest.raises(hudi_meta.NotFreshError):
            table.read("ro", complete_before=at(60), strict=True)
        dry = table.clean("keep-latest-file-versions", retained=1)
        assert dry.instant is None and dry.plan is not None and dry.deleted == 0  # a dry run by default
        done_clean = table.clean("KEEP_LATEST_FILE_VERSIONS", retained=1, dry_run=False)
        assert done_clean.instant is not None and done_clean.deleted > 0
        assert table.read("snapshot").num_rows == 3  # the clean kept the log file the link shows
        report = table.check()
        assert report.clean, [str(f) for f in report.findings]


def test_bad_values_raise_one_error_naming_the_argument(tmp_path: Path) -> None:
    t = _table(tmp_path)
    with hudi_meta.open_table(t.path, store=f"sqlite:///{tmp_path / 's.db'}") as table:
        for kwargs, says in (
            ({"threshold": "soon"}, "threshold: not a time"),
            ({"data_latency": -5}, "data latency: -5 ms is negative"),
            ({"data_latency": "5 parsecs"}, "data latency: not a duration"),
            ({"threshold": at(1), "data_latency": "1m"}, "either a threshold or a data latency"),
            ({"strategy": "fastest"}, "fastest"),
            ({"mode": "hardlink"}, "hardlink"),
        ):
            with pytest.raises(hudi_meta.HudiMetaError) as e:
                table.schedule_compaction(**kwargs)
            assert says in str(e.value), (kwargs, str(e.value))
        with pytest.raises(hudi_meta.HudiMetaError, match="complete_before goes with the ro query"):
            table.read("snapshot", complete_before=at(1))
        with pytest.raises(hudi_meta.HudiMetaError, match="strict goes with complete_before"):
            table.read("ro", strict=True)
        with pytest.raises(hudi_meta.HudiMetaError, match="no pending compaction|nothing to run|pending"):
            table.run_compaction()
    with pytest.raises(TableNotFoundError):
        hudi_meta.open_table(str(tmp_path / "missing"))
    assert issubclass(TableNotFoundError, hudi_meta.HudiMetaError)


def test_errors_name_the_parameters_never_an_option(tmp_path: Path) -> None:
    """The API names its own parameters (a front end re-words them: `ParameterError.worded`, the CLI's options)."""
    t = _table(tmp_path)
    with hudi_meta.open_table(t.path, store=f"sqlite:///{tmp_path / 's.db'}") as table:
        for call, says in (
            (lambda: table.read("incremental"), "an incremental query needs begin (a time or an instant)"),
            (lambda: table.read("time-travel", begin="0"), "a time-travel query needs as_of"),
            (lambda: table.read("snapshot", end="0"), "a snapshot query takes no begin, end or as_of"),
            (lambda: table.read("incremental", begin="0", as_of="0"), "takes begin and end, not as_of"),
            (lambda: table.clean("keep-latest-commits", hours=2), "hours is for KEEP_LATEST_BY_HOURS"),
            (lambda: table.clean("keep-latest-by-hours", retained=2), "keeps hours H, not retained N"),
            (lambda: table.clean(retained=-1), "retained must be from 0 to"),
            (lambda: table.check(index=False).notes, None),
        ):
            if says is None:
                assert call() == ["index drift not checked: not asked for"]
                continue
            with pytest.raises(ParameterError) as e:
                call()
            assert says in str(e.value) and "--" not in str(e.value), str(e.value)
        with pytest.raises(ParameterError) as e:
            table.read("incremental")
        assert e.value.worded({"begin": "--begin"}) == "an incremental query needs --begin (a time or an instant)"
        with pytest.raises(NotIndexedError, match="is not indexed: index it first"):
            table.show("timeline")


def test_the_operations_the_cli_offers(tmp_path: Path) -> None:
    """What the CLI's show, metrics, validate, unschedule, rollback and archive commands call: each returns what
    it found or would do, and changes nothing in a dry run."""
    t = _table(tmp_path)
    with hudi_meta.open_table(t.path, store=f"sqlite:///{tmp_path / 's.db'}") as table:
        registered = table.register()
        assert registered.base_path == table.hudi.base_path and registered.table_id > 0
        table.index()
        plan = table.schedule_compaction(threshold=at(30))
        assert plan.instant is not None
        table.index()
        from_index = table.show("timeline")
        assert [r["requested_time"] for r in from_index] == [r["requested_time"] for r in table.show("timeline", True)]
        assert plan.instant in {r["instant"] for r in table.show("plans")}
        metrics = table.metrics()
        assert metrics.values["leftover_log_files"][1] == 2 and b"hudi_meta_leftover_log_files" in metrics.exposition()
        assert all(v.ok for v in table.validate())
        dry = table.unschedule(plan.instant)
        assert dry.dry_run and dry.actions and not any(a.done for a in dry.actions) and dry.index.stats is None
        with pytest.raises(hudi_meta.HudiMetaError, match="only requested"):
            table.rollback(plan.instant)  # a plan that never ran is unscheduled, not rolled back
        assert table.hudi.timeline.instant(plan.instant) is not None  # dry runs: still pending
        undone = table.unschedule(plan.instant, dry_run=False)
        assert not undone.failed and undone.index.stats is not None  # the registered table was indexed again
        assert plan.instant not in {r["instant"] for r in table.show("plans")}
        archived = table.archive()
        assert archived.report.archived == [] and archived.index.stats is None  # three commits: nothing to archive


def test_times_and_durations_in_every_form_a_caller_has() -> None:
    """A time: an aware datetime (shifted to UTC), a naive one (taken as UTC), epoch ms, or text; a duration: a
    timedelta, ms or text. The same moment in every form is the same millisecond."""
    moment = T0 + 1234
    aware = dt.datetime(2026, 1, 1, 1, 0, 1, 234000, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    for value in (aware, dt.datetime(2026, 1, 1, 0, 0, 1, 234000), moment, "2026-01-01T00:00:01.234Z", str(moment)):
        assert as_time_ms(value, "t") == moment, value
    for duration in (dt.timedelta(minutes=30), 1_800_000, "30m"):
        assert as_duration_ms(duration, "d") == 1_800_000
    for bad in (True, 1.5, dt.datetime(1969, 12, 31, tzinfo=dt.UTC)):
        with pytest.raises(BadValueError):
            as_time_ms(bad, "t")  # type: ignore[arg-type]
    with pytest.raises(BadValueError):
        as_duration_ms(dt.timedelta(days=-1), "d")


def test_importing_the_package_root_stays_light() -> None:
    """`import hudi_meta` (and any format module) loads no store, Arrow or Spark code until the API is used."""
    code = "import sys, hudi_meta; print(sorted(m for m in ('sqlalchemy', 'pyarrow', 'pyspark') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    assert out.stdout.strip() == "[]"
    assert hudi_meta.open_table is hudi_meta.api.open_table and "open_table" in hudi_meta.__all__
    with pytest.raises(AttributeError):
        _ = hudi_meta.no_such_thing


def test_spark_users_pass_their_session(spark: SparkSession, tmp_path: Path) -> None:
    """docs/python-api.md's Spark example: write with `hudi_meta.spark.writer`, compact on the session passed to
    `run_compaction`, read with `hudi_meta.spark.reader`. The RO view holds every record of the model (what was
    written, latest version per key) with event time <= T; the DataFrame reads what `Table.read` reads."""
    from hudi_meta.spark import reader

    path = str(tmp_path / "events")
    model, watermarks = write_events(spark, path, SPEC)
    threshold = watermarks[len(watermarks) // 2]
    with hudi_meta.open_table(path, store=f"sqlite:///{tmp_path / 's.db'}") as table:
        plan = table.schedule_compaction(threshold=threshold)
        done = table.run_compaction(plan.instant, spark=spark)
        assert done.instant == plan.instant and done.operations == len(plan.plan.operations if plan.plan else [])
        ro = {(r["event_id"], r["ts"]) for r in table.read("ro", columns=["event_id", "ts"]).to_pylist()}
        expected = {(r["event_id"], r["ts"]) for r in model.rows() if r["ts"] <= threshold}
        assert expected <= ro
        frame = reader.read(spark, table.uri, "ro").select("event_id", "ts").collect()
        assert {(r["event_id"], r["ts"]) for r in frame} == ro
        fresh = reader.read_complete_before(spark, table.uri, threshold, table.engine, strict=True)
        assert fresh.count() == len(ro)


def test_the_readme_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's Python example, as written, on a table of ours (its path and store swapped in)."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme[readme.index("### Python") :]
    code = section[section.index("```python") + len("```python") : section.index("```", section.index("```python") + 9)]
    t = _table(tmp_path)
    code = code.replace('"/data/events"', repr(t.path)).replace(
        '"sqlite:///meta.db"', repr(f"sqlite:///{tmp_path / 's.db'}")
    )
    exec(compile(code, "README.md", "exec"), {})
    written, links, lag_ms, rows = (int(word) for word in capsys.readouterr().out.split())
    # T = now - 30m is after every event (2026-01-01): all log files merged, none kept as a link; RO holds all
    # data before 2026-11-28T12:00Z (its watermark is T), so RO is read: a, b, c
    assert (written, links, rows) == (3, 0, 3) and 30 * 60_000 <= lag_ms < 40 * 60_000
