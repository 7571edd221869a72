"""Issue 25 item 4: every command refuses a table whose `hoodie.properties` lacks a required key or holds a value
Hudi does not define: exit 2, one line naming the key and the file, and nothing written (no file under the table,
no row in the store). An empty file was read as a COPY_ON_WRITE table: `read` skipped the log and answered fare
33.9 for a record updated to 25.0, with exit 0."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import cli_in_process, store_dump, tree
from tests.conftest import table_id, table_zips

TRIPS_8I1U = next(a for a in table_zips() if table_id(a).endswith("v6_trips_8i1u"))  # MOR v6, one updating log
UPDATED = "9909a8b1-2d15-4d3d-8ec9-efc48c536a00"  # fare 33.9 in its base file, 25.0 after the log's update


def replaced(key: str, value: str) -> Callable[[str], str]:
    return lambda text: "".join(
        f"{key}={value}\n" if line.startswith(f"{key}=") else line for line in text.splitlines(keepends=True)
    )


def without(key: str) -> Callable[[str], str]:
    return lambda text: "".join(line for line in text.splitlines(keepends=True) if not line.startswith(f"{key}="))


DAMAGE: dict[str, tuple[Callable[[str], str], str]] = {  # how the file is damaged, and the key the error names
    "empty": (lambda text: "", "hoodie.table.name"),
    "truncated": (lambda text: text[: len(text) // 2], "hoodie.table.name"),  # cut inside the schema
    "no table type": (without("hoodie.table.type"), "hoodie.table.type"),
    "table type FOO": (replaced("hoodie.table.type", "FOO"), "hoodie.table.type"),
    "table version 99": (replaced("hoodie.table.version", "99"), "hoodie.table.version"),
    "table version abc": (replaced("hoodie.table.version", "abc"), "hoodie.table.version"),
    "timeline layout 3": (replaced("hoodie.timeline.layout.version", "3"), "hoodie.timeline.layout.version"),
    "wrong checksum": (replaced("hoodie.table.checksum", "42"), "hoodie.table.checksum"),
}
COMMANDS = [
    ["read", "{t}"],
    ["check", "{t}"],
    ["index", "{t}"],
    ["register", "{t}"],
    ["compaction", "schedule", "{t}", "--threshold", "2025-03-31T03:00:00Z"],
    ["compaction", "run", "{t}", "--engine", "local"],
    ["clean", "{t}", "--execute"],
    ["rollback", "{t}", "20250331030642808"],
    ["freshness", "{t}"],
    ["metrics", "{t}"],
    ["show", "timeline", "{t}", "--from-files"],
    ["sync", "{t}", "--mode", "hms", "--uri", "thrift://127.0.0.1:1"],
]


@pytest.fixture
def store(tmp_path: Path) -> str:
    db = str(tmp_path / "store.db")
    assert cli_in_process("--db", db, "init-db").code == 0
    return db


@pytest.fixture
def trips(fixture_table: Any, tmp_path: Path) -> Path:
    return Path(shutil.copytree(fixture_table(TRIPS_8I1U), tmp_path / "trips"))


def fares(out: str) -> dict[str, float]:
    return {r["uuid"]: r["fare"] for r in map(json.loads, out.splitlines())}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_every_command_refuses_a_damaged_properties_file(damage: str, trips: Path, store: str) -> None:
    props = trips / ".hoodie" / "hoodie.properties"
    original = props.read_text()
    assert fares(cli_in_process("read", str(trips)).stdout)[UPDATED] == 25.0
    edit, key = DAMAGE[damage]
    props.write_text(edit(original))
    before, store_before = tree(trips), store_dump(store)
    for command in COMMANDS:
        args = [a.format(t=trips) for a in command]
        out = cli_in_process("--db", store, *args)
        assert out.code == 2, (damage, args, out)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1, (damage, args, out.stderr)
        assert lines[0].startswith("hudi-meta: error: ") and key in lines[0] and str(props) in lines[0], lines[0]
        assert out.stdout == "", (damage, args, out.stdout)
        assert tree(trips) == before and store_dump(store) == store_before, (damage, args)
    props.write_text(original)  # the table's own file back: it reads and indexes as before
    assert fares(cli_in_process("--db", store, "read", str(trips)).stdout)[UPDATED] == 25.0
    assert cli_in_process("--db", store, "index", str(trips)).code == 0
    assert store_dump(store) != store_before  # so the comparison above would have seen a registration


def test_a_table_version_hudi_defines_but_hudi_meta_does_not_read_is_unsupported(trips: Path) -> None:
    props = trips / ".hoodie" / "hoodie.properties"
    props.write_text(replaced("hoodie.table.version", "5")(props.read_text()))
    out = cli_in_process("read", str(trips))
    assert out.code == 2 and out.stdout == ""
    assert out.stderr.strip() == (
        f"hudi-meta: error: {props}: hoodie.table.version=5 is not read here: hudi-meta reads table versions 6, 8 "
        "and 9 (Hudi 0.14-0.15, 1.0, 1.1); upgrade the table to one of them with Hudi"
    )
