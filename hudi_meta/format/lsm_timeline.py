"""The LSM timeline of Hudi 1.x (timeline layout 2): completed instants that archival moved out of the active
timeline, kept as Parquet files under `.hoodie/timeline/history/` and listed by a manifest.

Readers need it for one thing above all: the completion time of an archived delta commit, which decides the file
slice its log files belong to. Hudi once took such a commit for pending because it could not read its completion
time, left its log out of a compaction and lost its records (apache/hudi#14365). So a history that cannot be read
whole (a listed file missing or unreadable, a manifest that is not JSON) raises `CorruptFileError` here; it never
reads as fewer instants. The rules and their Java sources are in docs/lsm-timeline.md.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_meta.crash_points import CrashPoints
from hudi_meta.errors import CorruptFileError
from hudi_meta.format.avro_arrow import arrow_schema_from_avro_json
from hudi_meta.format.avro_container import load_schema
from hudi_meta.format.parquet_file import encode_parquet
from hudi_meta.storage.base import Storage

HISTORY_DIR = "timeline/history"  # under .hoodie/: the defaults of hoodie.timeline.path and .history.path
VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
INSTANT_VERSION = 1  # the row version Java writes (LSMTimeline.LSM_TIMELINE_INSTANT_VERSION_1)
_MANIFEST_NAME = re.compile(r"manifest_([0-9]+)")  # full match: `.tmp` and other names are not manifests
_DATA_FILE_NAME = re.compile(r"([0-9]+)_([0-9]+)_([0-9])\.parquet")  # min, max requested time, one-digit layer
_DIGITS = re.compile(r"[0-9]+")
# what `archived_times` reads: the bytes columns stay on disk (the small `version` is read, to refuse a file Java
# could not read either)
_TIME_COLUMNS = frozenset({"instantTime", "completionTime", "action", "version"})

_AVRO_SCHEMA = load_schema("HoodieLSMTimelineInstant")
# The Parquet shape Java's Avro writer gives the record (the Avro schema also rides in the footer, as there).
LSM_INSTANT_SCHEMA = arrow_schema_from_avro_json(json.dumps(_AVRO_SCHEMA)).with_metadata(
    {"parquet.avro.schema": json.dumps(_AVRO_SCHEMA, separators=(",", ":"))}
)

CRASH_AT_ENV = "HUDI_META_LSM_CRASH_AT"  # failure injection for crash tests: kill -9 this process at a named step
CRASH_POINTS = ("after-data-file", "after-manifest")
_crash = CrashPoints(CRASH_AT_ENV, CRASH_POINTS)
set_crash_hook = _crash.set_hook


@dataclass(frozen=True)
class ArchivedInstant:
    """One row of a history file (Java's `HoodieLSMTimelineInstant`): a completed instant as archival kept it.

    `metadata` holds the bytes of the completed instant file, `plan` those of its plan (a compaction's, a
    clean's, a replace commit's), each None when there were none. A compaction is archived as a `commit`. Java
    always writes an action; the schema lets it be null, and reading completion times does not need it."""

    requested_time: str
    completion_time: str
    action: str | None
    metadata: bytes | None
    plan: bytes | None
    version: int = INSTANT_VERSION


@dataclass(frozen=True)
class Manifest:
    """One snapshot of the history: its version (0 before the first) and each data file it lists with its
    length in bytes, in the order listed."""

    version: int
    files: tuple[tuple[str, int], ...] = ()

    @property
    def file_names(self) -> list[str]:
        return [name for name, _ in self.files]


def table_history_path(base_path: str) -> str:
    """The history folder of the table at `base_path`, where Hudi puts it unless configured otherwise."""
    return posixpath.join(base_path, ".hoodie", HISTORY_DIR)


def data_file_name(min_instant: str, max_instant: str, layer: int = 0) -> str:
    """A history data file's name: the first and last requested time it holds and its LSM layer."""
    return f"{min_instant}_{max_instant}_{layer}.parquet"


# ---- reading -------------------------------------------------------------------------------------------------------


def latest_version(storage: Storage, history_path: str) -> int:
    """The version `_version_` names; when it is missing or holds no number (Java deletes it before writing it
    again), the highest `manifest_N` there is; 0 when there is none (no history yet)."""
    try:
        text = storage.read_bytes(posixpath.join(history_path, VERSION_FILE)).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    if _DIGITS.fullmatch(text):
        return int(text)
    versions = [int(m.group(1)) for m in map(_MANIFEST_NAME.fullmatch, _names(storage, history_path)) if m]
    return max(versions, default=0)


def read_manifest(storage: Storage, history_path: str, version: int) -> Manifest:
    """The snapshot `manifest_{version}` lists (version 0: the empty one)."""
    if version == 0:
        return Manifest(0)
    path = posixpath.join(history_path, f"{MANIFEST_PREFIX}{version}")
    try:
        content = json.loads(storage.read_bytes(path))
        files = tuple((str(e["fileName"]), int(e.get("fileLen", 0))) for e in content["files"])
    except FileNotFoundError:
        raise CorruptFileError(f"{path}: the LSM history's latest manifest is missing; restore it") from None
    except (
        OSError,
        ValueError,
        TypeError,
        KeyError,
        AttributeError,
    ) as e:  # an empty file is damaged too, not an empty history
        raise CorruptFileError(f"{path}: not an LSM timeline manifest ({type(e).__name__}: {e}); restore it") from e
    for name, _ in files:
        if not _DATA_FILE_NAME.fullmatch(name):
            raise CorruptFileError(f"{path}: lists {name!r}, not a history data file name; restore the manifest")
    return Manifest(version, files)


def latest_manifest(storage: Storage, history_path: str) -> Manifest:
    """The history's current snapshot."""
    return read_manifest(storage, history_path, latest_version(storage, history_path))


def read_history(storage: Storage, history_path: str) -> list[ArchivedInstant]:
    """Every archived instant of the current snapshot, by requested time (rows of one time in file order).

    Raises CorruptFileError when a listed file is missing or cannot be read: fewer instants would make archived
    commits look pending."""
    manifest = latest_manifest(storage, history_path)
    instants = [row for name in manifest.file_names for row in _read_data_file(storage, history_path, name, manifest)]
    return sorted(instants, key=lambda i: i.requested_time)


def completion_times(storage: Storage, history_path: str) -> dict[str, str]:
    """Requested time -> completion time of every archived instant (a null completion time is the requested
    time, as Java reads it). Two rows of one requested time with different completion times raise."""
    return {requested: completion for requested, (completion, _) in archived_times(storage, history_path).items()}


# archived_times of recent snapshots: a snapshot's data files are written once under names of their own, so the
# manifest's (name, length) list identifies what they hold; a table's view is rebuilt after every commit
_TIMES_CACHE: OrderedDict[tuple[str, str, tuple[tuple[str, int], ...]], dict[str, tuple[str, str | None]]]
_TIMES_CACHE = OrderedDict()
_TIMES_CACHE_SIZE = 32


def archived_times(storage: Storage, history_path: str) -> dict[str, tuple[str, str | None]]:
    """Requested time -> (completion time, action) of every archived instant, read without the metadata and plan
    columns. The same rules as `completion_times`: a file that cannot be read raises, never reads as fewer. The
    manifest is read each time; the data files only when it lists others than a recent call's."""
    manifest = latest_manifest(storage, history_path)
    key = (type(storage).__name__, history_path, manifest.files)
    cached = _TIMES_CACHE.get(key)
    if cached is None:
        cached = _read_times(storage, history_path, manifest)
        _TIMES_CACHE[key] = cached
        while len(_TIMES_CACHE) > _TIMES_CACHE_SIZE:
            _TIMES_CACHE.popitem(last=False)
    _TIMES_CACHE.move_to_end(key)
    return dict(cached)


def _read_times(storage: Storage, history_path: str, manifest: Manifest) -> dict[str, tuple[str, str | None]]:
    times: dict[str, tuple[str, str | None]] = {}
    for name in manifest.file_names:
        for instant in _read_data_file(storage, history_path, name, manifest, _TIME_COLUMNS):
            known = times.setdefault(instant.requested_time, (instant.completion_time, instant.action))
            if known[0] != instant.completion_time:
                raise CorruptFileError(
                    f"{history_path}: archived instant {instant.requested_time} has two completion times, "
                    f"{known[0]} and {instant.completion_time}; restore the history"
                )
    return dict(sorted(times.items()))


def _names(storage: Storage, directory: str) -> list[str]:
    return [info.name for info in storage.list_dir(directory) if not info.is_dir]


def _read_data_file(
    storage: Storage, history_path: str, name: str, manifest: Manifest, only: frozenset[str] | None = None
) -> list[ArchivedInstant]:
    """The rows of one data file; with `only`, just those columns are read (the others read as their defaults)."""
    path = posixpath.join(history_path, name)
    listed_by = f"listed by {MANIFEST_PREFIX}{manifest.version}"
    if not storage.exists(path):
        raise CorruptFileError(f"{path}: {listed_by} but missing; archived instants would be lost: restore it")
    try:
        with storage.open_arrow(path) as f:
            parquet = pq.ParquetFile(f)
            names = [n for n in parquet.schema_arrow.names if only is None or n in only]
            table = parquet.read(columns=names)
        columns = {field.name: _column(table, field) for field in LSM_INSTANT_SCHEMA}
    except (OSError, pa.ArrowException) as e:
        reason = " ".join(str(e).split())
        raise CorruptFileError(f"{path}: {listed_by} but unreadable ({reason}); restore it") from e
    rows = []
    for i in range(table.num_rows):
        requested = columns["instantTime"][i]
        if requested is None:
            raise CorruptFileError(f"{path}: row {i} has no instantTime; restore the file")
        completion, version = columns["completionTime"][i], columns["version"][i]
        rows.append(
            ArchivedInstant(
                requested_time=requested,
                completion_time=requested if completion is None else completion,
                action=columns["action"][i],
                metadata=columns["metadata"][i],
                plan=columns["plan"][i],
                version=INSTANT_VERSION if version is None else version,
            )
        )
    return rows


def _column(table: pa.Table, field: pa.Field) -> list[Any]:
    """A column's values as the schema types them; a column the file lacks reads as the field's default (Java
    reads with its schema, which fills them)."""
    if field.name not in table.column_names:
        return [INSTANT_VERSION if field.name == "version" else None] * table.num_rows
    values: list[Any] = table.column(field.name).cast(field.type).to_pylist()
    return values


# ---- writing -------------------------------------------------------------------------------------------------------


def append_history(storage: Storage, history_path: str, instants: Sequence[ArchivedInstant]) -> Manifest:
    """Archive `instants` as one layer-0 file of the history and return the snapshot that lists it.

    Java's three steps, each safe to repeat: (1) write the data file, named after the batch's first and last
    requested time; (2) write `manifest_{N+1}`, the current one's files plus this one; (3) point `_version_` at
    it. Readers see the history before step 3 and after it, nothing between; run again after a kill, the call
    finishes the work, and a batch whose file the current snapshot lists already is left as it is. The caller
    holds the table lock (archival does, in Java too): two writers would both take version N+1."""
    if not instants:
        raise ValueError("no instants to archive")
    batch = sorted(instants, key=lambda i: i.requested_time)
    for instant in batch:
        if not _DIGITS.fullmatch(instant.requested_time):  # the file name must parse back
            raise ValueError(f"requested time {instant.requested_time!r} is not a Hudi instant time")
    name = data_file_name(batch[0].requested_time, batch[-1].requested_time)
    path = posixpath.join(history_path, name)
    current = latest_manifest(storage, history_path)
    if name in current.file_names:
        if not storage.exists(path):
            raise CorruptFileError(f"{path}: listed by {MANIFEST_PREFIX}{current.version} but missing; restore it")
        return current  # an earlier run got as far as its manifest
    storage.makedirs(history_path)
    storage.delete(path)  # left by an earlier run that stopped before its manifest
    storage.create_atomic(path, encode_instants(batch))
    _crash.reach("after-data-file")
    manifest = Manifest(current.version + 1, (*current.files, (name, storage.size(path))))
    manifest_path = posixpath.join(history_path, f"{MANIFEST_PREFIX}{manifest.version}")
    storage.delete(manifest_path)  # left by an earlier run that stopped before `_version_`
    storage.create_atomic(manifest_path, encode_manifest(manifest))
    _crash.reach("after-manifest")
    storage.replace_atomic(posixpath.join(history_path, VERSION_FILE), str(manifest.version).encode())
    return manifest


def encode_instants(instants: Sequence[ArchivedInstant]) -> bytes:
    """`instants` as a history data file, in the order given."""
    columns = {
        "instantTime": [i.requested_time for i in instants],
        "completionTime": [i.completion_time for i in instants],
        "action": [i.action for i in instants],
        "metadata": [i.metadata for i in instants],
        "plan": [i.plan for i in instants],
        "version": [i.version for i in instants],
    }
    return encode_parquet(pa.table(columns, schema=LSM_INSTANT_SCHEMA))


def encode_manifest(manifest: Manifest) -> bytes:
    """The manifest's JSON, as Java's `HoodieLSMTimelineManifest` reads it."""
    files = [{"fileName": name, "fileLen": length} for name, length in manifest.files]
    return json.dumps({"files": files}, indent=2).encode("utf-8")
