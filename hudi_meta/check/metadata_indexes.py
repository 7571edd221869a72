"""The metadata table's indexes against the data table (`hudi-meta check` on a table with a metadata table).

Each MDT partition hudi-meta keeps besides `files` (docs/metadata-table.md sections 5 and 7) is read as readers read
it (every file group's latest slice, log blocks of valid instants only, records merged by their type's rule) and
compared with what the data table holds (docs/metadata-table.md section 8):

- `mdt-record-index`: the record index maps exactly the snapshot's record keys (the file-group reader over the
  latest slices, which does not use the MDT) to their partition and file group, each key in the file group its hash
  names: a key missing, a key the snapshot lacks, a key pointing elsewhere, a key in the wrong file group;
- `mdt-column-stats`: each live column-stats record names a committed file and claims nothing the file does not
  hold (data skipping must never skip a file holding a match); every file of the latest slices has a record per
  indexed column it holds;
- `mdt-secondary-index`: a secondary index holds exactly one entry per snapshot record, `value$key`;
- `mdt-partition-stats`: each partition's record per indexed column covers what the files of its latest slices
  hold (the rule of `claims`);
- `mdt-unreadable`: a file of one of these partitions that cannot be read (its path); its file group is left out
  of the comparison, so one damaged file is one finding.

Partitions hudi-meta does not keep on this table (`describe_metadata` refuses them) are not compared.
"""

from __future__ import annotations

import datetime as dt
import decimal
import posixpath
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hudi_meta.check.files import (
    MDT_COLUMN_STATS,
    MDT_PARTITION_STATS,
    MDT_RECORD_INDEX,
    MDT_SECONDARY_INDEX,
    MDT_UNREADABLE,
    Finding,
)
from hudi_meta.errors import HudiMetaError, UnsupportedTableError
from hudi_meta.file_group.fs_view import latest_slice_for_snapshot
from hudi_meta.format.block_content import KeyedRecord
from hudi_meta.format.file_names import BaseFileName
from hudi_meta.metadata.column_ranges import ColumnRange, ValueType, file_ranges, merge_all
from hudi_meta.metadata.keys import column_stats_key, partition_stats_key, secondary_file_group_index
from hudi_meta.metadata.layout import default_file_group_of
from hudi_meta.metadata.merge import combine, kept_in_base
from hudi_meta.metadata.records import (
    COLUMN_STATS,
    PARTITION_STATS,
    RECORD_INDEX,
    ColumnStatsIndex,
    secondary_index_records,
)
from hudi_meta.metadata.sync import MetadataSync, describe_metadata
from hudi_meta.table.committed_files import committed_data_files
from hudi_meta.table.metadata_table import (
    merge_log_records,
    merge_with_base,
    metadata_table_path,
    slice_records,
    valid_instants,
)
from hudi_meta.table.table import HudiTable, QueryKind
from hudi_meta.timeline.instant import Action

REMEDY = "rebuild that index with Hudi (drop the partition and index it again), or re-create the metadata table"
MAX_PER_PARTITION = 50  # findings listed per MDT partition; the rest are counted in one more line
RECORD_KEY = "_hoodie_record_key"
# what a damaged MDT file raises when read (our readers' errors, and those of the libraries under them)
READ_ERRORS = (HudiMetaError, OSError, ValueError, EOFError, IndexError, KeyError, struct.error, zlib.error)


@dataclass
class PartitionRead:
    """An MDT partition as readers merge it: live records by key, with the file group each sits in, how many groups
    the partition has, and one finding per file that could not be read."""

    records: dict[str, KeyedRecord] = field(default_factory=dict)
    group_of: dict[str, int] = field(default_factory=dict)
    groups: int = 0
    unreadable_groups: set[int] = field(default_factory=set)
    unreadable: list[Finding] = field(default_factory=list)


