"""Commit metadata: JSON `HoodieCommitMetadata` (table version 6) and Avro (versions 8/9), one model.

Unknown keys are ignored on read (Jackson runs with FAIL_ON_UNKNOWN_PROPERTIES off); on write we emit
the fields Hudi 0.14/0.15 emits, as JSON for timeline layout 1 and as an Avro container file of Java's
`HoodieCommitMetadata` schema for layout 2 (`CommitMetadataSerDeV2`).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field, fields
from typing import Any

from hudi_meta.errors import CorruptFileError
from hudi_meta.format.avro_container import load_schema, read_container, write_container


@functools.lru_cache(maxsize=1024)
def _camel(name: str) -> str:
    head, *tail = name.split("_")
    return head + "".join(t.title() for t in tail)


@functools.lru_cache(maxsize=1024)
def _snake(name: str) -> str:
    """Java's field name in Python's form; a commit repeats the same few dozen names for every write stat, so
    the conversion is cached (it was a fifth of a full index run)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@dataclass
class WriteStat:
    """HoodieWriteStat plus the HoodieDeltaWriteStat fields (log version, offset, files): what one write did to
    one file group. The indexer takes `min_event_time` (epoch ms, as Java converts it) as the second source of a
    log file's min event time, after the block header (docs/event-time.md section 2)."""

    file_id: str = ""
    path: str = ""
    prev_commit: str = "null"
    num_writes: int = 0
    num_deletes: int = 0
    num_update_writes: int = 0
    num_inserts: int = 0
    total_write_bytes: int = 0
    total_write_errors: int = 0
    temp_path: str | None = None
    partition_path: str = ""
    total_log_records: int = 0
    total_log_files_compacted: int = 0
    total_log_size_compacted: int = 0
    total_updated_records_compacted: int = 0
    total_log_blocks: int = 0
    total_corrupt_log_block: int = 0
    total_rollback_blocks: int = 0
    file_size_in_bytes: int = 0
    min_event_time: int | None = None
    max_event_time: int | None = None
    log_version: int | None = None
    log_offset: int | None = None
    base_file: str | None = None
    log_files: list[str] | None = None
    cdc_stats: dict[str, int] | None = None
    runtime_stats: dict[str, int] | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WriteStat:
        """From Hudi's camelCase JSON/Avro fields; unknown keys and nulls are ignored (defaults kept)."""
        kwargs = {name: v for k, v in d.items() if v is not None and (name := _snake(k)) in _WRITE_STAT_FIELDS}
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        """Hudi's camelCase fields; a base-file stat leaves out the delta fields, as Java writes it."""
        out = {_camel(f.name): getattr(self, f.name) for f in fields(self)}
        if self.log_files is None:  # a base-file write stat: no delta fields
            for key in ("logVersion", "logOffset", "baseFile", "logFiles"):
                out.pop(key)
        return out

    @property
    def file_name(self) -> str:
        """The written file's name (`path` is relative to the base path, partition included)."""
        return self.path.rsplit("/", 1)[-1]


_WRITE_STAT_FIELDS = frozenset(f.name for f in fields(WriteStat))


def _avro_stat_fields() -> frozenset[str]:
    stats = load_schema("HoodieCommitMetadata")["fields"][0]["type"][1]["values"]["items"]
    return frozenset(f["name"] for f in stats["fields"])


_AVRO_STAT_FIELDS = _avro_stat_fields()


@dataclass
class CommitMetadata:
    """The completed-instant metadata of a commit, deltacommit, compaction or replacecommit: the write stats per
    partition, plus `extra_metadata`, where Hudi keeps the writer schema and we keep a compaction's link
    operations and event-time threshold (docs/event-time.md section 8). Java Hudi and hudi-rs read what `to_json`
    writes."""

    partition_to_write_stats: dict[str, list[WriteStat]] = field(default_factory=dict)
    compacted: bool = False
    extra_metadata: dict[str, str] = field(default_factory=dict)
    operation_type: str = "UNKNOWN"
    partition_to_replace_file_ids: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CommitMetadata:
        """From the decoded JSON or Avro record; missing and null fields take Hudi's defaults."""
        stats = {
            (p or ""): [WriteStat.from_dict(s) for s in (lst or [])]
            for p, lst in (d.get("partitionToWriteStats") or {}).items()
        }
        return cls(
            partition_to_write_stats=stats,
            compacted=bool(d.get("compacted") or False),
            extra_metadata=dict(d.get("extraMetadata") or {}),
            operation_type=str(d.get("operationType") or "UNKNOWN"),
            partition_to_replace_file_ids={
                p: list(ids or []) for p, ids in (d.get("partitionToReplaceFileIds") or {}).items()
            },
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> CommitMetadata:
        """Decode either format: JSON (v6) or an Avro container file (v8/v9); empty means no metadata."""
        if not data.strip():
            return cls()
        if data[:4] == b"Obj\x01":
            record = read_container(data)
            return cls.from_dict(record or {})
        try:
            return cls.from_dict(json.loads(data.decode("utf-8")))
        except (UnicodeDecodeError, json.JSONDecodeError, AttributeError, TypeError) as e:
            raise CorruptFileError(f"commit metadata is neither JSON nor Avro: {e}") from e

    def to_bytes(self, layout: int) -> bytes:
        """The completed instant file's content in timeline `layout`: JSON (1) or Avro (2)."""
        return self.to_json() if layout < 2 else self.to_avro()

    def to_avro(self) -> bytes:
        """Timeline layout 2's form (versions 8/9): one `HoodieCommitMetadata` record in an Avro container file.
        Replacecommits (which need `HoodieReplaceCommitMetadata`) are never written here."""
        if self.partition_to_replace_file_ids:
            raise ValueError("replace commit metadata is not written in Avro here")
        stats = {
            p: [{k: v for k, v in s.to_dict().items() if k in _AVRO_STAT_FIELDS} for s in lst]
            for p, lst in self.partition_to_write_stats.items()
        }
        record = {
            "partitionToWriteStats": stats,
            "compacted": self.compacted,
            "extraMetadata": self.extra_metadata,
            "version": 1,
            "operationType": self.operation_type,
        }
        return write_container(record, "HoodieCommitMetadata")

    def to_json(self) -> bytes:
        """Timeline layout 1's form (table version 6)."""
        d: dict[str, Any] = {
            "partitionToWriteStats": {
                p: [s.to_dict() for s in stats] for p, stats in self.partition_to_write_stats.items()
            },
            "compacted": self.compacted,
            "extraMetadata": self.extra_metadata,
            "operationType": self.operation_type,
        }
        if self.partition_to_replace_file_ids:
            d["partitionToReplaceFileIds"] = self.partition_to_replace_file_ids
        return json.dumps(d, indent=2).encode("utf-8")

    def write_stats(self) -> list[WriteStat]:
        """Every partition's write stats in one list."""
        return [s for stats in self.partition_to_write_stats.values() for s in stats]

    @property
    def schema(self) -> str | None:
        """The Avro writer schema (JSON) Hudi records under `extraMetadata["schema"]`, if any."""
        return self.extra_metadata.get("schema")
