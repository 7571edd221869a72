"""Table configuration read from `hoodie.properties`, with the keys each table version uses."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hudi_meta.errors import UnsupportedTableError
from hudi_meta.table.file_group_reader import MergeMode, MergeSpec

MOR = "MERGE_ON_READ"
COW = "COPY_ON_WRITE"
EVENT_TIME_FIELD = "hoodie.payload.event.time.field"
MIN_EVENT_TIME_HEADER = "hoodie.log.block.min.event.time.header"
PAYLOAD_CLASS = "hoodie.compaction.payload.class"
TIMELINE_TIMEZONE = "hoodie.table.timeline.timezone"
DEFAULT_PARTITION_PATH = "__HIVE_DEFAULT_PARTITION__"  # a null or empty partition value
MERGE_MODE = "hoodie.record.merge.mode"
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

    @property
    def name(self) -> str:
        return self.props.get("hoodie.table.name", "")

    @property
    def database(self) -> str:
        return self.props.get("hoodie.database.name", "")

    @property
    def table_type(self) -> str:
        return self.props.get("hoodie.table.type", COW)

    @property
    def is_mor(self) -> bool:
        return self.table_type == MOR

    @property
    def version(self) -> int:
        return int(self.props.get("hoodie.table.version", "0"))

    @property
    def timeline_layout(self) -> int:
        default = "2" if self.version >= 8 else "1"
        return int(self.props.get("hoodie.timeline.layout.version", default))

    @property
    def timeline_dir(self) -> str:
        """Folder of active instants relative to `.hoodie/`."""
        return self.props.get("hoodie.timeline.path", "timeline") if self.timeline_layout >= 2 else ""

    @property
    def record_key_fields(self) -> tuple[str, ...]:
        return _split(self.props.get("hoodie.table.recordkey.fields"))

    @property
    def ordering_fields(self) -> tuple[str, ...]:
        """The fields that pick the merge winner (1.x `hoodie.table.ordering.fields`, 0.x precombine field)."""
        return _split(self.props.get("hoodie.table.ordering.fields") or self.props.get("hoodie.table.precombine.field"))

    @property
    def partition_fields(self) -> tuple[str, ...]:
        return _split(self.props.get("hoodie.table.partition.fields"))

    @property
    def base_file_format(self) -> str:
        return self.props.get("hoodie.table.base.file.format", "PARQUET").upper()

    @property
    def populate_meta_fields(self) -> bool:
        return self.props.get("hoodie.populate.meta.fields", "true").lower() == "true"

    @property
    def hive_style_partitioning(self) -> bool:
        return self.props.get("hoodie.datasource.write.hive_style_partitioning", "false").lower() == "true"

    @property
    def is_complex_key(self) -> bool:
        keygen = self.props.get("hoodie.table.keygenerator.class", "") + self.props.get(
            "hoodie.table.keygenerator.type", ""
        )
        return "Complex" in keygen or "COMPLEX" in keygen or len(self.record_key_fields) > 1

    @property
    def metadata_partitions(self) -> tuple[str, ...]:
        """Partitions of the Hudi metadata table; non-empty means it is enabled, which compaction refuses."""
        return _split(self.props.get("hoodie.table.metadata.partitions"))

    @property
    def event_time_field(self) -> str | None:
        """`hoodie.payload.event.time.field`: where min event times come from (None: not declared here)."""
        return self.props.get(EVENT_TIME_FIELD) or None

    @property
    def min_event_time_header(self) -> bool:
        """Whether our writers add the MIN_EVENT_TIME block header (off by default: stock readers fail on it)."""
        return self.props.get(MIN_EVENT_TIME_HEADER, "false").lower() == "true"

    @property
    def num_buckets(self) -> int | None:
        """Bucket count of a BUCKET-indexed table (`hoodie.bucket.index.num.buckets`)."""
        value = self.props.get("hoodie.bucket.index.num.buckets")
        return int(value) if value else None

    @property
    def bucket_hash_fields(self) -> tuple[str, ...]:
        """Fields the BUCKET index hashes (`hoodie.bucket.index.hash.field`; default: the record key fields)."""
        return _split(self.props.get("hoodie.bucket.index.hash.field")) or self.record_key_fields

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
        return timeline_zone(self.props.get(TIMELINE_TIMEZONE, "LOCAL"))

    @property
    def payload_class(self) -> str:
        """The 0.x payload class (Java's default when the table does not name one)."""
        return self.props.get(PAYLOAD_CLASS) or "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"

    @property
    def merge_mode(self) -> MergeMode:
        """How records merge: 1.x tables declare `hoodie.record.merge.mode`; 0.x tables follow the payload class."""
        declared = self.props.get(MERGE_MODE, "").upper()
        if self.version >= 8 and declared:
            if declared in (MergeMode.EVENT_TIME_ORDERING.value, MergeMode.COMMIT_TIME_ORDERING.value):
                return MergeMode(declared)
            raise UnsupportedTableError(
                f"table {self.name!r} uses {MERGE_MODE}={declared}; only EVENT_TIME_ORDERING "
                "and COMMIT_TIME_ORDERING are supported"
            )
        short = self.payload_class.rsplit(".", 1)[-1]
        mode = _PAYLOAD_MODES.get(short)
        if mode is None:
            raise UnsupportedTableError(
                f"table {self.name!r} uses the payload class {self.payload_class} ({PAYLOAD_CLASS}); supported: "
                + ", ".join(sorted(_PAYLOAD_MODES))
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
                f"(hoodie.table.base.file.format); only PARQUET is supported"
            )
