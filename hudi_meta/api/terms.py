"""The words of the Python API a front end needs to read what a user typed and to print what came back: closed
sets (enums with Hudi's spellings), limits and settings' keys, value parsers and formatters, and the request and
report types of the table services. They live in the core; front ends take them from here, so that the CLI and
the web UI import one module, `hudi_meta.api`, and never the layers under it."""

from __future__ import annotations

from hudi_meta.clean.run import format_reports
from hudi_meta.compaction.admin import Validation
from hudi_meta.compaction.run import MapTasks
from hudi_meta.compaction.schedule import (
    LOG_FILE_SIZE_THRESHOLD,
    MAX_DELTA_COMMITS,
    MAX_DELTA_SECONDS,
    ScheduleRequest,
    ScheduleResult,
    check_data_latency,
    check_threshold,
)
from hudi_meta.compaction.strategies import Strategy
from hudi_meta.compaction.triggers import Trigger
from hudi_meta.format.config_keys import KEEP_MAX_COMMITS, KEEP_MIN_COMMITS
from hudi_meta.format.links import LinkMode
from hudi_meta.format.table_service_metadata import CompactionOperation
from hudi_meta.index.db import DB_ENV
from hudi_meta.index.store import open_store
from hudi_meta.progress import Report, silent
from hudi_meta.spelling import Spelled, fold
from hudi_meta.sync.catalog import HIVE_EXTRA, MODES
from hudi_meta.sync.hive_schema import TableStrategy
from hudi_meta.sync.recorded import MAX_TIMEOUT_S, MIN_TIMEOUT_S, SyncTarget
from hudi_meta.table.bucket_index import DEFAULT_BUCKETS, MAX_BUCKETS
from hudi_meta.table.table import Query, QueryKind
from hudi_meta.table.times import (
    MAX_TIME_MS,
    format_duration_ms,
    format_time_ms,
    now_ms,
    parse_duration_ms,
    parse_point,
    parse_time_ms,
)
from hudi_meta.write.archival import ArchiveReport
from hudi_meta.write.clean_plan import MAX_HOURS_RETAINED, MAX_RETAINED, Policy
from hudi_meta.write.file_actions import FileAction
from hudi_meta.write.writer import CURRENT_VERSION, WRITE_VERSIONS

SYNC_STRATEGIES = tuple(TableStrategy.spellings())  # HiveSyncTool's --sync-strategy values, for argparse

__all__ = [
    "CURRENT_VERSION",
    "DB_ENV",
    "DEFAULT_BUCKETS",
    "HIVE_EXTRA",
    "LOG_FILE_SIZE_THRESHOLD",
    "MAX_BUCKETS",
    "KEEP_MAX_COMMITS",
    "MAX_DELTA_COMMITS",
    "MAX_DELTA_SECONDS",
    "MAX_HOURS_RETAINED",
    "MAX_RETAINED",
    "MAX_TIMEOUT_S",
    "MAX_TIME_MS",
    "KEEP_MIN_COMMITS",
    "MIN_TIMEOUT_S",
    "MODES",
    "SYNC_STRATEGIES",
    "WRITE_VERSIONS",
    "ArchiveReport",
    "CompactionOperation",
    "FileAction",
    "LinkMode",
    "MapTasks",
    "Policy",
    "Query",
    "QueryKind",
    "Report",
    "ScheduleRequest",
    "ScheduleResult",
    "Spelled",
    "Strategy",
    "SyncTarget",
    "Trigger",
    "Validation",
    "check_data_latency",
    "check_threshold",
    "fold",
    "format_duration_ms",
    "format_reports",
    "format_time_ms",
    "now_ms",
    "open_store",
    "parse_duration_ms",
    "parse_point",
    "parse_time_ms",
    "silent",
]
