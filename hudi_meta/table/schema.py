"""The schema of a table's records, resolved as Java's `TableSchemaResolver` resolves it (docs/event-time.md
section 1.1): the writer schema the newest completed write recorded in its commit metadata
(`extraMetadata["schema"]`; a compaction, clustering, index or log compaction commit does not count: Java's
`WriteOperationType.canUpdateSchema`), else `hoodie.table.create.schema`, else the newest base file's schema.
None when the table has none of them (a table created but never written).

Users name columns of this schema (the event-time field); it is the latest schema, so a column added by schema
evolution counts although older files lack it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from hudi_meta.errors import AvroSchemaError
from hudi_meta.format.avro_arrow import arrow_schema_from_avro_json
from hudi_meta.format.config_keys import CREATE_SCHEMA
from hudi_meta.table.table import HudiTable

NO_SCHEMA_UPDATE = frozenset({"CLUSTER", "COMPACT", "INDEX", "LOG_COMPACT"})  # their commits keep the schema


@dataclass(frozen=True)
class TableSchema:
    """The table's record schema (meta columns only where the source holds them) and where it came from."""

    schema: pa.Schema
    source: str  # where it came from, as an error message names it


def latest_commit_schema(table: HudiTable) -> tuple[str, str] | None:
    """(instant, Avro JSON) of the newest completed write that recorded a writer schema, on the timeline as
    `table` holds it (an instant archived since it was listed is skipped)."""
    tl = table.timeline
    for instant in reversed(tl.completed_writes()):
        try:
            metadata = tl.commit_metadata(instant)
        except FileNotFoundError:  # archived after the listing
            continue
        if metadata.operation_type not in NO_SCHEMA_UPDATE and metadata.schema:
            return instant.requested_time, metadata.schema
    return None


def table_schema(table: HudiTable) -> TableSchema | None:
    """The table's record schema from the first source that has one (see the module doc); a source whose schema
    is not valid Avro is passed over."""
    found = latest_commit_schema(table)
    if found is not None:
        parsed = _parsed(found[1])
        if parsed is not None:
            return TableSchema(parsed, f"schema of commit {found[0]}")
    created = (CREATE_SCHEMA.of(table.config.props) or "").strip()
    parsed = _parsed(created) if created else None
    if parsed is not None:
        return TableSchema(parsed, f"schema from {CREATE_SCHEMA.name}")
    base = table.arrow_schema()
    if base is None:
        return None
    return TableSchema(base, "schema of its newest base file")


def _parsed(schema_json: str) -> pa.Schema | None:
    try:
        return arrow_schema_from_avro_json(schema_json)
    except AvroSchemaError:
        return None


def nested_field(schema: pa.Schema, path: str) -> str | None:
    """The record a dotted `path` (`a.b`) reaches into when it names a field nested in it, else None."""
    parts = path.split(".")
    if len(parts) < 2 or parts[0] not in schema.names:
        return None
    kind = schema.field(parts[0]).type
    for part in parts[1:]:
        if not pa.types.is_struct(kind) or kind.get_field_index(part) < 0:
            return None
        kind = kind.field(part).type
    return parts[0]
