"""A compaction plan's Avro datum, encoded for its one schema (HoodieCompactionPlan.avsc).

fastavro writes the same bytes but, for every value of a union field, first checks which branch the value
fits, walking nested arrays and records once to choose and once more to write: 0.7 s of a 50,000-slice
plan. Here each field's branch is known from the plan's types. The bytes must equal fastavro's for every
plan (tests/format/test_plan_codec.py compares them).

Avro binary encoding: int and long are zig-zag varints; a string is its UTF-8 length then its bytes; a
union is its branch index then the value; an array or map is one block (item count, items) then 0, or
only 0 when empty; a double is 8 bytes little-endian; a boolean one byte.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from hudi_meta.format.avro_container import zigzag_varint

if TYPE_CHECKING:
    from hudi_meta.format.table_service_metadata import CompactionOperation, CompactionPlan

_DOUBLE = struct.Struct("<d")
_NULL = b"\x00"  # branch 0 (null first in the union)
_SECOND = b"\x02"  # branch 1
_FIRST = b"\x00"  # branch 0 of ["int", "null"] / ["boolean", "null"]


_SMALL = [zigzag_varint(n) for n in range(1024)]  # lengths and counts are almost always below this


def _count(n: int) -> bytes:
    return _SMALL[n] if n < 1024 else zigzag_varint(n)


def _str(value: str, parts: list[bytes]) -> None:
    data = value.encode()
    parts.append(_count(len(data)))
    parts.append(data)


def _opt_str(value: str | None, parts: list[bytes]) -> None:
    """["null", "string"]"""
    if value is None:
        parts.append(_NULL)
    else:
        parts.append(_SECOND)
        _str(value, parts)


def _str_array(values: Iterable[str], parts: list[bytes]) -> None:
    """["null", {"array": "string"}] of a present list."""
    items = list(values)
    parts.append(_SECOND)
    if items:
        parts.append(_count(len(items)))
        for v in items:
            _str(v, parts)
    parts.append(b"\x00")


def _str_map(values: Mapping[str, str], parts: list[bytes]) -> None:
    """["null", {"map": "string"}] of a present map."""
    parts.append(_SECOND)
    if values:
        parts.append(_count(len(values)))
        for k, v in values.items():
            _str(k, parts)
            _str(v, parts)
    parts.append(b"\x00")


def _int_or_null(value: int | None, parts: list[bytes]) -> None:
    """["int", "null"]"""
    if value is None:
        parts.append(b"\x02")
    else:
        parts.append(_FIRST)
        parts.append(zigzag_varint(value))


def _operation(op: CompactionOperation, parts: list[bytes]) -> None:
    _opt_str(op.base_instant_time, parts)
    _str_array(op.delta_file_paths, parts)
    _opt_str(op.data_file_path, parts)
    _opt_str(op.file_id, parts)
    _opt_str(op.partition_path, parts)
    parts.append(_SECOND)  # metrics: a map of doubles
    if op.metrics:
        parts.append(_count(len(op.metrics)))
        for k, v in op.metrics.items():
            _str(k, parts)
            parts.append(_DOUBLE.pack(v))
    parts.append(b"\x00")
    _opt_str(op.bootstrap_file_path, parts)
    if not op.symlink_operations:  # to_avro writes an empty list as null
        parts.append(_NULL)
        return
    parts.append(_SECOND)
    parts.append(_count(len(op.symlink_operations)))
    for link in op.symlink_operations:
        _opt_str(link.symlink, parts)
        _opt_str(link.target, parts)
    parts.append(b"\x00")


def encode_compaction_plan(plan: CompactionPlan) -> bytes:
    """The Avro datum of `plan` in the HoodieCompactionPlan schema: what `plan.to_avro()` encodes to."""
    parts: list[bytes] = [_SECOND]  # operations: always a list
    if plan.operations:
        parts.append(_count(len(plan.operations)))
        for op in plan.operations:
            _operation(op, parts)
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
