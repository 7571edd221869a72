"""Spark's Thrift server (HiveServer2) for the sync tests, once per run, on the session's Hive metastore
(tests/conftest.py), from the pyspark jars in its own temp dir on a free port.

Spark's Thrift server resolves a table's input format class for DDL; Hudi's hadoop-mr jar is not on PyPI, so a
jar of two empty subclasses named like Hudi's input formats (tests/sync/shim) is compiled and put on its class
path. The tests register and alter tables through it; they never read data through it.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from hudi_meta.demo.local_servers import LocalServer, hiveserver2, pyspark_home

SHIM_SOURCES = Path(__file__).parent / "shim"


def build_shim_jar(out: Path) -> Path:
    classes = out / "classes"
    sources = [str(p) for p in SHIM_SOURCES.rglob("*.java")]
    jars = f"{pyspark_home() / 'jars'}/*"
    subprocess.run(["javac", "-nowarn", "-cp", jars, "-d", str(classes), *sources], check=True, capture_output=True)
    jar = out / "hudi-input-format-shim.jar"
    subprocess.run(["jar", "cf", str(jar), "-C", str(classes), "org"], check=True, capture_output=True)
    return jar


@pytest.fixture(scope="session")
def hiveserver2_server(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str) -> Iterator[LocalServer]:
    if shutil.which("javac") is None:
        pytest.fail("javac (a JDK) is needed to build the input-format shim for Spark's Thrift server")
    work = tmp_path_factory.mktemp("hiveserver2")
    server = hiveserver2(work, metastore_uri, class_path=str(build_shim_jar(work))).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def hiveserver2_uri(hiveserver2_server: LocalServer) -> str:
    return f"127.0.0.1:{hiveserver2_server.port}"
