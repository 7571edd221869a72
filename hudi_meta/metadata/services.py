"""The metadata table's own table services when hudi-meta writes it: clean, compaction (`compaction.py`) and
archival, run under the data table's lock before each MDT deltacommit of a commit or clean, so the MDT does not
grow without bound (Java's `HoodieBackedTableMetadataWriter.performTableServices`, then its archival).
docs/metadata-table.md section 6.6.

- Clean, before the compaction: a pending MDT clean is finished first; a new one is planned once a completed MDT
  compaction is newer than the latest MDT clean and `retained` MDT commits completed after it (before that the
  slices it replaced are still retained: planning would find nothing). Policy KEEP_LATEST_COMMITS, retaining
  max(20, ceil(1.2 x the data table's `hoodie.clean.commits.retained`)): Java 1.x's rule for that policy, used
  whatever the data table's policy (Java scales file versions and hours instead: this keeps at least as much).
  Instant: version 6 the latest MDT deltacommit + `002`, 1.x a fresh one. The clean's instants and deletes are
  the data table's (`write/clean.py`); links do not exist in an MDT.
- Archival, after the compaction: Java archives the MDT with the data table's `hoodie.keep.min/max.commits` + 1
  and never an MDT instant at or after the data table's earliest active instant
  (`TimelineUtils.getEarliestInstantForMetadataArchival`); the rest are the data table's archival rules
  (`timeline.archival_plan`: the latest compaction and clean stay, nothing past a pending instant).

A data table whose clean or archival properties are invalid gets no MDT clean or archival (a warning): its own
commands refuse them, and a write must not fail for its metadata table's housekeeping.

Java takes the MDT's settings from the writer's config; hudi-meta reads two of them from the data table's
hoodie.properties when set there (a positive whole number, else the default and a warning):
`hoodie.metadata.compact.max.delta.commits` (10) and `hoodie.metadata.cleaner.commits.retained` (the MDT clean's
retained commits, instead of the rule above; Java 0.x's key).
"""

from __future__ import annotations

import logging
import math

from hudi_meta.errors import HudiMetaError
from hudi_meta.format.config_keys import METADATA_CLEANER_COMMITS_RETAINED, METADATA_COMPACT_MAX_DELTA_COMMITS
from hudi_meta.metadata.compaction import MAX_DELTA_COMMITS, compact_if_necessary
from hudi_meta.metadata.rollback import fresh_mdt_instant, mdt_timeline_writer, open_mdt
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import now_ms
from hudi_meta.timeline.archival_plan import COMMIT_ACTIONS, ArchivalSettings, Boundary
from hudi_meta.timeline.instant import Action, Instant, State
from hudi_meta.values import JAVA_INT_MAX, ascii_integer
from hudi_meta.write.archival import archive_timeline
from hudi_meta.write.clean import (
    clean_timeline,
    cleaner_plan,
    execute_clean,
    finish_pending_cleans,
    groups_from_files,
)
from hudi_meta.write.clean_plan import KEEP_LATEST_COMMITS, CleanPolicy, plan_clean

log = logging.getLogger(__name__)

MIN_CLEAN_RETAINED = 20  # HoodieMetadataWriteUtils: max(20, ...) commits for KEEP_LATEST_COMMITS
V6_CLEAN_SUFFIX = "002"  # HoodieTableMetadataUtil.createCleanTimestamp


def run_table_services(table: HudiTable) -> None:
    """Clean, compact and archive the MDT of `table` as due (the caller holds the data table's lock)."""
    clean_if_necessary(table)
    compact_if_necessary(table, _setting(table, METADATA_COMPACT_MAX_DELTA_COMMITS.name) or MAX_DELTA_COMMITS)
    archive_if_necessary(table)


def clean_policy(table: HudiTable) -> CleanPolicy:
    retained = _setting(table, METADATA_CLEANER_COMMITS_RETAINED.name)
    if retained is None:
        data = CleanPolicy.from_properties(table.config.props)
        retained = max(MIN_CLEAN_RETAINED, math.ceil(1.2 * data.commits_retained))
    return CleanPolicy(KEEP_LATEST_COMMITS, retained)


def _setting(table: HudiTable, key: str) -> int | None:
    text = table.config.props.get(key, "").strip()
    if not text:
        return None
    value = ascii_integer(text)
    if value is not None and 0 < value <= JAVA_INT_MAX:
        return value
    log.warning(
        "%s=%r in the hoodie.properties of %s is not a positive whole number: ignored", key, text, table.base_path
    )
    return None


def clean_if_necessary(table: HudiTable) -> str | None:
    """Finish a pending MDT clean, else plan and run one when due; the clean instant, None when none ran."""
    mdt = open_mdt(table)
    if any(i.action == Action.CLEAN for i in mdt.timeline.pending()):
        runs = finish_pending_cleans(mdt)
        return runs[-1].instant if runs else None
    try:
        policy = clean_policy(table)
    except HudiMetaError as e:
        log.warning("metadata table of %s not cleaned: %s", table.base_path, e)
        return None
    if not _clean_due(mdt, policy.commits_retained):
        return None
    result = plan_clean(groups_from_files(mdt), clean_timeline(mdt), policy, now_ms())
    if not result.deletions:
        return None
    instant = _clean_instant(table, mdt)
    plan = cleaner_plan(mdt.uri, result)
    mdt_timeline_writer(table, mdt).request(Action.CLEAN, instant, plan.to_bytes())
    execute_clean(mdt, Instant(instant, Action.CLEAN, State.REQUESTED), plan)
    log.info("metadata table of %s cleaned at %s: %d files", table.base_path, instant, len(result.deletions))
    return instant


def _clean_due(mdt: HudiTable, retained: int) -> bool:
    completed = mdt.timeline.completed()
    last_clean = max((i.requested_time for i in completed if i.action == Action.CLEAN), default="")
    compactions = [i.requested_time for i in completed if i.action == Action.COMMIT and i.requested_time > last_clean]
    if not compactions:
        return False
    after = [
        i for i in completed if i.action in (Action.DELTA_COMMIT, Action.COMMIT) and i.requested_time > compactions[0]
    ]
    return len(after) >= retained


def _clean_instant(table: HudiTable, mdt: HudiTable) -> str:
    if table.config.version == 6:
        deltas = [i.requested_time for i in mdt.timeline.completed() if i.action == Action.DELTA_COMMIT]
        return max(deltas) + V6_CLEAN_SUFFIX
    return fresh_mdt_instant(table, mdt)


def archive_if_necessary(table: HudiTable) -> int:
    """Archive the MDT's timeline as Java's metadata writer does; the number of instants archived."""
    try:
        data = ArchivalSettings.from_properties(table.config.props)
    except HudiMetaError as e:
        log.warning("metadata table of %s not archived: %s", table.base_path, e)
        return 0
    settings = ArchivalSettings(data.min_commits + 1, data.max_commits + 1)
    mdt = open_mdt(table)
    commits = sum(1 for i in mdt.timeline.completed() if i.action in COMMIT_ACTIONS)
    if commits <= settings.max_commits:  # the archiver's first rule, from the timeline alone: every commit pays it
        return 0
    active = table.timeline.instants
    earliest = active[0].requested_time if active else ""
    bound = Boundary(earliest, f"{earliest or 'none'} is the data table's earliest active instant")
    report = archive_timeline(mdt, dry_run=False, settings=settings, bound=bound)
    return len(report.plan.instants)
