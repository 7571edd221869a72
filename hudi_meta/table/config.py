"""Table configuration read from `hoodie.properties`, with the keys each table version uses.

A file is taken as a table's only if it passes `check_properties`, whose rules come from Java's
`HoodieTableConfig` (hudi-common/src/main/java/org/apache/hudi/common/table/HoodieTableConfig.java) and the enums
behind its keys, and from hudi-rs's own validation (crates/core/src/config/table.rs):

- `hoodie.table.name`, `hoodie.table.type` and `hoodie.table.version` are required and not empty: Java 0.x refused
  a file without the type or the name ("hoodie.properties file seems invalid"), hudi-rs requires all three, and
  every Java writer writes them. Java 1.x would default a missing type to COPY_ON_WRITE, which reads a MOR table
  without its logs: a stale answer, so we refuse as hudi-rs does.
- `hoodie.table.checksum`, when present, is the CRC32 of "<database>.<table>" (ConfigUtils.fetchConfigs with
  HoodieTableConfig.validateChecksum); checked right after the name, before any other key is trusted.
- A key with a closed set of values holds one of Java's (matched ignoring case, as hudi-rs does): the table type
  (HoodieTableType), base file format (HoodieFileFormat), timeline time zone (HoodieTimelineTimeZone), merge mode
  (RecordMergeMode; empty means unset there), key generator type (KeyGeneratorType), and true/false for the
  booleans we read (Java reads any other text as false, hudi-rs refuses it).
- The table version is a Java int of HoodieTableVersion (0 to 9); this package reads 6, 8 and 9 and refuses the
  others as unsupported. The timeline layout, when given, is the one that version uses
  (HoodieTableVersion.getTimelineLayoutVersion: 1 for 6, 2 for 8 and 9), as hudi-rs checks: another layout
  would list the timeline from the wrong folder and answer with nothing.

A known value this package does not read (ORC base files, CUSTOM merging) passes here and is refused, naming the
key, by what cannot honour it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hudi_meta.errors import TablePropertiesError, UnsupportedTableError
from hudi_meta.file_group.merge.rules import MergeMode, MergeSpec
from hudi_meta.format import config_keys as keys
from hudi_meta.format.properties import checksum_ok, java_int

MOR = "MERGE_ON_READ"
COW = "COPY_ON_WRITE"
# kept for hudi_meta/index/registry.py until it reads hudi_meta.format.config_keys (issue 37)
DEFAULT_PARTITION_PATH = "__HIVE_DEFAULT_PARTITION__"  # a null or empty partition value
HUDI_TABLE_VERSIONS = range(10)  # HoodieTableVersion ZERO..NINE
READ_VERSIONS = {6: 1, 8: 2, 9: 2}  # the table versions read here, each with its timeline layout
_BOOLEAN = ("TRUE", "FALSE")
# Java's enum constants for each key with a closed set of values (HoodieTableType, HoodieFileFormat's base file
# formats, HoodieTimelineTimeZone, RecordMergeMode, KeyGeneratorType), and the booleans read here
_KEY_GENERATOR_TYPES = (
    "SIMPLE", "SIMPLE_AVRO", "COMPLEX", "COMPLEX_AVRO", "TIMESTAMP", "TIMESTAMP_AVRO", "CUSTOM", "CUSTOM_AVRO",
    "NON_PARTITION", "NON_PARTITION_AVRO", "GLOBAL_DELETE", "GLOBAL_DELETE_AVRO", "AUTO_RECORD", "AUTO_RECORD_AVRO",
    "HOODIE_TABLE_METADATA", "SPARK_SQL", "SPARK_SQL_UUID", "SPARK_SQL_MERGE_INTO", "STREAMER_TEST", "USER_PROVIDED",
)  # fmt: skip
_CHOICES: dict[str, tuple[str, ...]] = {
    keys.TABLE_TYPE.name: (COW, MOR),
    keys.BASE_FILE_FORMAT.name: ("PARQUET", "HFILE", "ORC", "LANCE"),
    keys.TIMELINE_TIMEZONE.name: ("LOCAL", "UTC"),
    keys.MERGE_MODE.name: ("COMMIT_TIME_ORDERING", "EVENT_TIME_ORDERING", "CUSTOM"),
    keys.KEY_GENERATOR_TYPE.name: _KEY_GENERATOR_TYPES,
    keys.POPULATE_META_FIELDS.name: _BOOLEAN,
    keys.HIVE_STYLE_PARTITIONING.name: _BOOLEAN,
    keys.PARTITION_PATH_URLENCODE.name: _BOOLEAN,
    keys.DROP_PARTITION_COLUMNS.name: _BOOLEAN,
    keys.MIN_EVENT_TIME_HEADER.name: _BOOLEAN,
}


def _shown(value: str) -> str:
    """A value as an error line quotes it: escaped (a damaged file may hold anything), and cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_properties(props: Mapping[str, str], path: str) -> None:
    """Refuse `props` (read from `path`) unless they are a Hudi table's that this package reads, by the rules in
    the module docstring: `TablePropertiesError` for a missing key or a value Hudi does not define,
    `UnsupportedTableError` for a table version Hudi defines but this package does not read. Both name the key."""

    def refuse(key: str, problem: str) -> TablePropertiesError:
        return TablePropertiesError(path, key, problem)

    def required(key: str) -> str:
        value = props.get(key, "")
        if not value:
            raise refuse(key, f"{key} is {'empty' if key in props else 'missing'} (every Hudi table has it)")
        return value

    required(keys.TABLE_NAME.name)
    if not checksum_ok(props):
        checksum = keys.CHECKSUM.name
        raise refuse(checksum, f"{checksum}={_shown(props[checksum])} is not its table name's checksum")
    required(keys.TABLE_TYPE.name)
    text = required(keys.TABLE_VERSION.name)
    for key, choices in _CHOICES.items():
        value = props.get(key)
        if value is None or (key == keys.MERGE_MODE.name and value == ""):
            continue
        if value.upper() not in choices:
            raise refuse(key, f"{key}={_shown(value)} is none of Hudi's values ({', '.join(choices)})")
    version, version_key = java_int(text), keys.TABLE_VERSION.name
    if version not in HUDI_TABLE_VERSIONS:
        raise refuse(version_key, f"{version_key}={_shown(text)} is no Hudi table version (0 to 9)")
    if version not in READ_VERSIONS:
        raise UnsupportedTableError(
            f"{path}: {version_key}={version} is not read here: hudi-meta reads table versions 6, 8 and 9 "
            "(Hudi 0.14-0.15, 1.0, 1.1); upgrade the table to one of them with Hudi"
        )
    layout = keys.TIMELINE_LAYOUT.of(props)
    if layout is not None and java_int(layout) != READ_VERSIONS[version]:
        raise refuse(
            keys.TIMELINE_LAYOUT.name,
            f"{keys.TIMELINE_LAYOUT.name}={_shown(layout)}, but table version {version} uses timeline layout "
            f"{READ_VERSIONS[version]}",
        )
    buckets, buckets_key = keys.NUM_BUCKETS.of(props), keys.NUM_BUCKETS.name
    if buckets is not None and (java_int(buckets) or 0) < 1:
        raise refuse(buckets_key, f"{buckets_key}={_shown(buckets)} is not a whole number of buckets")


