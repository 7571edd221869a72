"""Merging column ranges (pure) and the ValueType ordinals Java writes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.metadata.column_ranges import ColumnRange, ValueType, merge_all, merge_ranges

values = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))
ranges = st.builds(
    lambda lo, hi, n, c: ColumnRange("f", "c", lo, hi, n, c, c, c, ValueType.LONG),
    values,
    values,
    st.integers(0, 100),
    st.integers(0, 100),
)


@given(ranges, ranges)
def test_merge_is_min_max_and_sums(a: ColumnRange, b: ColumnRange) -> None:
    m = merge_ranges(a, b)
    lows = [v for v in (a.min_value, b.min_value) if v is not None]
    highs = [v for v in (a.max_value, b.max_value) if v is not None]
    assert m.min_value == (min(lows) if lows else None)
    assert m.max_value == (max(highs) if highs else None)
    assert m.null_count == a.null_count + b.null_count
    assert m.value_count == a.value_count + b.value_count
    assert m.total_size == a.total_size + b.total_size


@given(st.lists(ranges, min_size=1, max_size=6))
def test_merge_order_does_not_change_bounds(rs: list[ColumnRange]) -> None:
    forward, backward = merge_all(rs)["c"], merge_all(reversed(rs))["c"]
    assert (forward.min_value, forward.max_value, forward.value_count) == (
        backward.min_value,
        backward.max_value,
        backward.value_count,
    )


def test_negative_zero_sorts_first() -> None:
    a = ColumnRange("f", "c", 0.0, 0.0, 0, 1, 0, 0, ValueType.DOUBLE)
    b = ColumnRange("f", "c", -0.0, -0.0, 0, 1, 0, 0, ValueType.DOUBLE)
    merged = merge_ranges(a, b)
    assert str(merged.min_value) == "-0.0" and str(merged.max_value) == "0.0"


def test_value_type_ordinals() -> None:
    """Ordinals seen in the v9 fixtures' valueType fields (the enum order of Java's ValueType)."""
    seen = {"BOOLEAN": 2, "LONG": 4, "STRING": 7, "DECIMAL": 10, "DATE": 12, "TIMESTAMP_MICROS": 16, "NULL": 1}
    assert {name: int(ValueType[name]) for name in seen} == seen
