"""Read side of the store for browsing (the web UI and its JSON API): registered tables, a page of the timeline,
compaction plans with their operations and links, file groups with their slices, and the rows of a file
group's link lineage. Every function takes an open connection (one per request) and reads only the store:
nothing here opens a table's files. Lists that grow with the table are read a page at a time, with the
page's children fetched by id, so a page costs the same at 50 file groups as at 50,000.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Select, and_, func, or_, select

from hudi_meta.format.file_names import slice_of_file
from hudi_meta.index.instants import ARCHIVED_KEY
from hudi_meta.index.models import (
    cleaned_file_table,
    compaction_operation_table,
    compaction_plan_table,
    file_group_table,
    file_slice_table,
    hudi_table,
    instant_table,
    link_table,
    log_block_table,
    log_file_table,
    service_step_table,
    sync_run_table,
)
from hudi_meta.index.states import PENDING_PLAN_STATES, BlockStatus
from hudi_meta.timeline.instant import ACTIONS, State, instant_epoch_ms

MAX_PAGE_SIZE = 500


@dataclass(frozen=True)
class Page:
    """Which slice of a long list to read: 1-based page number and rows per page."""

    number: int = 1
    size: int = 50

    def __post_init__(self) -> None:
        if self.number < 1 or not 1 <= self.size <= MAX_PAGE_SIZE:
            raise ValueError(f"page {self.number} of size {self.size}: pages start at 1, sizes 1..{MAX_PAGE_SIZE}")

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.size


@dataclass(frozen=True)
class TableRow:
    id: int
    base_path: str
    name: str
    table_type: str
    table_version: int  # the version and timeline layout its index was built from
    timeline_layout: int
    event_time_field: str | None
    timeline_timezone: str  # UTC or LOCAL (hoodie.table.timeline.timezone)
    last_indexed_at: dt.datetime | None
    pending_plans: int
    last_sync_at: dt.datetime | None
    last_sync_outcome: str | None
    service_status: str | None = None  # the service's newest step on the table: its status,
    service_step: str | None = None  # which step,
    service_error: str | None = None  # and its error when it failed
    data_latency_ms: int | None = None  # hoodie.compaction.event.time.data.latency, when the table sets it


def _table_row(r: Any, pending: int, sync: Any | None, step: Any | None = None) -> TableRow:
    options = json.loads(r.options or "{}")
    return TableRow(
        id=r.id,
        base_path=r.base_path,
        name=r.name,
        table_type=r.table_type,
        table_version=r.table_version,
        timeline_layout=r.timeline_layout,
        event_time_field=r.event_time_field,
        timeline_timezone=str(options.get("timeline_timezone", "LOCAL")),
        last_indexed_at=_utc(r.last_indexed_at),
        pending_plans=pending,
        last_sync_at=_utc(sync.started_at) if sync is not None else None,
        last_sync_outcome=sync.outcome if sync is not None else None,
        service_status=step.status if step is not None else None,
        service_step=step.step if step is not None else None,
        service_error=step.error if step is not None else None,
        data_latency_ms=options.get("data_latency_ms"),
    )


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    """SQLite returns naive datetimes for timezone-aware columns: the store writes UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=dt.UTC)


def tables(conn: Connection) -> list[TableRow]:
    """Every registered table with its pending plan count and last sync, by name."""
    pending: dict[int, int] = dict(
        conn.execute(
            select(compaction_plan_table.c.table_id, func.count())
            .where(compaction_plan_table.c.state.in_(PENDING_PLAN_STATES))
            .group_by(compaction_plan_table.c.table_id)
        ).all()
    )
    newest = (
        select(sync_run_table.c.table_id, func.max(sync_run_table.c.id).label("id"))
        .group_by(sync_run_table.c.table_id)
        .subquery()
    )
    syncs = {
        r.table_id: r for r in conn.execute(select(sync_run_table).join(newest, newest.c.id == sync_run_table.c.id))
    }
    newest_step = (
        select(service_step_table.c.table_id, func.max(service_step_table.c.id).label("id"))
        .group_by(service_step_table.c.table_id)
        .subquery()
    )
    steps = {
        r.table_id: r
        for r in conn.execute(select(service_step_table).join(newest_step, newest_step.c.id == service_step_table.c.id))
    }
    rows = conn.execute(select(hudi_table).order_by(hudi_table.c.name, hudi_table.c.base_path)).all()
    return [_table_row(r, pending.get(r.id, 0), syncs.get(r.id), steps.get(r.id)) for r in rows]


