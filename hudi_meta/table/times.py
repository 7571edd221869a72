"""Times as users type them: ISO-8601 or epoch milliseconds (or instant times, where an instant is meant),
and durations like `90s`, `30m`, `2h`; the one parser of each, shared by the CLI, the web API and the
configuration.

One rule for every time: from 1970-01-01 (nothing hudi-meta publishes or reads as of a time lies before it) to
9999-12-31 (the last time Python's datetime, and so every formatted time, holds). Durations go from 0 to 100
years, so that now plus or minus one stays such a time."""

from __future__ import annotations

import datetime as dt
import re

from hudi_meta.errors import BadValueError
from hudi_meta.table.event_time import number_to_epoch_ms
from hudi_meta.timeline.instant import format_instant
from hudi_meta.values import INSTANT_TIME, ascii_integer, parse_instant_time, shown

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
MAX_TIME_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
MAX_DURATION_MS = 36_500 * 86_400_000  # 100 years (36500d)
_MIN_SHOWN_MS = -62_135_596_800_000  # 0001-01-01T00:00:00Z, the first time a datetime holds
_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION = re.compile(r"([0-9]+)\s*(ms|s|m|h|d)", re.ASCII)


def describe_time_ms(ms: int) -> str:
    """`format_time_ms` where a datetime holds the time, else the number (for messages about bad times)."""
    return format_time_ms(ms) if _MIN_SHOWN_MS <= ms <= MAX_TIME_MS else f"{ms} ms"


def check_time_ms(ms: int, given: str | None = None) -> int:
    """`ms` when it lies from 1970 to 9999; `given` is how the user wrote it."""
    if ms < 0:
        raise BadValueError(f"{given or ms} is {describe_time_ms(ms)}, before 1970")
    if ms > MAX_TIME_MS:
        raise BadValueError(f"{given or ms} is after {format_time_ms(MAX_TIME_MS)}")
    return ms


def time_ms(number: int) -> int:
    """A number as a time, by the rule event times follow (`number_to_epoch_ms`: below 1e11 epoch seconds,
    below 1e14 epoch milliseconds, else microseconds), from 1970 to 9999."""
    return check_time_ms(number_to_epoch_ms(number), shown(number))


def now_ms() -> int:
    """Now as epoch ms UTC."""
    return int(dt.datetime.now(dt.UTC).timestamp() * 1000)


def parse_time_ms(text: str) -> int:
    """Epoch ms from `2026-01-01T00:00:00Z` (no zone means UTC) or a number in ASCII digits (`time_ms`:
    `1767225600000` is milliseconds, `1767225600` seconds), from 1970 to 9999."""
    ms = _epoch_ms(text.strip())
    if ms is None:
        raise BadValueError(f"not a time: {shown(text)} (use ISO-8601 or epoch milliseconds)")
    return check_time_ms(ms, shown(text))


def _epoch_ms(value: str) -> int | None:
    """Epoch ms of an ISO-8601 time or a number (not range-checked); None: neither."""
    number = ascii_integer(value)
    if number is not None:
        return number_to_epoch_ms(number)
    if not value.isascii():  # fromisoformat reads only ASCII digits, but say so here
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return (parsed - EPOCH) // dt.timedelta(milliseconds=1)


def duration_ms(ms: int, given: str | None = None) -> int:
    """`ms` when it lies from 0 to 100 years; `given` is how the user wrote it."""
    given = given or f"{shown(ms)} ms"
    if ms < 0:
        raise BadValueError(f"{given} is negative: a duration is at least 0")
    if ms > MAX_DURATION_MS:
        raise BadValueError(f"{given} is more than {MAX_DURATION_MS // _UNITS['d']}d (100 years)")
    return ms


def parse_duration_ms(text: str) -> int:
    """Milliseconds from a whole number and a unit (`500ms`, `90s`, `30m`, `2h`, `1d`), at most 100 years."""
    m = _DURATION.fullmatch(text.strip())
    if m is None:
        raise BadValueError(f"not a duration: {shown(text)} (use e.g. 500ms, 90s, 30m, 2h, 1d)")
    count = ascii_integer(m[1])
    assert count is not None  # the pattern matched ASCII digits
    return duration_ms(count * _UNITS[m[2]], shown(text))


def format_time_ms(ms: int) -> str:
    """ISO-8601 UTC with milliseconds, e.g. `2026-11-22T00:00:00.000Z`."""
    t = EPOCH + dt.timedelta(milliseconds=ms)  # exact: ms / 1000 as a float can land on the millisecond before
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def format_datetime(value: dt.datetime) -> str:
    """A moment in the one text format of hudi-meta's output: ISO-8601 UTC with milliseconds (`format_time_ms`).
    A naive value is taken as UTC (the store keeps UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return format_time_ms((value - EPOCH) // dt.timedelta(milliseconds=1))


def format_duration_ms(ms: int) -> str:
    """A duration as people read it: `850ms`, `42s`, `4m 12s`, `3h 05m`, `2d 07h` (two units at most, rounded
    down; a negative duration gets a leading `-`)."""
    if ms < 0:
        return "-" + format_duration_ms(-ms)
    if ms < 1000:
        return f"{ms}ms"
    seconds = ms // 1000
    minutes, s = divmod(seconds, 60)
    hours, m = divmod(minutes, 60)
    days, h = divmod(hours, 24)
    if days:
        return f"{days}d {h:02d}h"
    if hours:
        return f"{hours}h {m:02d}m"
    if minutes:
        return f"{minutes}m {s:02d}s"
    return f"{s}s"


def parse_instant(text: str, timeline_zone: dt.tzinfo) -> str:
    """An instant time for reading as of a point: an instant as given (`values.parse_instant_time`), or
    a time (`parse_time_ms`) expressed in the timeline's time zone as Hudi writes instants
    (`hoodie.table.timeline.timezone`)."""
    value = text.strip()
    if INSTANT_TIME.fullmatch(value):
        return parse_instant_time(text)
    ms = _epoch_ms(value)
    if ms is None:
        raise BadValueError(
            f"not a time or an instant time: {shown(text)} (use ISO-8601, epoch milliseconds or yyyyMMddHHmmss[SSS])"
        )
    check_time_ms(ms, shown(text))
    try:
        t = (EPOCH + dt.timedelta(milliseconds=ms)).astimezone(timeline_zone)
    except OverflowError:
        raise BadValueError(f"{shown(text)} is outside the times the timeline's zone can write") from None
    return format_instant(t)


def parse_point(text: str) -> str:
    """`--begin`, `--end`, `--as-of` as typed, once `parse_instant` takes them (the table's zone comes later)."""
    parse_instant(text, dt.UTC)
    return text.strip()
