"""Which partitions a catalog table must gain, move or lose (docs/catalog-and-freshness.md section 3).

Partitions are dropped as HiveSyncTool drops them (`TimelineUtils.getDroppedPartitions`): a partition is gone when
a completed replacecommit of `delete_partition`, `insert_overwrite` or `insert_overwrite_table` replaced file
groups in it (`isDeletePartition`), or a completed clean deleted it (`isPartitionDeleted`), and no completed write
touched it at or after that instant (an overwrite that wrote the partition keeps it). A partition the catalog
holds for another reason (added by hand) is left as it is. A partition's location is compared as the metastore
writes it (`file:/p` for `/p`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hudi_meta.format.table_service_metadata import CleanMetadata
from hudi_meta.sync.catalog import Partition, same_location
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action

DELETING_OPERATIONS = frozenset(
    {"DELETE_PARTITION", "INSERT_OVERWRITE", "INSERT_OVERWRITE_TABLE"}
)  # WriteOperationType


def dropped_partitions(table: HudiTable) -> set[str]:
    """Partition paths the table dropped (module docstring), over the active timeline."""
    tl = table.timeline
    deleted: dict[str, str] = {}  # partition path -> the latest instant that dropped it
    for instant in tl.completed():
        if instant.action == Action.REPLACE_COMMIT:
            metadata = tl.commit_metadata(instant)
            if metadata.operation_type in DELETING_OPERATIONS:
                deleted.update((p, instant.requested_time) for p in metadata.partition_to_replace_file_ids)
        elif instant.action == Action.CLEAN:
            clean = CleanMetadata.from_bytes(tl.read_bytes(instant))
            deleted.update(
                (p, instant.requested_time) for p, m in clean.partition_metadata.items() if m.is_partition_deleted
            )
    if not deleted:
        return set()
    earliest = min(deleted.values())
    written: dict[str, str] = {}  # partition path -> the latest write at or after the earliest drop
    for instant in tl.completed_writes():
        if instant.requested_time >= earliest:
            written.update((p, instant.requested_time) for p in tl.commit_metadata(instant).partition_to_write_stats)
    return {p for p, at in deleted.items() if p and (p not in written or at > written[p])}


@dataclass(frozen=True)
class PartitionChanges:
    """What a catalog table's partitions need: partitions to add, partitions whose location changed, partition
    values to drop."""

    added: list[Partition]
    moved: list[Partition]
    dropped: list[tuple[str, ...]]

    def __bool__(self) -> bool:
        return bool(self.added or self.moved or self.dropped)


def partition_changes(
    wanted: Iterable[Partition],
    registered: Mapping[tuple[str, ...], str],
    dropped: Iterable[tuple[str, ...]],
) -> PartitionChanges:
    """The changes that take the `registered` partitions (values -> location) to `wanted`; of the partitions not
    wanted, only `dropped` ones are dropped."""
    wanted = list(wanted)
    added = [p for p in wanted if p.values not in registered]
    moved = [p for p in wanted if p.values in registered and not same_location(registered[p.values], p.location)]
    gone = sorted({v for v in dropped if v in registered} - {p.values for p in wanted})
    return PartitionChanges(added, moved, gone)
