"""Compaction triggers: whether scheduling may happen now (pure, over timeline facts)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

EVENT_TIME_TRIGGER = "EVENT_TIME_TRIGGER"
NUM_COMMITS = "NUM_COMMITS"
TIME_ELAPSED = "TIME_ELAPSED"


@dataclass(frozen=True)
class TriggerFacts:
    pending_compactions: Sequence[str]
    pending_clustering: Sequence[str]
    delta_commits_since_last_compaction: int
    seconds_since_last_compaction: float | None  # None: never compacted


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str


def decide(trigger: str, facts: TriggerFacts, max_delta_commits: int = 5, max_delta_seconds: int = 3600) -> Decision:
    if trigger == EVENT_TIME_TRIGGER:
        busy = [*facts.pending_compactions, *facts.pending_clustering]
        if busy:
            return Decision(
                False,
                f"a compaction or clustering is pending ({', '.join(busy)}): event-time compactions run one at a time",
            )
        return Decision(True, "no compaction or clustering pending")
    if trigger == NUM_COMMITS:
        n = facts.delta_commits_since_last_compaction
        return Decision(
            n >= max_delta_commits, f"{n} delta commits since the last compaction (need {max_delta_commits})"
        )
    if trigger == TIME_ELAPSED:
        s = facts.seconds_since_last_compaction
        ok = s is None or s >= max_delta_seconds
        return Decision(
            ok,
            f"{'never compacted' if s is None else f'{s:.0f}s since the last compaction'} (need {max_delta_seconds}s)",
        )
    raise ValueError(f"unknown trigger {trigger!r}")