def table(conn: Connection, table_id: int) -> TableRow | None:
    r = conn.execute(select(hudi_table).where(hudi_table.c.id == table_id)).first()
    if r is None:
        return None
    pending = conn.execute(
        select(func.count())
        .select_from(compaction_plan_table)
        .where(compaction_plan_table.c.table_id == table_id, compaction_plan_table.c.state.in_(PENDING_PLAN_STATES))
    ).scalar_one()
    sync = conn.execute(
        select(sync_run_table)
        .where(sync_run_table.c.table_id == table_id)
        .order_by(sync_run_table.c.id.desc())
        .limit(1)
    ).first()
    step = conn.execute(
        select(service_step_table)
        .where(service_step_table.c.table_id == table_id)
        .order_by(service_step_table.c.id.desc())
        .limit(1)
    ).first()
    return _table_row(r, pending, sync, step)


@dataclass(frozen=True)
class InstantRow:
    requested_time: str
    action: str
    state: str
    completion_time: str | None
    is_compaction: bool
    archived: bool
    summary: dict[str, Any]


@dataclass(frozen=True)
class Listing:
    """One page of a list and the number of rows in the whole list."""

    items: list[Any]
    total: int
    page: Page

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.page.size))


def _page_of(conn: Connection, query: Select[Any], page: Page) -> tuple[list[Any], int]:
    total = conn.execute(select(func.count()).select_from(query.order_by(None).subquery())).scalar_one()
    rows = conn.execute(query.limit(page.size).offset(page.offset)).all()
    return list(rows), int(total)


def timeline(
    conn: Connection, table_id: int, page: Page, action: str | None = None, state: str | None = None
) -> Listing:
    """Instants newest first, filtered by action and state."""
    instants = instant_table
    query = select(instants).where(instants.c.table_id == table_id)
    if action:
        query = query.where(instants.c.action == action)
    if state:
        query = query.where(instants.c.state == state)
    rows, total = _page_of(conn, query.order_by(instants.c.requested_time.desc()), page)
    items = []
    for r in rows:
        summary = json.loads(r.summary or "{}")
        items.append(
            InstantRow(
                requested_time=r.requested_time,
                action=r.action,
                state=r.state,
                completion_time=r.completion_time,
                is_compaction=r.is_compaction,
                archived=bool(summary.pop(ARCHIVED_KEY, False)),
                summary=summary,
            )
        )
    return Listing(items, total, page)


def timeline_filters(conn: Connection, table_id: int) -> tuple[list[str], list[str]]:
    """The actions a filter may name (Hudi's, and any other the table's timeline holds) and the states."""
    instants = instant_table
    held = conn.execute(select(instants.c.action).where(instants.c.table_id == table_id).distinct())
    return sorted(set(ACTIONS) | set(held.scalars())), [s.value for s in State]


@dataclass(frozen=True)
class PlanRow:
    instant: str
    state: str
    strategy: str | None
    threshold_ms: int | None
    mode: str | None
    exact: bool
    operations: int
    links: int
    completion_time: str | None  # Hudi's completion time (table version 8 and later)
    duration_s: float | None  # requested -> completed, where the timeline records a completion time
    published_threshold_ms: int | None  # what the completed commit published (may be below the plan's T)
    published_exact: bool | None


def _plan_rows(conn: Connection, table_id: int, plans: Sequence[Any], zone: dt.tzinfo) -> list[PlanRow]:
    ids = [r.id for r in plans]
    instants = [r.instant for r in plans]
    ops: dict[int, int] = dict(
        conn.execute(
            select(compaction_operation_table.c.plan_id, func.count())
            .where(compaction_operation_table.c.plan_id.in_(ids))
            .group_by(compaction_operation_table.c.plan_id)
        ).all()
    )
    links: dict[str, int] = dict(
        conn.execute(
            select(link_table.c.compaction_instant, func.count())
            .where(link_table.c.table_id == table_id, link_table.c.compaction_instant.in_(instants))
            .group_by(link_table.c.compaction_instant)
        ).all()
    )
    commits = {
        r.requested_time: r
        for r in conn.execute(
            select(instant_table.c.requested_time, instant_table.c.completion_time, instant_table.c.summary).where(
                instant_table.c.table_id == table_id, instant_table.c.requested_time.in_(instants)
            )
        )
    }
    out = []
    for r in plans:
        commit = commits.get(r.instant)
        summary = json.loads(commit.summary or "{}") if commit is not None else {}
        completion = commit.completion_time if commit is not None else None
        published = summary.get("threshold")
        out.append(
            PlanRow(
                instant=r.instant,
                state=r.state,
                strategy=r.strategy,
                threshold_ms=r.threshold,
                mode=r.mode,
                exact=r.exact,
                operations=int(ops.get(r.id, 0)),
                links=int(links.get(r.instant, 0)),
                completion_time=completion,
                duration_s=_duration_s(r.instant, completion, zone),
                published_threshold_ms=int(str(published)) if str(published).lstrip("-").isdigit() else None,
                published_exact=summary.get("exact") if r.state == State.COMPLETED else None,
            )
        )
    return out


