"""A plain-Python model of a bucketed v6 MOR table: every committed write, per file group, and what each
query must return, computed from the rules alone (docs/event-time.md and Java Hudi 0.x's merge rules).

Merge rules (Java 0.x, `HoodieMergedLogRecordScanner` + the payload classes), worked out from Java's sources:
- log vs log (preCombine and the log scanner): the larger ordering value wins, ties to the later record; a
  delete with no ordering value (natural order) always wins; a delete with an ordering value loses only to an
  earlier record with a larger ordering value; a data record after a delete always wins.
- log vs base (`combineAndGetUpdateValue`): a delete always wins; `OverwriteWithLatestAvroPayload` lets the log
  record win whatever its ordering value; `DefaultHoodieRecordPayload` and `EventTimeAvroPayload` keep the
  base record when its ordering value is larger (ties to the log record).
Hudi 1.x (table versions 8 and 9) names merge modes instead (`RecordMergeMode`, docs/hudi-1x.md): the model takes
them in place of a payload class:
- `COMMIT_TIME_ORDERING`: the later record in log order wins, deletes included, and a log record beats the base.
- `EVENT_TIME_ORDERING`: log vs log as above, except that a data record after a delete with an ordering value
  wins only with an ordering value at least as large; log vs base by ordering value (ties to the log record), a
  delete too: a delete with an ordering value loses to a base record with a larger one; one without always wins.
Because log-vs-base and log-vs-log differ, the result depends on which writes a compaction merged into the
base file, so the model keeps the layout: per file group, the writes in log order and the compaction cuts.

Event time: a data record's is its `ts`; a delete's is its ordering value, or its instant's time when it has
none (natural order). Exact mode (design 5): the base file holds A (the winner among records at or before T),
the snapshot stays W (the winner among all): the model keeps both, A as the physical base (RO) and W as the
logical base (snapshot, time travel, incremental).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field

DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
EVENT_TIME_PAYLOAD = "org.apache.hudi.common.model.EventTimeAvroPayload"
PAYLOADS = (DEFAULT_PAYLOAD, OVERWRITE_PAYLOAD, EVENT_TIME_PAYLOAD)
COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"  # the 1.x merge modes, used in place of a payload class
EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z; event times are T0 + seconds * 1000


def at(seconds: int) -> int:
    return T0 + seconds * 1000


def instant_ms(instant: str) -> int:
    """An instant time yyyyMMddHHmmssSSS (UTC) as epoch ms."""
    t = dt.datetime.strptime(instant[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
    return int(t.timestamp() * 1000) + int(instant[14:17] or 0)


@dataclass(frozen=True)
class Version:
    """One record a write wrote: data (ts, amount) or a delete (ordering value or None: natural order)."""

    key: str
    partition: str
    instant: str
    ordering: int | None
    amount: float | None  # None: a delete

    @property
    def is_delete(self) -> bool:
        return self.amount is None

    @property
    def event_time(self) -> int:
        return self.ordering if self.ordering is not None else instant_ms(self.instant)

    @property
    def row(self) -> tuple[str, str, str, int | None, float | None]:
        """What a read returns for it: (key, partition, commit time, ts, amount)."""
        return (self.key, self.partition, self.instant, self.ordering, self.amount)


def _log_order_value(v: Version) -> int:
    return v.ordering if v.ordering is not None else 0  # Java writes 0 for natural order


def merge(base: Version | None, logs: Iterable[Version], payload: str) -> Version | None:
    """The merge winner of a base record and log records (in log order); None or a delete: absent. `payload`: a
    0.x payload class, or a 1.x merge mode."""
    cur = _log_winner(logs, payload)
    if cur is None:
        return base
    if cur.is_delete:
        ordering = cur.ordering
        if payload == EVENT_TIME_ORDERING and ordering is not None and base is not None and not base.is_delete:
            assert base.ordering is not None
            return base if base.ordering > ordering else None
        return None
    if payload in (OVERWRITE_PAYLOAD, COMMIT_TIME_ORDERING) or base is None or base.is_delete:
        return cur
    assert cur.ordering is not None and base.ordering is not None
    return cur if cur.ordering >= base.ordering else base


@dataclass
class LogEntry:
    """The log file one write created in one file group (rolled back writes stay, marked)."""

    instant: str
    name: str
    versions: tuple[Version, ...]
    rolled_back: bool = False
    aliases: set[str] = field(default_factory=set)  # its link names in later slices

    def known_as(self, name: str) -> bool:
        return name == self.name or name in self.aliases

    @property
    def min_event_time(self) -> int | None:
        times = [v.event_time for v in self.versions]
        return min(times) if times else None


@dataclass
class Cut:
    """A completed compaction of a file group (or the write that created it): the logs before `upto` (in
    `FileGroupModel.logs`) are merged into the base file."""

    instant: str
    upto: int
    base_a: dict[str, Version]  # physical base file: A in exact mode, else the merge of the physical inputs
    exact_log: tuple[Version, ...] = ()  # physical carry log (compaction/layout.py), before the links
    threshold: int | None = None
    exact: bool = False
    inexact: frozenset[str] = frozenset()  # exact mode: keys whose base record is not A
    caps: tuple[int, ...] = ()  # thresholds below T that keys whose base record is the old one still support


@dataclass
class FileGroupModel:
    partition: str
    file_id: str
    logs: list[LogEntry] = field(default_factory=list)
    cuts: list[Cut] = field(default_factory=list)


def _visible(e: LogEntry, committed: dict[str, bool], as_of: str | None) -> bool:
    return not e.rolled_back and committed.get(e.instant, False) and (as_of is None or e.instant <= as_of)


def _latest_cut(fg: FileGroupModel, as_of: str | None) -> Cut | None:
    cuts = [c for c in fg.cuts if as_of is None or c.instant <= as_of]
    return cuts[-1] if cuts else None


def fold(
    base: dict[str, Version], logs: Iterable[Version], payload: str, keep: set[str] | None = None
) -> dict[str, Version]:
    """Merge per key; returns the winners that are data records."""
    per_key: dict[str, list[Version]] = {}
    for v in logs:
        per_key.setdefault(v.key, []).append(v)
    out: dict[str, Version] = {}
    for key in set(base) | set(per_key):
        w = merge(base.get(key), per_key.get(key, ()), payload)
        if w is not None and not w.is_delete:
            out[key] = w
    return out


@dataclass
class TableModel:
    payload: str
    groups: dict[tuple[str, str], FileGroupModel] = field(default_factory=dict)
    committed: dict[str, bool] = field(default_factory=dict)  # write instants -> committed
    completed: list[str] = field(default_factory=list)  # every completed instant (writes and compactions)

    # ---- writes ---------------------------------------------------------------------------------------

    def create_group(self, partition: str, file_id: str, instant: str, versions: Iterable[Version]) -> None:
        base = {v.key: v for v in versions}
        fg = FileGroupModel(partition, file_id)
        fg.cuts.append(Cut(instant, 0, dict(base)))
        self.groups[(partition, file_id)] = fg

    def append(self, partition: str, file_id: str, instant: str, name: str, versions: Iterable[Version]) -> None:
        self.groups[(partition, file_id)].logs.append(LogEntry(instant, name, tuple(versions)))

    def commit(self, instant: str) -> None:
        self.committed[instant] = True
        self.completed.append(instant)

    def roll_back(self, instant: str) -> None:
        for fg in self.groups.values():
            for e in fg.logs:
                if e.instant == instant:
                    e.rolled_back = True

    def keys_with_ordered_deletes(self) -> set[str]:
        return {
            v.key
            for fg in self.groups.values()
            for e in fg.logs
            for v in e.versions
            if v.is_delete and v.ordering is not None and not e.rolled_back
        }

    def keys_out_of_order(self) -> set[str]:
        """Keys with a data version whose ordering value is below an earlier version's."""
        out: set[str] = set()
        for fg in self.groups.values():
            top: dict[str, int] = {v.key: v.ordering for v in fg.cuts[0].base_a.values() if v.ordering is not None}
            for e in fg.logs:
                for v in e.versions:
                    if e.rolled_back or v.ordering is None:
                        continue
                    if v.ordering < top.get(v.key, v.ordering):
                        out.add(v.key)
                    top[v.key] = max(top.get(v.key, v.ordering), v.ordering)
        return out

    # ---- reads ----------------------------------------------------------------------------------------

    def snapshot(self, as_of: str | None = None) -> dict[str, Version]:
        """The table (logical layout) as of an instant; None: now."""
        out: dict[str, Version] = {}
        for fg in self.groups.values():
            cut = _latest_cut(fg, as_of)
            if cut is None:
                continue
            logs = [v for e in fg.logs[cut.upto :] if _visible(e, self.committed, as_of) for v in e.versions]
            # the files as they are (Java 0.x merges base and log records by different rules, so a later write
            # can resolve differently over an exact compaction's base file and exact log than over W)
            out.update(fold(cut.base_a, list(cut.exact_log) + logs, self.payload))
        return out

    def incremental(self, begin: str, end: str, chosen: set[str] | None = None) -> dict[str, Version]:
        """What the commits in (begin, end] wrote: the keys whose version as of `end` was written in range. On
        versions 8 and 9 a commit is in range by its completion time: `chosen` names those commits."""
        if chosen is not None:
            return {k: v for k, v in self.snapshot(end).items() if v.instant in chosen}
        return {k: v for k, v in self.snapshot(end).items() if begin < v.instant <= end}

    def read_optimized(self) -> dict[str, Version]:
        out: dict[str, Version] = {}
        for fg in self.groups.values():
            if fg.cuts:
                out.update(fg.cuts[-1].base_a)
        return out

    # ---- compaction -----------------------------------------------------------------------------------

    def slice_logs(self, fg: FileGroupModel) -> list[LogEntry]:
        """The log entries of the file group's latest completed slice (links included), in log order."""
        return fg.logs[fg.cuts[-1].upto :]

    def compact(self, fg: FileGroupModel, instant: str, compacted: int, threshold: int | None, exact: bool) -> None:
        """Merge the first `compacted` log entries of the latest slice into a new base file (a completed cut)."""
        cut = fg.cuts[-1]
        entries = [e for e in fg.logs[cut.upto : cut.upto + compacted] if _visible(e, self.committed, instant)]
        physical = list(cut.exact_log) + [v for e in entries for v in e.versions]
        rest = [v for e in fg.logs[cut.upto + compacted :] if _visible(e, self.committed, None) for v in e.versions]
        base, carry, inexact, caps = _layout(cut.base_a, physical, rest, self.payload, threshold, exact)
        fg.cuts.append(
            Cut(instant, cut.upto + compacted, base, tuple(carry), threshold, exact, frozenset(inexact), caps)
        )


