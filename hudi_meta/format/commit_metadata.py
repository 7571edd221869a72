"""Commit metadata: JSON `HoodieCommitMetadata` (table version 6) and Avro (versions 8/9), one model.

Unknown keys are ignored on read (Jackson runs with FAIL_ON_UNKNOWN_PROPERTIES off); on write we emit
the fields Hudi 0.14/0.15 emits.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field, fields
from typing import Any

from hudi_meta.errors import CorruptFileError
from hudi_meta.format.avro_container import read_container


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

    def to_json(self) -> bytes:
        """The table version 6 form (what we write); versions 8/9 are read, never written."""
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