def read_partition(table: HudiTable, mdt: HudiTable, partition: str) -> PartitionRead:
    """Every file group's latest slice of MDT `partition`, valid instants only, merged by record type
    (`metadata.merge.combine`); records readers drop (`kept_in_base`) left out."""
    out = PartitionRead()
    inputs, is_valid = mdt.view_inputs(), valid_instants(table, mdt)
    groups = sorted((fg for fg in mdt.file_groups() if fg.partition == partition), key=lambda g: g.file_id)
    out.groups = len(groups)
    for index, fg in enumerate(groups):
        picked = latest_slice_for_snapshot(fg, inputs)
        base, logs = picked if picked is not None else (None, [])
        paths = ([base.path] if base else []) + [lf.path for lf in logs]
        try:
            in_base, in_logs = slice_records(mdt, base.path if base else None, [lf.path for lf in logs], is_valid)
            merged = merge_with_base(in_base, merge_log_records(in_logs, combine), combine)
        except READ_ERRORS as e:
            out.unreadable_groups.add(index)
            out.unreadable.append(_unreadable(table, mdt, paths, is_valid, e))
            continue
        for key, record in merged.items():
            if kept_in_base(record):
                out.records[key] = record
                out.group_of[key] = index
    return out


def _unreadable(
    table: HudiTable, mdt: HudiTable, paths: list[str], is_valid: Callable[[str], bool], error: Exception
) -> Finding:
    """The finding of a slice that could not be read, naming the first of its files that fails on its own."""
    failing = paths[0] if paths else ""
    for rel in paths:
        is_log = posixpath.basename(rel).startswith(".")
        try:
            slice_records(mdt, None if is_log else rel, [rel] if is_log else [], is_valid)
        except READ_ERRORS:
            failing = rel
            break
    where = posixpath.relpath(posixpath.join(metadata_table_path(table), failing), table.base_path)
    return Finding(MDT_UNREADABLE, where, f"{error}; {REMEDY}")


def metadata_index_findings(table: HudiTable) -> list[Finding]:
    """Every difference between the MDT's record index, column stats and secondary indexes and the data table;
    none for a table without them, or with partitions hudi-meta does not keep."""
    if not table.config.metadata_partitions:
        return []
    try:
        sync = describe_metadata(table)  # `check_table` read the MDT's structure first
        mdt = HudiTable.open(table.storage.uri(metadata_table_path(table)), table.storage.options)
    except (HudiMetaError, OSError):
        return []  # the listing check reports an MDT that cannot be opened; a partition we do not keep is not ours
    if sync is None:
        return []
    out: list[Finding] = []
    wanted = list(dict.fromkeys(sync.secondary.values()))
    snapshot = _snapshot(table, wanted) if RECORD_INDEX in sync.partitions or sync.secondary else None
    if RECORD_INDEX in sync.partitions and snapshot is not None:
        read = read_partition(table, mdt, RECORD_INDEX)
        out += read.unreadable + _capped(record_index_findings(snapshot.locations, read), RECORD_INDEX)
    for partition, column in sync.secondary.items():
        if snapshot is None or column not in snapshot.values:
            continue
        read = read_partition(table, mdt, partition)
        found = secondary_index_findings(partition, snapshot.values[column], read, sync)
        out += read.unreadable + _capped(found, partition)
    if sync.column_stats is not None:
        ranges = _Ranges(table, sync.column_stats.columns)
        if COLUMN_STATS in sync.partitions:
            read = read_partition(table, mdt, COLUMN_STATS)
            out += read.unreadable + _capped(
                column_stats_findings(table, sync.column_stats, read, ranges), COLUMN_STATS
            )
        if PARTITION_STATS in sync.partitions:
            read = read_partition(table, mdt, PARTITION_STATS)
            out += read.unreadable + _capped(partition_stats_findings(table, read, ranges), PARTITION_STATS)
    return out


def _capped(findings: list[Finding], partition: str) -> list[Finding]:
    if len(findings) <= MAX_PER_PARTITION:
        return findings
    rest = len(findings) - MAX_PER_PARTITION
    last = findings[MAX_PER_PARTITION]
    more = Finding(last.kind, partition, f"{rest} more differences like the ones above; {REMEDY}")
    return findings[:MAX_PER_PARTITION] + [more]


