"""Table configuration read from `hoodie.properties`, with the keys each table version uses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hudi_meta.errors import UnsupportedTableError
from hudi_meta.table.file_group_reader import MergeSpec

MOR = "MERGE_ON_READ"
COW = "COPY_ON_WRITE"
EVENT_TIME_FIELD = "hoodie.payload.event.time.field"
MIN_EVENT_TIME_HEADER = "hoodie.log.block.min.event.time.header"


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip().split(":")[0] for v in (value or "").split(",") if v.strip())


@dataclass(frozen=True)
class TableConfig:
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
        return _split(self.props.get("hoodie.table.metadata.partitions"))

    @property
    def event_time_field(self) -> str | None:
        return self.props.get(EVENT_TIME_FIELD) or None

    @property
    def min_event_time_header(self) -> bool:
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
        parts = []
        for name, value in zip(self.partition_fields, values, strict=True):
            text = "__HIVE_DEFAULT_PARTITION__" if value is None or value == "" else str(value)
            parts.append(f"{name}={text}" if self.hive_style_partitioning else text)
        return "/".join(parts)

    def merge_spec(self) -> MergeSpec:
        ordering = self.ordering_fields
        return MergeSpec(
            record_key_fields=self.record_key_fields,
            ordering_field=ordering[0] if ordering else None,
            populate_meta_fields=self.populate_meta_fields,
            complex_key=self.is_complex_key,
        )

    def check_readable(self) -> None:
        """Raise a clear error for tables whose files this reader cannot decode."""
        if self.base_file_format not in ("PARQUET",):
            raise UnsupportedTableError(
                f"table {self.name!r} uses {self.base_file_format} base files "
                f"(hoodie.table.base.file.format); only PARQUET is supported"
            )
