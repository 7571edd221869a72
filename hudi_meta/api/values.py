"""Times and durations as the Python API takes them (a datetime, a number or text), read into epoch
milliseconds with errors that name the argument."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import TypeVar

from hudi_meta.errors import BadValueError, ParameterError
from hudi_meta.table.table import QueryKind
from hudi_meta.table.times import EPOCH, check_time_ms, duration_ms, parse_duration_ms, parse_time_ms, time_ms
from hudi_meta.write.clean_plan import (
    KEEP_LATEST_BY_HOURS,
    KEEP_LATEST_COMMITS,
    MAX_HOURS_RETAINED,
    MAX_RETAINED,
    POLICY_KEY,
    misplaced_retention,
    policy_name,
)

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


# the arguments each query kind takes, and the one it needs (snapshot and ro take none)
QUERY_ARGUMENTS: dict[QueryKind, tuple[tuple[str, ...], str]] = {
    QueryKind.INCREMENTAL: (("begin", "end"), "begin"),
    QueryKind.TIME_TRAVEL: (("as_of",), "as_of"),
}


def check_query(kind: QueryKind | str, begin: str | None, end: str | None, as_of: str | None) -> QueryKind:
    """The query kind a caller names (any `QueryKind` spelling, `read_optimized` too), refused in one line
    naming the parameters when they do not go with it: an incremental query reads (`begin`, `end`], a
    time-travel query the table `as_of` an instant, the others neither."""
    query = QueryKind.parse(kind, "query")
    takes, needs = QUERY_ARGUMENTS.get(query, ((), ""))
    given = {"begin": begin, "end": end, "as_of": as_of}
    article = "an" if query == QueryKind.INCREMENTAL else "a"
    if needs and given[needs] is None:
        raise ParameterError(f"{article} {query} query needs {{{needs}}} (a time or an instant)", needs)
    if any(value and name not in takes for name, value in given.items()):
        others = _listed([n for n in given if n not in takes], "or")
        what = f"{_listed(list(takes), 'and')}, not {others}" if takes else f"no {others}"
        raise ParameterError(f"{article} {query} query takes {what}", *given)
    return query


def _listed(names: list[str], last: str) -> str:
    """`{a}, {b} or {c}`: placeholders for `ParameterError`."""
    marked = [f"{{{n}}}" for n in names]
    return marked[0] if len(marked) == 1 else f"{', '.join(marked[:-1])} {last} {marked[-1]}"


def check_retention(props: Mapping[str, str], policy: str | None, retained: int | None, hours: int | None) -> None:
    """A clean's `policy` (None: the table's `hoodie.clean.policy`, else keep-latest-commits) with the retention it
    takes: `hours` for keep-latest-by-hours, `retained` (commits or file versions) for the others, each in range;
    refused naming the parameters."""
    name = (
        policy_name(policy, "policy")
        if policy
        else policy_name(props.get(POLICY_KEY) or KEEP_LATEST_COMMITS, POLICY_KEY)
    )
    misplaced = misplaced_retention(name, retained, hours)
    if misplaced == "retained":
        raise ParameterError(f"{KEEP_LATEST_BY_HOURS} keeps {{hours}} H, not {{retained}} N", "hours", "retained")
    if misplaced == "hours":
        raise ParameterError(
            f"{{hours}} is for {KEEP_LATEST_BY_HOURS}; {name} takes {{retained}} N", "hours", "retained"
        )
    for parameter, value, most in (("retained", retained, MAX_RETAINED), ("hours", hours, MAX_HOURS_RETAINED)):
        if value is not None and not 0 <= value <= most:
            raise ParameterError(f"{{{parameter}}} must be from 0 to {most}, not {value}", parameter)