# ---- the snapshot ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """The data table's snapshot as the file-group reader reads it: each record key's partition and file group, and
    the values of the secondary-indexed columns."""

    locations: Mapping[str, tuple[str, str]]
    values: Mapping[str, Mapping[str, Any]]  # column -> record key -> value


def _snapshot(table: HudiTable, columns: list[str]) -> Snapshot | None:
    """Locations of every record and the values of `columns`; None when the snapshot cannot be read whole (Lance
    base files, a damaged data file: the other checks name that file; a partial snapshot would make every key of
    the missing slice a finding) or its records carry no record key (meta fields off)."""
    locations: dict[str, tuple[str, str]] = {}
    values: dict[str, dict[str, Any]] = {}
    try:
        reads = [(read, table.read_slice(read, QueryKind.SNAPSHOT)) for read in table.plan_reads(QueryKind.SNAPSHOT)]
    except (UnsupportedTableError, *READ_ERRORS):
        return None
    for read, records in reads:
        if not records.num_columns:
            continue
        if RECORD_KEY not in records.column_names:
            return None
        keys = [str(k) for k in records.column(RECORD_KEY).to_pylist()]
        locations.update((k, (read.partition, read.file_id)) for k in keys)
        for column in (c for c in columns if c in records.column_names):
            values.setdefault(column, {}).update(zip(keys, records.column(column).to_pylist(), strict=True))
    return Snapshot(locations, values)


# ---- record_index --------------------------------------------------------------------------------------------


def record_index_findings(snapshot: Mapping[str, tuple[str, str]], read: PartitionRead) -> list[Finding]:
    """The record index against the snapshot's locations (record key -> partition, file id). Keys of a file group
    that could not be read are not compared (the unreadable file is the finding). Pure."""
    out = []
    for key in sorted(set(snapshot) | set(read.records)):
        group = default_file_group_of(RECORD_INDEX, key, read.groups) if read.groups else -1
        if group in read.unreadable_groups:
            continue
        record = read.records.get(key)
        want = snapshot.get(key)
        got = _location(record) if record is not None else None
        if got is None:
            assert want is not None
            detail = f"in the snapshot at {_where(want)}, not in the record index (a lookup by key misses it)"
        elif want is None:
            detail = f"in the record index at {_where(got)}, not in the snapshot"
        elif got != want:
            detail = f"the record index says {_where(got)}, the snapshot reads it from {_where(want)}"
        elif read.group_of[key] != group:
            detail = f"in record-index file group {read.group_of[key]}, but its hash names group {group}"
        else:
            continue
        out.append(Finding(MDT_RECORD_INDEX, key, f"{detail}; {REMEDY}"))
    return out


def _where(location: tuple[str, str]) -> str:
    partition, file_id = location
    return f"file group {file_id}" + (f" of partition {partition}" if partition else "")


def _location(record: KeyedRecord) -> tuple[str, str] | None:
    """(partition, file id) of a record-index record (`HoodieRecordIndexInfo`: UUID bits and index, or raw)."""
    info = _branch(record.record.get("recordIndexMetadata"))
    if not isinstance(info, Mapping):
        return None
    if info.get("fileIdEncoding") == 1:
        return str(info.get("partitionName") or ""), str(info.get("fileId"))
    bits = ((int(info["fileIdHighBits"]) & (2**64 - 1)) << 64) | (int(info["fileIdLowBits"]) & (2**64 - 1))
    head = f"{bits:032x}"
    head = f"{head[:8]}-{head[8:12]}-{head[12:16]}-{head[16:20]}-{head[20:]}"
    file_id = head if info["fileIndex"] == -1 else f"{head}-{info['fileIndex']}"
    return str(info.get("partitionName") or ""), file_id


def _branch(value: Any) -> Any:
    """A union value decoded tagged (`(name, value)`) as its value."""
    return value[1] if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str) else value


# ---- secondary indexes ---------------------------------------------------------------------------------------


def secondary_index_findings(
    partition: str, values: Mapping[str, Any], read: PartitionRead, sync: MetadataSync
) -> list[Finding]:
    """Secondary index `partition` against the snapshot's values of its column: exactly one `value$key` entry per
    record, in the file group its index version names."""
    version = sync.secondary_versions.get(partition, "V1")
    expected = {r.key for r in secondary_index_records(partition, {}, values)}
    out = []
    for key in sorted(expected | set(read.records)):
        group = secondary_file_group_index(key, read.groups, version) if read.groups else -1
        if group in read.unreadable_groups:
            continue
        if key not in read.records:
            detail = "a snapshot record's entry is missing (a lookup by value misses the record)"
        elif key not in expected:
            detail = "an entry no snapshot record has (the value changed, or the record is gone)"
        elif read.group_of[key] != group:
            detail = f"in file group {read.group_of[key]}, but the {version} rule names group {group}"
        else:
            continue
        out.append(Finding(MDT_SECONDARY_INDEX, f"{partition}/{key}", f"{detail}; {REMEDY}"))
    return out


# ---- column_stats ----------------------------------------------------------------------------------------------


def column_stats_findings(
    table: HudiTable, index: ColumnStatsIndex, read: PartitionRead, ranges: _Ranges
) -> list[Finding]:
    """Each live column-stats record against the committed file it names (the rule of `claims`), and every file of
    the latest slices with a record per indexed column it holds."""
    files = committed_data_files(table)
    by_key = {column_stats_key(c, p, n): (p, n, c) for p, names in files.items() for n in names for c in index.columns}
    busy = any(i.action in (Action.CLEAN, Action.ROLLBACK) for i in table.timeline.pending())
    out: list[Finding] = []
    for key, record in sorted(read.records.items()):
        stats = _branch(record.record.get("ColumnStatsMetadata")) or {}
        if stats.get("isDeleted") or read.group_of[key] in read.unreadable_groups:
            continue
        if key not in by_key:
            name = str(stats.get("fileName"))
            if not (busy and not _exists_anywhere(files, name)):
                detail = f"column {stats.get('columnName')}: a record of a file that is not a committed data file"
                out.append(Finding(MDT_COLUMN_STATS, name, f"{detail}; {REMEDY}"))
            continue
        partition, name, column = by_key[key]
        actual = ranges.of(partition, name).get(column)
        problem = claims(stats, actual) if actual is not None else None
        if problem:
            out.append(Finding(MDT_COLUMN_STATS, _rel(partition, name), f"column {column}: {problem}; {REMEDY}"))
    live = {
        k for k, r in read.records.items() if not (_branch(r.record.get("ColumnStatsMetadata")) or {}).get("isDeleted")
    }
    for partition, name in _latest_slice_files(table):
        for column in ranges.of(partition, name):
            key = column_stats_key(column, partition, name)
            group = default_file_group_of(COLUMN_STATS, key, read.groups) if read.groups else -1
            if key not in live and group not in read.unreadable_groups:
                detail = f"column {column}: a file of the latest slices without a column-stats record"
                out.append(Finding(MDT_COLUMN_STATS, _rel(partition, name), f"{detail}; {REMEDY}"))
    return out


def partition_stats_findings(table: HudiTable, read: PartitionRead, ranges: _Ranges) -> list[Finding]:
    """Each data partition's live partition-stats record per indexed column against the merge of the column ranges of
    the files of its latest slices (section 5.4), by the rule of `claims`; a column some file holds without a record
    is a finding. Records of partitions the table no longer has are not reported (Java's clean writes none)."""
    files: dict[str, list[ColumnRange]] = {}
    for partition, name in _latest_slice_files(table):
        files.setdefault(partition, []).extend(ranges.of(partition, name).values())
    out = []
    for partition, found in sorted(files.items()):
        for column, actual in sorted(merge_all(found).items()):
            key = partition_stats_key(column, partition)
            group = default_file_group_of(PARTITION_STATS, key, read.groups) if read.groups else -1
            record = read.records.get(key)
            stats = (_branch(record.record.get("ColumnStatsMetadata")) or {}) if record is not None else {}
            if group in read.unreadable_groups:
                continue
            if not stats or stats.get("isDeleted"):
                problem: str | None = "no partition-stats record, though the latest slices hold the column"
            else:
                problem = claims(stats, actual)
            if problem:
                where = partition or "(non-partitioned)"
                out.append(Finding(MDT_PARTITION_STATS, where, f"column {column}: {problem}; {REMEDY}"))
    return out


def _exists_anywhere(files: Mapping[str, Mapping[str, int]], name: str) -> bool:
    return any(name in names for names in files.values())


def _latest_slice_files(table: HudiTable) -> Iterator[tuple[str, str]]:
    inputs = table.view_inputs()
    for fg in table.file_groups():
        picked = latest_slice_for_snapshot(fg, inputs)
        if picked is None:
            continue
        base, logs = picked
        for f in ([base] if base is not None else []) + list(logs):
            yield fg.partition, posixpath.basename(f.path)


class _Ranges:
    """Column ranges of data files, read once each (`column_ranges.file_ranges`); a file whose format we do not
    read (a Lance base file) or that cannot be read has none: its records are not compared."""

    def __init__(self, table: HudiTable, columns: Iterable[str]) -> None:
        self.table, self.columns = table, list(columns)
        self.cache: dict[tuple[str, str], dict[str, ColumnRange]] = {}

    def of(self, partition: str, name: str) -> dict[str, ColumnRange]:
        if (partition, name) not in self.cache:
            self.cache[(partition, name)] = self._read(partition, name)
        return self.cache[(partition, name)]

    def _read(self, partition: str, name: str) -> dict[str, ColumnRange]:
        base = BaseFileName.try_parse(name)
        if base is not None and base.extension != ".parquet":
            return {}
        path = posixpath.join(self.table.base_path, partition, name)
        try:
            return {r.column: r for r in file_ranges(self.table.storage, path, self.columns)}
        except READ_ERRORS:
            return {}


def claims(stats: Mapping[str, Any], actual: ColumnRange) -> str | None:
    """What a column-stats record claims that the file does not hold, or None. Data skipping prunes a file whose
    range excludes a value, whose null count is 0 (`IS NULL`) or whose values are all null (`IS NOT NULL`), so the
    record must cover the file: min at or below the file's, max at or above it, at least its nulls and its
    non-null values. A wider record is allowed: merging several records of one key (section 7.3) only widens."""
    value_type = _value_type(stats, actual)
    low, high = _plain(stats.get("minValue"), value_type, stats), _plain(stats.get("maxValue"), value_type, stats)
    nulls, count = int(stats.get("nullCount") or 0), int(stats.get("valueCount") or 0)
    problems = []
    try:
        if actual.min_value is not None and (low is None or low > actual.min_value):
            problems.append(f"min {low!r} in the record, {actual.min_value!r} in the file")
        if actual.max_value is not None and (high is None or high < actual.max_value):
            problems.append(f"max {high!r} in the record, {actual.max_value!r} in the file")
    except TypeError:
        problems.append(f"range {low!r}..{high!r} is not of the file's type ({actual.min_value!r})")
    if nulls < actual.null_count:
        problems.append(f"{nulls} nulls in the record, {actual.null_count} in the file")
    if count - nulls < actual.value_count - actual.null_count:
        problems.append(
            f"{count - nulls} non-null values in the record, {actual.value_count - actual.null_count} in the file"
        )
    return "; ".join(problems) or None


def _value_type(stats: Mapping[str, Any], actual: ColumnRange) -> ValueType:
    info = _branch(stats.get("valueType"))
    if isinstance(info, Mapping) and info.get("typeOrdinal") is not None:
        return ValueType(int(info["typeOrdinal"]))
    return actual.value_type


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _plain(wrapper: Any, value_type: ValueType, stats: Mapping[str, Any]) -> Any:
    """A recorded min or max as `column_ranges` holds values: a V2 decimal's unscaled bytes as a Decimal, dates as
    days and timestamps as microseconds (fastavro decodes V1's logical-type wrappers so)."""
    inner = _branch(wrapper)
    value = inner.get("value") if isinstance(inner, Mapping) else inner
    if value_type == ValueType.DECIMAL and isinstance(value, bytes):
        info = _branch(stats.get("valueType")) or {}
        scale = int(str(info.get("additionalInfo") or "0,0").split(",")[1])
        return decimal.Decimal(int.from_bytes(value, "big", signed=True)).scaleb(-scale)
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return (aware - _EPOCH) // dt.timedelta(microseconds=1)
    if isinstance(value, dt.date):
        return (value - _EPOCH.date()).days
    return value


def _rel(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name
