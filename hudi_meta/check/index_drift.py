"""`check`: the file-level findings of `check/files.py` plus index drift, the metadata store against a fresh
index of the same files.

Index drift is checked only when a store is given and the table is registered there. The fresh index goes
into a throwaway SQLite store; both are compared as `index_fingerprint`s (plain data without row ids or run
times, archived history left out), so drift means the store no longer says what the files say: files,
blocks, instants or plans changed since the last `index` run, or an index run went wrong. A table whose
version or timeline layout changed since it was indexed is one finding (hudi_meta.index.table_format). An
instant archived on the table that the store still holds as active (an `archive` whose index update did not
run) is a finding of its own, never "gone from the table".
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from hudi_meta.check.files import INDEX_DRIFT, KINDS, Finding, check_files
from hudi_meta.check.metadata_indexes import metadata_index_findings
from hudi_meta.check.metadata_listing import metadata_listing_findings
from hudi_meta.check.metadata_structure import metadata_structure_findings
from hudi_meta.errors import StaleIndexError
from hudi_meta.index.db import make_engine
from hudi_meta.index.fingerprint import index_fingerprint
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.instants import archived_not_marked
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.registry import event_time_field_of, table_id_of
from hudi_meta.index.table_format import require_current_index
from hudi_meta.table.table import HudiTable

Row = tuple[Any, ...]
PROPERTIES_PATH = ".hoodie/hoodie.properties"  # where a version change shows

# How each fingerprint section names its rows: the key columns and a label of the row (a file's relative path
# where the row has one), and the names of the columns for the detail of a changed row.
_COLUMNS: Mapping[str, tuple[str, ...]] = {
    "instants": ("requested_time", "action", "state", "completion_time", "is_compaction", "summary"),
    "file_groups": ("partition", "file_id", "replaced"),
    "slices": ("partition", "file_id", "base_instant", "base_file", "base_file_size", "base_committed"),
    "log_files": (
        "partition",
        "name",
        "slice",
        "file_id",
        "base_instant",
        "version",
        "write_token",
        "size",
        "indexed_offset",
        "is_link",
        "link_target",
    ),
    "blocks": ("partition", "name", "offset"),
    "plans": ("instant", "state", "strategy", "threshold", "mode", "exact", "operations"),
    "links": ("partition", "link_name", "target_name", "via_name", "compaction_instant", "state"),
}
_KEY_SIZE = {"instants": 1, "file_groups": 2, "slices": 3, "log_files": 2, "blocks": 3, "plans": 1, "links": 2}
_WHAT = {
    "instants": "instant",
    "file_groups": "file group",
    "slices": "file slice",
    "log_files": "log file",
    "plans": "compaction plan",
    "links": "link",
}


def _rel(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


def _label(section: str, key: Row) -> str:
    if section in ("log_files", "links", "blocks"):
        return _rel(str(key[0]), str(key[1]))
    if section == "file_groups":
        return _rel(str(key[0]), str(key[1]))
    if section == "slices":
        return f"{_rel(str(key[0]), str(key[1]))}@{key[2]}"
    return str(key[0])


@dataclass
class CheckReport:
    """What `check` found, and what it could not check (`notes`, one line each)."""

    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    index_checked: bool = False

    @property
    def clean(self) -> bool:
        return not self.findings


_ORDER = ("instants", "plans", "file_groups", "slices", "log_files", "blocks", "links")


def drift_findings(stored: Mapping[str, Sequence[Row]], fresh: Mapping[str, Sequence[Row]]) -> list[Finding]:
    """The differences between two index fingerprints, one finding per instant, file group, slice or file
    (what differs about a log file, its blocks and its link is one finding). Pure."""
    parts: dict[str, list[tuple[int, str]]] = {}
    for section in sorted(set(stored) | set(fresh), key=lambda s: (_ORDER + (s,)).index(s)):
        rank = (_ORDER + (section,)).index(section)
        size = _KEY_SIZE.get(section, 1)
        old = {tuple(r[:size]): tuple(r) for r in stored.get(section, ())}
        new = {tuple(r[:size]): tuple(r) for r in fresh.get(section, ())}
        blocks: dict[str, int] = {}
        for key in sorted(set(old) | set(new), key=repr):
            if old.get(key) == new.get(key):
                continue
            label = _label(section, key)
            if section == "blocks":
                blocks[label] = blocks.get(label, 0) + 1
                continue
            what = _WHAT.get(section, section)
            if key not in new:
                detail = f"{what} in the index, gone from the table"
            elif key not in old:
                detail = f"{what} in the table, missing from the index"
            else:
                detail = f"{what} differs: {_changes(section, old[key], new[key])}"
            parts.setdefault(label, []).append((rank, detail))
        for label, count in blocks.items():
            detail = f"{count} block differs" if count == 1 else f"{count} blocks differ"
            parts.setdefault(label, []).append((rank, detail))
    return [
        Finding(INDEX_DRIFT, label, "; ".join(d for _, d in sorted(found)) + " (run `hudi-meta index`)")
        for label, found in sorted(parts.items())
    ]


def _changes(section: str, old: Row, new: Row) -> str:
    names = _COLUMNS.get(section, ())
    parts = []
    for i, (a, b) in enumerate(zip(old, new, strict=False)):
        if a != b:
            name = names[i] if i < len(names) else f"column {i}"
            parts.append(f"{name} {_short(a)} in the index, {_short(b)} in the table")
    return "; ".join(parts) or "rows differ"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


FreshIndex = Callable[[HudiTable, str | None], Mapping[str, Sequence[Row]]]

# The scans of a table's metadata table's contents, each returning its findings (none for a table without one); they
# run once its structure is sound (`metadata_structure_findings`: every MDT file readable, one base file per instant
# and file group, completed MDT compactions' base files present).
MetadataScan = Callable[[HudiTable], list[Finding]]
METADATA_SCANS: tuple[MetadataScan, ...] = (metadata_listing_findings, metadata_index_findings)


def fresh_fingerprint(table: HudiTable, event_time_field: str | None) -> dict[str, list[Row]]:
    """Index `table` into a new SQLite store in a temporary folder and return its fingerprint."""
    with tempfile.TemporaryDirectory(prefix="hudi-meta-check-") as folder:
        url = f"sqlite:///{Path(folder) / 'fresh.db'}"
        upgrade(url)
        engine = make_engine(url)
        try:
            indexer = Indexer(engine, table)
            indexer.run(event_time_field)
            assert indexer.table_id is not None
            return index_fingerprint(engine, indexer.table_id)
        finally:
            engine.dispose()


def index_drift(engine: Engine, table: HudiTable, fresh: FreshIndex = fresh_fingerprint) -> list[Finding] | None:
    """Findings where the store behind `engine` and a fresh index of the table's files differ; None when the
    table is not registered in the store."""
    table_id = table_id_of(engine, table.uri)
    if table_id is None:
        return None
    try:
        require_current_index(engine, table, table_id)
    except StaleIndexError as e:  # every row differs: one finding, not one per file
        return [Finding(INDEX_DRIFT, PROPERTIES_PATH, str(e))]
    with engine.connect() as conn:  # not "gone from the table": one finding each, compared as if marked
        moved = archived_not_marked(conn, table, table_id)
    stored = index_fingerprint(engine, table_id, archived_too=moved)
    findings = drift_findings(stored, fresh(table, event_time_field_of(engine, table_id)))
    findings += [
        Finding(INDEX_DRIFT, time, f"instant archived on the table, {state} in the index (run `hudi-meta index`)")
        for time, state in sorted(moved.items())
    ]
    return sorted(findings, key=lambda f: f.path)


def check_table(
    table: HudiTable, engine: Engine | None = None, store_label: str | None = None, now_ms: int | None = None
) -> CheckReport:
    """Every finding of `table`: its files against its timeline, and (with a store) the index against its files."""
    report = CheckReport(findings=check_files(table, now_ms))
    structure = metadata_structure_findings(table)
    report.findings += structure
    if structure:
        report.notes.append("metadata table contents not compared: its structure is damaged (mdt-* findings)")
    else:
        for scan in METADATA_SCANS:
            report.findings += scan(table)
    if engine is None:
        report.notes.append("index drift not checked: no metadata store")
    else:
        drift = index_drift(engine, table)
        if drift is None:
            where = f" {store_label}" if store_label else ""
            report.notes.append(
                f"index drift not checked: {table.base_path} is not registered in the metadata store{where}"
            )
        else:
            report.index_checked = True
            report.findings += drift
    report.findings.sort(key=lambda f: (KINDS.index(f.kind), f.path))
    return report
