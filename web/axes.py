"""Ticks for the UI's charts: round numbers, round durations and round times, so an axis reads at a glance."""

from __future__ import annotations

from dataclasses import dataclass

from hudi_meta.table.times import format_duration_ms, format_time_ms

SECOND = 1000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR
TIME_STEPS = (
    [s * SECOND for s in (1, 2, 5, 10, 15, 30)]
    + [m * MINUTE for m in (1, 2, 5, 10, 15, 30)]
    + [h * HOUR for h in (1, 2, 3, 6, 12)]
    + [d * DAY for d in (1, 2, 7, 14, 30, 91, 182, 365)]
)


@dataclass(frozen=True)
class Tick:
    at: float  # the position on the axis (pixels)
    label: str


def nice_step(span: float, most: int) -> float:
    """The smallest of 1, 2, 5 times a power of ten that cuts `span` into at most `most` parts."""
    if span <= 0:
        return 1
    step = 10.0 ** int(f"{span / most:e}".split("e")[1])
    for factor in (1.0, 2.0, 5.0, 10.0):
        if span / (step * factor) <= most:
            return step * factor
    return step * 10


def number_ticks(high: float, most: int = 4) -> list[int]:
    """0 and round numbers up to `high` (whole: the charts count records)."""
    step = max(1, int(nice_step(high, most)))
    return list(range(0, int(high) + 1, step))


def duration_ticks(high_ms: int, most: int = 4) -> list[int]:
    """0 and round durations up to `high_ms`."""
    step = next((s for s in TIME_STEPS if high_ms / s <= most), None) or int(nice_step(high_ms, most))
    return list(range(0, high_ms + 1, step))


def time_ticks(start_ms: int, end_ms: int, most: int = 7) -> list[int]:
    """Round times (whole steps since the epoch, so days start at midnight UTC) within [start, end]."""
    span = max(end_ms - start_ms, 1)
    step = next((s for s in TIME_STEPS if span / s <= most), None) or int(nice_step(span, most))
    first = -(-start_ms // step) * step
    return list(range(first, end_ms + 1, step))


def time_label(ms: int, span_ms: int) -> str:
    """A tick's time, cut from the UI's one format (ISO-8601 UTC) to what the span needs to tell ticks apart."""
    text = format_time_ms(ms)  # 2026-11-28T14:05:00.000Z
    if span_ms >= 2 * DAY:
        return text[:10]
    if span_ms >= 2 * MINUTE:
        return text[11:16] + "Z"
    return text[11:19] + "Z"


def duration_label(ms: int) -> str:
    return format_duration_ms(ms) if ms else "0"
