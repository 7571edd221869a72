"""Compaction triggers: whether scheduling may happen now (pure, over timeline facts).

`NUM_COMMITS` and `TIME_ELAPSED` are Hudi's own trigger strategies (`hoodie.compact.inline.trigger.strategy`,
with the defaults of `hoodie.compact.inline.max.delta.commits` and `...max.delta.seconds`); `EVENT_TIME` is
ours (docs/event-time.md section 3). The scheduler gathers the facts from the timeline and asks `decide`; a refusal is
an answer with a reason, not an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hudi_meta.spelling import Spelled


class Trigger(Spelled):
    """When to schedule at all (`--trigger`, `trigger = ...`; Hudi's `hoodie.compact.inline.trigger.strategy`
    spells NUM_COMMITS and TIME_ELAPSED as enum names, which read as these)."""

    EVENT_TIME = "event-time"
    NUM_COMMITS = "num-commits"
    TIME_ELAPSED = "time-elapsed"

    @classmethod
    def aliases(cls) -> dict[str, str]:
        return {"EVENT_TIME_TRIGGER": cls.EVENT_TIME.value}


@dataclass(frozen=True)
class TriggerFacts:
    """What the triggers look at, read from the table's timeline by the scheduler (pending: instant times)."""

    pending_compactions: Sequence[str]
    pending_clustering: Sequence[str]
    delta_commits_since_last_compaction: int
    seconds_since_last_compaction: float | None  # None: never compacted


@dataclass(frozen=True)
class Decision:
    """Whether to schedule, and the reason the scheduler reports either way."""

    allowed: bool
    reason: str


def decide(
    trigger: Trigger, facts: TriggerFacts, max_delta_commits: int = 5, max_delta_seconds: int = 3600
) -> Decision:
    """Apply `trigger` to `facts`. `EVENT_TIME` refuses while any compaction or clustering is pending: a plan is
    cut against the current slices, which pending work is about to replace. `NUM_COMMITS` and `TIME_ELAPSED` only
    count, as Hudi's do."""
    if trigger is Trigger.EVENT_TIME:
        busy = [*facts.pending_compactions, *facts.pending_clustering]
        if busy:
            return Decision(
                False,
                f"a compaction or clustering is pending ({', '.join(busy)}): event-time compactions run one at a time",
            )
        return Decision(True, "no compaction or clustering pending")
    if trigger is Trigger.NUM_COMMITS:
        n = facts.delta_commits_since_last_compaction
        return Decision(
            n >= max_delta_commits, f"{n} delta commits since the last compaction (need {max_delta_commits})"
        )
    s = facts.seconds_since_last_compaction
    ok = s is None or s >= max_delta_seconds
    return Decision(
        ok, f"{'never compacted' if s is None else f'{s:.0f}s since the last compaction'} (need {max_delta_seconds}s)"
    )