def _duration_s(requested: str, completed: str | None, zone: dt.tzinfo) -> float | None:
    if not completed:
        return None
    try:
        return (instant_epoch_ms(completed, zone) - instant_epoch_ms(requested, zone)) / 1000
    except ValueError:
        return None


def plans(conn: Connection, table_id: int, page: Page, zone: dt.tzinfo = dt.UTC) -> Listing:
    """Compaction plans newest first, with their operation and link counts."""
    rows, total = _page_of(
        conn,
        select(compaction_plan_table)
        .where(compaction_plan_table.c.table_id == table_id)
        .order_by(compaction_plan_table.c.instant.desc()),
        page,
    )
    return Listing(_plan_rows(conn, table_id, rows, zone), total, page)


@dataclass(frozen=True)
class LinkRow:
    partition: str
    link: str
    target: str  # the physical file
    via: str | None  # the earlier link it was kept through
    compaction_instant: str | None
    state: str


@dataclass(frozen=True)
class OperationRow:
    partition: str
    file_id: str
    base_instant: str | None
    base_file: str | None
    files_to_compact: list[str]
    links: list[LinkRow]
    planned_log_bytes: int | None = None  # the plan's TOTAL_LOG_FILES_SIZE (known after a clean removed the files)


def plan(
    conn: Connection, table_id: int, instant: str, page: Page, zone: dt.tzinfo = dt.UTC
) -> tuple[PlanRow, Listing] | None:
    """A plan and one page of its operations (file group, base file, log files compacted, links made)."""
    found = conn.execute(
        select(compaction_plan_table).where(
            compaction_plan_table.c.table_id == table_id, compaction_plan_table.c.instant == instant
        )
    ).first()
    if found is None:
        return None
    query = (
        select(compaction_operation_table)
        .where(compaction_operation_table.c.plan_id == found.id)
        .order_by(compaction_operation_table.c.partition_path, compaction_operation_table.c.file_id)
    )
    rows, total = _page_of(conn, query, page)
    links: dict[tuple[str, str], list[LinkRow]] = defaultdict(list)
    wanted = {(r.partition_path, r.file_id) for r in rows}
    if wanted:
        # the links this page's operations made: named `.<file id>_<instant>.log.<n>_<token>`
        names = or_(
            *(
                and_(
                    link_table.c.partition_path == part,
                    link_table.c.link_name.like(_like_prefix(f".{fid}_{instant}."), "\\"),
                )
                for part, fid in sorted(wanted)
            )
        )
        for r in conn.execute(
            select(link_table)
            .where(link_table.c.table_id == table_id, link_table.c.compaction_instant == instant, names)
            .order_by(link_table.c.link_name)
        ):
            key = (r.partition_path, group_of_file(r.link_name) or "")
            if key in wanted:  # LIKE ignores case on SQLite
                links[key].append(_link_row(r))
    ops = [
        OperationRow(
            partition=r.partition_path,
            file_id=r.file_id,
            base_instant=r.base_instant,
            base_file=r.base_file,
            files_to_compact=list(json.loads(r.files_to_compact or "[]")),
            links=links.get((r.partition_path, r.file_id), []),
            planned_log_bytes=_planned_log_bytes(r.metrics),
        )
        for r in rows
    ]
    return _plan_rows(conn, table_id, [found], zone)[0], Listing(ops, total, page)


def _planned_log_bytes(metrics: str | None) -> int | None:
    size = json.loads(metrics or "{}").get("TOTAL_LOG_FILES_SIZE")
    return int(size) if isinstance(size, int | float) else None


def _link_row(r: Any) -> LinkRow:
    return LinkRow(r.partition_path, r.link_name, r.target_name, r.via_name, r.compaction_instant, r.state)


@dataclass(frozen=True)
class PartitionRow:
    partition: str
    file_groups: int


def partitions(conn: Connection, table_id: int) -> list[PartitionRow]:
    rows = conn.execute(
        select(file_group_table.c.partition_path, func.count())
        .where(file_group_table.c.table_id == table_id)
        .group_by(file_group_table.c.partition_path)
        .order_by(file_group_table.c.partition_path)
    )
    return [PartitionRow(part, int(n)) for part, n in rows]


