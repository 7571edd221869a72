"""The Python API (docs/python-api.md): `open_table(uri, store=None)` and the operations on its result; the one
front door of hudi-meta.

The CLI's commands, and through them the tests of the CLI, call these methods and import nothing else of the
core (tests/cli/test_front_door.py); the service and the web actions call the same methods or the core functions
underneath. Every method returns a typed result (a dataclass) and raises only `HudiMetaError` and its subclasses
for what a caller can fix (a bad value, a missing table, a refused plan); errors name the API's parameters, never
a front end's options.

One module per area: `table` (the `Table` and its operations), `admin` (rollback, unschedule, validate, repair,
archive), `show` (the rows of a table's timeline, slices, blocks, plans and links), `store` (the store's schema,
name and a table's metrics), `values` (times and durations as the API takes them) and `terms` (the closed sets,
limits and value parsers front ends read and print with).

>>> import hudi_meta
>>> with hudi_meta.open_table("/data/events", store="sqlite:///meta.db") as table:  # doctest: +SKIP
...     table.index()
...     plan = table.schedule_compaction(data_latency="30m")
...     if plan.instant is not None:
...         print(table.run_compaction(plan.instant).records_written)
...     print(table.freshness().watermark_ms)
"""

from __future__ import annotations

from hudi_meta.api.admin import AdminReport, ArchiveOutcome, IndexRefresh
from hudi_meta.api.show import SHOWN, SHOWN_FROM_FILES
from hudi_meta.api.store import TableMetrics, init_store, store_exists, store_name
from hudi_meta.api.table import CompactionSummary, Registration, Table, compaction_summary, open_table
from hudi_meta.api.terms import *  # noqa: F403 (the words front ends read and print with: `terms.__all__`)
from hudi_meta.api.terms import __all__ as _terms
from hudi_meta.api.values import Duration, Moment, as_duration_ms, as_time_ms
from hudi_meta.table.table import check_query

__all__ = [
    "SHOWN",
    "SHOWN_FROM_FILES",
    "AdminReport",
    "ArchiveOutcome",
    "CompactionSummary",
    "Duration",
    "IndexRefresh",
    "Moment",
    "Registration",
    "Table",
    "TableMetrics",
    "as_duration_ms",
    "as_time_ms",
    "check_query",
    "compaction_summary",
    "init_store",
    "open_table",
    "store_exists",
    "store_name",
    *_terms,
]
