"""`index --through-metadata`: the table's files listed by its metadata table instead of one listing request per
partition folder (docs/metadata-table.md section 9).

Rule: on an object store, with the MDT in step (`check` agrees) and nothing pending, the index built through the
MDT holds exactly what the index built from the storage listing holds (file groups, slices, log files and their
blocks), with fewer listing requests; where the MDT listing would not be the table's (no MDT, symbolic links, a
pending clean or rollback) it is refused in one line, before anything is read through it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hudi_meta.errors import HudiMetaError
from hudi_meta.index.db import make_engine
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.queries import block_rows, slice_rows
from hudi_meta.metadata.init import create_metadata_table
from hudi_meta.metadata.sync import write_client
from hudi_meta.storage.fsspec_store import FsspecStorage
from hudi_meta.table.metadata_table import listing_through_metadata
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action
from tests.cli.helpers import cli
from tests.compaction.core import create_core_table, region_rows
from tests.conftest import S3Server


def _s3_table(server: S3Server) -> HudiTable:
    """A version-9 table with its MDT on S3: three partitions, a base file and two log files each."""
    uri = f"s3://{server.bucket()}/lake/events"
    create_core_table(uri, "events", options=server.options, version=9)
    create_metadata_table(HudiTable.open(uri, server.options))
    groups: dict[str, str] = {}
    for step in range(3):
        w = write_client(HudiTable.open(uri, server.options))
        w.begin()
        for region in ("eu", "us", "ap"):
            data = region_rows(region, (f"{region}{step}", 10 * step, float(step)), (f"{region}0", 10 * step + 1, 9.0))
            partition = f"region={region}"
            if partition in groups:
                w.append_log(partition, groups[partition], data, [])
            else:
                groups[partition] = w.write_base_file(partition, data).file_id
        w.commit()
    return HudiTable.open(uri, server.options)


def _index(tmp_path: Path, name: str, table: HudiTable) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    url = f"sqlite:///{tmp_path / name}"
    upgrade(url)
    engine = make_engine(url)
    indexer = Indexer(engine, table)
    indexer.run()
    assert indexer.table_id is not None
    return slice_rows(engine, indexer.table_id), block_rows(engine, indexer.table_id)


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every directory listing request the object store gets."""
    calls: list[str] = []
    original: Callable[..., Any] = FsspecStorage.list_dir

    def counting(self: FsspecStorage, path: str) -> Any:
        calls.append(path)
        return original(self, path)

    monkeypatch.setattr(FsspecStorage, "list_dir", counting)
    yield calls


def test_the_index_through_the_metadata_table_equals_the_storage_listing(
    tmp_path: Path, s3_server: S3Server, listings: list[str]
) -> None:
    table = _s3_table(s3_server)
    listings.clear()
    from_storage = _index(tmp_path, "a.db", table)
    by_storage = [p for p in listings if "/.hoodie" not in p]
    listings.clear()
    through = _index(tmp_path, "b.db", HudiTable.open(table.uri, s3_server.options).through(listing_through_metadata))
    by_metadata = [p for p in listings if "/.hoodie" not in p]
    assert through == from_storage
    assert len(from_storage[0]) == 3 and len(from_storage[1]) >= 6  # three slices, their log files' blocks
    assert not by_metadata and len(by_storage) >= 4, (by_storage, by_metadata)  # base path + 3 partitions
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert cli("--db", db, "init-db").returncode == 0
    done = cli("--db", db, "index", table.uri, "--through-metadata", env=s3_server.env)
    assert done.returncode == 0 and "log files" in done.stdout, done.stderr


def test_refused_where_the_metadata_table_is_not_the_listing(
    tmp_path: Path, s3_server: S3Server, listings: list[str]
) -> None:
    table = _s3_table(s3_server)
    writer = table.timeline_writer()
    writer.request(Action.CLEAN, table.new_instant_time(), b"")  # a clean pending: the MDT lags until it completes
    with pytest.raises(HudiMetaError, match="clean .* is pending"):
        HudiTable.open(table.uri, s3_server.options).through(listing_through_metadata).file_groups()
    local = tmp_path / "local"
    create_core_table(str(local), "local", version=9)
    create_metadata_table(HudiTable.open(str(local)))
    done = cli("--db", f"sqlite:///{tmp_path / 'c.db'}", "index", str(local), "--through-metadata")
    assert done.returncode != 0 and "symbolic links" in done.stderr and "Traceback" not in done.stderr, done.stderr
    bare = f"s3://{s3_server.bucket()}/lake/bare"
    create_core_table(bare, "bare", options=s3_server.options, version=9)
    with pytest.raises(HudiMetaError, match="has no metadata table"):
        HudiTable.open(bare, s3_server.options).through(listing_through_metadata).file_groups()
