"""A compaction plan's Avro datum, encoded for its one schema (HoodieCompactionPlan.avsc).

fastavro writes the same bytes but, for every value of a union field, first checks which branch the value
fits, walking nested arrays and records once to choose and once more to write, which dominated the encoding
of large plans. Here each field's branch is known from the plan's types. The bytes must equal fastavro's for every
plan (tests/format/test_plan_codec.py compares them).

Avro binary encoding: int and long are zig-zag varints; a string is its UTF-8 length then its bytes; a
union is its branch index then the value; an array or map is one block (item count, items) then 0, or
only 0 when empty; a double is 8 bytes little-endian; a boolean one byte.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from hudi_meta.format.avro_container import zigzag_varint


class _Link(Protocol):
    @property
    def symlink(self) -> str: ...
    @property
    def target(self) -> str: ...


class CompactionOperationFields(Protocol):
    """The fields of a compaction operation the encoder reads (`table_service_metadata.CompactionOperation`)."""

    @property
    def base_instant_time(self) -> str: ...
    @property
    def file_id(self) -> str: ...
    @property
    def partition_path(self) -> str: ...
    @property
    def data_file_path(self) -> str | None: ...
    @property
    def delta_file_paths(self) -> Sequence[str]: ...
    @property
    def metrics(self) -> Mapping[str, float]: ...
    @property
    def bootstrap_file_path(self) -> str | None: ...
    @property
    def symlink_operations(self) -> Sequence[_Link]: ...


class _Strategy(Protocol):
    @property
    def compactor_class_name(self) -> str | None: ...
    @property
    def strategy_params(self) -> Mapping[str, str]: ...
    @property
    def version(self) -> int: ...


class CompactionPlanFields(Protocol):
    """The fields of a compaction plan the encoder reads (`table_service_metadata.CompactionPlan`)."""

    @property
    def operations(self) -> Sequence[CompactionOperationFields]: ...
    @property
    def extra_metadata(self) -> Mapping[str, str]: ...
    @property
    def version(self) -> int: ...
    @property
    def strategy(self) -> _Strategy | None: ...
    @property
    def preserve_hoodie_metadata(self) -> bool: ...
    @property
    def missing_schedule_partitions(self) -> Sequence[str]: ...


_DOUBLE = struct.Struct("<d")
_NULL = b"\x00"  # branch 0 (null first in the union)
_SECOND = b"\x02"  # branch 1
_FIRST = b"\x00"  # branch 0 of ["int", "null"] / ["boolean", "null"]


_SMALL = [zigzag_varint(n) for n in range(1024)]  # lengths and counts are almost always below this


def _count(n: int) -> bytes:
    return _SMALL[n] if n < 1024 else zigzag_varint(n)


def _string(value: str) -> bytes:
    """A string's encoding as one value: length and bytes."""
    data = value.encode()
    return _count(len(data)) + data


def _opt_str(value: str | None, parts: list[bytes]) -> None:
    """["null", "string"]"""
    if value is None:
        parts.append(_NULL)
    else:
        data = value.encode()
        parts.append(_SECOND + _count(len(data)) + data)


def _str_array(values: Iterable[str], parts: list[bytes]) -> None:
    """["null", {"array": "string"}] of a present list."""
    items = list(values)
    parts.append(_SECOND)
    if items:
        parts.append(_count(len(items)))
        for v in items:
            parts.append(_string(v))
    parts.append(b"\x00")


def _str_map(values: Mapping[str, str], parts: list[bytes]) -> None:
    """["null", {"map": "string"}] of a present map."""
    parts.append(_SECOND)
    if values:
        parts.append(_count(len(values)))
        for k, v in values.items():
            parts.append(_string(k))
            parts.append(_string(v))
    parts.append(b"\x00")


def _int_or_null(value: int | None, parts: list[bytes]) -> None:
    """["int", "null"]"""
    if value is None:
        parts.append(b"\x02")
    else:
        parts.append(_FIRST)
        parts.append(zigzag_varint(value))


class _Recurring:
    """Encodings of the values that recur across a plan's operations (instants, partitions, metric names),
    each made once: a plan of 50,000 slices writes 10^5 of them."""

    def __init__(self) -> None:
        self.optional: dict[str, bytes] = {}  # ["null", "string"], present
        self.plain: dict[str, bytes] = {}

    def opt_str(self, value: str | None, parts: list[bytes]) -> None:
        if value is None:
            parts.append(_NULL)
            return
        encoded = self.optional.get(value)
        if encoded is None:
            encoded = self.optional[value] = _SECOND + _string(value)
        parts.append(encoded)

    def plain_str(self, value: str, parts: list[bytes]) -> None:
        encoded = self.plain.get(value)
        if encoded is None:
            encoded = self.plain[value] = _string(value)
        parts.append(encoded)


def _operation(op: CompactionOperationFields, parts: list[bytes], recurring: _Recurring) -> None:
    append = parts.append
    recurring.opt_str(op.base_instant_time, parts)
    append(_SECOND)  # deltaFilePaths: a present array
    if op.delta_file_paths:
        append(_count(len(op.delta_file_paths)))
        for name in op.delta_file_paths:
            append(_string(name))
    append(b"\x00")
    _opt_str(op.data_file_path, parts)
    _opt_str(op.file_id, parts)
    recurring.opt_str(op.partition_path, parts)
    append(_SECOND)  # metrics: a map of doubles
    if op.metrics:
        append(_count(len(op.metrics)))
        for k, v in op.metrics.items():
            recurring.plain_str(k, parts)
            append(_DOUBLE.pack(v))
    append(b"\x00")
    _opt_str(op.bootstrap_file_path, parts)
    if not op.symlink_operations:  # to_avro writes an empty list as null
        append(_NULL)
        return
    append(_SECOND)
    append(_count(len(op.symlink_operations)))
    for link in op.symlink_operations:  # two present ["null", "string"] (half of a plan's strings: inlined)
        symlink, target = link.symlink.encode(), link.target.encode()
        append(b"".join((_SECOND, _count(len(symlink)), symlink, _SECOND, _count(len(target)), target)))
    append(b"\x00")


def encode_compaction_plan(plan: CompactionPlanFields) -> bytes:
    """The Avro datum of `plan` in the HoodieCompactionPlan schema: what `plan.to_avro()` encodes to."""
    parts: list[bytes] = [_SECOND]  # operations: always a list
    if plan.operations:
        parts.append(_count(len(plan.operations)))
        recurring = _Recurring()
        for op in plan.operations:
            _operation(op, parts, recurring)
    parts.append(b"\x00")
    _str_map(plan.extra_metadata, parts)
    _int_or_null(plan.version, parts)
    if plan.strategy is None:
        parts.append(_NULL)
    else:
        parts.append(_SECOND)
        _opt_str(plan.strategy.compactor_class_name, parts)
        _str_map(plan.strategy.strategy_params, parts)
        _int_or_null(plan.strategy.version, parts)
    parts.append(_FIRST)
    parts.append(b"\x01" if plan.preserve_hoodie_metadata else b"\x00")
    _str_array(plan.missing_schedule_partitions, parts)
    return b"".join(parts)
