"""What one indexer run did: counts that `Indexer.run` returns and `hudi-meta index` prints."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class IndexRunStats:
    instants_added: int = 0
    instants_updated: int = 0
    instants_archived: int = 0
    instants_removed: int = 0
    log_files_added: int = 0
    log_files_scanned: int = 0
    log_files_removed: int = 0
    blocks_added: int = 0
    blocks_event_time_resolved: int = 0
    blocks_late_counted: int = 0
    plans_added: int = 0
    plans_removed: int = 0
    links: int = 0

    def changed(self) -> bool:
        return any(vars(self).values())

    def __str__(self) -> str:
        """The non-zero counts, for the log: `instants_added=3 blocks_added=12`, or `nothing new`."""
        counts = [f"{k}={v}" for k, v in vars(self).items() if v]
        return " ".join(counts) or "nothing new"
