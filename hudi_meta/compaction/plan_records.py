"""The plain records planning works on, built from the index by `hudi_meta.compaction.candidates`.

Named tuples rather than frozen dataclasses: as immutable and comparable, and a plan of 50,000 file groups
builds 10^5 of them, where a frozen dataclass's `__init__` cost a tenth of the planning time.
"""

from __future__ import annotations

from typing import NamedTuple


class LogFileInfo(NamedTuple):
    """One log file of a slice. `min_event_time` is over its committed data and delete blocks; `target` is
    the physical file when this log file is a link."""

    name: str
    version: int
    size: int
    min_event_time: int | None  # None: no committed record with an event time (or unknown, see below)
    target: str | None = None
    committed: bool = True  # every block committed before the compaction instant
    event_time_known: bool = True  # False: some committed block's min event time is not resolved yet
    # a carry log's versions held at or before the threshold of the compaction that wrote it (their min event
    # time): they never make the file due by themselves (`min_event_time` is over its other blocks), yet they
    # are not in a base file
    held_min_event_time: int | None = None

    @property
    def physical(self) -> str:
        return self.target or self.name


class SliceInfo(NamedTuple):
    """The newest slice of a file group, its log files in log order."""

    partition: str
    file_id: str
    base_instant: str
    base_file: str | None
    log_files: tuple[LogFileInfo, ...]


class PlannedOperation(NamedTuple):
    """What compacting one slice means: merge `to_compact` into a new base file, link `to_keep`."""

    slice: SliceInfo
    to_compact: tuple[LogFileInfo, ...]
    to_keep: tuple[LogFileInfo, ...]

    @property
    def log_size_compacted(self) -> int:
        return sum(f.size for f in self.to_compact)

    def metrics(self) -> dict[str, float]:
        """Hudi's strategy metric keys (`CompactionStrategy.captureMetrics`). `TOTAL_LOG_FILES_SIZE` is the one Java
        needs (its executor unboxes it); the IO figures count the compacted log files only, in MB (Java adds the base
        file, in whole MB: planning here reads the index, which keeps no base file sizes)."""
        size = self.log_size_compacted
        log_mb = size / (1024 * 1024)
        return {
            "TOTAL_LOG_FILES": float(len(self.to_compact)),
            "TOTAL_LOG_FILES_SIZE": float(size),
            "TOTAL_IO_READ_MB": log_mb,
            "TOTAL_IO_WRITE_MB": log_mb,
            "TOTAL_IO_MB": 2 * log_mb,
        }