@dataclass(frozen=True)
class LogFileRow:
    name: str
    size: int
    is_link: bool  # a symlink on disk, or a copy a compaction made (a link by lineage)
    target: str | None  # the physical file a link shows
    via: str | None
    link_state: str | None
    min_event_time_ms: int | None  # over its committed data blocks (a link: its target's)
    blocks: int
    records: int


@dataclass(frozen=True)
class SliceRow:
    base_instant: str
    base_file: str | None
    base_committed: bool
    pending_compaction: bool
    log_files: list[LogFileRow] = field(default_factory=list)


@dataclass(frozen=True)
class FileGroupRow:
    partition: str
    file_id: str
    replaced: bool
    slices: list[SliceRow]


def file_groups(conn: Connection, table_id: int, page: Page, partition: str | None = None) -> Listing:
    """File groups by partition and id, each with its slices (newest first): base file, log files with their
    min event time, links with their targets."""
    query = select(file_group_table).where(file_group_table.c.table_id == table_id)
    if partition is not None:
        query = query.where(file_group_table.c.partition_path == partition)
    groups, total = _page_of(conn, query.order_by(file_group_table.c.partition_path, file_group_table.c.file_id), page)
    group_ids = [r.id for r in groups]
    slices = conn.execute(
        select(file_slice_table)
        .where(file_slice_table.c.file_group_id.in_(group_ids))
        .order_by(file_slice_table.c.base_instant.desc())
    ).all()
    files = conn.execute(
        select(log_file_table)
        .where(log_file_table.c.file_slice_id.in_([r.id for r in slices]))
        .order_by(log_file_table.c.base_instant, log_file_table.c.version, log_file_table.c.write_token)
    ).all()
    pending = set(
        conn.execute(
            select(compaction_plan_table.c.instant).where(
                compaction_plan_table.c.table_id == table_id, compaction_plan_table.c.state.in_(PENDING_PLAN_STATES)
            )
        ).scalars()
    )
    links = _links_of(conn, table_id, files)
    physical_ids = _physical_ids(conn, table_id, files, links)
    files_of = _log_file_rows(files, links, physical_ids, _block_stats(conn, set(physical_ids.values())))
    slices_of: dict[int, list[SliceRow]] = defaultdict(list)
    for r in slices:
        slices_of[r.file_group_id].append(
            SliceRow(r.base_instant, r.base_file, r.base_committed, r.base_instant in pending, files_of.get(r.id, []))
        )
    items = [FileGroupRow(r.partition_path, r.file_id, r.replaced, slices_of.get(r.id, [])) for r in groups]
    return Listing(items, total, page)


def _links_of(conn: Connection, table_id: int, files: Sequence[Any]) -> dict[tuple[str, str], Any]:
    """(partition, link name) -> link row of the shown log files that are links (queried a partition at a time)."""
    by_partition: dict[str, set[str]] = defaultdict(set)
    for r in files:
        by_partition[r.partition_path].add(r.name)
    links: dict[tuple[str, str], Any] = {}
    for part, names in by_partition.items():
        for r in conn.execute(
            select(link_table).where(
                link_table.c.table_id == table_id,
                link_table.c.partition_path == part,
                link_table.c.link_name.in_(sorted(names)),
            )
        ):
            links[(part, r.link_name)] = r
    return links


def _physical_ids(
    conn: Connection, table_id: int, files: Sequence[Any], links: dict[tuple[str, str], Any]
) -> dict[tuple[str, str], int]:
    """(partition, name) -> log file id of the shown files and of the links' targets, which may sit in another
    slice: a link's blocks are indexed under its physical file."""
    log_files = log_file_table
    physical_ids = {(r.partition_path, r.name): r.id for r in files}
    wanted: dict[tuple[str, str], None] = {}
    for r in files:
        link = links.get((r.partition_path, r.name))
        if link is not None and (r.partition_path, link.target_name) not in physical_ids:
            wanted[(r.partition_path, link.target_name)] = None
    for part in {part for part, _ in wanted}:
        targets = [name for p_, name in wanted if p_ == part]
        for r in conn.execute(
            select(log_files.c.id, log_files.c.name).where(
                log_files.c.table_id == table_id, log_files.c.partition_path == part, log_files.c.name.in_(targets)
            )
        ):
            physical_ids[(part, r.name)] = r.id
    return physical_ids


