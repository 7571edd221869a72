"""Every state the index stores, in one place: instants, compaction plans, log blocks and links.

The values are the strings in the store's `state` / `status` columns (`StrEnum`s: members compare equal to
those strings, so rows read back need no conversion).
"""

from __future__ import annotations

from enum import StrEnum

from hudi_meta.timeline.instant import State

# An instant's state (`instant.state`, `table_service.state`) is the timeline's `State`; a compaction plan's state
# (`compaction_plan.state`) is the state of its compaction instant.
PlanState = State
PENDING_PLAN_STATES = (PlanState.REQUESTED, PlanState.INFLIGHT)  # plans whose compaction has not committed


class BlockStatus(StrEnum):
    """A log block's status (`log_block.status`), by the one rule for "committed" (`ViewInputs.is_committed`)."""

    COMMITTED = "committed"
    UNCOMMITTED = "uncommitted"  # its instant is pending (or failed and not rolled back yet)
    ROLLED_BACK = "rolled_back"  # a rollback (command block or rollback instant) names its instant
    CORRUPT = "corrupt"  # unreadable framing; never counted, never changes status


class LinkState(StrEnum):
    """A link's state (`link.state`): what its compaction and the file system say about it."""

    PLANNED = "planned"  # its compaction is pending and the link is not on disk yet
    PENDING = "pending"  # on disk, but its compaction is not committed (a run was interrupted)
    CREATED = "created"  # on disk, its compaction committed (or a symlink on disk no compaction names)
    REMOVED = "removed"  # its compaction committed, the link is gone from disk (cleaned)
