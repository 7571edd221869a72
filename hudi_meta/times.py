"""Times as users type them: ISO-8601 or epoch milliseconds (or instant times, where an instant is meant),
and durations like `90s`, `30m`, `2h`."""

from __future__ import annotations

import datetime as dt
import re

from hudi_meta.errors import HudiMetaError
from hudi_meta.table.event_time import number_to_epoch_ms
from hudi_meta.table.instant import format_instant

_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|h|d)\s*$")
_INSTANT = re.compile(r"^\d{14}(\d{3})?$")


def now_ms() -> int:
    """Now as epoch ms UTC."""
    return int(dt.datetime.now(dt.UTC).timestamp() * 1000)


def parse_time_ms(text: str) -> int:
    """Epoch ms from `2026-01-01T00:00:00Z` (no zone means UTC) or a number, read by the same rule as event
    times (`number_to_epoch_ms`: `1767225600000` is milliseconds, `1767225600` seconds)."""
    value = text.strip()
    if value.lstrip("-").isdigit():
        return number_to_epoch_ms(int(value))
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as e:
        raise HudiMetaError(f"not a time: {text!r} (use ISO-8601 or epoch milliseconds)") from e
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return int(parsed.timestamp() * 1000)


def parse_duration_ms(text: str) -> int:
    m = _DURATION.match(text)
    if m is None:
        raise HudiMetaError(f"not a duration: {text!r} (use e.g. 500ms, 90s, 30m, 2h, 1d)")
    return int(m[1]) * _UNITS[m[2]]


def format_time_ms(ms: int) -> str:
    """ISO-8601 UTC with milliseconds, e.g. `2026-11-22T00:00:00.000Z`."""
    t = dt.datetime.fromtimestamp(ms / 1000, dt.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def parse_instant(text: str, timeline_zone: dt.tzinfo) -> str:
    """An instant time for reading as of a point: an instant as given (`yyyyMMddHHmmss[SSS]`), or an ISO-8601
    time (no zone means UTC) or epoch milliseconds, expressed in the timeline's time zone as Hudi writes
    instants (`hoodie.table.timeline.timezone`)."""
    value = text.strip()
    if _INSTANT.match(value):
        try:
            dt.datetime.strptime(value[:14], "%Y%m%d%H%M%S")
        except ValueError as e:
            raise HudiMetaError(f"not an instant time: {text!r}") from e
        return value
    try:
        ms = parse_time_ms(value)
        t = dt.datetime.fromtimestamp(ms / 1000, dt.UTC).astimezone(timeline_zone)
    except (HudiMetaError, OverflowError, OSError, ValueError) as e:
        raise HudiMetaError(f"not a time: {text!r} (use ISO-8601, epoch milliseconds or an instant time)") from e
    return format_instant(t)
