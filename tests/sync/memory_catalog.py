"""A catalog in memory with the `Catalog` interface's semantics (merged properties, partitions by value), for
tests whose subject is what a sync publishes rather than the catalog (the model test). Syncs to real catalogs
are tested against a real metastore and HiveServer2 (test_sync_hms.py, test_sync_hiveserver2.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from hudi_meta.sync.catalog import CatalogTable, Partition


class MemoryCatalog:
    def __init__(self) -> None:
        self.databases: set[str] = set()
        self.tables: dict[tuple[str, str], CatalogTable] = {}
        self.registered: dict[tuple[str, str], dict[tuple[str, ...], str]] = {}  # values -> location

    def database_exists(self, database: str) -> bool:
        return database in self.databases

    def create_database(self, database: str) -> None:
        self.databases.add(database)

    def get_table(self, database: str, name: str) -> CatalogTable | None:
        return self.tables.get((database, name))

    def create_table(self, table: CatalogTable) -> None:
        assert table.database in self.databases, table.database
        self.tables.setdefault((table.database, table.name), table)
        self.registered.setdefault((table.database, table.name), {})

    def set_properties(self, database: str, name: str, changes: Mapping[str, str | None]) -> None:
        table = self.tables[(database, name)]
        properties = {**table.properties, **{k: v for k, v in changes.items() if v is not None}}
        for key in (k for k, v in changes.items() if v is None):
            properties.pop(key, None)
        self.tables[(database, name)] = dataclasses.replace(table, properties=properties)

    def partitions(self, database: str, name: str) -> dict[tuple[str, ...], str]:
        return dict(self.registered[(database, name)])

    def partition_values(self, database: str, name: str) -> set[tuple[str, ...]]:
        return set(self.registered[(database, name)])

    def add_partitions(self, database: str, name: str, partitions: list[Partition]) -> None:
        for p in partitions:
            self.registered[(database, name)].setdefault(p.values, p.location)

    def move_partitions(self, database: str, name: str, partitions: list[Partition]) -> None:
        for p in partitions:
            self.registered[(database, name)][p.values] = p.location

    def drop_partitions(self, database: str, name: str, values: list[tuple[str, ...]]) -> None:
        for v in values:
            self.registered[(database, name)].pop(v, None)

    def close(self) -> None:
        pass
