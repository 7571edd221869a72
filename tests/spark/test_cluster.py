"""`hudi-meta ingest` on a real Spark standalone cluster (a master and two workers on 127.0.0.1, started
from the pyspark distribution) writes the same table as on local[2]: the same rows for snapshot and
read-optimized queries and the same deltacommits, with the tasks run by executors on both workers."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.error import URLError
from urllib.request import urlopen

import pyspark
import pytest

from hudi_meta.demo.event_stream import StreamSpec, generate, write_batches
from hudi_meta.format.file_names import BaseFileName, LogFileName
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action
from tests.spark.model import Model, rows_of

SPARK_HOME = Path(pyspark.__file__).resolve().parent
SPEC = StreamSpec(batches=3, rows_per_batch=300, late_share=0.2, update_share=0.3, delete_share=0.05, seed=23)
WORKERS = 2
START_TIMEOUT_S = 180.0  # master up and both workers registered (slow on a busy 2-core machine)
INGEST_TIMEOUT_S = 400.0
STOP_TIMEOUT_S = 20.0


def free_ports(n: int) -> list[int]:
    """`n` distinct ports free on 127.0.0.1 right now (all held open together, then released)."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def live_group_members(pgid: int) -> list[int]:
    """Processes (not zombies) in process group `pgid`."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        state, _ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == pgid and state not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def kill_group(pgid: int, grace_s: float = 0.0) -> list[int]:
    """SIGKILL what is left of process group `pgid` (one we started) after `grace_s` seconds to exit on its
    own; the pids that would not die."""
    grace = time.monotonic() + grace_s
    while live_group_members(pgid) and time.monotonic() < grace:
        time.sleep(0.1)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while members := live_group_members(pgid):
        if time.monotonic() > deadline:
            return members
        for pid in members:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
    return []


def spark_env(root: Path) -> dict[str, str]:
    """The environment of the daemons and the ingest drivers: this pyspark, loopback, dirs under `root`."""
    dirs = {name: root / name for name in ("conf", "logs", "pids", "local")}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    return {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_CONF_DIR": str(dirs["conf"]),  # empty: no stray spark-defaults.conf or spark-env.sh
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(dirs["logs"]),
        "SPARK_PID_DIR": str(dirs["pids"]),
        "SPARK_LOCAL_DIRS": str(dirs["local"]),
        "SPARK_DAEMON_MEMORY": "512m",
        # C1 only: every JVM here (daemons, drivers, executors) is short-lived; starts 20-40 % faster
        "JAVA_TOOL_OPTIONS": "-XX:TieredStopAtLevel=1",
        # the master's REST submission server would take the fixed port 6066
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
    }


@dataclass
class Daemon:
    name: str
    proc: subprocess.Popen[bytes]
    log: IO[bytes]
    log_path: Path

    def tail(self, lines: int = 30) -> str:
        self.log.flush()
        text = self.log_path.read_text(errors="replace").splitlines()[-lines:]
        return f"--- {self.name} ({self.log_path}) ---\n" + "\n".join(text)


@dataclass
class Cluster:
    """A standalone master and workers, each a `spark-class` JVM in its own process group."""

    root: Path
    env: dict[str, str]
    port: int
    web_port: int
    worker_dirs: list[Path] = field(default_factory=list)
    daemons: list[Daemon] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _start(self, name: str, cls: str, args: list[str], env: dict[str, str]) -> Daemon:
        log_path = Path(self.env["SPARK_LOG_DIR"]) / f"{name}.out"
        log = log_path.open("wb")
        try:
            proc = subprocess.Popen(
                [str(SPARK_HOME / "bin" / "spark-class"), cls, *args],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # its own group: the finalizer stops it and its executors
            )
        except BaseException:
            log.close()
            raise
        daemon = Daemon(name, proc, log, log_path)
        self.daemons.append(daemon)
        return daemon

    def check_alive(self, what: str) -> None:
        for d in self.daemons:
            if d.proc.poll() is not None:
                raise RuntimeError(f"{d.name} exited ({d.proc.returncode}) while {what}\n{d.tail()}")

    def _deadline_passed(self, deadline: float, what: str) -> None:
        self.check_alive(what)
        if time.monotonic() > deadline:
            logs = "\n".join(d.tail() for d in self.daemons)
            raise TimeoutError(f"timed out after {START_TIMEOUT_S:.0f} s {what}\n{logs}")

    def start(self, worker_ports: list[tuple[int, int]]) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        self._start(
            "master",
            "org.apache.spark.deploy.master.Master",
            ["--host", "127.0.0.1", "--port", str(self.port), "--webui-port", str(self.web_port)],
            self.env,
        )
        # workers started before the master listens retry only after 5-15 s: wait for its RPC port
        while True:
            self._deadline_passed(deadline, "waiting for the master's RPC port")
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.settimeout(1.0)
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            time.sleep(0.2)
        for n, (port, web_port) in enumerate(worker_ports, 1):
            work_dir = self.root / f"worker{n}"
            work_dir.mkdir()
            self.worker_dirs.append(work_dir)
            self._start(
                f"worker{n}",
                "org.apache.spark.deploy.worker.Worker",
                ["--host", "127.0.0.1", "--port", str(port), "--webui-port", str(web_port)]
                + ["--cores", "1", "--memory", "1g", "--work-dir", str(work_dir), self.url],
                {**self.env, "SPARK_WORKER_DIR": str(work_dir)},
            )
        while True:
            self._deadline_passed(deadline, f"waiting for {len(worker_ports)} workers to register")
            try:
                if self.status().get("aliveworkers") == len(worker_ports):
                    return
            except (URLError, OSError, ValueError):
                pass  # the web UI is not up yet
            time.sleep(0.5)

    def status(self) -> dict[str, Any]:
        with urlopen(f"http://127.0.0.1:{self.web_port}/json/", timeout=5) as response:
            result: dict[str, Any] = json.load(response)
        return result

    def stop(self) -> None:
        """SIGTERM every daemon's group, SIGKILL what is left after a grace period; raise if any survive."""
        for d in reversed(self.daemons):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(d.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        survivors = {}
        for d in self.daemons:
            with contextlib.suppress(subprocess.TimeoutExpired):
                d.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            left = kill_group(d.proc.pid)  # the daemon if it ignored SIGTERM, executors, Python workers
            with contextlib.suppress(subprocess.TimeoutExpired):
                d.proc.wait(timeout=5)
            d.log.close()
            if left:
                survivors[d.name] = left
        if survivors:
            raise RuntimeError(f"cluster processes survived SIGKILL: {survivors}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    root = tmp_path_factory.mktemp("spark-cluster")
    port, web_port, *worker_ports = free_ports(2 + 2 * WORKERS)
    cluster = Cluster(root, spark_env(root), port, web_port)
    try:
        cluster.start(list(zip(worker_ports[::2], worker_ports[1::2], strict=True)))
        yield cluster
    finally:
        cluster.stop()


# Runs `hudi-meta ingest` once per argument list, in order, in one process: the first ingest starts the
# Spark session (one driver JVM, one application), the others reuse it (`getOrCreate`).
INGEST_RUNNER = """
import json, sys
from hudi_meta.cli.main import main
for argv in json.loads(sys.argv[1]):
    if code := main(argv):
        sys.exit(code)
"""


def ingest_all(table: Path, batches: list[Path], master: str, env: dict[str, str], check: Callable[[], None]) -> None:
    """`hudi-meta ingest` of every batch file into `table` (upserts or deletes, created by the first) on
    `master`, in a subprocess running the CLI entry point: no second SparkContext in this process.
    `check` runs every second meanwhile; what it raises stops the subprocess.

    One driver process (and Spark application) for all batches, not one per batch: a driver JVM's start
    and first write cost about 25-35 s of CPU (on the cluster plus two executor JVMs), later writes a few
    seconds; with a process per ingest this module took 2.5 min of CPU, 7 min on a busy 2-core machine."""
    runs = []
    for n, batch in enumerate(batches):
        argv = ["ingest", str(table), "--input", str(batch), "--spark-master", master]
        argv += ["--record-key", "event_id", "--ordering-field", "ts", "--event-time-field", "ts"]
        argv += ["--partition-field", "region"]
        argv += ["--operation", "delete" if batch.stem.endswith("-deletes") else "upsert"]
        runs.append(argv + (["--create", "--buckets", "2"] if n == 0 else []))
    started = time.monotonic()
    failure: BaseException | None = None
    with subprocess.Popen(
        [sys.executable, "-c", INGEST_RUNNER, json.dumps(runs)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    ) as proc:
        try:
            while True:
                try:
                    out, err = proc.communicate(timeout=1.0)  # retrying loses no output
                    break
                except subprocess.TimeoutExpired:
                    check()
                    if time.monotonic() - started > INGEST_TIMEOUT_S:
                        raise TimeoutError(f"timed out after {INGEST_TIMEOUT_S:.0f} s") from None
        except BaseException as e:
            failure = e
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        finally:
            # the driver JVM outlives the Python driver by a moment (it ends the application)
            left = kill_group(proc.pid, grace_s=30.0)
    if isinstance(failure, Exception):
        raise AssertionError(f"ingest on {master} stopped: {failure}\n{out}\n{err}") from failure
    if failure:
        raise failure
    assert not left, f"ingest on {master} left processes {left}"
    assert proc.returncode == 0, f"ingest on {master} failed ({proc.returncode})\n{out}\n{err}"
    committed = out.splitlines()
    assert len(committed) == len(batches), out
    assert all(line.startswith("committed deltacommit ") for line in committed), out
    print(f"{len(batches)} ingests on {master}: {time.monotonic() - started:.1f} s")


def layout(path: Path) -> list[tuple[str, str, str]]:
    """Each data file as (partition, bucket, base or log.<version>): file ids and instants differ per table."""
    files = []
    for f in path.rglob("*"):
        rel = f.relative_to(path)
        if rel.parts[0] == ".hoodie" or f.name == ".hoodie_partition_metadata" or not f.is_file():
            continue
        if ".log." in f.name:
            log = LogFileName.parse(f.name)
            files.append((str(rel.parent), log.file_id[:8], f"log.{log.version}"))
        else:
            files.append((str(rel.parent), BaseFileName.parse(f.name).file_id[:8], "base"))
    return sorted(files)


@pytest.mark.slow
def test_cluster_ingest_equals_local(cluster: Cluster, tmp_path: Path) -> None:
    batches = write_batches(SPEC, tmp_path / "input", "jsonl")  # per batch: upserts, then deletes
    assert any(b.stem.endswith("-deletes") for b in batches)
    model = Model()
    for n, batch in enumerate(generate(SPEC)):
        model.upsert(f"{n}a", batch.upserts)
        model.delete(f"{n}b", batch.deletes.column("event_id").to_pylist())

    on_cluster, on_local = tmp_path / "on_cluster", tmp_path / "on_local"
    abort = threading.Event()

    def unless_aborted() -> None:
        if abort.is_set():
            raise RuntimeError("the cluster run failed")

    with ThreadPoolExecutor(1) as pool:  # the local[2] run overlaps the cluster run
        local_run = pool.submit(ingest_all, on_local, batches, "local[2]", cluster.env, unless_aborted)
        try:
            ingest_all(on_cluster, batches, cluster.url, cluster.env, lambda: cluster.check_alive("ingesting"))
        except BaseException:
            abort.set()
            raise
        local_run.result()

    a, b = HudiTable.open(str(on_cluster)), HudiTable.open(str(on_local))
    snapshot = rows_of(a.read("snapshot"))
    assert snapshot == rows_of(b.read("snapshot"))
    assert snapshot == model.rows()
    ro = rows_of(a.read("ro"))
    assert ro == rows_of(b.read("ro"))
    assert ro  # the first write into each bucket wrote a base file
    actions = [i.action for i in a.timeline.completed()]
    assert actions == [i.action for i in b.timeline.completed()] == [Action.DELTA_COMMIT] * len(batches)
    assert layout(on_cluster) == layout(on_local)

    # the cluster did the work: a finished application with an executor on each worker
    apps = cluster.status()["completedapps"]
    assert [(app["name"], app["state"]) for app in apps] == [("hudi-meta", "FINISHED")], apps
    for work_dir in cluster.worker_dirs:
        app_dirs = [d.name for d in work_dir.glob("app-*")]
        assert app_dirs == [apps[0]["id"]], (work_dir, app_dirs)
        assert any((work_dir / app_dirs[0]).iterdir())  # the executor's folder


@pytest.mark.slow
def test_spark_submit_runs_a_compaction_on_the_cluster(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service's `spark-submit` runner submits `hudi_meta.spark.submit` to the standalone master: the plan
    completes on the cluster's executors, the snapshot is unchanged (ours and hudi-rs) and RO holds every record
    at or before T."""
    from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
    from hudi_meta.index.db import make_engine
    from hudi_meta.index.migrate import upgrade
    from hudi_meta.service.runner import SubmitRunner
    from tests.compaction.core import CoreTable, at, hudi_rs_read, rows

    entry = subprocess.run(
        [sys.executable, "-m", "hudi_meta.spark.submit", "--path"], capture_output=True, text=True, check=True
    )
    assert Path(entry.stdout.strip()).name == "submit.py" and Path(entry.stdout.strip()).is_file()

    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0)))
    t.write(rows(("a", 3, 2.0), ("c", 4, 1.0)))
    t.write(rows(("d", 500, 1.0)))  # after T: linked
    before = t.read("snapshot")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    engine = make_engine(url)
    scheduled = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(10)))
    engine.dispose()
    assert scheduled.instant is not None
    for key in ("SPARK_HOME", "SPARK_CONF_DIR", "SPARK_LOCAL_IP", "SPARK_LOCAL_DIRS", "JAVA_TOOL_OPTIONS"):
        monkeypatch.setenv(key, cluster.env[key])
    phases: list[str] = []
    runner = SubmitRunner(cluster.url, ["--conf", "spark.executor.cores=1"], str(SPARK_HOME / "bin" / "spark-submit"))
    runner.run(t.table, scheduled.instant, phases.append)
    assert phases == ["running"]
    table = HudiTable.open(t.path)
    assert not table.timeline.pending_compactions()
    assert t.read("snapshot") == before == hudi_rs_read(t.path, "snapshot")
    ro = t.read("ro")
    assert {k for k, (ts, _) in before.items() if ts <= 10} <= ro.keys() and ro == hudi_rs_read(t.path, "ro")
    wanted = (f"hudi-meta compaction {scheduled.instant}", "FINISHED")
    deadline = time.monotonic() + 60
    while True:  # the master lists the application as completed once its driver has gone
        status = cluster.status()
        names = [(app["name"], app["state"]) for app in status["completedapps"]]
        if wanted in names or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert wanted in names, (status, runner.last_output[-3000:])
    app = next(a for a in status["completedapps"] if a["name"] == wanted[0])
    assert any((work_dir / app["id"]).is_dir() for work_dir in cluster.worker_dirs)  # executors on the workers
