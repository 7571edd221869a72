"""Values as users type them, one parser per kind, shared by the CLI, the web API and the configuration: whole
numbers in a range, shares, seconds, instant times, names, flags (times and durations: `hudi_meta.table.times`).

Only ASCII digits are digits: `str.isdigit` takes '²' (which `int` then refuses) and `int` takes '１２３', so
neither decides. Every parser returns an in-range value or raises one `BadValueError` line that shows the value;
the caller names the option, field or key it came from.
"""

from __future__ import annotations

import datetime as dt
import re

from hudi_meta.errors import BadValueError

JAVA_INT_MAX = 2**31 - 1  # Hudi's integer settings are Java ints
JAVA_LONG_MAX = 2**63 - 1
_MAX_DIGITS = 40  # a longer number is outside every range here (and `int` refuses more than 4300 digits)
_HUGE: int = 10**_MAX_DIGITS
_INTEGER = re.compile(r"-?[0-9]+")
_DECIMAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
INSTANT_TIME = re.compile(r"[0-9]{14}(?:[0-9]{3})?")  # yyyyMMddHHmmss[SSS]
_IDENTIFIER = re.compile(r"[A-Za-z0-9_]+")
TRUE_WORDS = ("true", "on", "1")  # a checked box posts "on"
FALSE_WORDS = ("false", "off", "0", "")


def shown(value: object, limit: int = 40) -> str:
    """A value as an error message shows it: its repr, cut to `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def ascii_integer(text: str) -> int | None:
    """The integer `text` spells in ASCII digits (a leading minus and surrounding spaces allowed), else None.
    Beyond 40 digits the value is +-10**40: out of every range, without asking `int` to read it."""
    value = text.strip()
    if not _INTEGER.fullmatch(value):
        return None
    if len(value.lstrip("-")) > _MAX_DIGITS:
        return -_HUGE if value.startswith("-") else _HUGE
    return int(value)


def whole_in_range(value: int, low: int, high: int, given: str | None = None) -> int:
    """`value` when `low <= value <= high`; `given` is how the user wrote it (default: the number)."""
    if isinstance(value, bool) or not low <= value <= high:
        raise BadValueError(f"expected a whole number from {low} to {high}, got {given or shown(value)}")
    return value


def parse_whole(text: str, low: int, high: int) -> int:
    """A whole number in ASCII digits from `low` to `high`."""
    value = ascii_integer(text)
    if value is None:
        raise BadValueError(f"expected a whole number from {low} to {high}, got {shown(text)}")
    return whole_in_range(value, low, high, shown(text))


def parse_share(text: str) -> float:
    """A share from 0 to 1 as a decimal number (`0.1`, `.25`, `1e-3`)."""
    value = text.strip()
    if _DECIMAL.fullmatch(value) and 0 <= float(value) <= 1:
        return float(value)
    raise BadValueError(f"expected a share from 0 to 1, got {shown(text)}")


def parse_seconds(text: str, low: float, high: float) -> float:
    """A number of seconds (a decimal number) from `low` to `high`."""
    value = text.strip()
    if _DECIMAL.fullmatch(value) and low <= float(value) <= high:
        return float(value)
    raise BadValueError(f"expected seconds from {low:g} to {high:g}, got {shown(text)}")


def parse_instant_time(text: str) -> str:
    """An instant time as Hudi names instants, `yyyyMMddHHmmss[SSS]` in ASCII digits: the one instant parser (the
    CLI's instants, and `times.parse_instant` for times that are instants). The digits must be a date, except in
    year 0000, where Hudi keeps its sentinels (`00000000000000` SOLO_COMMIT_TIMESTAMP, `00000000000001`
    bootstrap, the MDT's `00000000000000000` init): no write gets such a time, and no date lies in year 0. The
    timeline says whether the instant exists."""
    value = text.strip()
    if not INSTANT_TIME.fullmatch(value) or not (value.startswith("0000") or _is_date(value[:14])):
        raise BadValueError(f"not an instant time: {shown(text)} (use yyyyMMddHHmmss or yyyyMMddHHmmssSSS)")
    return value


def _is_date(digits: str) -> bool:
    """Whether 14 ASCII digits are a date and time (`yyyyMMddHHmmss`)."""
    try:
        dt.datetime.strptime(digits, "%Y%m%d%H%M%S")
    except ValueError:
        return False
    return True


def parse_text(text: str) -> str:
    """Text that must say something (a path, a URL, a field name): not empty, not only spaces, as given."""
    if not text.strip():
        raise BadValueError(f"must not be empty, got {shown(text)}")
    return text


def parse_identifier(text: str) -> str:
    """A name a Hive catalog holds (a database or table): ASCII letters, digits and underscores."""
    if not _IDENTIFIER.fullmatch(text):
        raise BadValueError(f"use letters, digits and underscores (ASCII), got {shown(text)}")
    return text


def parse_flag(text: str) -> bool:
    """A yes/no as a form posts it: `true`, `on`, `1` or `false`, `off`, `0`, empty (case does not matter)."""
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise BadValueError(f"expected true or false, got {shown(text)}")
