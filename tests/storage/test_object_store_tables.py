"""Tables on an object store end to end: on S3 (s3fs against moto on loopback), `memory://` and `file://`
URIs, a table is written, indexed under its full URI, compacted by event time in copy mode (exact and not; an
asked-for symlink mode is refused where there are no symlinks), and reads the same with our reader and with
hudi-rs (given the server's endpoint). A compaction killed with kill -9 at each executor step is finished by
the next run. Nothing of a table on S3 or in memory ever lands on the local disk: the working directory and
the temp dir stay empty."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_meta.spark.compat import arrow_dataframe, to_arrow
from sqlalchemy import Engine

from hudi_meta.compaction.run import CRASH_AT_ENV, CRASH_POINTS, run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.errors import HudiMetaError
from hudi_meta.format.links import LinkMode
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.registry import table_id_of
from hudi_meta.storage.factory import normalize_uri
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import WriteClient
from tests.compaction.core import T0, at, create_core_table
from tests.conftest import S3Server


@dataclass
class Place:
    """Where a table lives: its URI, the storage options and environment a client needs, and hudi-rs's."""

    kind: str
    uri: str
    options: dict[str, object] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    rs_options: dict[str, str] = field(default_factory=dict)

    @property
    def remote(self) -> bool:
        return self.kind != "file"


