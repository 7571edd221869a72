"""The TBLPROPERTIES a sync publishes (docs/catalog-and-freshness.md section 3), and what must change on a registered
table: pure.

Freshness comes only from completed instants (`hudi_meta.freshness`); a key whose value is unknown now (no
event-time compaction left after a rollback, a watermark that cannot be known) is removed rather than left
stating an old value: the published freshness never overstates.
"""

from __future__ import annotations

from collections.abc import Mapping

from hudi_meta.format import config_keys as keys
from hudi_meta.freshness import Freshness
from hudi_meta.table.times import format_time_ms

# the names below are the registry's (format/config_keys.py); this module publishes them
THRESHOLD = keys.RO_THRESHOLD.name
THRESHOLD_MS = keys.RO_THRESHOLD_MS.name
WATERMARK = keys.RO_WATERMARK.name
WATERMARK_MS = keys.RO_WATERMARK_MS.name
COMPACTION_INSTANT = keys.RO_COMPACTION_INSTANT.name
EXACT = keys.RO_EXACT.name
LAST_COMMIT_TIME_SYNC = "last_commit_time_sync"
LAST_COMMIT_COMPLETION_TIME_SYNC = "last_commit_completion_time_sync"  # Hudi 1.x's HiveSyncTool
FRESHNESS_KEYS = (THRESHOLD, THRESHOLD_MS, WATERMARK, WATERMARK_MS, COMPACTION_INSTANT, EXACT)


def published(
    f: Freshness, last_commit_time: str | None, last_commit_completion_time: str | None = None
) -> dict[str, str | None]:
    """Our keys and their values now (None: the key must not be there), with Hudi's own `last_commit_time_sync`
    and, where the timeline records completion times (table versions 8 and 9), `last_commit_completion_time_sync`,
    as HiveSyncTool writes them (`HoodieSyncClient.getLastCommitTime`, `getLastCommitCompletionTime`). A version 6
    table has no completion times: a value another tool wrote there is left as it is."""
    threshold, watermark = f.threshold_ms, f.watermark_ms
    completion = {LAST_COMMIT_COMPLETION_TIME_SYNC: last_commit_completion_time} if last_commit_completion_time else {}
    return {
        THRESHOLD: format_time_ms(threshold) if threshold is not None else None,
        THRESHOLD_MS: str(threshold) if threshold is not None else None,
        WATERMARK: format_time_ms(watermark) if watermark is not None else None,
        WATERMARK_MS: str(watermark) if watermark is not None else None,
        COMPACTION_INSTANT: f.compaction_instant,
        EXACT: (str(f.exact).lower() if f.compaction_instant is not None else None),
        LAST_COMMIT_TIME_SYNC: last_commit_time,
        **completion,
    }


def changes(current: Mapping[str, str], wanted: Mapping[str, str | None]) -> dict[str, str | None]:
    """The keys to set (or remove, None) so that `current` shows `wanted`; empty when nothing changed."""
    return {k: v for k, v in wanted.items() if current.get(k) != v and not (v is None and k not in current)}
