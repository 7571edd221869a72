"""How the service runs a compaction: in this process without Spark (`local`), on a SparkSession in this
process (`spark`: local[N] or a standalone master), or as a `spark-submit` of `hudi_meta.spark.submit`
(`spark-submit`: any cluster spark-submit reaches, YARN and Kubernetes included).

Each runner can be told to stop: the local one stops between tasks, the Spark one cancels its jobs, the
spark-submit one terminates the submission. The plan then stays pending (a compaction run is idempotent and
crash-safe), and the next run, in this process or after a restart, finishes it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from hudi_meta.compaction.run import run_compaction
from hudi_meta.errors import Abandoned, HudiMetaError
from hudi_meta.format.table_service_metadata import CompactionOperation
from hudi_meta.service.config import SparkSettings
from hudi_meta.table.table import HudiTable

Phase = Callable[[str], None]


class CompactionRunner(Protocol):
    def run(self, table: HudiTable, instant: str, on_phase: Phase) -> None: ...

    def stop(self) -> None: ...

    def close(self) -> None: ...


class LocalRunner:
    """Tasks one after another in this process; a stop is seen between two tasks."""

    def __init__(self) -> None:
        self.stopping = threading.Event()

    def run(self, table: HudiTable, instant: str, on_phase: Phase) -> None:
        def tasks(
            task: Callable[[CompactionOperation], dict[str, Any]], ops: Sequence[CompactionOperation]
        ) -> list[Any]:
            results = []
            for op in ops:
                if self.stopping.is_set():
                    raise Abandoned(f"compaction {instant} left pending: the service is stopping")
                results.append(task(op))
            return results

        run_compaction(table, instant, tasks, on_phase)

    def stop(self) -> None:
        self.stopping.set()

    def close(self) -> None:
        pass


class SparkRunner:
    """One SparkSession for the service's life (started on first use); a stop cancels the running jobs."""

    def __init__(self, master: str) -> None:
        self.master = master
        self.session: Any = None
        self.stopping = threading.Event()

    def run(self, table: HudiTable, instant: str, on_phase: Phase) -> None:
        from hudi_meta.spark.compaction import run
        from hudi_meta.spark.session import spark_session

        if self.session is None:
            self.session = spark_session(self.master, "hudi-meta service")
        if self.stopping.is_set():
            raise Abandoned(f"compaction {instant} left pending: the service is stopping")
        try:
            run(self.session, table, instant, on_phase)
        except Exception as e:
            if self.stopping.is_set():
                raise Abandoned(f"compaction {instant} left pending: the service is stopping") from e
            raise

    def stop(self) -> None:
        self.stopping.set()
        if self.session is not None:
            self.session.sparkContext.cancelAllJobs()

    def close(self) -> None:
        if self.session is not None:
            self.session.stop()


class SubmitRunner:
    """`spark-submit [args] hudi_meta/spark/submit.py compact TABLE --instant C`; a stop terminates it."""

    def __init__(self, master: str, args: Sequence[str], spark_submit: str | None = None) -> None:
        self.master, self.args = master, list(args)
        self.spark_submit = spark_submit or _spark_submit()
        self.process: subprocess.Popen[str] | None = None
        self.stopping = threading.Event()
        self.last_output = ""  # the last submission's stdout and stderr

    def command(self, table: HudiTable, instant: str) -> list[str]:
        from hudi_meta.spark import submit

        entry = submit.__file__
        return [self.spark_submit, "--master", self.master, *self.args, entry, "compact", table.base_path,
                "--instant", instant]  # fmt: skip

    def run(self, table: HudiTable, instant: str, on_phase: Phase) -> None:
        if self.stopping.is_set():
            raise Abandoned(f"compaction {instant} left pending: the service is stopping")
        on_phase("running")
        env = {**os.environ, "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable)}
        self.process = subprocess.Popen(
            self.command(table, instant), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        out, err = self.process.communicate()
        code, self.process = self.process.returncode, None
        self.last_output = out + err
        if self.stopping.is_set() and code != 0:
            raise Abandoned(f"compaction {instant} left pending: the service is stopping")
        if code != 0:
            lines = [line for line in err.splitlines() if line.startswith("hudi-meta: error:")] or err.splitlines()
            raise HudiMetaError(f"spark-submit of compaction {instant} failed ({code}): {(lines or ['?'])[-1]}")

    def stop(self) -> None:
        self.stopping.set()
        if self.process is not None:
            self.process.terminate()

    def close(self) -> None:
        pass


def _spark_submit() -> str:
    """spark-submit of the pyspark this process imports (its `bin/`), else the one on PATH."""
    try:
        import pyspark

        path = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
        if os.path.exists(path):
            return path
    except ImportError:
        pass
    return "spark-submit"


def make_runner(settings: SparkSettings) -> CompactionRunner:
    if settings.engine == "local":
        return LocalRunner()
    if settings.engine == "spark":
        return SparkRunner(settings.master)
    return SubmitRunner(settings.master, settings.submit_args)
