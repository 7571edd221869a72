"""What a compaction writes for one file slice: the new base file and the carry log (`.F_C.log.1_...`).

A partial compaction merges the base file and the compacted log files L1..Lk; the rest of the slice (links
to L(k+1)..Ln, and log files writers appended into the plan's slice while it was pending) stays as logs after
the new base file. Readers merge a base record and a log record by one rule (`replaces_base`) and two log
records by another (`log_replaces`); under ordering-based rules (Java 0.x payloads, 1.x event-time ordering)
the two differ, so the merge of a key is not associative: putting the merge `W` of base + L1..Lk in the base
file can change what the rest of the slice merges to (an update with a lower ordering value, a delete followed
by a re-insert). The compaction must leave the snapshot as it was (docs/event-time.md sections 4 and 8).

Per key the new layout is a base record plus at most one carry record, ordered before the rest:

- `A`: the merge winner among the versions at or before T (exact mode's base record, docs/event-time.md section 4);
- `W`: the merge winner of base + L1..Lk (a plain compaction's base record);
- `R`: the log-only merge winner of L1..Lk (carrying it reproduces the old log order exactly);
- `B`: the old base record (with `R` carried, the key reads exactly as before: the last resort).

Candidates are tried in the mode's order and the first that merges with the rest to the key's current
snapshot version wins: exact mode prefers (A, nothing), then (A, carry W), non-exact mode (W, nothing). So a
version is carried only where the base record alone would change the snapshot (docs/event-time.md section 4: W goes to
the carry log where it differs from A): a carry log never repeats what its base file holds, and a second
compaction at the same T finds nothing at or before T left to merge. A key whose base record
is not `A` is not exact; a key whose base record is `B` while L1..Lk hold a version at or before T caps the
threshold below that version, so the published freshness never claims what the base file does not hold.

A version's event time is its event-time field; a delete's is its ordering value when the ordering field is
the event-time field, else its block's instant time. Unknown event times count as after T.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from hudi_meta.file_group.merge.records import MergedRows, SliceRecords, merge_rows
from hudi_meta.file_group.merge.rules import (
    LogRecord,
    MergeMode,
    MergeSpec,
    is_natural_order,
    log_replaces,
    replaces_base,
)
from hudi_meta.file_group.record_keys import (
    IS_DELETED_COLUMN,
    drop_soft_deleted,
    ordering_values,
    record_key_array,
    record_keys,
)
from hudi_meta.format.block_content import DeleteRecord
from hudi_meta.table.event_time import to_epoch_ms
from hudi_meta.timeline.instant import instant_epoch_ms

FILE_NAME_COLUMN = "_hoodie_file_name"  # where a version sits, not what it is

# A record version: ("b", i) base row i, ("l", j) compacted log row j, ("r", j) a row of the rest; None: absent
Source = tuple[str, int] | None


@dataclass(frozen=True)
class Version:
    """One version of a key as it merges: where its data is (None for a delete) and its log record."""

    source: Source
    record: LogRecord


@dataclass(frozen=True)
class SliceLayout:
    """What one slice becomes. The carry log's versions are in two groups: exact mode's versions after T, and
    those held for merge order (every other carried version: one the rest of the slice must merge over as a log
    record, whatever T). The carry log writes them in blocks of their own, so that planning sees that the held ones
    are not due at any T by themselves (they go when the log files after them are merged) while the ones after T
    are due once T passes them."""

    base: pa.Table  # the new base file's records
    carry: pa.Table  # data records of the carry log after T (exact mode)
    carry_deletes: tuple[DeleteRecord, ...]  # deletes of the carry log after T (exact mode)
    inexact_keys: tuple[str, ...] = ()  # exact mode: keys whose base record is not A
    threshold_cap_ms: int | None = None  # the threshold this slice still supports, when below T
    held: pa.Table | None = None  # data records of the carry log held for merge order
    held_deletes: tuple[DeleteRecord, ...] = ()  # deletes of the carry log held for merge order


def fold(records: Sequence[LogRecord], mode: MergeMode) -> LogRecord | None:
    """The log-only merge winner of records in log order."""
    winner: LogRecord | None = None
    for r in records:
        if winner is None or log_replaces(r, winner, mode):
            winner = r
    return winner


def merged(logs: Sequence[Version], base: Version | None, mode: MergeMode) -> Source:
    """Where the key's merged record comes from (None: absent) for a base version and log versions."""
    winner = fold([v.record for v in logs], mode)
    if winner is None:
        return base.source if base is not None else None
    if base is not None and not replaces_base(winner, base.record.ordering, mode):
        return base.source
    if winner.is_delete:
        return None
    return next(v.source for v in logs if v.record is winner)


