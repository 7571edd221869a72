"""Sync a Merge-On-Read table's RO freshness into a catalog (docs/catalog-and-freshness.md section 3).

The tables to publish on are the registrations of the table that exist already, whatever HiveSyncTool layout
made them (`hive_schema.Layout`: `NAME_ro`/`NAME_rt`, `NAME` with `skip_ro_suffix`, one view as `NAME`), found by
their location; with none, or with a layout asked for, the layout's tables (by default `<name>_ro` and
`<name>_rt`). A name that holds another table (another location) is never written to. Each table is brought to
the wanted state in an order a crash can interrupt anywhere: register it if missing (Hudi's properties, none of
ours), add the partitions it lacks, then change our properties in one alter. The properties are the claim, so
they come last; every step compares with what the catalog holds, so the next sync finishes whatever a failed one
left, and a sync with nothing to change writes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

import pyarrow as pa

from hudi_meta.errors import HudiMetaError
from hudi_meta.format.avro_arrow import arrow_schema_from_avro_json
from hudi_meta.freshness import Freshness
from hudi_meta.sync.catalog import Catalog, CatalogTable, Partition, same_location
from hudi_meta.sync.hive_schema import Layout, candidate_names, partition_values, sync_definitions
from hudi_meta.sync.partitions import dropped_partitions, partition_changes
from hudi_meta.sync.properties import changes, published
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import META_COLUMNS

log = logging.getLogger(__name__)


@dataclass
class SyncAction:
    operation: str  # create_database, create_table, add/move/drop_partitions, set_properties
    target: str  # database or database.table
    detail: Mapping[str, str | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {"operation": self.operation, "target": self.target, "detail": dict(self.detail)}


@dataclass
class SyncReport:
    tables: list[str]
    actions: list[SyncAction]
    dry_run: bool

    def to_dict(self) -> dict[str, object]:
        return {"tables": self.tables, "dry_run": self.dry_run, "actions": [a.to_dict() for a in self.actions]}


def table_schema(table: HudiTable) -> pa.Schema:
    """The schema HiveSyncTool registers: the latest commit's (meta columns first), else the newest base file's."""
    tl = table.timeline
    for instant in reversed(tl.completed_writes()):
        schema_json = tl.commit_metadata(instant).schema
        if schema_json:
            schema = arrow_schema_from_avro_json(schema_json)
            meta = [pa.field(name, pa.string()) for name in META_COLUMNS if name not in schema.names]
            return pa.schema(meta + list(schema))
    schema = table.arrow_schema()
    if schema is None:
        raise HudiMetaError(f"{table.base_path} has no committed data yet: nothing to register")
    return schema


def last_commit_time(table: HudiTable) -> str | None:
    """`last_commit_time_sync` as HiveSyncTool sets it: the latest completed instant of the commits timeline."""
    writes = table.timeline.completed_writes()
    return writes[-1].requested_time if writes else None


def last_commit_completion_time(table: HudiTable) -> str | None:
    """`last_commit_completion_time_sync` as Hudi 1.x's HiveSyncTool sets it: the latest completion time over the
    completed instants of the commits timeline (None where the timeline records none: table version 6)."""
    times = [i.completion_time for i in table.timeline.completed_writes() if i.completion_time]
    return max(times) if times else None


def sync_table(
    catalog: Catalog,
    table: HudiTable,
    freshness: Freshness,
    database: str | None = None,
    name: str | None = None,
    dry_run: bool = False,
    as_datasource: bool = True,
    layout: Layout | None = None,
) -> SyncReport:
    """Publish `freshness` on the catalog tables of `table` (module docstring); `layout` None: the registrations
    found, else HiveSyncTool's default layout; a `layout`: its tables, registered where missing."""
    if not table.config.is_mor:
        raise HudiMetaError(
            f"{table.base_path} is {table.config.table_type}: sync publishes the read-optimized view of "
            f"MERGE_ON_READ tables"
        )
    database = database or table.config.database or "default"
    name = name or table.config.name
    if not name:
        raise HudiMetaError(f"{table.base_path} has no hoodie.table.name: give the catalog table a name")
    partitions = {fg.partition for fg in table.file_groups()}
    wanted, partition_list = sync_definitions(
        table_schema(table),
        table.config.partition_fields,
        partitions,
        table.base_path,
        database,
        name,
        as_datasource,
        layout or Layout(),
    )
    properties = published(freshness, last_commit_time(table), last_commit_completion_time(table))
    database_exists = catalog.database_exists(database)
    found = {n: catalog.get_table(database, n) for n in candidate_names(name)} if database_exists else {}
    targets = _targets(wanted, {n: t for n, t in found.items() if t is not None}, table.base_path, layout is None)
    report = SyncReport([f"{database}.{definition.name}" for definition, _ in targets], [], dry_run)
    if not database_exists:
        report.actions.append(SyncAction("create_database", database))
        if not dry_run:
            catalog.create_database(database)
    fields = table.config.partition_fields
    dropped = [partition_values(p, fields) for p in sorted(dropped_partitions(table))] if fields else []
    for definition, existing in targets:
        _sync_one(catalog, definition, existing, (partition_list, dropped), properties, report)
    return report


