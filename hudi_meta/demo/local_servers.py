"""A real Hive metastore (Hive 2.3 on embedded Derby) and Spark's HiveServer2, started from the jars pyspark
ships, each in its own directory on a free loopback port: for the tests, the sync benchmark and the quickstart.

They are the servers users sync to, not fakes (docs/testing.md says how the tests use them).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from hudi_meta.errors import HudiMetaError

HIVE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>javax.jdo.option.ConnectionURL</name>
    <value>jdbc:derby:;databaseName={db};create=true</value></property>
  <property><name>javax.jdo.option.ConnectionDriverName</name>
    <value>org.apache.derby.jdbc.EmbeddedDriver</value></property>
  <property><name>datanucleus.schema.autoCreateAll</name><value>true</value></property>
  <property><name>hive.metastore.schema.verification</name><value>false</value></property>
  <property><name>hive.metastore.warehouse.dir</name><value>file://{warehouse}</value></property>
  <property><name>hive.async.log.enabled</name><value>false</value></property>
</configuration>
"""


def pyspark_home() -> Path:
    try:
        import pyspark
    except ImportError as e:
        raise HudiMetaError("the local metastore needs pyspark's jars: pip install 'hudi-meta[spark]'") from e
    return Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise HudiMetaError(f"the server exited with code {process.returncode} before it listened: {tail}")
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    process.kill()
    raise HudiMetaError(f"no server listened on 127.0.0.1:{port} within {timeout_s:.0f} s (log: {log})")


@dataclass
class LocalServer:
    """A server process in `work` listening on 127.0.0.1:`port`; `kill()` is a kill -9, `start()` restarts it
    on the same port and data."""

    work: Path
    port: int
    command: list[str]
    env: dict[str, str]
    timeout_s: float
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def log(self) -> Path:
        return self.work / "server.log"

    def start(self) -> LocalServer:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                self.command, cwd=self.work, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        wait_for_port(self.port, self.process, self.log, self.timeout_s)
        return self

    def kill(self) -> None:
        """SIGKILL to the whole process group (spark-submit starts a JVM below a shell)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None


def metastore(work: Path, port: int | None = None, timeout_s: float = 120) -> LocalServer:
    """A Hive 2.3 metastore on Derby in `work` (not started): `thrift://127.0.0.1:<port>`."""
    work.mkdir(parents=True, exist_ok=True)
    conf = work / "conf"
    conf.mkdir(exist_ok=True)
    (conf / "hive-site.xml").write_text(HIVE_SITE.format(db=work / "metastore_db", warehouse=work / "warehouse"))
    port = port or free_port()
    java = shutil.which("java") or "java"
    command = [
        java,
        "-Xmx384m",
        f"-Dhive.log.dir={work / 'logs'}",
        f"-Dderby.system.home={work}",
        "-cp",
        f"{conf}:{pyspark_home() / 'jars'}/*",
        "org.apache.hadoop.hive.metastore.HiveMetaStore",
        "-p",
        str(port),
    ]
    return LocalServer(work, port, command, dict(os.environ), timeout_s)


def hiveserver2(
    work: Path, metastore_uri: str, port: int | None = None, timeout_s: float = 180, class_path: str | None = None
) -> LocalServer:
    """Spark's HiveThriftServer2 (NOSASL) in `work` on the metastore at `metastore_uri` (not started).
    `class_path`: jars for the driver's class path (Hudi's input formats, which DDL on Hudi tables loads)."""
    work.mkdir(parents=True, exist_ok=True)
    home = pyspark_home()
    port = port or free_port()
    scratch = work / "scratch"
    command = [
        str(home / "bin" / "spark-submit"),
        "--master",
        "local[1]",
        "--driver-memory",
        "512m",
        *(["--driver-class-path", class_path] if class_path else []),
        "--class",
        "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        f"spark.hadoop.hive.metastore.uris={metastore_uri}",
        "--conf",
        f"spark.sql.warehouse.dir={work / 'warehouse'}",
        "--conf",
        f"spark.driver.extraJavaOptions=-Dderby.system.home={work}",
        "--hiveconf",
        f"hive.server2.thrift.port={port}",
        "--hiveconf",
        "hive.server2.thrift.bind.host=127.0.0.1",
        "--hiveconf",
        "hive.server2.authentication=NOSASL",
        "--hiveconf",
        f"hive.exec.local.scratchdir={scratch}",
        "--hiveconf",
        f"hive.downloaded.resources.dir={scratch}/resources",
        "spark-internal",
    ]
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOG_DIR": str(work / "logs")}
    return LocalServer(work, port, command, env, timeout_s)