@dataclass
class _Key:
    base: Version | None = None
    compacted: list[Version] = field(default_factory=list)
    rest: list[Version] = field(default_factory=list)


@dataclass(frozen=True)
class _Choice:
    base: Version | None
    carried: Version | None
    exact: bool
    cap_ms: int | None  # the threshold this key still supports, when the base record misses a version <= T


def plan_layout(
    records: SliceRecords,
    rest: SliceRecords | None,
    spec: MergeSpec,
    partition: str,
    *,
    exact: bool,
    carry_allowed: bool,
    event_time_field: str | None,
    threshold_ms: int | None,
    instant_zone: dt.tzinfo = dt.UTC,
) -> SliceLayout:
    """The new base file and carry log for one slice (see the module doc). `records`: base + L1..Lk;
    `rest`: the log files that stay after the new base file, in log order.

    Outside exact mode a key the rest does not hold gets (W, nothing), the first candidate, which always keeps
    its snapshot: those keys merge at once (`merge_slice`, in Arrow), the others go through `_choose` one by one.
    """
    schema = records.schema
    if schema is None:
        empty = pa.table({})
        return SliceLayout(empty, empty, ())
    base = records.base
    base_keys = _keys(base, spec)
    plain: MergedRows | None = None
    chosen_keys: pa.Array | None = None  # the keys `_choose` decides (None: every key)
    if not exact and pc.count_distinct(base_keys).as_py() == len(base_keys):  # one base record per key, as W has
        plain = merge_rows(records, spec)
        rest_keys = rest.all_log_keys() if rest is not None else pa.array([], pa.string())
        ours = pa.concat_arrays([base_keys, records.all_log_keys()])
        chosen_keys = pc.unique(rest_keys.filter(pc.is_in(rest_keys, value_set=ours)))
    rules = _Rules(spec, partition, exact, carry_allowed, event_time_field, threshold_ms, instant_zone)
    choices = _choose_keys(records, rest, rules, chosen_keys)
    base_rows, log_rows = choices.rows["base b"], choices.rows["base l"]
    if plain is not None and chosen_keys is not None:
        base_rows = [*base_rows, *_rows_outside(plain.base_rows, base_keys, chosen_keys)]
        log_rows = [*log_rows, *_rows_outside(plain.log_rows, records.log_keys, chosen_keys)]
    new_base = drop_soft_deleted(_take(records, schema, base_rows, log_rows))
    carry = _take(records, schema, choices.rows["carry b"], choices.rows["carry l"])
    held = _take(records, schema, choices.rows["held b"], choices.rows["held l"])
    caps = choices.caps
    cap = min(caps) if caps and threshold_ms is not None and min(caps) < threshold_ms else None
    inexact = tuple(sorted(choices.inexact))
    return SliceLayout(new_base, carry, tuple(choices.carry_deletes), inexact, cap, held, tuple(choices.held_deletes))


def _keys(table: pa.Table | None, spec: MergeSpec) -> pa.Array:
    """Record keys of a table's rows as `record_keys` gives them (a null key reads "None")."""
    return record_key_array(table, spec) if table is not None else pa.array([], pa.string())


def _rows_outside(rows: pa.Array, keys: pa.Array, excluded: pa.Array) -> list[int]:
    """The rows of `rows` whose key (`keys[row]`) is not in `excluded`."""
    outside = pc.invert(pc.is_in(pc.take(keys, rows), value_set=excluded))
    return list(rows.filter(outside).to_pylist())


def _log_records(records: SliceRecords | None, only: pa.Array | None) -> list[LogRecord]:
    """The log records of `records`, or those of the keys in `only`, in log order."""
    if records is None:
        return []
    if only is None:
        return records.log_records
    wanted = set(only.to_pylist())
    rows = pc.indices_nonzero(pc.is_in(records.log_keys, value_set=only)).to_pylist()
    return [r for r in records.log_records_at(rows) if r.key in wanted]


@dataclass
class _Choices:
    """What `_choose` decided for a set of keys: rows of the new base file and of the carry log, and more."""

    rows: dict[str, list[int]] = field(  # the rows of each: base or log (b, l) in new base, carry log or held
        default_factory=lambda: {"base b": [], "base l": [], "carry b": [], "carry l": [], "held b": [], "held l": []}
    )
    carry_deletes: list[DeleteRecord] = field(default_factory=list)
    held_deletes: list[DeleteRecord] = field(default_factory=list)
    inexact: list[str] = field(default_factory=list)
    caps: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class _Rules:
    """`plan_layout`'s arguments that decide a key's layout."""

    spec: MergeSpec
    partition: str
    exact: bool
    carry_allowed: bool
    event_time_field: str | None
    threshold_ms: int | None
    instant_zone: dt.tzinfo = dt.UTC  # the timeline's zone: a delete's time is its block's instant time


