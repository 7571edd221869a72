"""The record an MDT partition holds, as plain data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MetadataRecord:
    """One record of MDT partition `partition` (`files`, `column_stats`, `partition_stats`, `bloom_filters`,
    `record_index`, `secondary_index_<name>`) under `key` (the HFile cell key).

    `payload` is the `HoodieMetadataRecord` Avro datum as a dict (field names as in HoodieMetadata.avsc, `key`
    included, the `_hoodie_*` meta fields left out: they are null in MDT records); None removes the key (a DELETE
    block entry, as Java writes record-index and secondary-index removals)."""

    partition: str
    key: str
    payload: dict[str, Any] | None

    @property
    def is_delete(self) -> bool:
        return self.payload is None
