"""Every Hudi config key hudi-meta reads or writes, in one place: its name, the default a reader applies when a
table does not set it, and one line saying what it is. The shape is hudi-rs's `HudiTableConfig`
(crates/core/src/config/table.rs) and pyiceberg's `TableProperties`: a key is a typed object, and code names it
only through this module (`TABLE_NAME.name`, `TABLE_NAME.of(props)`), never as a string literal;
tests/test_config_keys.py fails on a `"hoodie.` literal anywhere else.

It sits in `format`, the bottom layer above storage, because `hoodie.properties` is parsed there
(`format/properties.py`) and every layer above reads keys.

A default is what hudi-meta applies today when the key is absent (Java's default unless the doc says otherwise).
A caller that means something else when a key is absent (a default that depends on the table version, or a
different value for one engine) says so where it reads the key, with `props.get(KEY.name, ...)`.

Not here: the keys our compaction writes into a plan's strategy parameters and a commit's extraMetadata
(`hoodie.compaction.symlink.operations`, `hoodie.compaction.event.time.*`). They are not settings: nobody sets
them, they have no default, and they are fields of the on-disk contract of event-time compaction, which has its
one home in `format/links.py` (the architecture's "link names, plan parameters, commit metadata keys").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class ConfigKey(Generic[T]):
    """One key: its `name` in `hoodie.properties` (or a catalog's table properties), the value read when it is
    absent (`default`), a one-line `doc`, and how its text reads as a value (`parse`)."""

    name: str
    default: T
    doc: str
    parse: Callable[[str], T]

    def text(self, props: Mapping[str, str]) -> str | None:
        """The key's text as `props` hold it (None: absent)."""
        return props.get(self.name)

    def of(self, props: Mapping[str, str]) -> T:
        """The key's value in `props`, parsed; the default when absent (an empty text is a value, not absence)."""
        text = props.get(self.name)
        return self.default if text is None else self.parse(text)

    def or_default(self, props: Mapping[str, str]) -> T:
        """The key's value in `props`, parsed; the default when absent or empty (for the readers that take an
        empty text as unset)."""
        text = props.get(self.name)
        return self.parse(text) if text else self.default


def _java_boolean(text: str) -> bool:
    """Java's `Boolean.parseBoolean`: "true" in any case is true, any other text false."""
    return text.lower() == "true"


def _text(name: str, default: str, doc: str) -> ConfigKey[str]:
    return ConfigKey(name, default, doc, str)


def _optional(name: str, doc: str) -> ConfigKey[str | None]:
    return ConfigKey[str | None](name, None, doc, str)


def _flag(name: str, default: bool, doc: str) -> ConfigKey[bool]:
    return ConfigKey(name, default, doc, _java_boolean)


def _number(name: str, default: int, doc: str) -> ConfigKey[int]:
    return ConfigKey(name, default, doc, int)


# ---------------------------------------------------------------- table config (HoodieTableConfig)

TABLE_NAME = _text("hoodie.table.name", "", "the table's name (required)")
DATABASE_NAME = _text("hoodie.database.name", "", "the table's database; part of the checksum")
TABLE_TYPE = _text("hoodie.table.type", "COPY_ON_WRITE", "COPY_ON_WRITE or MERGE_ON_READ (required)")
TABLE_VERSION = _number("hoodie.table.version", 0, "HoodieTableVersion, 0 to 9; hudi-meta reads 6, 8 and 9")
TABLE_INITIAL_VERSION = _optional("hoodie.table.initial.version", "the version a 1.x table was created with")
CHECKSUM = _optional("hoodie.table.checksum", 'CRC32 of "<database>.<table>" (absent before 0.11)')
TIMELINE_LAYOUT = _optional(
    "hoodie.timeline.layout.version", "1 (version 6) or 2 (versions 8, 9); absent: the version's own"
)
TIMELINE_PATH = _text("hoodie.timeline.path", "timeline", "folder of active instants under .hoodie (layout 2)")
TIMELINE_HISTORY_PATH = _text(
    "hoodie.timeline.history.path", "history", "folder of the LSM archived timeline under the timeline (layout 2)"
)
ARCHIVELOG_FOLDER = _text("hoodie.archivelog.folder", "archived", "folder of the 0.x archived timeline under .hoodie")
TIMELINE_TIMEZONE = _text(
    "hoodie.table.timeline.timezone", "LOCAL", "zone instant times are written in: UTC or LOCAL (Java's default)"
)
RECORD_KEY_FIELDS = _optional("hoodie.table.recordkey.fields", "comma-separated record key fields")
PARTITION_FIELDS = _optional("hoodie.table.partition.fields", "comma-separated partition fields (`f:TYPE` too)")
PRECOMBINE_FIELD = _optional("hoodie.table.precombine.field", "0.x: the field that picks the merge winner")
ORDERING_FIELDS = _optional("hoodie.table.ordering.fields", "1.x: the fields that pick the merge winner")
BASE_FILE_FORMAT = _text("hoodie.table.base.file.format", "PARQUET", "PARQUET, HFILE, ORC or LANCE")
POPULATE_META_FIELDS = _flag("hoodie.populate.meta.fields", True, "whether records carry the _hoodie_* columns")
HIVE_STYLE_PARTITIONING = _flag(
    "hoodie.datasource.write.hive_style_partitioning", False, "partition folders named `field=value`"
)
PARTITION_PATH_URLENCODE = _flag(
    "hoodie.datasource.write.partitionpath.urlencode", False, "partition values URL-encoded in paths"
)
DROP_PARTITION_COLUMNS = _flag(
    "hoodie.datasource.write.drop.partition.columns", False, "partition columns left out of data files"
)
KEY_GENERATOR_CLASS = _optional("hoodie.table.keygenerator.class", "the key generator's Java class")
KEY_GENERATOR_TYPE = _optional("hoodie.table.keygenerator.type", "1.x: KeyGeneratorType (SIMPLE, COMPLEX, ...)")
PAYLOAD_CLASS = _text(
    "hoodie.compaction.payload.class",
    "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
    "0.x: the payload class that merges records (an empty text reads as the default too)",
)
MERGE_MODE = _optional("hoodie.record.merge.mode", "1.x: COMMIT_TIME_ORDERING, EVENT_TIME_ORDERING or CUSTOM")
MERGE_STRATEGY_ID = _optional("hoodie.record.merge.strategy.id", "1.x: the merger's strategy UUID")
CREATE_SCHEMA = _optional("hoodie.table.create.schema", "the Avro schema the table was created with")
METADATA_PARTITIONS = _optional(
    "hoodie.table.metadata.partitions", "completed metadata table partitions; non-empty: the MDT is enabled"
)
METADATA_PARTITIONS_INFLIGHT = _optional(
    "hoodie.table.metadata.partitions.inflight", "metadata table partitions being built"
)
INDEX_DEFS_PATH = _text(
    "hoodie.table.index.defs.path",
    ".hoodie/.index_defs/index.json",
    "the index definitions file, relative to the base path (an empty text reads as the default too)",
)

# ---------------------------------------------------------------- index (HoodieIndexConfig)

INDEX_TYPE = _optional("hoodie.index.type", "the writer's index: BUCKET is the one hudi-meta writes with")
BUCKET_ENGINE = _text("hoodie.index.bucket.engine", "SIMPLE", "SIMPLE (what hudi-meta writes) or CONSISTENT_HASHING")
NUM_BUCKETS = _optional("hoodie.bucket.index.num.buckets", "buckets per partition of a BUCKET-indexed table")
BUCKET_HASH_FIELD = _optional(
    "hoodie.bucket.index.hash.field", "fields the BUCKET index hashes; absent: the record key fields"
)

# ---------------------------------------------------------------- table services and writers

CLEAN_POLICY = _text(
    "hoodie.clean.policy",
    "KEEP_LATEST_COMMITS",
    "KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS or KEEP_LATEST_BY_HOURS (empty: the default)",
)
CLEAN_COMMITS_RETAINED = _number("hoodie.clean.commits.retained", 10, "commits the cleaner keeps readable")
CLEAN_FILE_VERSIONS_RETAINED = _number("hoodie.clean.fileversions.retained", 3, "file versions the cleaner keeps")
CLEAN_HOURS_RETAINED = _number("hoodie.clean.hours.retained", 24, "hours of commits the cleaner keeps readable")
KEEP_MIN_COMMITS = _number("hoodie.keep.min.commits", 20, "completed commits archival leaves on the active timeline")
KEEP_MAX_COMMITS = _number("hoodie.keep.max.commits", 30, "completed commits above which archival runs")
COMPACT_MAX_DELTA_COMMITS = _number(
    "hoodie.compact.inline.max.delta.commits", 5, "delta commits since the last compaction before the next"
)
COMPACT_MAX_DELTA_SECONDS = _number(
    "hoodie.compact.inline.max.delta.seconds", 3600, "seconds since the last compaction before the next"
)
LOGFILE_SIZE_THRESHOLD = _number(
    "hoodie.compaction.logfile.size.threshold",
    0,
    "bytes of log files a slice needs to be compacted (log-file-size strategy; a plan's strategy parameter too)",
)
LOCK_FILESYSTEM_PATH = _optional("hoodie.write.lock.filesystem.path", "folder of the table lock file; absent: .hoodie")
LOCK_EXPIRE_MINUTES = _number(
    "hoodie.write.lock.filesystem.expire", 1, "minutes after which a held lock counts as abandoned; 0: never"
)
LOCK_WAIT_MS = _number("hoodie.write.lock.wait_time_ms", 60_000, "how long a writer waits for the table lock")
HEARTBEAT_INTERVAL_MS = _number("hoodie.client.heartbeat.interval_in_ms", 60_000, "how often a writer heartbeats")
HEARTBEAT_TOLERABLE_MISSES = _number(
    "hoodie.client.heartbeat.tolerable.misses", 2, "heartbeats missed before a writer counts as dead"
)
METADATA_COMPACT_MAX_DELTA_COMMITS = _number(
    "hoodie.metadata.compact.max.delta.commits", 10, "metadata table delta commits before it is compacted"
)
METADATA_CLEANER_COMMITS_RETAINED = _optional(
    "hoodie.metadata.cleaner.commits.retained",
    "commits the metadata table's cleaner keeps; absent: max(20, 1.2 x the data table's)",
)

# ---------------------------------------------------------------- event time (hudi-meta's own, Hudi's names)

EVENT_TIME_FIELD = _optional(
    "hoodie.payload.event.time.field", "the field min event times come from (a plan's strategy parameter too)"
)
MIN_EVENT_TIME_HEADER = _flag(
    "hoodie.log.block.min.event.time.header",
    False,
    "whether our writers add the MIN_EVENT_TIME block header (off: stock readers fail on it)",
)
DATA_LATENCY = _optional(
    "hoodie.compaction.event.time.data.latency", "ms; event-time compactions at T = now - it (ours)"
)

# ---------------------------------------------------------------- catalog table properties (sync)

QUERY_AS_RO_TABLE = _flag(
    "hoodie.query.as.ro.table", False, "serde property: the catalog table reads the read-optimized view"
)
RO_EVENT_TIME_PREFIX = "hoodie.ro.event.time."  # the family of freshness properties a sync publishes (ours)
RO_THRESHOLD = _optional(RO_EVENT_TIME_PREFIX + "threshold", "T of the last event-time compaction, as a time")
RO_THRESHOLD_MS = _optional(RO_EVENT_TIME_PREFIX + "threshold.ms", "T of the last event-time compaction, epoch ms")
RO_WATERMARK = _optional(RO_EVENT_TIME_PREFIX + "watermark", "the RO view's watermark, as a time")
RO_WATERMARK_MS = _optional(RO_EVENT_TIME_PREFIX + "watermark.ms", "the RO view's watermark, epoch ms")
RO_COMPACTION_INSTANT = _optional(
    RO_EVENT_TIME_PREFIX + "compaction.instant", "the event-time compaction the RO view stands on"
)
RO_EXACT = _optional(RO_EVENT_TIME_PREFIX + "exact", '"true" when the RO view is exactly as of T')