def _block_stats(conn: Connection, log_file_ids: set[int]) -> dict[int, Any]:
    """Log file id -> (min event time, blocks, records) of its committed blocks."""
    blocks = log_block_table
    return {
        r.log_file_id: r
        for r in conn.execute(
            select(
                blocks.c.log_file_id,
                func.min(blocks.c.min_event_time).label("min_event_time"),
                func.count().label("blocks"),
                func.coalesce(func.sum(blocks.c.record_count), 0).label("records"),
            )
            .where(blocks.c.log_file_id.in_(sorted(log_file_ids)), blocks.c.status == BlockStatus.COMMITTED)
            .group_by(blocks.c.log_file_id)
        )
    }


def _log_file_rows(
    files: Sequence[Any],
    links: dict[tuple[str, str], Any],
    physical_ids: dict[tuple[str, str], int],
    stats: dict[int, Any],
) -> dict[int, list[LogFileRow]]:
    """Slice id -> its log files as shown; a link shows its target's block stats."""
    files_of: dict[int, list[LogFileRow]] = defaultdict(list)
    for r in files:
        link = links.get((r.partition_path, r.name))
        target = link.target_name if link is not None else None
        source = physical_ids.get((r.partition_path, target)) if target else r.id
        st = stats.get(source) if source is not None else None
        files_of[r.file_slice_id].append(
            LogFileRow(
                name=r.name,
                size=r.size,
                is_link=link is not None or bool(r.is_link),
                target=target,
                via=link.via_name if link is not None else None,
                link_state=link.state if link is not None else None,
                min_event_time_ms=st.min_event_time if st is not None else None,
                blocks=int(st.blocks) if st is not None else 0,
                records=int(st.records) if st is not None else 0,
            )
        )
    return files_of


@dataclass(frozen=True)
class LineageRows:
    """What the store knows of one file group's files across compactions: its slices, its physical log files,
    the links shown in its slices, and the files cleans deleted (name -> clean instant)."""

    partition: str
    file_id: str
    slices: list[tuple[str, str | None]]  # (base instant, base file) oldest first
    physical: list[str]  # log files on disk that are not links
    links: list[LinkRow]
    cleaned: dict[str, str]


def _like_prefix(text: str) -> str:
    """A LIKE pattern matching names that start with `text` (its `%`, `_` and `\\` taken literally)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def lineage(conn: Connection, table_id: int, partition: str, file_id: str) -> LineageRows | None:
    """The lineage rows of file group (partition, file id); None when the store has never seen it."""
    group = conn.execute(
        select(file_group_table.c.id).where(
            file_group_table.c.table_id == table_id,
            file_group_table.c.partition_path == partition,
            file_group_table.c.file_id == file_id,
        )
    ).first()
    link_pattern = _like_prefix(f".{file_id}_")
    links = [
        _link_row(r)
        for r in conn.execute(
            select(link_table)
            .where(
                link_table.c.table_id == table_id,
                link_table.c.partition_path == partition,
                link_table.c.link_name.like(link_pattern, "\\"),
            )
            .order_by(link_table.c.link_name)
        )
        if group_of_file(r.link_name) == file_id  # LIKE ignores case on SQLite
    ]
    if group is None and not links:
        return None
    slices = (
        [
            (r.base_instant, r.base_file)
            for r in conn.execute(
                select(file_slice_table.c.base_instant, file_slice_table.c.base_file)
                .where(file_slice_table.c.file_group_id == group.id)
                .order_by(file_slice_table.c.base_instant)
            )
        ]
        if group is not None
        else []
    )
    link_names = {x.link for x in links}
    physical = [
        name
        for name, is_link in conn.execute(
            select(log_file_table.c.name, log_file_table.c.is_link)
            .where(
                log_file_table.c.table_id == table_id,
                log_file_table.c.partition_path == partition,
                log_file_table.c.file_id == file_id,
            )
            .order_by(log_file_table.c.base_instant, log_file_table.c.version, log_file_table.c.write_token)
        )
        if not is_link and name not in link_names
    ]
    cleaned = {
        r.name: r.clean_instant
        for pattern in (link_pattern, _like_prefix(f"{file_id}_"))
        for r in conn.execute(
            select(cleaned_file_table.c.name, cleaned_file_table.c.clean_instant).where(
                cleaned_file_table.c.table_id == table_id,
                cleaned_file_table.c.partition_path == partition,
                cleaned_file_table.c.name.like(pattern, "\\"),
            )
        )
        if group_of_file(r.name) == file_id
    }
    return LineageRows(partition, file_id, slices, physical, links, cleaned)


def group_of_file(name: str) -> str | None:
    """The file id of a base or log file name."""
    found = slice_of_file(name)
    return found[0] if found is not None else None
