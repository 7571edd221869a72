"""The 0.x archived timeline (table version 6, timeline layout 1): instants that archival moved out of `.hoodie/`,
kept as Hudi log files `.hoodie/archived/.commits_.archive.N_1-0-1` of Avro data blocks of `HoodieArchivedMetaEntry`
records, one record per state file (requested, inflight, completed) of each archived instant.

The log files are written and read with the log format code every log file goes through (`log_writer`,
`log_reader`, `block_content`): a block has only the SCHEMA header, Java's full `HoodieArchivedMetaEntry` schema
(its nested records defined where they first appear, as Java's `Schema.toString()` writes them), and a record holds
what Java's `MetadataConversionUtils.createMetaWrapper` (0.14/0.15) puts there: `commitTime`, `actionType` (the
state file's action: a completed compaction is a `commit`, its plan a `compaction`), `actionState`,
`stateTransitionTime` (the state file's modification time, HUDI-5517) and the state's metadata as an Avro record:
commit metadata converted from its JSON, clean and rollback metadata and plans decoded from their Avro files.
docs/archival.md (section 5) names the Java source of each rule.

Readers need the archive for nothing but the record of what was archived: on layout 1 files are sliced by
requested time, and every instant older than the first active one is committed (`fs_view.is_committed`). An
archive that cannot be read raises CorruptFileError with one line; a torn block at the end of a file (a killed
append) is skipped, as Java's reader skips it.
"""

from __future__ import annotations

import functools
import json
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hudi_meta.errors import BlockDecodeError, CorruptFileError
from hudi_meta.format.avro_container import load_schema, read_container
from hudi_meta.format.block_content import decode_avro_records
from hudi_meta.format.config_keys import ARCHIVELOG_FOLDER
from hudi_meta.format.file_names import UNKNOWN_WRITE_TOKEN, log_file_name
from hudi_meta.format.log_block import BlockType
from hudi_meta.format.log_reader import read_blocks, read_contents
from hudi_meta.format.log_writer import append_blocks, avro_data_block
from hudi_meta.storage.base import Storage

MERGE_PLAN = "mergeArchivePlan"  # Java's small-archive-file merge in progress (storage without append)
FILE_ID = "commits"  # HoodieArchivedTimeline's archive log prefix: `.commits_.archive.N_1-0-1`
EXTENSION = "archive"
ROLL_OVER_BYTES = 512 * 1024 * 1024  # HoodieLogFormat.WriterBuilder's default size threshold
_FILE_NAME = re.compile(r"\.commits_\.archive\.([0-9]+).*")  # Java's ARCHIVE_FILE_PATTERN, matched whole

REQUESTED, INFLIGHT, COMPLETED = "REQUESTED", "INFLIGHT", "COMPLETED"  # HoodieInstant.State names
# the record fields that hold an instant state's metadata (at most one is set)
PAYLOAD_FIELDS = (
    "hoodieCommitMetadata",
    "hoodieCleanMetadata",
    "hoodieCompactionMetadata",
    "hoodieRollbackMetadata",
    "hoodieSavePointMetadata",
    "hoodieCompactionPlan",
    "hoodieCleanerPlan",
    "hoodieReplaceCommitMetadata",
    "hoodieRequestedReplaceMetadata",
    "HoodieInflightReplaceMetadata",
    "hoodieIndexCommitMetadata",
)


# ---------------------------------------------------------------- the schema


