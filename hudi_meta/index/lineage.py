"""Link lineage: which log file each link shows, the earlier link it was kept through, and its state.

A link is a log file made visible in a newer slice (docs/event-time.md section 8). The index keeps the whole chain: the
`target` of a link is always the physical file, `via` the link that the compaction kept (the file of the
slice before, when that file was itself a link). Plans record the physical file as the target (symlink
mode) or the kept file itself (copy mode, where a kept copy is not a symlink): `resolve_links` turns either
into the same (target, via).

The links come from what the table says, never from history alone: completed compactions' commits,
pending compactions' plans, and symlinks on disk. Links of archived compactions stay as they were.
"""

from __future__ import annotations

import json
import posixpath
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace

from sqlalchemy import Connection, Engine, delete, func, select, update

from hudi_meta.errors import HudiMetaError
from hudi_meta.format.file_names import LogFileName
from hudi_meta.format.links import SYMLINK_OPERATIONS_KEY
from hudi_meta.index.models import instant_table, link_table, log_file_table
from hudi_meta.index.run_stats import IndexRunStats
from hudi_meta.index.sql import chunks, insert_ignore
from hudi_meta.index.states import LinkState
from hudi_meta.table.table import HudiTable

LinkKey = tuple[str, str]  # (partition path, link name)


@dataclass(frozen=True)
class Lineage:
    target: str  # the physical file
    via: str | None  # the earlier link to `target` this link was kept through, None when it was the file


def resolve_links(links: Mapping[LinkKey, str]) -> dict[LinkKey, Lineage]:
    """(partition, link) -> recorded target, to each link's physical file and the link it was kept through.

    A recorded target that is itself a link (a copy kept again, a symlink to a symlink) is followed to the
    file. A compaction keeps the newest slice's file, so `via` is the link to the same physical file in the
    latest earlier slice (the slice is the base instant in the link's name).
    """
    physical: dict[LinkKey, str] = {}
    for (part, name), target in links.items():
        seen = {name}
        while (part, target) in links and target not in seen:
            seen.add(target)
            target = links[(part, target)]
        physical[(part, name)] = target
    slices: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)  # (part, target) -> (slice, link)
    for (part, name), target in physical.items():
        parsed = LogFileName.try_parse(name)
        if parsed is not None:
            slices[(part, target)].append((parsed.instant, name))
    out: dict[LinkKey, Lineage] = {}
    for (part, name), target in physical.items():
        parsed = LogFileName.try_parse(name)
        earlier = [s for s in slices[(part, target)] if parsed is not None and s[0] < parsed.instant]
        out[(part, name)] = Lineage(target, max(earlier)[1] if earlier else None)
    return out


def planned_lineage(conn: Connection, table_id: int, planned: Mapping[LinkKey, str]) -> dict[LinkKey, Lineage]:
    """The lineage of a new plan's links (their recorded targets) among the links the store holds."""
    links: dict[LinkKey, str] = {}
    for parts in chunks(sorted({part for part, _ in planned}), 500):
        for r in conn.execute(
            select(link_table.c.partition_path, link_table.c.link_name, link_table.c.target_name).where(
                link_table.c.table_id == table_id, link_table.c.partition_path.in_(parts)
            )
        ):
            links[(r.partition_path, r.link_name)] = r.target_name
    resolved = resolve_links({**links, **planned})
    return {key: resolved[key] for key in planned}


@dataclass(frozen=True)
class _Found:
    target: str  # as recorded: by the commit, the plan, or the symlink on disk
    compaction_instant: str | None
    committed: bool | None  # True: a completed compaction's; False: a pending plan's; None: only on disk


def _recorded_links(table: HudiTable) -> dict[LinkKey, _Found]:
    """Links of completed compactions (their commits) and of pending ones (their plans)."""
    tl = table.timeline
    found: dict[LinkKey, _Found] = {}
    for instant in tl.completed():
        if not tl.is_compaction(instant.requested_time):
            continue
        raw = tl.commit_metadata(instant).extra_metadata.get(SYMLINK_OPERATIONS_KEY)
        for op in json.loads(raw) if raw else []:
            found[(op.get("partition_path", ""), op["symlink"])] = _Found(op["target"], instant.requested_time, True)
    for instant in tl.pending_compactions():
        try:
            plan = table.compaction_plan(instant.requested_time)
        except (HudiMetaError, OSError):
            continue  # the requested file is gone or unreadable: the plan is not in the store either
        for op in plan.operations:
            for s in op.symlink_operations:
                found[(op.partition_path or "", s.symlink)] = _Found(s.target, instant.requested_time, False)
    return found


def _state(found: _Found, on_disk: bool) -> LinkState:
    if found.committed is False:
        return LinkState.PENDING if on_disk else LinkState.PLANNED
    return LinkState.CREATED if on_disk else LinkState.REMOVED


def sync_links(engine: Engine, table: HudiTable, table_id: int, stats: IndexRunStats) -> None:
    """Make the stored links those of the table's compactions and symlinks, each with its lineage and state."""
    links = link_table
    log_files = log_file_table
    found = _recorded_links(table)
    with engine.begin() as conn:
        files = {
            (r.partition_path, r.name): r
            for r in conn.execute(
                select(
                    log_files.c.partition_path, log_files.c.name, log_files.c.is_link, log_files.c.link_target
                ).where(log_files.c.table_id == table_id)
            )
        }
        for key, r in files.items():
            if r.is_link and r.link_target:  # the symlink on disk says what it shows
                target = posixpath.basename(r.link_target)
                entry = found.get(key)
                found[key] = _Found(target, None, None) if entry is None else replace(entry, target=target)
        known = {
            (r.partition_path, r.link_name): r for r in conn.execute(select(links).where(links.c.table_id == table_id))
        }
        # a stored link the table no longer names is stale (its compaction was rolled back or unscheduled), unless
        # its compaction was archived (in the store, gone from the active timeline): those stay
        instants = instant_table
        stored = set(conn.execute(select(instants.c.requested_time).where(instants.c.table_id == table_id)).scalars())
        on_timeline = {x.requested_time for x in table.timeline.instants}
        stale = [
            r.id
            for key, r in known.items()
            if key not in found and not (r.compaction_instant in stored and r.compaction_instant not in on_timeline)
        ]
        for ids in chunks(stale, 500):
            conn.execute(delete(links).where(links.c.id.in_(ids)))
        lineage = resolve_links({key: f.target for key, f in found.items()})
        for (part, name), entry in found.items():
            target, via = lineage[(part, name)].target, lineage[(part, name)].via
            state = _state(entry, (part, name) in files)
            old = known.get((part, name))
            if old is None:
                row = {
                    "table_id": table_id,
                    "partition_path": part,
                    "link_name": name,
                    "target_name": target,
                    "via_name": via,
                    "compaction_instant": entry.compaction_instant,
                    "state": state,
                }
                insert_ignore(conn, links, [row])
            elif (old.target_name, old.via_name, old.state) != (target, via, state):
                conn.execute(
                    update(links)
                    .where(links.c.id == old.id)
                    .values(
                        target_name=target,
                        via_name=via,
                        state=state,
                        compaction_instant=entry.compaction_instant or old.compaction_instant,
                    )
                )
        stats.links = conn.execute(
            select(func.count()).select_from(links).where(links.c.table_id == table_id)
        ).scalar_one()
