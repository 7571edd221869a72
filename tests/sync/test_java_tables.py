"""Every Merge-On-Read table Java Hudi wrote (the fixtures) registers as HiveSyncTool registers it: the schema
Java recorded in its latest commit, meta columns first, Hudi's partition fields as partition columns, one
partition per partition directory the table has, and no freshness claimed (Java ran no event-time
compaction). Expected values come from the tables' own files (hoodie.properties, partition folders)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudi_meta.errors import HudiMetaError
from hudi_meta.freshness import freshness
from hudi_meta.sync.hive_schema import RO_INPUT_FORMAT, RT_INPUT_FORMAT
from hudi_meta.sync.hive_sync import sync_table
from hudi_meta.sync.properties import FRESHNESS_KEYS
from hudi_meta.table.table import HudiTable
from tests.conftest import table_id, table_zips
from tests.sync.memory_catalog import MemoryCatalog

META = [
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
]


def properties(base: Path) -> dict[str, str]:
    lines = (base / ".hoodie" / "hoodie.properties").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))


@pytest.mark.parametrize("archive", [a for a in table_zips() if "/mor/" in str(a)], ids=table_id)
def test_java_written_tables_register_as_hive_sync_tool_does(archive: Path, fixture_table: Any) -> None:
    base = fixture_table(archive)
    table = HudiTable.open(str(base))
    catalog = MemoryCatalog()
    if not table.timeline.completed_writes():
        with pytest.raises(HudiMetaError, match="has no committed data yet: nothing to register"):
            sync_table(catalog, table, freshness([], [], 0), "db", "t")
        return
    report = sync_table(catalog, table, freshness([], [], 0), "db", "t")
    assert report.tables == ["db.t_ro", "db.t_rt"]
    fields = [f for f in properties(base).get("hoodie.table.partition.fields", "").split(",") if f]
    data_dirs = {
        str(p.parent.relative_to(base))
        for p in base.rglob("*")
        if p.is_file() and ".hoodie" not in p.parts and p.parent != base
    }
    for name, input_format in (("t_ro", RO_INPUT_FORMAT), ("t_rt", RT_INPUT_FORMAT)):
        registered = catalog.tables[("db", name)]
        assert [c.name for c in registered.columns][:5] == META
        assert [c.name for c in registered.partition_columns] == fields
        assert registered.input_format == input_format and registered.location == str(base)
        assert not set(FRESHNESS_KEYS) & set(registered.properties)
        registered_partitions = catalog.registered[("db", name)].values()
        if not fields:
            assert not registered_partitions
        elif "overwritetable" in str(archive):  # insert_overwrite_table replaced the other partitions' files
            assert 0 < len(registered_partitions) < len(data_dirs)
        else:
            assert {str(Path(p).relative_to(base)) for p in registered_partitions} == data_dirs