def _targets(
    wanted: list[CatalogTable], found: dict[str, CatalogTable], base_path: str, detect: bool
) -> list[tuple[CatalogTable, CatalogTable | None]]:
    """(definition, registration found) of each table to publish on: with `detect`, the registrations of this
    table found under any layout's name when one of them is not the default layout's (another layout: what is
    there is annotated, nothing added); else the wanted tables, so the default layout a sync killed halfway left is
    completed. A wanted name registered at another location is another table: refused before anything is
    written."""
    ours = {n: t for n, t in found.items() if same_location(t.location, base_path)}
    if detect and ours and not set(ours) <= {definition.name for definition in wanted}:
        return [(t, t) for _, t in sorted(ours.items())]
    for definition in wanted:
        other = found.get(definition.name)
        if other is not None and definition.name not in ours:
            raise HudiMetaError(
                f"catalog table {definition.database}.{definition.name} is registered at {other.location}, not at "
                f"{base_path}: it is another table, and hudi-meta does not publish on it (sync under another name)"
            )
    return [(definition, ours.get(definition.name)) for definition in wanted]


def _sync_one(
    catalog: Catalog,
    definition: CatalogTable,
    existing: CatalogTable | None,
    partitions: tuple[list[Partition], list[tuple[str, ...]]],
    properties: Mapping[str, str | None],
    report: SyncReport,
) -> None:
    """Register, then partitions (added, moved, dropped), then our properties: the claim comes last."""
    target = f"{definition.database}.{definition.name}"
    if existing is None:
        report.actions.append(SyncAction("create_table", target))
        if not report.dry_run:
            catalog.create_table(definition)
        current: Mapping[str, str] = dict(definition.properties)
        registered: dict[tuple[str, ...], str] = {}
    else:
        current = existing.properties
        registered = catalog.partitions(definition.database, definition.name) if existing.partition_columns else {}
    wanted, dropped = partitions
    todo = partition_changes(wanted, registered, dropped)
    db, name = definition.database, definition.name
    if todo.added:
        report.actions.append(SyncAction("add_partitions", target, _where(todo.added)))
        if not report.dry_run:
            catalog.add_partitions(db, name, todo.added)
    if todo.moved:
        report.actions.append(SyncAction("move_partitions", target, _where(todo.moved)))
        if not report.dry_run:
            catalog.move_partitions(db, name, todo.moved)
    if todo.dropped:
        report.actions.append(SyncAction("drop_partitions", target, {"/".join(v): None for v in todo.dropped}))
        if not report.dry_run:
            catalog.drop_partitions(db, name, todo.dropped)
    diff = changes(current, properties)
    if diff:
        report.actions.append(SyncAction("set_properties", target, diff))
        if not report.dry_run:
            catalog.set_properties(definition.database, definition.name, diff)
            log.info("catalog table %s: properties set %s", target, diff)


def _where(partitions: list[Partition]) -> dict[str, str | None]:
    return {"/".join(p.values): p.location for p in partitions}