def _compose(schema: Any, named: dict[str, Any]) -> Any:
    """`schema` with every named type it references by a schema file's name defined at its first appearance and
    referenced by name after that, as one self-contained schema (what Java's generated classes embed)."""
    if isinstance(schema, str):
        if schema in named or schema not in _SCHEMA_FILES:
            return schema
        return _compose(load_schema(schema), named)
    if isinstance(schema, list):
        return [_compose(s, named) for s in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if kind in ("record", "enum", "fixed"):
        name = str(schema["name"]).rsplit(".", 1)[-1]
        if name in named:
            return name
        out = dict(schema)
        named[name] = out
        if kind == "record":
            out["fields"] = [{**f, "type": _compose(f["type"], named)} for f in schema["fields"]]
        return out
    if kind == "array":
        return {**schema, "items": _compose(schema["items"], named)}
    if kind == "map":
        return {**schema, "values": _compose(schema["values"], named)}
    return {**schema, "type": _compose(kind, named)}


# the metadata records an entry may hold, each in its own schema file
_SCHEMA_FILES = frozenset(
    {
        "HoodieCommitMetadata",
        "HoodieCleanMetadata",
        "HoodieCompactionMetadata",
        "HoodieRollbackMetadata",
        "HoodieSavepointMetadata",
        "HoodieCompactionPlan",
        "HoodieCleanerPlan",
        "HoodieReplaceCommitMetadata",
        "HoodieRequestedReplaceMetadata",
        "HoodieIndexCommitMetadata",
    }
)


@functools.cache
def _entry_schema() -> tuple[dict[str, Any], dict[str, Any], str]:
    named: dict[str, Any] = {}
    schema = _compose(load_schema("HoodieArchivedMetaEntry"), named)
    return schema, named, json.dumps(schema, separators=(",", ":"))


def entry_schema_json() -> str:
    """The writer schema of every block (compact JSON, as Java's `Schema.toString()`)."""
    return _entry_schema()[2]


# ---------------------------------------------------------------- entries


@dataclass(frozen=True)
class ArchivedEntry:
    """One `HoodieArchivedMetaEntry` record: one state file of one archived instant. `payload` is the metadata
    field set (of PAYLOAD_FIELDS) with its record, None when the state file had none (an empty requested file)."""

    commit_time: str
    action_type: str
    action_state: str
    state_transition_time: str | None = None
    payload: tuple[str, dict[str, Any]] | None = None

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = dict.fromkeys(PAYLOAD_FIELDS)
        record |= {
            "commitTime": self.commit_time,
            "actionType": self.action_type,
            "version": 1,
            "actionState": self.action_state,
            "stateTransitionTime": self.state_transition_time,
        }
        if self.payload is not None:
            record[self.payload[0]] = self.payload[1]
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ArchivedEntry:
        """A decoded record; a record without `actionState` (very old archives) is of a completed state, as Java
        reads it."""
        field = next((f for f in PAYLOAD_FIELDS if record.get(f) is not None), None)
        return cls(
            commit_time=str(record["commitTime"]),
            action_type=str(record["actionType"]),
            action_state=str(record.get("actionState") or COMPLETED),
            state_transition_time=record.get("stateTransitionTime"),
            payload=None if field is None else (field, record[field]),
        )


def entry_of_state_file(
    commit_time: str, action: str, state: str, data: bytes, state_transition_time: str | None = None
) -> ArchivedEntry:
    """The entry Java writes for one state file of `action` (its own action: `compaction` for a compaction's
    requested and inflight files, `commit` for its completed one) with the file's bytes `data` (for a compaction's
    inflight file, pass its requested file's: Java reads the plan from there)."""
    return ArchivedEntry(commit_time, action, state, state_transition_time, _payload(action, state, data))


def _payload(action: str, state: str, data: bytes) -> tuple[str, dict[str, Any]] | None:
    if not data.strip():
        return None  # an empty state file (a requested delta commit): Java sets no metadata
    done = state == COMPLETED
    if action in ("commit", "deltacommit"):
        return _commit_payload("hoodieCommitMetadata", "HoodieCommitMetadata", data)
    if action == "replacecommit":
        if done:
            return _commit_payload("hoodieReplaceCommitMetadata", "HoodieReplaceCommitMetadata", data)
        if state == INFLIGHT:
            return _commit_payload("HoodieInflightReplaceMetadata", "HoodieCommitMetadata", data)
        return "hoodieRequestedReplaceMetadata", _container(data, "HoodieRequestedReplaceMetadata")
    if action == "clean":
        if done:
            return "hoodieCleanMetadata", _container(data, "HoodieCleanMetadata")
        return "hoodieCleanerPlan", _container(data, "HoodieCleanerPlan")
    if action == "rollback":
        return ("hoodieRollbackMetadata", _container(data, "HoodieRollbackMetadata")) if done else None
    if action in ("compaction", "logcompaction"):
        return "hoodieCompactionPlan", _container(data, "HoodieCompactionPlan")
    if action == "savepoint":
        return "hoodieSavePointMetadata", _container(data, "HoodieSavepointMetadata")
    raise ValueError(f"{action} instants are not archived")


def _commit_payload(field: str, schema_name: str, data: bytes) -> tuple[str, dict[str, Any]] | None:
    """Java converts the JSON commit metadata to the Avro record field by field (Jackson's `convertValue`: fields
    the JSON lacks are null), leaves it out when its operation type is UNKNOWN (what an empty file reads as), and
    marks a compaction's as COMPACT."""
    try:
        metadata = json.loads(data.decode("utf-8"))
        if not isinstance(metadata, dict):
            raise ValueError("not a JSON object")
        if (metadata.get("operationType") or "UNKNOWN") == "UNKNOWN":
            return None
        record = project(metadata, schema_name)
    except (UnicodeDecodeError, ValueError, TypeError) as e:
        raise CorruptFileError(f"commit metadata is not {schema_name} JSON: {e}") from e
    if metadata.get("compacted"):
        record["operationType"] = "COMPACT"
    return field, record


def _container(data: bytes, schema_name: str) -> dict[str, Any]:
    record = read_container(data, schema_name)
    assert record is not None  # empty data has no payload (checked above)
    try:
        projected: dict[str, Any] = project(record, schema_name)
    except (ValueError, TypeError) as e:
        raise CorruptFileError(f"{schema_name} does not fit Java's schema: {e}") from e
    return projected


def project(value: Any, schema: Any) -> Any:
    """`value` (decoded JSON or Avro) in the shape of `schema` (a named type's name, or a schema of the entry's):
    a record's fields the value lacks are null where the schema allows it, else the field's default."""
    if isinstance(schema, str):
        named = _entry_schema()[1]
        if schema in named:
            return project(value, named[schema])
        return _primitive(value, schema)
    if isinstance(schema, list):
        if value is None and "null" in schema:
            return None
        (branch,) = [b for b in schema if b != "null"]  # the entry's unions are of null and one type
        return project(value, branch)
    kind = schema["type"]
    if kind == "record":
        if not isinstance(value, Mapping):
            raise TypeError(f"{schema['name']} is not an object")
        return {f["name"]: _field(value.get(f["name"]), f) for f in schema["fields"]}
    if kind == "map":
        if not isinstance(value, Mapping):
            raise TypeError("a map is not an object")
        return {str(k): project(v, schema["values"]) for k, v in value.items()}
    if kind == "array":
        if not isinstance(value, Sequence) or isinstance(value, str):
            raise TypeError("an array is not a list")
        return [project(v, schema["items"]) for v in value]
    return project(value, kind)


def _field(value: Any, field: Mapping[str, Any]) -> Any:
    kind = field["type"]
    if value is None and not (kind == "null" or (isinstance(kind, list) and "null" in kind)):
        return field.get("default")
    return project(value, kind)


def _primitive(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind in ("int", "long"):
        return int(value)
    if kind in ("float", "double"):
        return float(value)
    if kind == "string":
        return str(value)
    if kind == "boolean":
        return bool(value)
    return value


# ---------------------------------------------------------------- files


def folder_path(meta_path: str, props: Mapping[str, str]) -> str:
    """Where a layout-1 table keeps its archive (`hoodie.archivelog.folder` under `.hoodie/`)."""
    return posixpath.join(meta_path, ARCHIVELOG_FOLDER.or_default(props))


def file_name(version: int) -> str:
    """`.commits_.archive.{version}_1-0-1` (Java's archive writer: file id `commits`, no base instant)."""
    return log_file_name(FILE_ID, "", version, UNKNOWN_WRITE_TOKEN, EXTENSION)


def archive_files(storage: Storage, folder: str) -> list[tuple[int, str]]:
    """(version, name) of every archive file, oldest first."""
    found = []
    for info in storage.list_dir(folder):
        m = None if info.is_dir else _FILE_NAME.fullmatch(info.name)
        if m is not None:
            found.append((int(m[1]), info.name))
    return sorted(found)


def target_file(storage: Storage, folder: str) -> str:
    """The file the next entries go to: the newest, appended to, as Java's writer does; a new version where the
    storage cannot append (Java's writer rolls over there) or the newest has reached the size threshold."""
    files = archive_files(storage, folder)
    if not files:
        return file_name(1)
    version, name = files[-1]
    if storage.supports_append and storage.size(posixpath.join(folder, name)) < ROLL_OVER_BYTES:
        return name
    return file_name(version + 1)


def append_entries(storage: Storage, folder: str, entries: Sequence[ArchivedEntry]) -> str:
    """Append one Avro data block of `entries` (SCHEMA header only) in one durable write; return the file's name.
    One block, so a kill leaves all of them or a torn block that readers skip (Java writes a block per
    `hoodie.commits.archival.batch` records, which only bounds its memory)."""
    name = target_file(storage, folder)
    block = avro_data_block([e.to_record() for e in entries], entry_schema_json(), None)
    storage.makedirs(folder)
    append_blocks(storage, posixpath.join(folder, name), [block])
    return name


def read_entries(storage: Storage, folder: str) -> list[ArchivedEntry]:
    """Every entry of every archive file, oldest file first; blocks that are not Avro data are skipped, as Java
    skips them. Raises CorruptFileError (one line) for a block that cannot be decoded."""
    entries: list[ArchivedEntry] = []
    for _, name in archive_files(storage, folder):
        path = posixpath.join(folder, name)
        blocks = [b for b in read_blocks(storage, path) if b.block_type == BlockType.AVRO_DATA]
        for block, content in zip(blocks, read_contents(storage, path, blocks), strict=True):
            try:
                if block.schema is None:
                    raise BlockDecodeError("no SCHEMA header")
                entries += [ArchivedEntry.from_record(r) for r in decode_avro_records(content, block.schema)]
            except (BlockDecodeError, KeyError) as e:
                raise CorruptFileError(
                    f"{path}: the block at offset {block.offset} is no archived timeline block ({e}); restore the "
                    "file or move it out of the archive folder"
                ) from e
    return entries


def archived_instants(storage: Storage, folder: str) -> dict[str, tuple[str, str | None]]:
    """Requested time -> (completion time, action) of every instant archived completed. On layout 1 an instant's
    completion time is its requested time: files are sliced and commits chosen by it, on the active timeline as in
    the archive (`stateTransitionTime` is a file's modification time, which 0.x readers use only when asked to,
    `hoodie.read.timeline.holes.resolution.policy=USE_TRANSITION_TIME`)."""
    return {
        e.commit_time: (e.commit_time, e.action_type)
        for e in read_entries(storage, folder)
        if e.action_state == COMPLETED
    }
