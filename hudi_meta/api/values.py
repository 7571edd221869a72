"""Times and durations as the Python API takes them (a datetime, a number or text), read into epoch
milliseconds with errors that name the argument."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TypeVar

from hudi_meta.errors import BadValueError
from hudi_meta.table.times import EPOCH, check_time_ms, duration_ms, parse_duration_ms, parse_time_ms, time_ms

T = TypeVar("T")
Moment = dt.datetime | int | str  # a time: an aware or UTC datetime, epoch milliseconds, or ISO-8601 / epoch-ms text
Duration = dt.timedelta | int | str  # milliseconds, or text such as "30m"


def as_time_ms(value: Moment, what: str) -> int:
    """Epoch milliseconds of a time given as a datetime (naive: UTC), a number (read as event-time numbers are:
    epoch seconds below 1e11, milliseconds below 1e14, else microseconds) or text (ISO-8601 or such a number)."""
    if isinstance(value, bool):
        raise BadValueError(f"{what}: expected a time, got {value!r}")
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
        return _named(what, lambda v: check_time_ms((v - EPOCH) // dt.timedelta(milliseconds=1), v.isoformat()), aware)
    if isinstance(value, int):
        return _named(what, time_ms, value)
    if isinstance(value, str):
        return _named(what, parse_time_ms, value)
    raise BadValueError(f"{what}: expected a datetime, epoch milliseconds or ISO-8601 text, got {type(value).__name__}")


def as_duration_ms(value: Duration, what: str) -> int:
    """Milliseconds of a duration given as a timedelta, milliseconds or text such as `30m`."""
    if isinstance(value, bool):
        raise BadValueError(f"{what}: expected a duration, got {value!r}")
    if isinstance(value, dt.timedelta):
        return _named(what, lambda v: duration_ms(v // dt.timedelta(milliseconds=1), str(v)), value)
    if isinstance(value, int):
        return _named(what, duration_ms, value)
    if isinstance(value, str):
        return _named(what, parse_duration_ms, value)
    raise BadValueError(f"{what}: expected a timedelta, milliseconds or text such as 30m, got {type(value).__name__}")


def _named(what: str, parse: Callable[[T], int], value: T) -> int:
    """`parse(value)`, its error naming `what` (the argument) first."""
    try:
        return parse(value)
    except BadValueError as e:
        raise BadValueError(f"{what}: {e}") from e
