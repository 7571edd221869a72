"""Geometry of the UI's time charts, as pure functions: the event-time histogram with its threshold and watermark
lines, and a table's freshness history (threshold, watermark and lag over time, with compactions, cleans and
syncs marked). The templates turn the shapes into inline SVG (so every label goes through Jinja's escaping);
nothing here knows about Flask or the store. Charts are drawn in a fixed coordinate box and scaled to the page
width by the SVG's viewBox."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hudi_meta.freshness import Histogram
from hudi_meta.table.times import format_duration_ms, format_time_ms

from .axes import Tick, duration_label, duration_ticks, number_ticks, time_label, time_ticks
from .freshness import History, Point

WIDTH = 1000
LEFT, RIGHT = 64, 16  # room for the y labels; the right margin keeps the last x label inside


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    records: int
    start: str  # ISO time of the bin's start
    end: str


@dataclass(frozen=True)
class Mark:
    """A vertical line at an event time (threshold, watermark), its label placed inside the chart."""

    name: str
    x: float
    label: str
    label_y: float
    anchor: str  # start | end: labels right of the middle run leftwards, so none is cut at the edge


@dataclass(frozen=True)
class HistogramChart:
    width: int
    height: int
    left: int
    right: int
    plot_top: int
    plot_bottom: int
    bars: list[Bar]
    marks: list[Mark]
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    max_records: int


def _scale(low: float, high: float, out_low: float, out_high: float) -> Callable[[float], float]:
    span = (high - low) or 1
    return lambda v: round(out_low + (v - low) / span * (out_high - out_low), 2)


def _marks(marks: dict[str, int | None], x_of: Callable[[float], float], top: int) -> list[Mark]:
    known = [(name, ms) for name, ms in marks.items() if ms is not None]
    return [
        Mark(
            name,
            x_of(ms),
            f"{name} {format_time_ms(ms)}",
            top - 22 + i * 13,
            "end" if x_of(ms) > WIDTH / 2 else "start",
        )
        for i, (name, ms) in enumerate(known)
    ]


def histogram_chart(hist: Histogram, marks: dict[str, int | None], height: int = 250) -> HistogramChart | None:
    """Bars of records per event-time bin, a line for each known mark, ticks on both axes; None when there is no
    record to draw (the page shows its empty state)."""
    if not sum(hist.records):
        return None
    right, top, bottom = WIDTH - RIGHT, 40, height - 34
    start, end = hist.start_ms, hist.end_ms
    for ms in marks.values():  # a mark outside the bins widens the axis, so its line is drawn where it belongs
        if ms is not None:
            start, end = min(start, ms), max(end, ms)
    x_of = _scale(start, end, LEFT, right)
    peak = max(hist.records)
    y_of = _scale(0, peak, bottom, top)
    bars = []
    for i, records in enumerate(hist.records):
        low = hist.start_ms + i * hist.width_ms
        x0, x1 = x_of(low), x_of(low + hist.width_ms)
        y = y_of(records)
        bars.append(
            Bar(
                x0,
                y,
                round(max(x1 - x0 - 1, 1), 2),
                round(bottom - y, 2),
                records,
                format_time_ms(low),
                format_time_ms(low + hist.width_ms),
            )
        )
    span = end - start
    x_ticks = [Tick(x_of(ms), time_label(ms, span)) for ms in time_ticks(start, end)]
    y_ticks = [Tick(y_of(n), str(n)) for n in number_ticks(peak)]
    return HistogramChart(
        WIDTH, height, LEFT, right, top, bottom, bars, _marks(marks, x_of, top), x_ticks, y_ticks, peak
    )


# ---------------------------------------------------------------- history


@dataclass(frozen=True)
class Marker:
    """A compaction, clean or sync at a moment: a line across the plots, or a dot under them."""

    kind: str
    x: float
    title: str
    ok: bool = True


@dataclass(frozen=True)
class HistoryChart:
    width: int
    height: int
    left: int
    right: int
    top: tuple[int, int]  # the event-time plot's top and bottom
    lag: tuple[int, int]  # the lag plot's top and bottom
    threshold: str  # SVG polyline points
    watermark: str
    lag_line: str
    limit_y: float | None  # the on-time limit (2 D) in the lag plot
    limit_label: str
    markers: list[Marker]
    x_ticks: list[Tick]
    time_ticks: list[Tick]  # event-time axis of the upper plot
    lag_ticks: list[Tick]
    points: int


def _steps(
    points: list[tuple[int, int]], x_of: Callable[[float], float], y_of: Callable[[float], float], end: int
) -> str:
    """A step line: each value holds until the next one starts (the last until `end`)."""
    out = []
    for (at, value), nxt in zip(points, points[1:] + [(end, points[-1][1])] if points else [], strict=False):
        out += [f"{x_of(at)},{y_of(value)}", f"{x_of(nxt[0])},{y_of(value)}"]
    return " ".join(out)


def _lag_points(points: list[Point]) -> list[tuple[int, int]]:
    """The lag as a saw: it grows with the clock from each point until the next one sets it again."""
    out: list[tuple[int, int]] = []
    for p, q in zip(points, points[1:], strict=False):
        if p.watermark_ms is None or p.lag_ms is None:
            continue
        out += [(p.at_ms, p.lag_ms), (q.at_ms, q.at_ms - p.watermark_ms)]
    last = points[-1] if points else None
    if last is not None and last.lag_ms is not None:
        out.append((last.at_ms, last.lag_ms))
    return out


def history_chart(history: History, limit_ms: int | None, height: int = 330) -> HistoryChart | None:
    """Threshold and watermark (event time) above, lag below, on one time axis; None with nothing to draw."""
    pts = [p for p in history.points if p.watermark_ms is not None or p.threshold_ms is not None]
    if not pts:
        return None
    right = WIDTH - RIGHT
    top, lag_box = (24, 150), (182, 282)
    start, end = history.start_ms, max(history.end_ms, history.start_ms + 1)
    x_of = _scale(start, end, LEFT, right)
    times = [v for p in pts for v in (p.threshold_ms, p.watermark_ms) if v is not None]
    low, high = min(times), max(times)
    if high - low < 1000:
        low, high = low - 30_000, high + 30_000
    y_time = _scale(low, high, top[1], top[0])
    lags = _lag_points(pts)
    lag_high = max([v for _, v in lags] + [limit_ms or 0, 1000])
    lag_ticks = duration_ticks(lag_high)
    lag_high = max(lag_high, lag_ticks[-1])
    y_lag = _scale(0, lag_high, lag_box[1], lag_box[0])
    thresholds = [(p.at_ms, p.threshold_ms) for p in pts if p.threshold_ms is not None]
    watermarks = [(p.at_ms, p.watermark_ms) for p in pts if p.watermark_ms is not None]
    markers = [
        Marker("compaction", x_of(c.at_ms), f"compaction {c.instant}: T = {format_time_ms(c.threshold_ms)}")
        for c in history.compactions
        if c.at_ms >= start
    ]
    markers += [Marker(e.kind, x_of(e.at_ms), f"{e.label} at {format_time_ms(e.at_ms)}", e.ok) for e in history.events]
    span = end - start
    return HistoryChart(
        WIDTH,
        height,
        LEFT,
        right,
        top,
        lag_box,
        _steps(thresholds, x_of, y_time, end),
        _steps(watermarks, x_of, y_time, end),
        " ".join(f"{x_of(at)},{y_lag(v)}" for at, v in lags),
        y_lag(limit_ms) if limit_ms is not None else None,
        f"on time up to {format_duration_ms(limit_ms)}" if limit_ms is not None else "",
        markers,
        [Tick(x_of(ms), time_label(ms, span)) for ms in time_ticks(start, end)],
        [Tick(y_time(ms), time_label(ms, high - low)) for ms in time_ticks(low, high, 4)],
        [Tick(y_lag(ms), duration_label(ms)) for ms in lag_ticks],
        len(pts),
    )