@pytest.fixture(params=["s3", "memory", "file"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Place:
    if request.param == "s3":
        server: S3Server = request.getfixturevalue("s3_server")
        rs = {
            "aws_endpoint_url": server.endpoint,
            "aws_access_key_id": server.key,
            "aws_secret_access_key": server.secret,
            "aws_region": server.region,
            "aws_allow_http": "true",
        }
        return Place("s3", f"s3://{server.bucket()}/lake/events", server.options, server.env, rs)
    if request.param == "memory":
        return Place("memory", f"memory://t-{os.urandom(6).hex()}/events")
    return Place("file", f"file://{tmp_path}/lake/events")


@pytest.fixture
def local_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """An empty working directory and an empty temp dir for the test (checked empty after a remote table's run)."""
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmpdir"
    cwd.mkdir()
    tmp.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    yield cwd, tmp


def rows(*records: tuple[str, str, int, float]) -> pa.Table:
    """(region, id, seconds after T0, amount)."""
    return pa.table(
        {
            "id": [r[1] for r in records],
            "ts": pa.array([at(r[2]) for r in records], pa.int64()),
            "region": [r[0] for r in records],
            "amount": [r[3] for r in records],
        }
    )


def write(place: Place, data: pa.Table, groups: dict[str, str]) -> None:
    """One write of `data`: a base file for a region's first records, a new log file after that."""
    w = WriteClient(HudiTable.open(place.uri, place.options))
    w.begin()
    for region in sorted(set(data.column("region").to_pylist())):
        part = data.filter(pa.compute.equal(data.column("region"), region))
        partition = f"region={region}"
        if partition in groups:
            w.append_log(partition, groups[partition], part, [])
        else:
            groups[partition] = w.write_base_file(partition, part).file_id
    w.commit()


def build(place: Place) -> dict[str, tuple[int, float]]:
    """Two regions: old data; data at 20-30 s with an update of an old key after T = 100 s in the same write
    (exact mode keeps the old version in RO); data at 500-600 s (kept by the compaction as a copy). The snapshot
    as the model says it (id -> event seconds, amount)."""
    create_core_table(place.uri, "events", options=place.options)
    groups: dict[str, str] = {}
    write(place, rows(("eu", "a", 1, 1.0), ("eu", "b", 2, 1.0), ("us", "u", 1, 1.0)), groups)
    write(place, rows(("eu", "c", 20, 2.0), ("eu", "a", 200, 3.0), ("us", "v", 30, 2.0), ("us", "u", 250, 3.0)), groups)
    write(place, rows(("eu", "d", 500, 4.0), ("us", "w", 600, 4.0)), groups)
    model = {"a": (200, 3.0), "b": (2, 1.0), "c": (20, 2.0), "d": (500, 4.0)}
    return model | {"u": (250, 3.0), "v": (30, 2.0), "w": (600, 4.0)}


def read(place: Place, query: str) -> dict[str, tuple[int, float]]:
    table = HudiTable.open(place.uri, place.options).read(query)
    return {r["id"]: ((r["ts"] - T0) // 1000, r["amount"]) for r in table.select(["id", "ts", "amount"]).to_pylist()}


def hudi_rs(place: Place, query: str) -> dict[str, tuple[int, float]]:
    from hudi import HudiReadOptions
    from hudi import HudiTable as RsTable

    opts = {"hoodie.read.use.read_optimized.mode": "true"} if query == "ro" else {}
    uri = place.uri.removeprefix("file://")
    batches = RsTable(uri, options=place.rs_options).read(HudiReadOptions(hudi_options=opts))
    table = pa.Table.from_batches(batches)
    return {r["id"]: ((r["ts"] - T0) // 1000, r["amount"]) for r in table.select(["id", "ts", "amount"]).to_pylist()}


def assert_nothing_local(place: Place, disk: tuple[Path, Path]) -> None:
    if place.remote:
        for folder in disk:
            assert not list(folder.rglob("*")), f"{folder} holds {list(folder.rglob('*'))}"


@pytest.mark.parametrize("exact", [False, True])
def test_index_compact_and_read_a_table_by_its_uri(
    place: Place, engine: Engine, local_disk: tuple[Path, Path], exact: bool
) -> None:
    model = build(place)
    table = HudiTable.open(place.uri, place.options)
    assert (
        table.uri
        == normalize_uri(place.uri)
        == (place.uri.removeprefix("file://") if place.kind != "memory" else table.uri)
    )
    if not table.storage.supports_symlinks:
        with pytest.raises(HudiMetaError, match="without symlinks: use mode copy"):
            schedule_compaction(engine, table, ScheduleRequest(threshold_ms=at(100), mode=LinkMode.SYMLINK))
    result = schedule_compaction(engine, table, ScheduleRequest(threshold_ms=at(100), mode=LinkMode.COPY, exact=exact))
    assert result.instant is not None and result.plan is not None
    assert sum(len(op.symlink_operations) for op in result.plan.operations) == 2  # the 500 s and 600 s files
    run_compaction(HudiTable.open(place.uri, place.options), result.instant)
    Indexer(engine, HudiTable.open(place.uri, place.options)).run()
    assert read(place, "snapshot") == model
    ro = read(place, "ro")
    if exact:  # RO is the table as of T: a and u as they were at 1 s
        assert ro == {"a": (1, 1.0), "b": (2, 1.0), "c": (20, 2.0), "u": (1, 1.0), "v": (30, 2.0)}
    else:  # every compacted write, the later versions of a and u included; not the copies' 500 s and 600 s
        assert ro == {k: v for k, v in model.items() if k not in ("d", "w")}
    if place.kind != "memory":  # hudi-rs has no in-process memory store
        assert hudi_rs(place, "snapshot") == model
        assert hudi_rs(place, "ro") == ro
    # the store knows the table by its full URI, however it is spelled
    uri = table.uri
    assert table_id_of(engine, uri) is not None
    for spelling in (uri + "/", uri.replace("s3://", "s3a://", 1)) if place.kind == "s3" else (uri + "/",):
        Indexer(engine, HudiTable.open(spelling, place.options)).run()
        assert HudiTable.open(spelling, place.options).uri == uri
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM hudi_table").scalar_one() == 1
    assert_nothing_local(place, local_disk)


@pytest.mark.slow
@pytest.mark.parametrize("place", ["s3", "file"], indirect=True)  # memory://: one process, no second to resume
@pytest.mark.parametrize("step", CRASH_POINTS)
def test_kill_9_at_each_step_then_run_again(
    place: Place, engine: Engine, local_disk: tuple[Path, Path], step: str
) -> None:
    model = build(place)
    result = schedule_compaction(
        engine, HudiTable.open(place.uri, place.options), ScheduleRequest(at(100), mode=LinkMode.COPY)
    )
    assert result.instant is not None
    db = str(engine.url.database)
    args = [sys.executable, "-m", "hudi_meta.cli.main", "--db", db, "compaction", "run", place.uri, "--engine", "local"]
    env = {**os.environ, **place.env}
    crashed = subprocess.run(args, capture_output=True, text=True, env={**env, CRASH_AT_ENV: step}, timeout=300)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    assert read(place, "snapshot") == model  # nothing lost while the plan is pending
    resumed = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert HudiTable.open(place.uri, place.options).timeline.instant(result.instant).is_completed  # type: ignore[union-attr]
    assert read(place, "snapshot") == model == hudi_rs(place, "snapshot")
    assert read(place, "ro") == hudi_rs(place, "ro") == {k: v for k, v in model.items() if k not in ("d", "w")}
    assert_nothing_local(place, local_disk)


@pytest.mark.slow
def test_spark_ingests_compacts_and_reads_a_table_on_s3(
    spark: Any, s3_server: S3Server, engine: Engine, tmp_path: Path
) -> None:
    """`hudi-meta ingest` of an S3 URI (credentials and endpoint from the AWS_* environment), then Spark writes
    more, runs the event-time compaction and reads the table (storage options shipped to the executors): our
    reader, Spark's and hudi-rs agree with the model."""
    from hudi_meta.spark import compaction, writer
    from hudi_meta.spark.reader import read as spark_read

    from hudi_meta.demo.event_stream import StreamSpec, generate, write_batches
    from tests.spark.model import Model, rows_of

    uri = f"s3://{s3_server.bucket()}/events"
    spec = StreamSpec(batches=3, rows_per_batch=120, late_share=0.2, update_share=0.3, delete_share=0.0, seed=5)
    files = write_batches(spec, tmp_path / "input", "jsonl")
    batches = list(generate(spec))
    model = Model()
    args = ["--record-key", "event_id", "--ordering-field", "ts", "--event-time-field", "ts"]
    args += ["--partition-field", "region", "--create", "--buckets", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "hudi_meta.cli.main", "ingest", uri, "--input", str(files[0]), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **s3_server.env},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    model.upsert("0", batches[0].upserts)
    for n, batch in enumerate(batches[1:], 1):
        writer.write(arrow_dataframe(spark, batch.upserts), HudiTable.open(uri, s3_server.options), "upsert")
        model.upsert(str(n), batch.upserts)
    table = HudiTable.open(uri, s3_server.options)
    scheduled = schedule_compaction(engine, table, ScheduleRequest(batches[1].watermark_ms, mode=LinkMode.COPY))
    assert scheduled.instant is not None
    compaction.run(spark, HudiTable.open(uri, s3_server.options), scheduled.instant)
    ours = rows_of(HudiTable.open(uri, s3_server.options).read("snapshot"))
    assert ours == model.rows()
    assert rows_of(to_arrow(spark_read(spark, uri, "snapshot", s3_server.options))) == ours
    rs = {
        "aws_endpoint_url": s3_server.endpoint,
        "aws_access_key_id": s3_server.key,
        "aws_secret_access_key": s3_server.secret,
        "aws_region": s3_server.region,
        "aws_allow_http": "true",
    }
    from hudi import HudiReadOptions
    from hudi import HudiTable as RsTable

    assert rows_of(pa.Table.from_batches(RsTable(uri, options=rs).read(HudiReadOptions()))) == ours


def test_a_failed_write_is_rolled_back(place: Place, local_disk: tuple[Path, Path]) -> None:
    """A write that died before its commit is rolled back: on an object store its log files (written whole, only
    its blocks) are deleted; on local disk they get a rollback command block, as Java writes it. Either way the
    table reads as before, and the next write goes on."""
    from hudi_meta.write.failed_writes import rollback_failed_write

    model = build(place)
    table = HudiTable.open(place.uri, place.options)
    eu = next(fg.file_id for fg in table.file_groups() if fg.partition == "region=eu")
    w = WriteClient(table)
    w.begin()
    stat = w.append_log("region=eu", eu, rows(("eu", "dead", 5, 9.0)), [])
    w.close()  # the writer is gone: no commit
    dead = HudiTable.open(place.uri, place.options)
    report = rollback_failed_write(dead, w.instant, force=True, dry_run=False)
    log_path = f"{dead.base_path}/{stat.path}"
    if dead.storage.supports_append:
        assert [a.operation for a in report.actions] == ["append_rollback_block"] and dead.storage.exists(log_path)
    else:
        assert [a.operation for a in report.actions] == ["delete"] and not dead.storage.exists(log_path)
    assert read(place, "snapshot") == model
    groups = {
        "region=eu": eu,
        "region=us": next(fg.file_id for fg in dead.file_groups() if fg.partition == "region=us"),
    }
    write(place, rows(("eu", "e", 700, 5.0)), groups)
    assert read(place, "snapshot") == model | {"e": (700, 5.0)}
    if place.kind != "memory":
        assert hudi_rs(place, "snapshot") == model | {"e": (700, 5.0)}
    assert_nothing_local(place, local_disk)


def test_a_clean_names_full_uris_and_deletes_on_the_store(
    place: Place, engine: Engine, local_disk: tuple[Path, Path]
) -> None:
    """Rule: a clean plan lists full paths with the store's scheme, as Java's `CleanPlanner` writes them, so that a
    Java cleaner finishing our pending clean deletes the same files; the clean then deletes the old slices there and
    the table reads as before (ours and hudi-rs)."""
    from hudi_meta.clean.run import run_clean
    from hudi_meta.format.table_service_metadata import CleanerPlan
    from hudi_meta.timeline.instant import Action, Instant, State
    from hudi_meta.write.clean import read_pending_plan
    from hudi_meta.write.clean_plan import CleanPolicy, Policy

    model = build(place)
    table = HudiTable.open(place.uri, place.options)
    result = schedule_compaction(engine, table, ScheduleRequest(threshold_ms=at(1000), mode=LinkMode.COPY))
    assert result.instant is not None
    run_compaction(HudiTable.open(place.uri, place.options), result.instant)
    table = HudiTable.open(place.uri, place.options)
    policy = CleanPolicy(Policy.KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1)
    outcome = run_clean(engine, table, policy, dry_run=False)
    assert outcome.instant is not None and outcome.deleted > 0
    table = HudiTable.open(place.uri, place.options)
    requested = Instant(outcome.instant, Action.CLEAN, State.REQUESTED)
    plan = CleanerPlan.from_bytes(table.timeline.read_bytes(requested))
    paths = [i.file_path for infos in plan.file_paths_to_be_deleted_per_partition.values() for i in infos]
    assert paths and all(p.startswith(table.uri + "/") for p in paths), paths
    if place.kind != "file":
        assert all(p.startswith(f"{place.kind}://") for p in paths), paths
    assert read_pending_plan(table, requested) == plan
    assert not any(table.storage.exists(f"{table.base_path}/{p.removeprefix(table.uri + '/')}") for p in paths)
    assert read(place, "snapshot") == model
    if place.kind != "memory":
        assert hudi_rs(place, "snapshot") == model
    assert_nothing_local(place, local_disk)
