"""One sync of a table as every caller runs it (the `sync` command, the UI's "sync now", the service): index,
compute the freshness, publish it, and record the run (when, how long, outcome) in the store. A dry run is not
recorded."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Engine

from hudi_meta.errors import BadValueError, HudiMetaError
from hudi_meta.index.freshness_inputs import indexed_freshness
from hudi_meta.index.registry import table_id_of
from hudi_meta.index.sync_runs import SyncRun, record_sync_run
from hudi_meta.sync.catalog import SyncMode, catalog_address, open_catalog
from hudi_meta.sync.hive_schema import Layout
from hudi_meta.sync.hive_sync import SyncReport, sync_table
from hudi_meta.table.table import HudiTable
from hudi_meta.values import parse_identifier, shown

MIN_TIMEOUT_S, MAX_TIMEOUT_S = 0.001, 3600.0  # a catalog call's timeout: Thrift takes whole milliseconds


@dataclass(frozen=True)
class SyncTarget:
    """Where and how to publish: the catalog (mode, URI), the database and name to register under (None: the
    table's own), the timeout of each catalog call, whether to register Spark's datasource properties, and the
    layout of HiveSyncTool's names (`hive_schema.Layout`; None: the registrations found, else the default)."""

    mode: SyncMode | str  # any `SyncMode` spelling; a `SyncMode` once made
    uri: str
    database: str | None = None
    name: str | None = None
    timeout_s: float = 30.0
    as_datasource: bool = True
    layout: Layout | None = None  # HiveSyncTool's naming; None: the registrations found, else the default

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", SyncMode.parse(self.mode, "sync mode"))

    def validate(self, labels: tuple[str, str, str] = ("catalog URI", "database", "table name")) -> None:
        """A catalog address, a timeout and names the catalog can hold, checked before anything is indexed or
        connected; `labels` name the URI, the database and the table name as the caller took them."""
        if not MIN_TIMEOUT_S <= self.timeout_s <= MAX_TIMEOUT_S:
            raise BadValueError(f"timeout: expected {MIN_TIMEOUT_S:g} to {MAX_TIMEOUT_S:g} s, got {self.timeout_s:g}")
        checks: list[tuple[str, str | None, Callable[[str], object]]] = [
            (labels[0], self.uri, lambda uri: catalog_address(self.mode, uri)),
            (labels[1], self.database, parse_identifier),
            (labels[2], self.name, parse_identifier),
        ]
        for label, value, check in checks:
            if value is not None:
                try:
                    check(value)
                except BadValueError as e:
                    raise BadValueError(f"{label} {shown(value)}: {e}") from None


def sync_recorded(engine: Engine, table: HudiTable, target: SyncTarget, dry_run: bool = False) -> SyncReport:
    """Index `table`, publish its freshness to `target` and record the run; a failure is recorded, then raised."""
    target.validate()
    fresh = indexed_freshness(engine, table)
    table_id = table_id_of(engine, table.uri)
    assert table_id is not None  # indexed just now
    started, clock = dt.datetime.now(dt.UTC), time.monotonic()
    outcome, message, changes = "failed", "", 0
    try:
        catalog = open_catalog(target.mode, target.uri, timeout_s=target.timeout_s)
        try:
            report = sync_table(
                catalog, table, fresh, target.database, target.name, dry_run, target.as_datasource, target.layout
            )
        finally:
            catalog.close()
        outcome, changes = "ok", len(report.actions)
        return report
    except HudiMetaError as e:
        message = str(e)
        raise
    finally:
        if not dry_run:
            duration = int((time.monotonic() - clock) * 1000)
            record_sync_run(
                engine, table_id, SyncRun(str(target.mode), target.uri, started, duration, outcome, changes, message)
            )
