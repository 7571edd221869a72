"""Instants and their file names for timeline layout 1 (v6: `.hoodie/`) and layout 2 (v8/v9:
`.hoodie/timeline/`, completed files named `<requested>_<completion>.<action>`)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from enum import StrEnum


class State(StrEnum):
    """An instant's state: its file name's suffix (none: completed), and the value the store keeps (`instant.state`,
    `compaction_plan.state`; archived instants stay COMPLETED, `"archived": true` in their summary)."""

    REQUESTED = "requested"
    INFLIGHT = "inflight"
    COMPLETED = "completed"


class Action(StrEnum):
    """The actions of a timeline (Hudi's `HoodieTimeline` names): what an instant file's name ends in."""

    COMMIT = "commit"
    DELTA_COMMIT = "deltacommit"
    COMPACTION = "compaction"
    LOG_COMPACTION = "logcompaction"
    CLEAN = "clean"
    ROLLBACK = "rollback"
    RESTORE = "restore"
    REPLACE_COMMIT = "replacecommit"
    CLUSTERING = "clustering"
    SAVEPOINT = "savepoint"
    INDEXING = "indexing"
    SCHEMA_COMMIT = "schemacommit"


ACTIONS = frozenset(Action)
# Pending actions that complete under another action's name.
COMPLETES_AS = {
    Action.COMPACTION: Action.COMMIT,
    Action.LOG_COMPACTION: Action.DELTA_COMMIT,
    Action.CLUSTERING: Action.REPLACE_COMMIT,
}
WRITE_ACTIONS = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT})


def format_instant(t: dt.datetime) -> str:
    """A 17-digit instant time `yyyyMMddHHmmssSSS` of `t` (in `t`'s own zone)."""
    return t.strftime("%Y%m%d%H%M%S") + f"{t.microsecond // 1000:03d}"


def instant_epoch_ms(instant: str, zone: dt.tzinfo = dt.UTC) -> int:
    """When an instant time `yyyyMMddHHmmss[SSS]` was taken, as epoch ms; `zone` is the timeline's zone.
    Raises ValueError for text that is not an instant time."""
    t = dt.datetime.strptime(instant[:14], "%Y%m%d%H%M%S").replace(tzinfo=zone)
    millis = instant[14:17]
    if millis and not millis.isdigit():
        raise ValueError(f"not an instant time: {instant!r}")
    return int(t.timestamp() * 1000) + int(millis or 0)


_NAME_RE = re.compile(r"^(?P<requested>\d{14,20})(?:_(?P<completed>\d{14,17}))?\.(?P<rest>[a-z]+(?:\.[a-z]+)?)$")


@dataclass(frozen=True, order=True)
class Instant:
    """One state of one instant, as one file on the timeline."""

    requested_time: str
    action: Action
    state: State
    completion_time: str | None = None

    @property
    def is_completed(self) -> bool:
        return self.state == State.COMPLETED

    def file_name(self, layout: int) -> str:
        t = self.requested_time
        if self.state == State.COMPLETED:
            action = COMPLETES_AS.get(self.action, self.action)
            if layout >= 2 and self.completion_time:
                return f"{t}_{self.completion_time}.{action}"
            return f"{t}.{action}"
        if self.state == State.INFLIGHT and self.action == Action.COMMIT:
            return f"{t}.inflight"  # the legacy name of a commit's inflight file
        return f"{t}.{self.action}.{self.state.value}"

    @classmethod
    def parse(cls, name: str) -> Instant | None:
        """Parse an instant file name; None for files that are not instants."""
        m = _NAME_RE.match(name)
        if m is None:
            return None
        rest = m["rest"]
        if rest == "inflight":
            return cls(m["requested"], Action.COMMIT, State.INFLIGHT)
        action, _, suffix = rest.partition(".")
        if action not in ACTIONS:
            return None
        if suffix == "":
            return cls(m["requested"], Action(action), State.COMPLETED, m["completed"])
        if suffix in ("requested", "inflight") and m["completed"] is None:
            return cls(m["requested"], Action(action), State(suffix))
        return None
