"""`hudi-meta clean`: Hudi's policy names and ours, the dry run writes nothing to the table, JSON rows, and bad
input (not a table, an unknown policy, a negative retention, a table it must not clean) is one line on stderr,
exit 2, nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudi_meta.write.writer import create_table
from tests.cli.helpers import TRIPS, cli, cli_in_process, store_dump, tree
from tests.conftest import table_zips


@pytest.fixture
def trips(fixture_table: Any, tmp_path: Path) -> Path:
    return Path(shutil.copytree(fixture_table(TRIPS), tmp_path / "trips"))


@pytest.fixture
def store(tmp_path: Path) -> str:
    db = str(tmp_path / "store.db")
    assert cli_in_process("--db", db, "init-db").code == 0
    return db


def test_dry_run_prints_the_plan_and_writes_nothing_to_the_table(trips: Path, store: str) -> None:
    before = tree(trips)
    out = cli_in_process("--db", store, "clean", str(trips), "--policy", "KEEP_LATEST_FILE_VERSIONS", "--retained", "1")
    assert out.code == 0, out.stderr
    assert out.stdout.startswith("clean plan (dry run): KEEP_LATEST_FILE_VERSIONS, 1 file versions retained")
    assert "nothing to clean" in out.stdout  # one slice per file group: nothing goes
    assert tree(trips) == before
    js = cli_in_process(
        "--db", store, "clean", str(trips), "--policy", "keep_latest_by_hours", "--hours", "1", "--json"
    )
    assert js.code == 0 and json.loads(js.stdout) == []
    assert tree(trips) == before


def test_policy_spellings(trips: Path, store: str) -> None:
    for spelling in ("KEEP_LATEST_COMMITS", "keep-latest-commits", "keep_latest_commits", "Keep_Latest_Commits"):
        out = cli_in_process("--db", store, "clean", str(trips), "--policy", spelling)
        assert out.code == 0 and "KEEP_LATEST_COMMITS, 10 commits retained" in out.stdout, (spelling, out.stderr)
    props = trips / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "hoodie.clean.policy=KEEP_LATEST_BY_HOURS\nhoodie.clean.hours.retained=5\n")
    out = cli_in_process("--db", store, "clean", str(trips))
    assert out.code == 0 and "KEEP_LATEST_BY_HOURS, 5 hours retained" in out.stdout, out.stderr
    out = cli_in_process("--db", store, "clean", str(trips), "--hours", "7")
    assert out.code == 0 and "KEEP_LATEST_BY_HOURS, 7 hours retained" in out.stdout, out.stderr


def metadata_table(tmp_path: Path) -> Path:
    """A table whose properties name a metadata table that storage does not hold: refused, not trusted."""
    path = tmp_path / "mdt"
    create_table(str(path), "mdt", ["id"], "ts", extra_props={"hoodie.table.metadata.partitions": "files"})
    return path


def v9(fixture_table: Any, tmp_path: Path) -> Path:
    archive = next(a for a in table_zips() if a.stem == "v9_txns_simple_nometa")
    return Path(shutil.copytree(fixture_table(archive), tmp_path / "v9"))


@pytest.mark.parametrize(
    ("case", "args", "message"),
    [
        ("not a table", ["{missing}"], "no such table path"),
        ("not a table", ["{folder}"], "not a Hudi table"),
        (
            "unknown policy",
            ["{trips}", "--policy", "KEEP_EVERYTHING"],
            "argument --policy: expected one of keep-latest-commits, keep-latest-file-versions, keep-latest-by-hours",
        ),
        ("negative retained", ["{trips}", "--retained", "-1"], "argument --retained: expected a whole number from 0"),
        ("negative hours", ["{trips}", "--policy", "keep-latest-by-hours", "--hours", "-2"], "argument --hours: "),
        ("hours for commits", ["{trips}", "--hours", "3"], "--hours is for KEEP_LATEST_BY_HOURS"),
        ("retained for hours", ["{trips}", "--policy", "keep-latest-by-hours", "--retained", "3"], "--hours H"),
        ("not a number", ["{trips}", "--retained", "ten"], "got 'ten'"),
        ("bad property", ["{bad_props}"], "hoodie.clean.commits.retained='many' in hoodie.properties"),
        ("metadata table not on storage", ["{mdt}", "--execute"], "(hoodie.table.metadata.partitions=files), but"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(
    case: str, args: list[str], message: str, trips: Path, store: str, tmp_path: Path, fixture_table: Any
) -> None:
    bad_props = Path(shutil.copytree(trips, tmp_path / "bad"))
    props = bad_props / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "hoodie.clean.commits.retained=many\n")
    (tmp_path / "folder").mkdir()
    paths = {
        "missing": tmp_path / "missing",
        "folder": tmp_path / "folder",
        "trips": trips,
        "bad_props": bad_props,
        "mdt": metadata_table(tmp_path),
    }
    argv = [a.format(**paths) for a in args]
    target = Path(argv[0])
    before = tree(target) if target.exists() else None
    dump = store_dump(store)
    out = cli_in_process("--db", store, "clean", *argv, "--execute") if "--execute" not in argv else None
    out = out or cli_in_process("--db", store, "clean", *argv)
    assert out.code == 2, (case, out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], (case, out.stderr)
    assert out.stdout == ""
    if before is not None:
        assert tree(target) == before
    assert store_dump(store) == dump


def test_a_java_written_version_9_table_is_cleaned_and_reads_the_same(
    store: str, tmp_path: Path, fixture_table: Any
) -> None:
    """Java's v9 table (a compaction and a clustering in its timeline): `clean --retained 1 --execute` deletes the
    replaced and superseded files, every read is unchanged (ours and hudi-rs), and the clean instant is written in
    timeline layout 2 (docs/hudi-1x.md section 5)."""
    table = v9(fixture_table, tmp_path)
    before = rs_keys(table)
    assert before
    out = cli_in_process("--db", store, "clean", str(table), "--retained", "1", "--execute", "--json")
    assert out.code == 0, out.stderr
    deleted = [r for r in json.loads(out.stdout) if r["done"]]
    assert deleted
    assert not any((table / r["path"]).exists() for r in deleted)
    assert rs_keys(table) == before
    ours = cli_in_process("read", str(table))
    assert sorted(json.loads(line)["txn_id"] for line in ours.stdout.splitlines()) == before
    timeline = table / ".hoodie" / "timeline"
    (done,) = [p.name for p in timeline.iterdir() if p.name.endswith(".clean")]
    requested = done.split("_")[0]
    assert (timeline / f"{requested}.clean.inflight").read_bytes() == b""
    assert (timeline / f"{requested}.clean.requested").stat().st_size > 0


def rs_keys(path: Path) -> list[str]:
    from hudi import HudiReadOptions
    from hudi import HudiTable as RsTable

    return sorted(pa.Table.from_batches(RsTable(str(path)).read(HudiReadOptions())).column("txn_id").to_pylist())


def test_not_a_table_creates_no_store(tmp_path: Path) -> None:
    db = tmp_path / "never.db"
    out = cli("--db", str(db), "clean", str(tmp_path / "missing"), "--execute")
    assert out.returncode == 2 and out.stderr.startswith("hudi-meta: error: no such table path")
    assert len(out.stderr.strip().splitlines()) == 1 and not db.exists()