def _choose_keys(records: SliceRecords, rest: SliceRecords | None, rules: _Rules, only: pa.Array | None) -> _Choices:
    """`_choose` for every key, or for the keys in `only`."""
    spec, partition, exact, carry_allowed = rules.spec, rules.partition, rules.exact, rules.carry_allowed
    event_time_field, threshold_ms = rules.event_time_field, rules.threshold_ms
    mode = spec.merge_mode
    keys: dict[str, _Key] = {}
    base = records.base
    if base is not None and base.num_rows:
        rows = list(range(base.num_rows))
        if only is not None:
            rows = pc.indices_nonzero(pc.is_in(_keys(base, spec), value_set=only)).to_pylist()
        taken = base.take(pa.array(rows, pa.int64()))
        for i, k, o in zip(rows, record_keys(taken, spec), ordering_values(taken, spec), strict=True):
            keys.setdefault(k, _Key()).base = Version(("b", i), LogRecord(k, o, i, ""))
    for r in _log_records(records, only):
        keys.setdefault(r.key, _Key()).compacted.append(Version(None if r.row is None else ("l", r.row), r))
    for r in _log_records(rest, only):
        if r.key in keys:  # keys only the rest holds are not this compaction's business
            keys[r.key].rest.append(Version(None if r.row is None else ("r", r.row), r))
    event_time = _event_time_of(records, spec, event_time_field, rules.instant_zone)
    same = _same_version(records, rest)
    flagged = _flagged(records, rest)

    def at_or_before(v: Version) -> bool:  # without a threshold every version counts (A is W)
        t = event_time(v)
        return threshold_ms is None or (t is not None and t <= threshold_ms)

    out = _Choices()
    for k, key in keys.items():
        if key.compacted or (exact and key.base is not None and not at_or_before(key.base)):
            choice = _choose(k, key, mode, exact, carry_allowed, at_or_before, event_time, same, flagged)
        else:  # nothing merged (and in exact mode, a base record at or before T): it stays as it is
            choice = _Choice(key.base, None, True, None)
        if exact and not choice.exact:
            out.inexact.append(k)
        if choice.cap_ms is not None:
            out.caps.append(choice.cap_ms)
        if choice.base is not None and choice.base.source is not None:
            kind, row = choice.base.source
            out.rows[f"base {kind}"].append(row)
        if choice.carried is not None:
            # outside exact mode every carried version is there for merge order alone; in exact mode the versions
            # after T are there for T (due once T passes them), the others for merge order
            t = event_time(choice.carried) if exact and threshold_ms is not None else None
            held = not exact or (t is not None and threshold_ms is not None and t <= threshold_ms)
            if choice.carried.source is None:
                deletes = out.held_deletes if held else out.carry_deletes
                deletes.append(DeleteRecord(k, partition, choice.carried.record.ordering))
            else:
                kind, row = choice.carried.source
                out.rows[f"{'held' if held else 'carry'} {kind}"].append(row)
    return out


def _choose(
    k: str,
    key: _Key,
    mode: MergeMode,
    exact: bool,
    carry_allowed: bool,
    at_or_before: Callable[[Version], bool],
    event_time: Callable[[Version], int | None],
    same: Callable[[Source, Source], bool],
    flagged: Callable[[Source], bool],
) -> _Choice:
    """The first candidate layout of one key that keeps its snapshot version (see the module doc).

    A version flagged `_hoodie_is_deleted` reads as absent, and as the chosen base record it is not written
    (`drop_soft_deleted`): a candidate is judged with the base file as it will be, so that a flagged winner that
    shadows an older version in the rest is carried in the carry log instead of silently dropped."""
    base, compacted, rest = key.base, key.compacted, key.rest

    def read(source: Source) -> Source:
        return None if source is not None and flagged(source) else source

    current = read(merged([*compacted, *rest], base, mode))
    w = _version(merged(compacted, base, mode), base, compacted)
    a_source = merged([v for v in compacted if at_or_before(v)], base if base and at_or_before(base) else None, mode)
    a = _version(a_source, base, compacted)
    r = _winner(compacted, mode)
    if w is not None and w.source is not None and w.source[0] == "b":  # the base record, carried as a log record
        w_carried: Version | None = Version(w.source, LogRecord(k, w.record.ordering, 0, ""))
    else:  # a log record, or (W absent) the delete that won
        w_carried = w if w is not None else (r if r is not None and r.source is None else None)
    plain = [(w, None), (w, r)]
    as_of_t = [(a, None), (a, w_carried), (a, r)]  # W is carried only where the base record A alone is not enough
    candidates = [*as_of_t, *plain] if exact else [*plain, *as_of_t]
    for chosen, carried in [*candidates, (base, r)]:
        if carried is not None and not carry_allowed:
            continue
        in_file = None if chosen is not None and chosen.source is not None and flagged(chosen.source) else chosen
        if not same(read(merged([carried, *rest] if carried is not None else rest, in_file, mode)), current):
            continue
        chosen_source = chosen.source if chosen is not None else None
        cap = None
        if not same(chosen_source, w.source if w else None) and not same(chosen_source, a_source):
            # the old base record: RO misses newer versions at or before T
            times = [t for v in compacted if at_or_before(v) and (t := event_time(v)) is not None]
            cap = min(times) - 1 if times else None
        return _Choice(chosen, carried, same(chosen_source, a_source), cap)
    # unreachable: (base, r) reproduces the old merge order exactly
    raise AssertionError(f"no layout keeps the snapshot of key {k}")


