"""One output path for every read command: rows (dicts) as a JSON array, JSON lines or a text table."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from hudi_meta.api import format_duration_ms, format_time_ms

# columns holding epoch milliseconds (event times, thresholds) and durations in ms, in rows about a table
TIME_COLUMNS = frozenset(
    {"threshold", "threshold_ms", "watermark_ms", "min_event_time", "max_event_time", "min_pending_event_time_ms"}
)
DURATION_COLUMNS = frozenset({"lag_ms", "duration_ms", "age_ms"})


def json_default(value: Any) -> Any:
    """JSON for values Arrow and Avro produce: dates and times as ISO-8601, decimals as strings."""
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value, default=json_default)
    return str(json_default(value)) if not isinstance(value, str | int | float | bool) else str(value)


def write_json(rows: Sequence[dict[str, Any]], out: TextIO | None = None) -> None:
    out = sys.stdout if out is None else out  # looked up per call: tests and callers replace sys.stdout
    json.dump(list(rows), out, default=json_default, indent=1)
    out.write("\n")


def write_json_object(row: dict[str, Any], out: TextIO | None = None) -> None:
    """One JSON object (a command about one thing: `freshness --json`)."""
    out = sys.stdout if out is None else out  # looked up per call: tests and callers replace sys.stdout
    json.dump(row, out, default=json_default, indent=1)
    out.write("\n")


def write_jsonl(rows: Iterable[dict[str, Any]], out: TextIO | None = None) -> None:
    out = sys.stdout if out is None else out  # looked up per call: tests and callers replace sys.stdout
    for row in rows:
        out.write(json.dumps(row, default=json_default))
        out.write("\n")


def write_table(
    rows: Sequence[dict[str, Any]], out: TextIO | None = None, columns: Sequence[str] | None = None
) -> None:
    write_table_stream([rows], out, columns)


def write_table_stream(
    batches: Iterable[Sequence[dict[str, Any]]], out: TextIO | None = None, columns: Sequence[str] | None = None
) -> None:
    """A text table written batch by batch: the columns and widths come from the first rows, so the header is
    out before later batches are read (a wider value later only pushes its own line)."""
    out = sys.stdout if out is None else out  # looked up per call: tests and callers replace sys.stdout
    cols: list[str] | None = list(columns) if columns else None
    widths: list[int] = []
    for rows in batches:
        if not rows:
            continue
        if cols is None:
            cols = list(rows[0].keys())
        cells = [[_cell(r.get(c)) for c in cols] for r in rows]
        if not widths:
            widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
            out.write("  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip() + "\n")
        for row in cells:
            out.write("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() + "\n")
    if not widths:
        out.write("(no rows)\n")


def write_rows(rows: Sequence[dict[str, Any]], as_json: bool, out: TextIO | None = None) -> None:
    """Rows about a table (not its records): JSON as stored (epoch ms, booleans), text as people read it."""
    if as_json:
        write_json(rows, out)
    else:
        write_table([readable(row) for row in rows], out)


def readable(row: dict[str, Any]) -> dict[str, Any]:
    """A row of metadata in the one text format of hudi-meta's output: times ISO-8601 UTC, durations `4m 12s`,
    yes/no, a mapping as `key=value` pairs (JSON output keeps epoch milliseconds and true/false)."""
    return {key: readable_value(key, value) for key, value in row.items()}


def readable_value(key: str, value: Any) -> Any:
    if key in TIME_COLUMNS and isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)  # commit metadata keeps the threshold as text
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and key in TIME_COLUMNS:
        return format_time_ms(value)
    if isinstance(value, int) and key in DURATION_COLUMNS:
        return format_duration_ms(value)
    if isinstance(value, dict):
        return " ".join(f"{k}={_plain(v if isinstance(v, list) else readable_value(k, v))}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(str(readable_value(key, v)) for v in value)
    return value


def _plain(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return "-" if value is None else str(value)
