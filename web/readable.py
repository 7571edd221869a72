"""Values as people read them, in the UI's one format: moments as ISO-8601 UTC (`times.format_time_ms`),
durations as `4m 12s` (`times.format_duration_ms`), sizes in KiB/MiB, yes/no; a service step's or an instant's
details as `name: value` pairs with absent values left out, never a Python repr."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from markupsafe import Markup, escape

from hudi_meta.table.times import format_datetime, format_duration_ms, format_time_ms

NONE = "—"
DURATION_WORDS = ("duration", "took", "latency", "lag", "age", "elapsed", "seconds")
TIME_KEYS = {"threshold", "watermark", "published_threshold"}  # epoch-ms values given without `_ms`


def when(value: dt.datetime | None) -> str:
    return format_datetime(value) if value is not None else NONE


def lag(ms: int | None) -> str:
    return format_duration_ms(ms) if ms is not None else NONE


def event_time(ms: int | None) -> str:
    return format_time_ms(ms) if ms is not None else NONE


def size(n: int | None) -> str:
    if n is None:
        return NONE
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def _whole(value: object) -> int | None:
    """An int, or the digits of one (commit summaries keep times as strings)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isascii() and value.lstrip("-").isdigit():
        return int(value)
    return None


def _value(key: str, value: object) -> str:
    number = _whole(value)
    words = key.lower()
    if number is not None and (words.endswith("_s") or words == "seconds"):
        return format_duration_ms(number * 1000)
    if number is not None and (words.endswith("_ms") or words in TIME_KEYS):
        is_duration = any(w in words for w in DURATION_WORDS)
        return format_duration_ms(number) if is_duration else format_time_ms(number)
    if number is not None and "bytes" in words:
        return size(number)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple):
        return ", ".join(_value(key, v) for v in value) or NONE
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {v}" for k, v in details(value))
    return str(value)


def _name(key: str) -> str:
    """`threshold_ms` -> `threshold`, `num_writes` -> `num writes`."""
    for suffix in ("_ms", "_s"):
        if key.endswith(suffix):
            key = key[: -len(suffix)]
    return key.replace("_", " ")


def details(values: Mapping[str, object]) -> list[tuple[str, str]]:
    """(name, readable value) of each given value; None and empty lists are left out."""
    return [(_name(k), _value(k, v)) for k, v in values.items() if v is not None and v != [] and v != ""]


def seconds(value: float | None) -> str:
    """A duration the store gives in seconds (a step's, a plan's), as durations read everywhere else."""
    return format_duration_ms(int(value * 1000)) if value is not None else NONE


def breakable(name: str | None) -> Markup:
    """A file name or path that wraps only after its separators (`_ - . /`), never inside a word or number."""
    if name is None:
        return Markup(NONE)
    text = str(escape(name))
    for sep in ("_", "-", ".", "/"):
        text = text.replace(sep, sep + "<wbr>")
    return Markup(text)
