"""Compaction strategies (as the RFC proposes them): which log files of a slice to merge, and which
operations to keep. `EventTimeBasedCompactionStrategy` merges the prefix of log files older than T."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hudi_meta.compaction.plan_records import LogFileInfo, PlannedOperation, SliceInfo
from hudi_meta.format.config_keys import LOGFILE_SIZE_THRESHOLD
from hudi_meta.format.links import THRESHOLD_PARAM
from hudi_meta.gc_pause import paused_gc
from hudi_meta.spelling import Spelled

EVENT_TIME_STRATEGY = "org.apache.hudi.table.action.compact.strategy.EventTimeBasedCompactionStrategy"
LOG_FILE_SIZE_STRATEGY = "org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy"
UNBOUNDED_STRATEGY = "org.apache.hudi.table.action.compact.strategy.UnBoundedCompactionStrategy"


class Strategy(Spelled):
    """Which log files to compact (`--strategy`); Hudi's class names, full or short, read as these."""

    EVENT_TIME = "event-time"
    LOG_FILE_SIZE = "log-file-size"
    UNBOUNDED = "unbounded"

    @property
    def class_name(self) -> str:
        """Hudi's class of the strategy, as a plan records it."""
        return {
            Strategy.EVENT_TIME: EVENT_TIME_STRATEGY,
            Strategy.LOG_FILE_SIZE: LOG_FILE_SIZE_STRATEGY,
            Strategy.UNBOUNDED: UNBOUNDED_STRATEGY,
        }[self]

    @classmethod
    def aliases(cls) -> dict[str, str]:
        names = {m.class_name: m.value for m in cls}
        return names | {full.rsplit(".", 1)[-1]: value for full, value in names.items()}


def committed_prefix(slice: SliceInfo) -> int:
    """How many leading log files may be merged: up to the first one with a write not yet committed."""
    for i, f in enumerate(slice.log_files):
        if not f.committed:
            return i
    return len(slice.log_files)


class CompactionStrategy:
    """Whole-slice compaction: every log file is merged, every operation kept (UnBounded)."""

    name = UNBOUNDED_STRATEGY

    def filter_log_files(self, slice: SliceInfo) -> tuple[tuple[LogFileInfo, ...], tuple[LogFileInfo, ...]]:
        """(log files to compact, log files to keep), both in log order: the committed prefix is merged."""
        k = committed_prefix(slice)
        return slice.log_files[:k], slice.log_files[k:]

    def order_and_filter(self, operations: Sequence[PlannedOperation]) -> list[PlannedOperation]:
        return [op for op in operations if op.to_compact]

    def params(self) -> dict[str, str]:
        return {}


UnBoundedCompactionStrategy = CompactionStrategy


@dataclass
class LogFileSizeBasedCompactionStrategy(CompactionStrategy):
    """Hudi's default: slices whose log files total at least `threshold_bytes`, largest first, up to
    `target_io_mb` of IO."""

    threshold_bytes: int = 0
    target_io_mb: float = 512_000.0
    name = LOG_FILE_SIZE_STRATEGY

    def order_and_filter(self, operations: Sequence[PlannedOperation]) -> list[PlannedOperation]:
        chosen = [op for op in operations if op.to_compact and op.log_size_compacted >= self.threshold_bytes]
        chosen.sort(key=lambda op: op.log_size_compacted, reverse=True)
        kept, io = [], 0.0
        for op in chosen:
            if io >= self.target_io_mb:
                break
            kept.append(op)
            io += op.metrics()["TOTAL_IO_MB"]
        return kept

    def params(self) -> dict[str, str]:
        return {LOGFILE_SIZE_THRESHOLD.name: str(self.threshold_bytes)}


@dataclass
class EventTimeBasedCompactionStrategy(CompactionStrategy):
    """Per slice with log files L1..Ln: k = the largest index with min(Lk) <= T; compact L1..Lk, keep the
    rest (a prefix, so merge order is kept). Slices with k = 0 are left alone."""

    threshold_ms: int = 0
    name = EVENT_TIME_STRATEGY

    def filter_log_files(self, slice: SliceInfo) -> tuple[tuple[LogFileInfo, ...], tuple[LogFileInfo, ...]]:
        k, threshold = 0, self.threshold_ms
        for i, log in enumerate(slice.log_files, start=1):
            if not log.committed:
                break  # the committed prefix only (see committed_prefix)
            if not log.event_time_known:
                break  # unknown times neither join the merge nor count as after T (see achieved_threshold)
            if log.min_event_time is not None and log.min_event_time <= threshold:
                k = i
        return slice.log_files[:k], slice.log_files[k:]

    def params(self) -> dict[str, str]:
        return {THRESHOLD_PARAM: str(self.threshold_ms)}


@paused_gc()
def plan_operations(slices: Sequence[SliceInfo], strategy: CompactionStrategy) -> list[PlannedOperation]:
    """Apply a strategy to the candidate slices."""
    split = strategy.filter_log_files
    return strategy.order_and_filter([PlannedOperation(s, *split(s)) for s in slices])


def exact_rewrites(
    slices: Sequence[SliceInfo],
    operations: Sequence[PlannedOperation],
    base_max_event_times: Mapping[tuple[str, str], int | None],
    threshold_ms: int,
) -> list[PlannedOperation]:
    """The operations an exact plan adds so that no base file in RO holds a record after T: each slice it does not
    compact whose base file may hold one (its latest event time after T, or unknown, or not looked up) is rewritten
    with nothing merged, its records after T moved to the carry log and its log files linked after it."""
    planned = {(op.slice.partition, op.slice.file_id) for op in operations}
    extra = []
    for s in slices:
        key = (s.partition, s.file_id)
        if s.base_file is None or key in planned:
            continue
        latest = base_max_event_times.get(key)
        if latest is None or latest > threshold_ms:
            extra.append(PlannedOperation(s, (), s.log_files))
    return extra


@dataclass(frozen=True)
class AchievedThreshold:
    """What an event-time plan guarantees: every committed record with event time <= `threshold_ms` is in a
    base file once the plan commits; None when it cannot guarantee any threshold (`reason` says why)."""

    threshold_ms: int | None
    reason: str


def achieved_threshold(
    slices: Sequence[SliceInfo], operations: Sequence[PlannedOperation], requested_ms: int
) -> AchievedThreshold:
    """The threshold a plan achieves: the requested T, lowered below the min event time of every log file it
    leaves un-merged (kept after an uncommitted file, say). A left log file whose event times are unknown
    blocks any guarantee. `slices` are all candidate slices, planned or not."""
    merged = {(op.slice.partition, op.slice.file_id): {f.name for f in op.to_compact} for op in operations}
    achieved = requested_ms
    for s in slices:
        done = merged.get((s.partition, s.file_id), set())
        for log in s.log_files:
            if log.name in done:
                continue
            if not log.event_time_known:
                return AchievedThreshold(
                    None, f"log file {log.name} ({s.partition or 'non-partitioned'}) has unresolved event times"
                )
            times = [t for t in (log.min_event_time, log.held_min_event_time) if t is not None]
            if times and min(times) <= achieved:
                achieved = min(times) - 1
    if achieved < requested_ms:
        return AchievedThreshold(achieved, f"lowered from {requested_ms}: a log file left un-merged holds older data")
    return AchievedThreshold(achieved, "as requested")
