"""One rule for numeric times: typed thresholds and event-time values read a number the same way."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.table.event_time import to_epoch_ms
from hudi_meta.times import parse_time_ms


@given(st.integers(-(10**16), 10**16))
def test_a_typed_number_means_what_an_event_time_number_means(n: int) -> None:
    assert parse_time_ms(str(n)) == to_epoch_ms(n)


def test_the_units_java_write_stats_use() -> None:
    # Java's WriteStatus reads a 10-digit event time as seconds and a 13-digit one as milliseconds
    assert parse_time_ms("1767225600") == 1_767_225_600_000
    assert parse_time_ms("1767225600000") == 1_767_225_600_000
    assert parse_time_ms("2026-01-01T00:00:00Z") == 1_767_225_600_000
