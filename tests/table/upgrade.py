"""What a Java writer does to a local table when it upgrades it from version 6 to 8, or downgrades it back, as far
as a table with the metadata table off needs: so tests can model "a Java writer upgraded it" under hudi-meta.

`upgrade_6_to_8` follows `UpgradeDowngrade.run` through `SixToSevenUpgradeHandler` (no change on disk) and
`SevenToEightUpgradeHandler` (apache/hudi `hudi-client/hudi-client-common/.../table/upgrade/`, read at 1af5d45):

- the timeline layout 2 folders are made (`HoodieTableMetaClient.createTableLayoutOnStorage`);
- every instant file of `.hoodie/`, in every state, moves to `.hoodie/timeline/` (`upgradeActiveTimelineInstant`):
  a completed one is renamed `<requested>_<completion>.<action>`, the completion time being the old file's
  modification time in the table's timeline zone; a pending one keeps its name except the actions
  `SIX_TO_EIGHT_TIMELINE_ACTION_MAP` renames (a pending replacecommit becomes a clustering);
- commit and deltacommit files in any state, and completed replacecommits, are rewritten from JSON to Avro
  (`rewriteTimelineV1InstantFileToV2Format`: read, written by `CommitMetadataSerDeV2`, the old file deleted); the
  others are moved byte for byte;
- the 0.x archive would be converted into the LSM history (`upgradeToLSMTimeline`): hudi-meta never archives a
  version-6 table, so a table with a `.hoodie/archived` file is refused here rather than half converted;
- `hoodie.properties` gains `hoodie.timeline.path`, the merge mode, payload class and strategy id
  (`upgradeMergeMode`), `hoodie.table.initial.version`, the key generator type (`upgradeKeyGeneratorType`), then
  version 8 and layout 2 (`HoodieTableConfig.setTableVersion`, written by `UpgradeDowngrade.run` after the handler).

Not modelled: the MOR pre-step `UpgradeDowngrade.performRollbackAndCompactionIfRequired` (roll back failed writes,
run one unbounded compaction at the old version: a test that wants it compacts first), the metadata table (the
table must have none) and bootstrap index types (hudi-meta writes no bootstrap). Log and base files are not
touched, as in Java: log files written before the upgrade keep the version-6 name (their slice's base instant).

`downgrade_8_to_6` is the reverse by `EightToSevenDowngradeHandler` and `SevenToSixDowngradeHandler` (no change
on disk for a table without metadata table): completion times leave the names, commit metadata goes back to JSON,
files move back to `.hoodie/`, the 1.x keys leave `hoodie.properties`; an LSM history is refused as above.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path

from hudi_meta.format.commit_metadata import CommitMetadata
from hudi_meta.format.properties import format_properties, parse_properties, with_checksum
from hudi_meta.table.config import timeline_zone
from hudi_meta.timeline.instant import Action, Instant, State, format_instant
from hudi_meta.write.writer import COMMIT_TIME_MERGE_STRATEGY, EVENT_TIME_MERGE_STRATEGY

PAYLOADS = "org.apache.hudi.common.model."
DEFAULT_PAYLOAD = PAYLOADS + "DefaultHoodieRecordPayload"
OVERWRITE_PAYLOAD = PAYLOADS + "OverwriteWithLatestAvroPayload"
EVENT_TIME_PAYLOAD = PAYLOADS + "EventTimeAvroPayload"
# UpgradeDowngradeUtils.SIX_TO_EIGHT_TIMELINE_ACTION_MAP (pending instants only) and its reverse
SIX_TO_EIGHT_ACTIONS = {Action.REPLACE_COMMIT: Action.CLUSTERING}
EIGHT_TO_SIX_ACTIONS = {Action.CLUSTERING: Action.REPLACE_COMMIT}
# KeyGeneratorType.fromClassName for the key generators hudi-meta writes
KEY_GENERATOR_TYPES = {
    "org.apache.hudi.keygen.SimpleKeyGenerator": "SIMPLE",
    "org.apache.hudi.keygen.ComplexKeyGenerator": "COMPLEX",
    "org.apache.hudi.keygen.NonpartitionedKeyGenerator": "NON_PARTITION",
}
ONE_X_KEYS = (  # what EightToSevenDowngradeHandler takes out of hoodie.properties
    "hoodie.table.initial.version",
    "hoodie.record.merge.mode",
    "hoodie.record.merge.strategy.id",
    "hoodie.table.keygenerator.type",
)


def _props(meta: Path) -> dict[str, str]:
    return parse_properties((meta / "hoodie.properties").read_text("utf-8"))


def _write_props(meta: Path, props: dict[str, str]) -> None:
    """Replace hoodie.properties whole (Java writes it, then its backup, under the table's config lock)."""
    tmp = meta / "hoodie.properties.tmp"
    tmp.write_text(format_properties(with_checksum(props)), "utf-8")
    os.replace(tmp, meta / "hoodie.properties")


def _instant_files(folder: Path) -> list[tuple[Path, Instant]]:
    return sorted((p, i) for p in folder.iterdir() if p.is_file() and (i := Instant.parse(p.name)) is not None)


def _is_commit_metadata(instant: Instant) -> bool:
    """The files Java rewrites between JSON and Avro: commit and deltacommit in every state, completed replacecommit."""
    if instant.action in (Action.COMMIT, Action.DELTA_COMMIT):
        return True
    return instant.action == Action.REPLACE_COMMIT and instant.is_completed


Completion = Callable[[Path], str | None]  # a completed instant file's completion time in the new layout


def _move_all(
    source: Path,
    target: Path,
    layout: int,
    actions: dict[Action, Action],
    completion: Completion,
    encode: Callable[[CommitMetadata], bytes],
) -> None:
    """Move every instant file of `source` to `target`, named for timeline `layout`: completed ones with their
    `completion` time, pending ones with `actions` renamed; commit metadata written anew by `encode`, the rest
    moved as it is."""
    for old, instant in _instant_files(source):
        if instant.is_completed:
            new = Instant(instant.requested_time, instant.action, State.COMPLETED, completion(old))
        else:
            new = Instant(instant.requested_time, actions.get(instant.action, instant.action), instant.state)
        if _is_commit_metadata(instant):
            (target / new.file_name(layout)).write_bytes(encode(CommitMetadata.from_bytes(old.read_bytes())))
            old.unlink()
        else:
            old.rename(target / new.file_name(layout))


def _refuse_metadata_table(props: dict[str, str], path: Path) -> None:
    if props.get("hoodie.table.metadata.partitions", "").strip():
        raise ValueError(f"{path}: the metadata table is on; this helper models upgrades without it")


def upgrade_6_to_8(path: str | Path) -> None:
    """Upgrade the version-6 table at local `path` to version 8 as `SevenToEightUpgradeHandler` does (module doc)."""
    meta = Path(path) / ".hoodie"
    props = _props(meta)
    if props.get("hoodie.table.version") not in ("6", "7"):
        raise ValueError(f"{path} is version {props.get('hoodie.table.version')}, not 6 or 7")
    _refuse_metadata_table(props, Path(path))
    archived = meta / props.get("hoodie.archivelog.folder", "archived")
    if archived.is_dir() and any(archived.iterdir()):
        raise ValueError(f"{archived} holds a 0.x archive: converting it to the LSM history is not modelled here")
    timeline = meta / "timeline"
    (timeline / "history").mkdir(parents=True, exist_ok=True)
    zone = timeline_zone(props.get("hoodie.table.timeline.timezone", "LOCAL"))

    def mtime(old: Path) -> str:  # HoodieInstant's completion time of a 0.x file: its modification time
        return format_instant(dt.datetime.fromtimestamp(old.stat().st_mtime, zone))

    _move_all(meta, timeline, 2, SIX_TO_EIGHT_ACTIONS, mtime, CommitMetadata.to_avro)
    props["hoodie.timeline.path"] = "timeline"
    props.update(_merge_mode(props))
    props["hoodie.table.initial.version"] = props["hoodie.table.version"]
    key_type = KEY_GENERATOR_TYPES.get(props.get("hoodie.table.keygenerator.class", ""))
    if key_type is not None:
        props["hoodie.table.keygenerator.type"] = key_type
    props["hoodie.table.version"] = "8"
    props["hoodie.timeline.layout.version"] = "2"
    _write_props(meta, props)


def _merge_mode(props: dict[str, str]) -> dict[str, str]:
    """`SevenToEightUpgradeHandler.upgradeMergeMode`: a custom payload keeps itself (CUSTOM); a MOR table with an
    ordering field gets DefaultHoodieRecordPayload and event-time ordering; otherwise the payload decides."""
    payload = props.get("hoodie.compaction.payload.class", "")
    if payload and payload not in (DEFAULT_PAYLOAD, EVENT_TIME_PAYLOAD, OVERWRITE_PAYLOAD):
        raise ValueError(f"custom payload {payload}: its merge strategy id is not modelled here")
    mor = props.get("hoodie.table.type") == "MERGE_ON_READ"
    if (mor and props.get("hoodie.table.precombine.field")) or payload == DEFAULT_PAYLOAD:
        return {
            "hoodie.compaction.payload.class": DEFAULT_PAYLOAD,
            "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
            "hoodie.record.merge.strategy.id": EVENT_TIME_MERGE_STRATEGY,
        }
    return {
        "hoodie.compaction.payload.class": OVERWRITE_PAYLOAD,
        "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING",
        "hoodie.record.merge.strategy.id": COMMIT_TIME_MERGE_STRATEGY,
    }


def downgrade_8_to_6(path: str | Path) -> None:
    """Downgrade the version-8 table at local `path` to version 6 as `EightToSevenDowngradeHandler` does."""
    meta = Path(path) / ".hoodie"
    props = _props(meta)
    if props.get("hoodie.table.version") != "8":
        raise ValueError(f"{path} is version {props.get('hoodie.table.version')}, not 8")
    _refuse_metadata_table(props, Path(path))
    timeline = meta / props.get("hoodie.timeline.path", "timeline")
    history = timeline / props.get("hoodie.timeline.history.path", "history")
    if history.is_dir() and any(history.iterdir()):
        raise ValueError(f"{history} holds an LSM history: converting it to the 0.x archive is not modelled here")
    _move_all(timeline, meta, 1, EIGHT_TO_SIX_ACTIONS, lambda _: None, CommitMetadata.to_json)
    for key in ONE_X_KEYS:
        props.pop(key, None)
    props["hoodie.table.version"] = "6"
    props["hoodie.timeline.layout.version"] = "1"
    _write_props(meta, props)
