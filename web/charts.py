"""Geometry of the UI's two drawings, as pure functions: the event-time histogram with its threshold and
watermark lines, and the link-lineage graph of a file group. The templates turn the shapes into SVG (so every
label goes through Jinja's escaping); nothing here knows about Flask or the store.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from hudi_meta.format.file_names import BaseFileName, LogFileName, slice_of_file
from hudi_meta.freshness import Histogram
from hudi_meta.index.browse import LineageRows
from hudi_meta.index.states import LinkState
from hudi_meta.table.times import format_time_ms

# ---------------------------------------------------------------- histogram


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
    """A vertical line at an event time (threshold, watermark)."""

    name: str
    x: float
    label: str


@dataclass(frozen=True)
class HistogramChart:
    width: int
    height: int
    plot_top: int
    plot_bottom: int
    bars: list[Bar]
    marks: list[Mark]
    axis_start: str
    axis_end: str
    max_records: int


def histogram_chart(
    hist: Histogram, marks: dict[str, int | None], width: int = 760, height: int = 220
) -> HistogramChart | None:
    """Bars of records per event-time bin and a line for each known mark; None when there is nothing to draw."""
    if not hist.records:
        return None
    left, right, top, bottom = 10, width - 10, 28, height - 24
    span = hist.end_ms - hist.start_ms
    peak = max(hist.records) or 1
    step = (right - left) / len(hist.records)

    def x_of(ms: int) -> float:
        return left + (ms - hist.start_ms) / span * (right - left)

    bars = []
    for i, records in enumerate(hist.records):
        h = (bottom - top) * records / peak
        start = hist.start_ms + i * hist.width_ms
        bars.append(
            Bar(
                x=round(left + i * step, 2),
                y=round(bottom - h, 2),
                width=round(max(step - 1, 1), 2),
                height=round(h, 2),
                records=records,
                start=format_time_ms(start),
                end=format_time_ms(start + hist.width_ms),
            )
        )
    lines = [Mark(name, round(x_of(ms), 2), format_time_ms(ms)) for name, ms in marks.items() if ms is not None]
    return HistogramChart(
        width, height, top, bottom, bars, lines, format_time_ms(hist.start_ms), format_time_ms(hist.end_ms), peak
    )


# ---------------------------------------------------------------- lineage

NODE_WIDTH = 230
NODE_HEIGHT = 34
COLUMN_GAP = 70
ROW_GAP = 14
HEADER = 40


@dataclass(frozen=True)
class Node:
    """One file as shown in one slice: a base file, a physical log file, or a link (symlink or copy)."""

    id: str  # the file name (unique within a file group)
    slice: str  # the base instant of the slice that shows it
    kind: str  # base | file | link | missing
    label: str
    note: str  # what became of it: on disk, removed by clean X, planned, dangling, ...
    x: float = 0
    y: float = 0


@dataclass(frozen=True)
class Edge:
    """A link (source) shows the file of an earlier slice (target): its `via` link, else the physical file."""

    source: str
    target: str
    x1: float
    y1: float
    x2: float
    y2: float


@dataclass(frozen=True)
class LineageGraph:
    columns: list[tuple[str, float]]  # (slice base instant, x)
    nodes: list[Node]
    edges: list[Edge]
    width: int
    height: int
    node_width: int = NODE_WIDTH
    node_height: int = NODE_HEIGHT
    truncated: int = 0  # nodes left out beyond the limit
    focus: str | None = None  # the file the graph was asked for
    physical_files: list[str] = field(default_factory=list)


def _slice_of(name: str) -> str | None:
    found = slice_of_file(name)
    return found[1] if found is not None else None


def _log_label(name: str) -> str:
    parsed = LogFileName.try_parse(name)
    if parsed is None:
        return name
    token = f"_{parsed.write_token}" if parsed.write_token else ""
    return f"log.{parsed.version}{token}"


def lineage_graph(rows: LineageRows, focus: str | None = None, max_nodes: int = 400) -> LineageGraph:
    """Lay out the lineage of a file group (or, with `focus`, of the one physical file that log file shows):
    one column per slice, oldest left, each link drawn to the file it was kept through."""
    links = {x.link: x for x in rows.links}
    wanted_targets: set[str] | None = None
    if focus is not None:
        target = links[focus].target if focus in links else focus
        wanted_targets = {target}
    nodes: dict[str, Node] = {}

    def add(name: str, kind: str, label: str, note: str) -> None:
        column = _slice_of(name)
        if column is not None and name not in nodes:
            nodes[name] = Node(name, column, kind, label, note)

    on_disk = set(rows.physical)
    physical = sorted(
        set(rows.physical) | {x.target for x in rows.links} | {n for n in rows.cleaned if LogFileName.try_parse(n)}
    )
    physical = [p for p in physical if p not in links]
    for name in physical:
        if wanted_targets is not None and name not in wanted_targets:
            continue
        if name in on_disk:
            add(name, "file", _log_label(name), "log file")
        elif name in rows.cleaned:
            add(name, "file", _log_label(name), f"deleted by clean {rows.cleaned[name]}")
        else:
            add(name, "missing", _log_label(name), "missing: no file, no clean deleted it")
    for x in rows.links:
        if wanted_targets is not None and x.target not in wanted_targets:
            continue
        if x.link in rows.cleaned:
            note = f"removed by clean {rows.cleaned[x.link]}"
        elif x.state == LinkState.REMOVED:
            note = "link removed"
        else:
            note = f"link {x.state}"
        add(x.link, "link", _log_label(x.link), note)
    if wanted_targets is None or nodes:
        shown_slices = {n.slice for n in nodes.values()}
        for base_instant, base_file in rows.slices:
            if base_file and (wanted_targets is None or base_instant in shown_slices):
                add(base_file, "base", "base file", "base file")
        for name, clean in rows.cleaned.items():
            if BaseFileName.try_parse(name) and (wanted_targets is None or _slice_of(name) in shown_slices):
                add(name, "base", "base file", f"deleted by clean {clean}")
    ordered = sorted(nodes.values(), key=lambda n: (n.slice, n.kind != "base", _version(n.id), n.id))
    truncated = max(0, len(ordered) - max_nodes)
    ordered = ordered[:max_nodes]
    columns = sorted({n.slice for n in ordered})
    column_x = {c: 10 + i * (NODE_WIDTH + COLUMN_GAP) for i, c in enumerate(columns)}
    rows_used: dict[str, int] = defaultdict(int)
    placed: dict[str, Node] = {}
    for n in ordered:
        row = rows_used[n.slice]
        rows_used[n.slice] += 1
        placed[n.id] = Node(
            n.id, n.slice, n.kind, n.label, n.note, column_x[n.slice], HEADER + row * (NODE_HEIGHT + ROW_GAP)
        )
    edges = []
    for x in rows.links:
        src = placed.get(x.link)
        dst = placed.get(x.via or x.target) or placed.get(x.target)
        if src is None or dst is None:
            continue
        edges.append(Edge(src.id, dst.id, src.x, src.y + NODE_HEIGHT / 2, dst.x + NODE_WIDTH, dst.y + NODE_HEIGHT / 2))
    width = 20 + len(columns) * (NODE_WIDTH + COLUMN_GAP)
    height = HEADER + max(rows_used.values(), default=1) * (NODE_HEIGHT + ROW_GAP) + 10
    return LineageGraph(
        [(c, column_x[c]) for c in columns],
        list(placed.values()),
        edges,
        width,
        height,
        truncated=truncated,
        focus=focus,
        physical_files=physical,
    )


def _version(name: str) -> int:
    parsed = LogFileName.try_parse(name)
    return parsed.version if parsed is not None else -1