def _same_version(records: SliceRecords, rest: SliceRecords | None) -> Callable[[Source, Source], bool]:
    """Whether two sources hold the same record version: the same row, or rows equal in every column but the
    file name. A compaction that made an exact log copies its base record there too (A = W), so one version can
    sit both in the base file and in a log: judged by row alone, a layout keeping that version would look
    different from the current one, and the key would be called inexact for nothing."""
    tables = {"b": records.base, "l": records.log_rows, "r": rest.log_rows if rest is not None else None}

    def row(source: tuple[str, int]) -> dict[str, object] | None:
        table = tables.get(source[0])
        if table is None:
            return None
        values: dict[str, object] = table.slice(source[1], 1).to_pylist()[0]
        values.pop(FILE_NAME_COLUMN, None)
        return values

    def same(a: Source, b: Source) -> bool:
        if a == b:
            return True
        if a is None or b is None:
            return False
        left = row(a)
        return left is not None and left == row(b)

    return same


def _flagged(records: SliceRecords, rest: SliceRecords | None) -> Callable[[Source], bool]:
    """Whether a source's row is flagged `_hoodie_is_deleted` (readers drop it, base files do not hold it)."""
    tables = {"b": records.base, "l": records.log_rows, "r": rest.log_rows if rest is not None else None}

    def flagged(source: Source) -> bool:
        if source is None:
            return False
        table = tables.get(source[0])
        if table is None or IS_DELETED_COLUMN not in table.column_names:
            return False
        return table.column(IS_DELETED_COLUMN)[source[1]].as_py() is True

    return flagged


def _version(source: Source, base: Version | None, compacted: list[Version]) -> Version | None:
    if source is None:
        return None
    if base is not None and base.source == source:
        return base
    return next(v for v in compacted if v.source == source)


def _winner(versions: list[Version], mode: MergeMode) -> Version | None:
    winner = fold([v.record for v in versions], mode)
    return next((v for v in versions if v.record is winner), None)


def _event_time_of(
    records: SliceRecords, spec: MergeSpec, event_time_field: str | None, zone: dt.tzinfo
) -> Callable[[Version], int | None]:
    def column(table: pa.Table | None) -> pa.ChunkedArray | None:
        if table is None or event_time_field is None or event_time_field not in table.column_names:
            return None
        return table.column(event_time_field)

    columns = {"b": column(records.base), "l": column(records.log_rows)}
    known: dict[tuple[str, int], int | None] = {}  # computed on demand: most base rows are never asked

    def event_time(v: Version) -> int | None:
        if v.source is not None:
            if v.source not in known:
                kind, row = v.source
                values = columns.get(kind)
                known[v.source] = to_epoch_ms(values[row].as_py()) if values is not None else None
            return known[v.source]
        ordering = v.record.ordering
        if event_time_field is not None and spec.ordering_field == event_time_field and not is_natural_order(ordering):
            return to_epoch_ms(ordering)
        return instant_epoch_ms(v.record.instant, zone) if v.record.instant else None

    return event_time


def _take(records: SliceRecords, schema: pa.Schema, base_rows: list[int], log_rows: list[int]) -> pa.Table:
    parts = []
    if records.base is not None and base_rows:
        parts.append(records.base.take(pa.array(sorted(base_rows), pa.int64())))
    if records.log_rows is not None and log_rows:
        parts.append(records.log_rows.take(pa.array(sorted(log_rows), pa.int64())))
    return pa.concat_tables(parts) if parts else schema.empty_table()
