"""`hudi-meta sync` as a user runs it: one line on stdout per change, and one error line with exit 2 for bad
input or a catalog that cannot be reached."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from sqlalchemy import Engine

from hudi_meta.demo.local_servers import free_port
from tests.cli.helpers import cli
from tests.compaction.core import CoreTable, rows
from tests.sync.helpers import compacted_table, raw_table


@pytest.mark.slow
def test_sync_prints_what_it_did_then_that_nothing_changed(engine: Engine, tmp_path: Path, metastore_uri: str) -> None:
    t, instant = compacted_table(tmp_path / "t", engine)
    db = "cli_" + uuid.uuid4().hex[:10]
    args = ["--db", str(engine.url), "sync", t.path, "--mode", "hms", "--uri", metastore_uri, "--database", db]
    dry = cli(*args, "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)[0]["dry_run"] is True
    first = cli(*args, "--table", "events")
    assert first.returncode == 0, first.stderr
    assert f"did create_table {db}.events_ro" in first.stdout
    assert raw_table(metastore_uri, db, "events_rt").parameters["hoodie.ro.event.time.compaction.instant"] == instant
    second = cli(*args, "--table", "events")
    assert second.returncode == 0
    assert second.stdout.strip() == f"{db}.events_ro, {db}.events_rt: up to date (nothing written)"


@pytest.mark.slow
def test_hive_sync_tools_layout_options(engine: Engine, tmp_path: Path, metastore_uri: str) -> None:
    """`--skip-ro-suffix` registers the read-optimized view as NAME (HiveSyncTool's skip_ro_suffix); a later sync
    without it finds that layout and publishes there, creating no NAME_ro; `--sync-strategy RT` (Hudi's spelling)
    registers the snapshot view alone as NAME."""
    t, instant = compacted_table(tmp_path / "t", engine)
    db = "cli_" + uuid.uuid4().hex[:10]
    args = ["--db", str(engine.url), "sync", t.path, "--mode", "hms", "--uri", metastore_uri, "--database", db]
    first = cli(*args, "--table", "events", "--skip-ro-suffix")
    assert first.returncode == 0, first.stderr
    assert {f"did create_table {db}.events", f"did create_table {db}.events_rt"} <= set(first.stdout.splitlines())
    ro = raw_table(metastore_uri, db, "events")
    assert ro.sd.inputFormat == "org.apache.hudi.hadoop.HoodieParquetInputFormat"
    assert ro.parameters["hoodie.ro.event.time.compaction.instant"] == instant
    again = cli(*args, "--table", "events")
    assert (
        again.returncode == 0 and again.stdout.strip() == f"{db}.events, {db}.events_rt: up to date (nothing written)"
    )
    rt = cli(*args, "--table", "snap", "--sync-strategy", "RT")
    assert rt.returncode == 0, rt.stderr
    assert raw_table(metastore_uri, db, "snap").sd.inputFormat.endswith("HoodieParquetRealtimeInputFormat")
    with pytest.raises(Exception, match="NoSuchObject|not exist"):
        raw_table(metastore_uri, db, "events_ro")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--mode", "glue", "--uri", "x:1"], "invalid choice: 'glue'"),
        (["--mode", "hms", "--uri", "http://127.0.0.1:9083"], "--uri 'http://127.0.0.1:9083': expected [thrift://]"),
        (["--mode", "hms", "--uri", "thrift://127.0.0.1:99999"], "a port from 1 to 65535"),
        (["--mode", "hms", "--uri", "thrift://127.0.0.1:1", "--database", "a;b"], "argument --database: use letters"),
        (["--mode", "hms", "--uri", "thrift://127.0.0.1:1", "--timeout", "0"], "expected seconds from 0.001 to 3600"),
        (["--mode", "hms", "--uri", "thrift://127.0.0.1:1", "--sync-strategy", "both"], "invalid choice: 'both'"),
    ],
)
def test_bad_arguments_get_one_line(engine: Engine, tmp_path: Path, extra: list[str], message: str) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    out = cli("--db", str(engine.url), "sync", t.path, *extra)
    assert out.returncode == 2 and message in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_an_unreachable_metastore_gets_retries_then_one_line(engine: Engine, tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    uri = f"thrift://127.0.0.1:{free_port()}"
    out = cli("--db", str(engine.url), "sync", t.path, "--mode", "hms", "--uri", uri, "--timeout", "1")
    assert out.returncode == 4  # not the usage error's 2: run it again later
    port = uri.rsplit(":", 1)[1]
    assert out.stderr.strip().splitlines() == [
        f"hudi-meta: error: catalog {uri} unavailable after 5 attempts: cannot connect to 127.0.0.1:{port}: "
        f"Could not connect to any of [('127.0.0.1', {port})]"
    ]


def test_a_missing_table_or_a_copy_on_write_table_is_refused(engine: Engine, tmp_path: Path) -> None:
    out = cli("--db", str(engine.url), "sync", str(tmp_path / "nope"), "--mode", "hms", "--uri", "thrift://x:1")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_a_missing_hive_extra_is_one_line_naming_the_install(engine: Engine, tmp_path: Path) -> None:
    """pymetastore absent (its import fails as when it is not installed): refused in one line."""
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    args = ["--db", str(engine.url), "sync", t.path, "--mode", "hms", "--uri", "thrift://127.0.0.1:1"]
    program = (
        "import sys; sys.modules['pymetastore'] = None\n"
        "from hudi_meta.cli.main import main\n"
        f"sys.exit(main({args!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.strip().splitlines() == [
        "hudi-meta: error: sync --mode hms needs the hive extra (pymetastore is missing): pip install 'hudi-meta[hive]'"
    ]
