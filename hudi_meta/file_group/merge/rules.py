"""The merge rules: which of two versions of a record key wins, as Java Hudi merges them for the table's payload
class (0.x) or merge mode (1.x). Pure decisions over ordering values; the file-group reader and the compaction's
layout apply them (hudi-rs keeps them apart the same way: `merge/record_merger.rs`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class MergeMode(Enum):
    """How two versions of a record key merge; each follows Java Hudi's sources.

    | mode | log vs log | log data vs base | log delete vs base |
    | --- | --- | --- | --- |
    | OVERWRITE_WITH_LATEST (0.x `OverwriteWithLatestAvroPayload`) | ordering | log wins | delete wins |
    | DEFAULT_PAYLOAD (0.x `DefaultHoodieRecordPayload`, `EventTimeAvroPayload`) | ordering | ordering | delete wins |
    | EVENT_TIME_ORDERING (1.x) | ordering | ordering | ordering (none: delete wins) |
    | COMMIT_TIME_ORDERING (1.x) | later wins | log wins | delete wins |

    "ordering": the larger ordering value wins and ties go to the later record. Among log records (0.x
    `preCombine` and the log scanner), a delete with no ordering value (Java writes 0) always wins, and a data
    record after a delete always wins (Java's "natural order for delete record").
    """

    OVERWRITE_WITH_LATEST = "OVERWRITE_WITH_LATEST"
    DEFAULT_PAYLOAD = "DEFAULT_PAYLOAD"
    EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
    COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"


@dataclass(frozen=True)
class MergeSpec:
    """What the reader needs to know about the table to merge records."""

    record_key_fields: tuple[str, ...]
    ordering_field: str | None
    populate_meta_fields: bool = True
    complex_key: bool = False
    merge_mode: MergeMode = MergeMode.OVERWRITE_WITH_LATEST


@dataclass(frozen=True)
class LogRecord:
    """One record of a visible log block: data (`row` indexes the slice's log rows) or a delete (`row` None)."""

    key: str
    ordering: Any
    row: int | None
    instant: str  # the instant of the block that holds it

    @property
    def is_delete(self) -> bool:
        return self.row is None


def _at_least(new: Any, old: Any) -> bool:
    """True if ordering value `new` wins over `old` (ties: the newer record; no ordering value: the newer)."""
    if new is None or old is None:
        return True
    try:
        return bool(new >= old)
    except TypeError:
        return True


def is_natural_order(ordering: Any) -> bool:
    """A delete without an ordering value: Java writes 0 and treats it as commit-time ordering."""
    return ordering is None or (isinstance(ordering, int) and not isinstance(ordering, bool) and ordering == 0)


def log_replaces(new: LogRecord, old: LogRecord, mode: MergeMode) -> bool:
    """Whether a later log record replaces an earlier one of the same key."""
    if mode is MergeMode.COMMIT_TIME_ORDERING:
        return True
    if new.is_delete:
        return is_natural_order(new.ordering) or _at_least(new.ordering, old.ordering)
    if old.is_delete:
        if mode is MergeMode.EVENT_TIME_ORDERING and not is_natural_order(old.ordering):
            return _at_least(new.ordering, old.ordering)
        return True
    return _at_least(new.ordering, old.ordering)


def replaces_base(winner: LogRecord, base_ordering: Any, mode: MergeMode) -> bool:
    """Whether the log winner of a key replaces (or deletes) the base record of that key."""
    if mode in (MergeMode.OVERWRITE_WITH_LATEST, MergeMode.COMMIT_TIME_ORDERING):
        return True
    if winner.is_delete and (mode is MergeMode.DEFAULT_PAYLOAD or is_natural_order(winner.ordering)):
        return True
    return _at_least(winner.ordering, base_ordering)
