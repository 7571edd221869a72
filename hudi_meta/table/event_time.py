"""Event time normalised to epoch milliseconds UTC, from the types event-time fields come in."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

SECONDS_BELOW = 10**11  # numbers below are epoch seconds (until 5138)
MILLIS_BELOW = 10**14  # numbers below (and at least SECONDS_BELOW) are epoch ms, the rest epoch us


def number_unit(v: int | float) -> int:
    """0 for seconds, 1 for milliseconds, 2 for microseconds (`number_to_epoch_ms` is monotonic within one)."""
    return (abs(v) >= SECONDS_BELOW) + (abs(v) >= MILLIS_BELOW)


def number_to_epoch_ms(v: int) -> int:
    """The one rule for numeric times, event-time values and typed thresholds alike: below 1e11 the number
    is epoch seconds (until 5138), below 1e14 epoch milliseconds, else epoch microseconds. Java Hudi's write
    stats read 10-digit values as seconds and 13-digit values as milliseconds, so both agree."""
    if abs(v) < SECONDS_BELOW:
        return v * 1000
    if abs(v) >= MILLIS_BELOW:
        return v // 1000
    return v


def to_epoch_ms(value: Any) -> int | None:
    """Epoch ms of one value: datetimes, dates, ISO-8601 strings, or numbers in s, ms or us."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return int(value.timestamp() * 1000)
    if isinstance(value, dt.date):
        return int(dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC).timestamp() * 1000)
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return number_to_epoch_ms(int(value))
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("-").isdigit():
            return to_epoch_ms(int(text))
        try:
            return to_epoch_ms(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
        except ValueError:
            return None
    return None


def min_max_epoch_ms(column: pa.ChunkedArray | pa.Array | Iterable[Any]) -> tuple[int | None, int | None]:
    """(min, max) event time in epoch ms over a column; (None, None) when it has no values."""
    if isinstance(column, pa.ChunkedArray | pa.Array) and column.type != pa.null():
        mm = pc.min_max(column)
        lo, hi = mm["min"].as_py(), mm["max"].as_py()
        return to_epoch_ms(lo), to_epoch_ms(hi)
    values = [v for v in (to_epoch_ms(x) for x in column) if v is not None]
    return (min(values), max(values)) if values else (None, None)