_PAYLOAD_MODES = {
    "OverwriteWithLatestAvroPayload": MergeMode.OVERWRITE_WITH_LATEST,
    "DefaultHoodieRecordPayload": MergeMode.DEFAULT_PAYLOAD,
    "EventTimeAvroPayload": MergeMode.DEFAULT_PAYLOAD,
}


def timeline_zone(setting: str) -> dt.tzinfo:
    """The zone of a `hoodie.table.timeline.timezone` setting: UTC, else this machine's zone (Java's LOCAL)."""
    if setting.upper() == "UTC":
        return dt.UTC
    return dt.datetime.now().astimezone().tzinfo or dt.UTC


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip().split(":")[0] for v in (value or "").split(",") if v.strip())


@dataclass(frozen=True)
class TableConfig:
    """A table's `hoodie.properties`, read with the defaults Java Hudi applies when a key is absent, and the
    renamed keys of versions 8/9 (ordering fields, merge mode, timeline path) behind the same properties.

    Immutable: writers change the file, not this object (reopen the table to see the change). A property the
    reader cannot honour raises `UnsupportedTableError` naming the key, never a silently wrong read.
    """

    props: Mapping[str, str]

    @classmethod
    def load(cls, props: Mapping[str, str], path: str) -> TableConfig:
        """The config of the `hoodie.properties` at `path` (read into `props`), refused by `check_properties`
        unless it is a Hudi table's that this package reads."""
        check_properties(props, path)
        return cls(props)

    @property
    def name(self) -> str:
        return keys.TABLE_NAME.of(self.props)

    @property
    def database(self) -> str:
        return keys.DATABASE_NAME.of(self.props)

    @property
    def table_type(self) -> str:
        return keys.TABLE_TYPE.of(self.props).upper()

    @property
    def is_mor(self) -> bool:
        return self.table_type == MOR

    @property
    def version(self) -> int:
        return keys.TABLE_VERSION.of(self.props)

    @property
    def timeline_layout(self) -> int:
        default = "2" if self.version >= 8 else "1"
        return int(self.props.get(keys.TIMELINE_LAYOUT.name, default))  # absent: the version's own

    @property
    def timeline_dir(self) -> str:
        """Folder of active instants relative to `.hoodie/`."""
        return keys.TIMELINE_PATH.of(self.props) if self.timeline_layout >= 2 else ""

    @property
    def record_key_fields(self) -> tuple[str, ...]:
        return _split(keys.RECORD_KEY_FIELDS.of(self.props))

    @property
    def ordering_fields(self) -> tuple[str, ...]:
        """The fields that pick the merge winner (1.x `hoodie.table.ordering.fields`, 0.x precombine field)."""
        return _split(keys.ORDERING_FIELDS.of(self.props) or keys.PRECOMBINE_FIELD.of(self.props))

    @property
    def partition_fields(self) -> tuple[str, ...]:
        return _split(keys.PARTITION_FIELDS.of(self.props))

    @property
    def base_file_format(self) -> str:
        return keys.BASE_FILE_FORMAT.of(self.props).upper()

    @property
    def populate_meta_fields(self) -> bool:
        return keys.POPULATE_META_FIELDS.of(self.props)

    @property
    def hive_style_partitioning(self) -> bool:
        return keys.HIVE_STYLE_PARTITIONING.of(self.props)

    @property
    def is_complex_key(self) -> bool:
        keygen = keys.KEY_GENERATOR_CLASS.of(self.props) or ""
        keygen += (keys.KEY_GENERATOR_TYPE.of(self.props) or "").upper()
        return "Complex" in keygen or "COMPLEX" in keygen or len(self.record_key_fields) > 1

    @property
    def metadata_partitions(self) -> tuple[str, ...]:
        """Partitions of the Hudi metadata table; non-empty means it is enabled."""
        return _split(keys.METADATA_PARTITIONS.of(self.props))

    def refuse_without_metadata_writer(self, base_path: str, verb: str) -> None:
        """Guard for callers of the table layer: a table with a metadata table is changed only together with it
        (`hudi_meta.metadata.sync` makes the writer that keeps it in step). `verb`: "write", "roll back writes"."""
        if self.metadata_partitions:
            raise UnsupportedTableError(
                f"{base_path} has a metadata table ({keys.METADATA_PARTITIONS.name}="
                f"{','.join(self.metadata_partitions)}): {verb} through hudi_meta.metadata.sync, which keeps it in step"
            )

    @property
    def event_time_field(self) -> str | None:
        """`hoodie.payload.event.time.field`: where min event times come from (None: not declared here)."""
        return keys.EVENT_TIME_FIELD.of(self.props) or None

    @property
    def min_event_time_header(self) -> bool:
        """Whether our writers add the MIN_EVENT_TIME block header (off by default: stock readers fail on it)."""
        return keys.MIN_EVENT_TIME_HEADER.of(self.props)

    @property
    def num_buckets(self) -> int | None:
        """Bucket count of a BUCKET-indexed table (`hoodie.bucket.index.num.buckets`)."""
        value = keys.NUM_BUCKETS.of(self.props)
        return int(value) if value else None

    @property
    def bucket_hash_fields(self) -> tuple[str, ...]:
        """Fields the BUCKET index hashes (`hoodie.bucket.index.hash.field`; default: the record key fields)."""
        return _split(keys.BUCKET_HASH_FIELD.of(self.props)) or self.record_key_fields

    def partition_path(self, values: Sequence[object]) -> str:
        """The partition path of a record with these partition field values (as the key generators build it)."""
        return "/".join(self.partition_part(n, v) for n, v in zip(self.partition_fields, values, strict=True))

    def partition_part(self, name: str, value: object) -> str:
        """One field's level of a partition path."""
        text = DEFAULT_PARTITION_PATH if value is None or value == "" else str(value)
        return f"{name}={text}" if self.hive_style_partitioning else text

    @property
    def timeline_timezone(self) -> dt.tzinfo:
        """The zone instant times are written in (`hoodie.table.timeline.timezone`: UTC, or Java's default LOCAL)."""
        return timeline_zone(keys.TIMELINE_TIMEZONE.of(self.props))

    @property
    def payload_class(self) -> str:
        """The 0.x payload class (Java's default when the table does not name one)."""
        return keys.PAYLOAD_CLASS.or_default(self.props)

    @property
    def merge_mode(self) -> MergeMode:
        """How records merge: 1.x tables declare `hoodie.record.merge.mode`; 0.x tables follow the payload class."""
        declared = (keys.MERGE_MODE.of(self.props) or "").upper()
        if self.version >= 8 and declared:
            if declared in (MergeMode.EVENT_TIME_ORDERING.value, MergeMode.COMMIT_TIME_ORDERING.value):
                return MergeMode(declared)
            raise UnsupportedTableError(
                f"table {self.name!r} uses {keys.MERGE_MODE.name}={declared}; only EVENT_TIME_ORDERING "
                "and COMMIT_TIME_ORDERING are supported"
            )
        short = self.payload_class.rsplit(".", 1)[-1]
        mode = _PAYLOAD_MODES.get(short)
        if mode is None:
            raise UnsupportedTableError(
                f"table {self.name!r} uses the payload class {self.payload_class} ({keys.PAYLOAD_CLASS.name}); "
                "supported: " + ", ".join(sorted(_PAYLOAD_MODES))
            )
        if self.version >= 8:  # 1.x reads a 0.x payload class as the merge mode it stands for
            overwrite = mode is MergeMode.OVERWRITE_WITH_LATEST
            return MergeMode.COMMIT_TIME_ORDERING if overwrite else MergeMode.EVENT_TIME_ORDERING
        return mode

    def merge_spec(self) -> MergeSpec:
        """How the file-group reader merges this table's records (the same for every engine)."""
        ordering = self.ordering_fields
        return MergeSpec(
            record_key_fields=self.record_key_fields,
            ordering_field=ordering[0] if ordering else None,
            populate_meta_fields=self.populate_meta_fields,
            complex_key=self.is_complex_key,
            merge_mode=self.merge_mode,
        )

    def check_readable(self) -> None:
        """Raise a clear error for tables whose files this reader cannot decode."""
        if self.base_file_format not in ("PARQUET",):
            raise UnsupportedTableError(
                f"table {self.name!r} uses {self.base_file_format} base files "
                f"({keys.BASE_FILE_FORMAT.name}); only PARQUET is supported"
            )