def _log_winner(logs: Iterable[Version], payload: str) -> Version | None:
    """The merge winner among log records alone (a delete included), by the rules of `merge`."""
    cur: Version | None = None
    for r in logs:
        if cur is None or payload == COMMIT_TIME_ORDERING:
            cur = r
        elif r.is_delete:
            if r.ordering is None or not _log_order_value(cur) > r.ordering:
                cur = r
        elif cur.is_delete:
            ordered = payload == EVENT_TIME_ORDERING and cur.ordering is not None and r.ordering is not None
            if not (ordered and r.ordering < cur.ordering):  # type: ignore[operator]
                cur = r  # natural order after a delete (1.x: a delete with an ordering value compares it)
        elif r.ordering is not None and cur.ordering is not None and r.ordering >= cur.ordering:
            cur = r
    return cur


def _layout(
    base: dict[str, Version],
    logs: list[Version],
    rest: list[Version],
    payload: str,
    threshold: int | None,
    exact: bool,
) -> tuple[dict[str, Version], list[Version], set[str], tuple[int, ...]]:
    """Per key, the first of the mode's candidate (base record, carried log record) pairs under which the
    slice, with the log files kept after it, merges to the same version as before (design 4 and 5)."""
    per_key: dict[str, list[Version]] = {}
    for v in logs:
        per_key.setdefault(v.key, []).append(v)
    later: dict[str, list[Version]] = {}
    # under commit-time ordering later log records win whatever they merge with, so a layout is judged on the
    # compacted records alone (the executor reads the kept log files only where the merge is order-sensitive)
    for v in rest if payload != COMMIT_TIME_ORDERING else []:
        later.setdefault(v.key, []).append(v)
    new_base: dict[str, Version] = {}
    carry: list[Version] = []
    inexact: set[str] = set()
    caps: list[int] = []

    def before_t(v: Version) -> bool:
        return threshold is None or v.event_time <= threshold

    for key in sorted(set(base) | set(per_key)):
        b, c, r = base.get(key), per_key.get(key, []), later.get(key, [])
        if not c and (not exact or b is None or before_t(b)):
            if b is not None:
                new_base[key] = b
            continue
        now = merge(b, c + r, payload)
        w = merge(b, c, payload)
        a = merge(b if b is not None and before_t(b) else None, [v for v in c if before_t(v)], payload)
        winner = _log_winner(c, payload)
        w_carried = w if w is not None else (winner if winner is not None and winner.is_delete else None)
        plain: list[tuple[Version | None, Version | None]] = [(w, None), (w, winner)]
        # design 5: W goes to the carry log only where it differs from A (where A alone keeps the snapshot)
        as_of_t: list[tuple[Version | None, Version | None]] = [(a, None), (a, w_carried), (a, winner)]
        for chosen, carried in [*(as_of_t + plain if exact else plain + as_of_t), (b, winner)]:
            if merge(chosen, ([carried] if carried else []) + r, payload) == now:
                break
        if chosen is not None:
            new_base[key] = chosen
        if carried is not None:
            carry.append(carried)
        if exact and chosen != a:
            inexact.add(key)
        if chosen != w and chosen != a and threshold is not None:  # the old base: RO misses versions <= T
            times = [v.event_time for v in c if before_t(v)]
            if times:
                caps.append(min(times) - 1)
    return new_base, carry, inexact, tuple(caps)


def rows(records: dict[str, Version]) -> set[tuple[str, str, str, int | None, float | None]]:
    return {v.row for v in records.values()}
