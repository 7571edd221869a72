"""What a completed commit did, in a few numbers: the `summary` of an instant in `show timeline` (from the
index or straight from the files). It belongs with the table's commit metadata; it lives here until the
table layer takes it."""

from __future__ import annotations

from typing import Any

from hudi_meta.format.links import EXACT_RESULT_KEY, THRESHOLD_KEY
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action, Instant


def commit_summary(table: HudiTable, instant: Instant) -> dict[str, Any]:
    """Operation, counts, partitions (and an event-time compaction's threshold) of a completed commit,
    deltacommit or replacecommit; `{}` for any other instant."""
    if not instant.is_completed or instant.action not in (
        Action.COMMIT,
        Action.DELTA_COMMIT,
        Action.REPLACE_COMMIT,
    ):
        return {}
    md = table.timeline.commit_metadata(instant)
    stats = md.write_stats()
    summary: dict[str, Any] = {
        "operation_type": md.operation_type,
        "compacted": md.compacted,
        "num_writes": sum(s.num_writes for s in stats),
        "num_deletes": sum(s.num_deletes for s in stats),
        "files": len(stats),
        "partitions": sorted(md.partition_to_write_stats),
    }
    if THRESHOLD_KEY in md.extra_metadata:
        summary["threshold"] = md.extra_metadata[THRESHOLD_KEY]
    if EXACT_RESULT_KEY in md.extra_metadata:
        summary["exact"] = md.extra_metadata[EXACT_RESULT_KEY] == "true"
    return summary
