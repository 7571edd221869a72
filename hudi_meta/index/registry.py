"""The registry of indexed tables: register a table (idempotent), find its id, its event-time field."""

from __future__ import annotations

import datetime as dt
import json
import logging

from sqlalchemy import Engine, select, update

from hudi_meta.format import config_keys as keys
from hudi_meta.index.event_time_source import check_event_time_field
from hudi_meta.index.log_file_summary import refresh_summaries
from hudi_meta.index.models import hudi_table, log_block_table
from hudi_meta.index.sql import insert_ignore
from hudi_meta.table.table import HudiTable
from hudi_meta.values import ascii_integer

log = logging.getLogger(__name__)


def register_table(engine: Engine, table: HudiTable, event_time_field: str | None = None) -> int:
    """Register `table` (idempotent); an explicit event-time field overrides the table's config. A field that is
    no column of the table is refused before the store changes (`check_event_time_field`)."""
    if event_time_field:
        unchecked = check_event_time_field(table, event_time_field)
        if unchecked is not None:
            log.warning("%s", unchecked)
    cfg = table.config
    row = {
        "base_path": table.uri,  # the full URI: the same path on two stores is two tables
        "name": cfg.name,
        "table_type": cfg.table_type,
        "table_version": cfg.version,
        "timeline_layout": cfg.timeline_layout,
        "record_key_fields": ",".join(cfg.record_key_fields),
        "ordering_field": cfg.ordering_fields[0] if cfg.ordering_fields else None,
        "event_time_field": event_time_field or cfg.event_time_field,
        "options": _options(table),
        "registered_at": dt.datetime.now(dt.UTC),
    }
    tables = hudi_table
    with engine.begin() as conn:
        insert_ignore(conn, tables, [row])
        table_id, current, current_options = conn.execute(
            select(tables.c.id, tables.c.event_time_field, tables.c.options).where(tables.c.base_path == table.uri)
        ).one()
        if current_options != row["options"]:
            conn.execute(update(tables).where(tables.c.id == table_id).values(options=row["options"]))
        if event_time_field and event_time_field != current:
            conn.execute(update(tables).where(tables.c.id == table_id).values(event_time_field=event_time_field))
            blocks = log_block_table
            # every time depends on the field: scans read it, headers and write stats count only for the
            # table's own field, delete blocks use their ordering values only when it is the ordering field;
            # late-record counts too
            conn.execute(
                update(blocks)
                .where(blocks.c.table_id == table_id, blocks.c.min_event_time_source.is_not(None))
                .values(min_event_time=None, max_event_time=None, min_event_time_source=None)
            )
            conn.execute(
                update(blocks)
                .where(blocks.c.table_id == table_id, blocks.c.late_threshold.is_not(None))
                .values(late_threshold=None, late_records=None)
            )
            refresh_summaries(conn, table_id, None)
        return int(table_id)


def _options(table: HudiTable) -> str:
    """What the UI needs of a table's config without opening it: metadata-table partitions, the zone its
    instant times are written in (`hoodie.table.timeline.timezone`, Java's default LOCAL) and its data latency
    (`hoodie.compaction.event.time.data.latency` in ms; None when unset or not a number)."""
    props = table.config.props
    zone = keys.TIMELINE_TIMEZONE.of(props).upper()
    latency = ascii_integer((keys.DATA_LATENCY.text(props) or "").strip())
    return json.dumps(
        {
            "metadata_partitions": list(table.config.metadata_partitions),
            "timeline_timezone": zone,
            "data_latency_ms": latency,
        }
    )


def event_time_field_of(engine: Engine, table_id: int) -> str | None:
    tables = hudi_table
    with engine.connect() as conn:
        found = conn.execute(select(tables.c.event_time_field).where(tables.c.id == table_id)).scalar_one_or_none()
    return str(found) if found else None


def table_id_of(engine: Engine, base_path: str) -> int | None:
    tables = hudi_table
    with engine.connect() as conn:
        found = conn.execute(select(tables.c.id).where(tables.c.base_path == base_path)).scalar_one_or_none()
    return int(found) if found is not None else None


def mark_indexed(engine: Engine, table_id: int, version: int, layout: int) -> None:
    """Record when the table's index was last brought up to date, and the table version and timeline layout it
    was built from (hudi_meta.index.table_format)."""
    tables = hudi_table
    values = {"last_indexed_at": dt.datetime.now(dt.UTC), "table_version": version, "timeline_layout": layout}
    with engine.begin() as conn:
        conn.execute(update(tables).where(tables.c.id == table_id).values(**values))
