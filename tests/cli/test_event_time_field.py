"""Issue 36 item 8: `--event-time-field` naming no column of the table was taken (`index` exited 0, every block
"resolved" with no event time, every schedule then found nothing to compact). Wherever a field is given (`index`,
`register`, the Python API, the service configuration) it is now refused in one line naming the closest column,
exit 2, before a store is created or changed. Tables: Java-written fixtures of versions 6 and 9."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import hudi_meta
from hudi_meta.errors import BadValueError
from tests.cli.helpers import cli, cli_in_process, tree
from tests.conftest import table_id, table_zips


def copied(name: str, fixture_table: Any, tmp_path: Path) -> Path:
    archive = next(a for a in table_zips() if table_id(a).endswith(name))
    return Path(shutil.copytree(fixture_table(archive), tmp_path / name.rsplit("/", 1)[-1]))


@pytest.mark.parametrize(
    ("name", "field", "closest"),
    [
        ("quickstart_trips_table/mor/avro/v6_trips_8i1u", "tss", "ts"),
        ("mor/avro/v9_txns_simple_meta", "txn_tss", "txn_ts"),
    ],
)
@pytest.mark.parametrize("command", ["index", "register"])
def test_a_field_that_is_no_column_creates_no_store(
    command: str, name: str, field: str, closest: str, fixture_table: Any, tmp_path: Path
) -> None:
    table = copied(name, fixture_table, tmp_path)
    db = tmp_path / "hudi-meta.db"  # in a folder that exists: a store could be created there
    before = tree(table)
    out = cli_in_process("--db", str(db), command, str(table), "--event-time-field", field)
    assert out.code == 2 and out.stdout == ""
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("hudi-meta: error: ") and f"event-time field {field!r}" in line
    assert line.endswith(f"did you mean {closest!r}?"), line
    assert not db.exists()
    assert tree(table) == before


def test_an_existing_store_is_left_byte_for_byte(fixture_table: Any, tmp_path: Path) -> None:
    table = copied("v6_trips_8i1u", fixture_table, tmp_path)
    folder = tmp_path / "store"
    folder.mkdir()
    db = folder / "hudi-meta.db"
    assert cli_in_process("--db", str(db), "index", str(table), "--event-time-field", "ts").code == 0
    files = {p.name: p.read_bytes() for p in folder.iterdir()}
    for args in (
        ["index", str(table), "--event-time-field", "tss"],
        ["register", str(table), "--event-time-field", "TS"],
    ):
        out = cli_in_process("--db", str(db), *args)
        assert out.code == 2 and "did you mean 'ts'?" in out.stderr, out.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == files
    shown = cli_in_process("--db", str(db), "show", "blocks", str(table), "--json")
    assert '"record_scan"' in shown.stdout  # the blocks keep the times `ts` gave them


def test_a_nested_field_is_refused(fixture_table: Any, tmp_path: Path) -> None:
    table = copied("sample_table/mor/parquet/v6_nonpartitioned", fixture_table, tmp_path)
    out = cli("--db", str(tmp_path / "s.db"), "index", str(table), "--event-time-field", "structField.field2")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "nested in record 'structField'" in out.stderr and not (tmp_path / "s.db").exists()


def test_the_api_refuses_before_it_opens_the_store(fixture_table: Any, tmp_path: Path) -> None:
    table = copied("v6_trips_8i1u", fixture_table, tmp_path)
    db = tmp_path / "api.db"
    with (
        hudi_meta.open_table(str(table), store=f"sqlite:///{db}") as opened,
        pytest.raises(BadValueError, match="did you mean 'ts'"),
    ):
        opened.index(event_time_field="tss")
    assert not db.exists()


def test_the_service_configuration_refuses_it_naming_the_key(fixture_table: Any, tmp_path: Path) -> None:
    table = copied("v6_trips_8i1u", fixture_table, tmp_path)
    config = tmp_path / "hudi-meta.toml"
    config.write_text(f'[[tables]]\npath = "{table}"\ndata_latency = "1h"\nsync = false\nevent_time_field = "tss"\n')
    out = cli_in_process("config", "check", str(config))
    assert out.code == 2, out.stdout
    (line,) = out.stderr.strip().splitlines()
    assert "tables[0].event_time_field: event-time field 'tss'" in line and "did you mean 'ts'?" in line
    config.write_text(config.read_text().replace('"tss"', '"ts"'))
    assert cli_in_process("config", "check", str(config)).code == 0
