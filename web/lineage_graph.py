"""Geometry of a file group's lineage, as a pure function: one column per slice (oldest left), each file a node
with what it holds (a log file's records and event-time range, a compaction's new base file with its threshold
T), each compaction drawn from the files it merged to the base file it wrote, and each link to the file it was
kept through. The template turns the shapes into SVG; nothing here knows about Flask or the store."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

from hudi_meta.format.file_names import BaseFileName, LogFileName, slice_of_file
from hudi_meta.index.browse import LineageRows
from hudi_meta.index.states import LinkState
from hudi_meta.table.times import format_time_ms

from .file_stats import FileStats, GroupCompaction

NODE_WIDTH = 250
NODE_HEIGHT = 50
COLUMN_GAP = 90
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
    detail: str = ""  # what it holds: records and event-time range, or the T its compaction merged below
    threshold_ms: int | None = None  # a compaction's base file: its plan's T
    x: float = 0
    y: float = 0


@dataclass(frozen=True)
class Edge:
    """A link (source) shows the file of an earlier slice (target): its `via` link, else the physical file. A
    compaction edge runs from a file it merged (source) to the base file it wrote (target)."""

    source: str
    target: str
    x1: float
    y1: float
    x2: float
    y2: float
    kind: str = "link"  # link | compaction
    compaction: str | None = None


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


def _slice_of(name: str) -> str | None:
    found = slice_of_file(name)
    return found[1] if found is not None else None


def _log_label(name: str) -> str:
    parsed = LogFileName.try_parse(name)
    if parsed is None:
        return name
    token = f"_{parsed.write_token}" if parsed.write_token else ""
    return f"log.{parsed.version}{token}"


def _short(ms: int) -> str:
    """An event time on a node: the UI's ISO-8601 UTC, without the date's year or the milliseconds."""
    return format_time_ms(ms)[5:19] + "Z"


def holds(stats: FileStats | None) -> str:
    """What a log file holds, in a node's line: `12 rec · 11-28T10:00:00Z…11-28T10:20:00Z`."""
    if stats is None:
        return ""
    if stats.min_event_time_ms is None:
        return f"{stats.records} rec · event times unknown"
    high = stats.max_event_time_ms if stats.max_event_time_ms is not None else stats.min_event_time_ms
    return f"{stats.records} rec · {_short(stats.min_event_time_ms)}…{_short(high)}"


def lineage_graph(
    rows: LineageRows,
    focus: str | None = None,
    compactions: list[GroupCompaction] | None = None,
    stats: dict[str, FileStats] | None = None,
    max_nodes: int = 400,
) -> LineageGraph:
    """Lay out the lineage of a file group (or, with `focus`, of the one physical file that log file shows)."""
    compactions, stats = compactions or [], stats or {}
    nodes = _in_slices(_nodes(rows, focus, stats), {instant for instant, _ in rows.slices})
    base_of = {n.slice: n.id for n in nodes.values() if n.kind == "base"}  # a cleaned slice's too
    for c in compactions:
        wrote = base_of.get(c.instant)
        if wrote in nodes and c.threshold_ms is not None:
            nodes[wrote] = replace(
                nodes[wrote],
                label=f"base file · compaction {c.state}",
                detail=f"merged below T = {_short(c.threshold_ms)}",
                threshold_ms=c.threshold_ms,
            )
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
        placed[n.id] = replace(n, x=column_x[n.slice], y=HEADER + row * (NODE_HEIGHT + ROW_GAP))
    edges = _link_edges(rows, placed) + _compaction_edges(compactions, base_of, placed)
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
    )


def _nodes(rows: LineageRows, focus: str | None, stats: dict[str, FileStats]) -> dict[str, Node]:
    """Every file to draw: physical log files, links, base files (those of the slices shown, with `focus`)."""
    links = {x.link: x for x in rows.links}
    wanted: set[str] | None = None
    if focus is not None:
        wanted = {links[focus].target if focus in links else focus}
    nodes: dict[str, Node] = {}

    def add(name: str, kind: str, label: str, note: str, detail: str = "") -> None:
        column = _slice_of(name)
        if column is not None and name not in nodes:
            nodes[name] = Node(name, column, kind, label, note, detail)

    on_disk = set(rows.physical)
    physical = sorted(
        set(rows.physical) | {x.target for x in rows.links} | {n for n in rows.cleaned if LogFileName.try_parse(n)}
    )
    for name in (p for p in physical if p not in links and (wanted is None or p in wanted)):
        detail = holds(stats.get(name))
        if name in on_disk:
            add(name, "file", _log_label(name), "log file", detail)
        elif name in rows.cleaned:
            add(name, "file", _log_label(name), f"deleted by clean {rows.cleaned[name]}", detail)
        else:
            add(name, "missing", _log_label(name), "missing: no file, no clean deleted it", detail)
    for x in rows.links:
        if wanted is not None and x.target not in wanted:
            continue
        if x.link in rows.cleaned:
            note = f"removed by clean {rows.cleaned[x.link]}"
        elif x.state == LinkState.REMOVED:
            note = "link removed"
        else:
            note = f"link {x.state}"
        add(x.link, "link", _log_label(x.link), note, holds(stats.get(x.link) or stats.get(x.target)))
    if wanted is None or nodes:
        shown_slices = {n.slice for n in nodes.values()}
        for base_instant, base_file in rows.slices:
            if base_file and (wanted is None or base_instant in shown_slices):
                add(base_file, "base", "base file", "base file")
        for name, clean in rows.cleaned.items():
            if BaseFileName.try_parse(name) and (wanted is None or _slice_of(name) in shown_slices):
                add(name, "base", "base file", f"deleted by clean {clean}")
    return nodes


def _in_slices(nodes: dict[str, Node], starts: set[str]) -> dict[str, Node]:
    """Each file in the column of the slice that holds it: the newest slice that began at or before the instant
    its name carries (a 1.x log file is named after its write, not after its slice as a 0.x one is)."""
    known = sorted(starts | {n.slice for n in nodes.values() if n.kind == "base"})
    out = {}
    for name, n in nodes.items():
        column = max((s for s in known if s <= n.slice), default=n.slice)
        out[name] = replace(n, slice=column)
    return out


def _link_edges(rows: LineageRows, placed: dict[str, Node]) -> list[Edge]:
    edges = []
    for x in rows.links:
        src = placed.get(x.link)
        dst = placed.get(x.via or x.target) or placed.get(x.target)
        if src is not None and dst is not None:
            mid_src, mid_dst = src.y + NODE_HEIGHT / 2, dst.y + NODE_HEIGHT / 2
            edges.append(Edge(src.id, dst.id, src.x, mid_src, dst.x + NODE_WIDTH, mid_dst))
    return edges


def _compaction_edges(
    compactions: list[GroupCompaction], base_of: dict[str, str], placed: dict[str, Node]
) -> list[Edge]:
    """From each file a compaction merged (its slice's base file and log files) to the base file it wrote."""
    edges = []
    for c in compactions:
        wrote = placed.get(base_of.get(c.instant, ""))
        if wrote is None:
            continue
        for name in ([c.base_file] if c.base_file else []) + c.files_to_compact:
            src = placed.get(name)
            if src is not None and src.x < wrote.x:
                y1, y2 = src.y + NODE_HEIGHT / 2, wrote.y + NODE_HEIGHT / 2
                edges.append(Edge(src.id, wrote.id, src.x + NODE_WIDTH, y1, wrote.x, y2, "compaction", c.instant))
    return edges


def _version(name: str) -> int:
    parsed = LogFileName.try_parse(name)
    return parsed.version if parsed is not None else -1
