"""Test helpers for the metadata-table writer: `files` records built from write stats (the records module of
another change derives them in full), hooks that keep the MDT in step with our data writer, and the reader checks
every test runs after each step."""

from __future__ import annotations

import hashlib
import os
import posixpath
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from hudi_meta.file_group.fs_view import latest_slice_for_snapshot
from hudi_meta.file_group.reader import ReadStats, visible_blocks
from hudi_meta.format.block_content import decode_delete_records, hfile_records
from hudi_meta.format.commit_metadata import CommitMetadata
from hudi_meta.format.file_names import BaseFileName, LogFileName
from hudi_meta.format.hfile import HFileReader
from hudi_meta.format.log_block import BlockType
from hudi_meta.format.log_reader import read_blocks, read_contents
from hudi_meta.format.table_service_metadata import RollbackMetadata
from hudi_meta.metadata import records
from hudi_meta.metadata.compaction import compact_if_necessary
from hudi_meta.metadata.record import MetadataRecord
from hudi_meta.metadata.writer import follow_data_rollback, write_delta_commit
from hudi_meta.table.metadata_table import read_files_partition, valid_instants
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action
from hudi_meta.write.writer import WriteClient
from tests.hudi_rs import rs_read_table


def files_records(files: dict[str, dict[str, int]]) -> list[MetadataRecord]:
    """Type 1 (the partitions) and type 2 (each partition's files, name -> size) records of `files`."""
    keys = {p: p or "." for p in files}
    listing = {keys[p]: {"size": 0, "isDeleted": False} for p in files}
    out = [
        MetadataRecord(
            "files", "__all_partitions__", {"key": "__all_partitions__", "type": 1, "filesystemMetadata": listing}
        )
    ]
    for p, names in files.items():
        entries = {n: {"size": s, "isDeleted": False} for n, s in names.items()}
        out.append(MetadataRecord("files", keys[p], {"key": keys[p], "type": 2, "filesystemMetadata": entries}))
    return out


def commit_hook(path: Path | str) -> Callable[[str, CommitMetadata], None]:
    """What WriteClient calls before completing a write: the MDT deltacommit of its files."""
    return lambda instant, metadata: write_mdt(path, instant, metadata)


def write_mdt(path: Path | str, instant: str, metadata: CommitMetadata) -> None:
    """The MDT deltacommit of a commit: its `files` records as hudi_meta.metadata.records derives them."""
    write_delta_commit(HudiTable.open(str(path)), instant, records.files_records(metadata))


class DataCommitFailed(Exception):
    """Stands for a writer that died after the MDT deltacommit completed and before its data commit did."""


def write_failing_after_mdt(path: str, partition: str, file_id: str, data: pa.Table) -> str:
    """A log-file write whose MDT deltacommit completes and whose data commit never does; its instant."""

    def mdt_then_fail(instant: str, metadata: CommitMetadata) -> None:
        write_mdt(path, instant, metadata)
        raise DataCommitFailed(instant)

    w = WriteClient(HudiTable.open(path), metadata_writer=mdt_then_fail)
    w.begin()
    w.append_log(partition, file_id, data)
    try:
        w.commit()
    except DataCommitFailed:
        pass
    finally:
        w.close()
    return w.instant


def rollback_hook(path: Path | str) -> Callable[[str, RollbackMetadata], None]:
    """What rollback_failed_write calls before completing: the MDT in step with the rollback."""

    def hook(rollback_time: str, metadata: RollbackMetadata) -> None:
        table = HudiTable.open(str(path))
        derived = records.rollback_files_records(metadata, table.config.version)
        follow_data_rollback(table, metadata.commits_rollback[0], rollback_time, derived)

    return hook


def expected_listing(table: HudiTable) -> dict[str, dict[str, int]]:
    """The storage listing a metadata table must hold. Base files, and log files of versions 8 and 9 (named by
    their write): when the instant in the name is committed. Version-6 log files (named by their slice, which may
    be a pending compaction's): when they hold a block of a committed write (a file holding only a pending write's
    blocks is invisible until that write completes). Never a link a pending compaction planned."""
    inputs = table.view_inputs()
    root = Path(table.base_path)
    out: dict[str, dict[str, int]] = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        rel = "" if Path(directory) == root else str(Path(directory).relative_to(root))
        for name in files:
            log, base = LogFileName.try_parse(name), BaseFileName.try_parse(name)
            full = os.path.join(directory, name)
            if log is not None and (rel, name) in inputs.pending_links:
                listed = False  # a pending compaction's link repeats its target's records: listed once it commits
            elif log is not None and table.config.version == 6:
                listed = any(
                    b.instant_time and inputs.is_committed(b.instant_time) for b in read_blocks(table.storage, full)
                )
            else:
                instant = log.instant if log else base.instant if base else None
                listed = instant is not None and inputs.is_committed(instant)
            if listed:
                out.setdefault(rel, {})[name] = os.stat(full).st_size
    return out


def by_key(table: pa.Table) -> dict[str, tuple[Any, ...]]:
    """Record key -> the record's data columns (by name), for comparing readers of any table."""
    if not table.num_columns:
        return {}
    columns = sorted(c for c in table.column_names if not c.startswith("_hoodie_"))
    return {r["_hoodie_record_key"]: tuple(repr(r[c]) for c in columns) for r in table.to_pylist()}


def rs_read(path: str, query: str, metadata: bool = True) -> dict[str, tuple[Any, ...]]:
    """hudi-rs's read of the table, listing through the metadata table (`hoodie.metadata.enable`)."""
    return by_key(rs_read_table(path, query, metadata))


def rs_log_files(path: str) -> set[str]:
    from hudi import HudiTableBuilder

    rs = HudiTableBuilder.from_base_uri(path).with_hudi_option("hoodie.metadata.enable", "true").build()
    return {n for s in rs.get_file_slices() for n in s.log_file_names} | {
        s.base_file_name for s in rs.get_file_slices() if s.base_file_name
    }


def check_readers(path: Path | str) -> None:
    """Our files-partition reader lists what storage holds (committed files), and on versions 8 and 9 hudi-rs, which
    lists through the metadata table, reads snapshot and read-optimized exactly as we do (version 6: hudi-rs
    reads no version-6 metadata table)."""
    table = HudiTable.open(str(path))
    listing = read_files_partition(table)
    expected = expected_listing(table)
    got = {p: dict(f) for p, f in listing.files.items() if f}
    if any(i.action == Action.CLEAN for i in table.timeline.pending()):
        # a clean deletes its files before it completes (Java's order too): until then the MDT lists them; they
        # are of older slices, which no snapshot or read-optimized read takes
        for p, files in got.items():
            for name in set(files) - set(expected.get(p, {})):
                assert not (Path(table.base_path) / p / name).exists(), (p, name)
                del files[name]
        got = {p: f for p, f in got.items() if f}
    assert got == expected
    # every partition with files is listed; a listed one without files is a partition folder (a version-6
    # rollback of the write that created it lists it, as Java's storage listing does: it has its metadata file)
    assert set(expected) <= set(listing.partitions)
    for partition in set(listing.partitions) - set(expected):
        assert (Path(table.base_path) / partition / ".hoodie_partition_metadata").is_file(), partition
    if table.config.version >= 8:
        for query in ("snapshot", "ro"):
            assert rs_read(str(path), query) == by_key(table.read(query)), query
        listed = {n for files in listing.files.values() for n in files}
        assert rs_log_files(str(path)) <= listed  # hudi-rs planned from the metadata table's listing


def compacting_hook(path: Path | str, max_delta_commits: int) -> Callable[[str, CommitMetadata], None]:
    """`commit_hook` with the MDT's table service first, as Java runs it before the write's deltacommit."""

    def hook(instant: str, metadata: CommitMetadata) -> None:
        compact_if_necessary(HudiTable.open(str(path)), max_delta_commits)
        write_mdt(path, instant, metadata)

    return hook


def mdt_partition(table: HudiTable, partition: str) -> dict[str, dict[str, Any]]:
    """Key -> payload of MDT partition `partition` as a reader merges it: per file group the snapshot slice's base
    HFile, then its log blocks of valid instants in log order, a newer record replacing an older one and a DELETE
    block removing the key (the merge of record_index and secondary-index records; written here, independent of
    hudi_meta.metadata)."""
    mdt = HudiTable.open(str(Path(table.base_path) / ".hoodie" / "metadata"))
    is_valid = valid_instants(table, mdt)
    out: dict[str, dict[str, Any]] = {}
    for fg in (g for g in mdt.file_groups() if g.partition == partition):
        picked = latest_slice_for_snapshot(fg, mdt.view_inputs())
        base, logs = picked if picked is not None else (None, [])
        if base is not None:
            full = posixpath.join(mdt.base_path, base.path)
            hfile = HFileReader(mdt.storage.read_bytes(full), full)
            assert hfile.schema is not None
            out.update((r.key, r.record) for r in hfile_records(hfile, hfile.schema))
        pairs = [(lf.path, b) for lf in logs for b in read_blocks(mdt.storage, posixpath.join(mdt.base_path, lf.path))]
        kept = visible_blocks([(posixpath.join(mdt.base_path, p), b) for p, b in pairs], is_valid, ReadStats())
        for full in dict.fromkeys(p for p, _ in kept):
            blocks = [b for p, b in kept if p == full]
            for block, content in zip(blocks, read_contents(mdt.storage, full, blocks), strict=True):
                if block.block_type == BlockType.HFILE_DATA:
                    hfile = HFileReader(content, full)
                    schema = hfile.schema or block.schema
                    assert schema is not None
                    out.update((r.key, r.record) for r in hfile_records(hfile, schema))
                elif block.block_type == BlockType.DELETE:
                    for d in decode_delete_records(content):
                        out.pop(d.record_key, None)
    return out


def record_index_file_id(info: dict[str, Any]) -> str:
    """The file id a record-index entry names (UUID bits and index, or the raw id)."""
    if info["fileIdEncoding"] == 1:
        return str(info["fileId"])
    bits = ((info["fileIdHighBits"] & (2**64 - 1)) << 64) | (info["fileIdLowBits"] & (2**64 - 1))
    head = str(uuid.UUID(int=bits))
    return head if info["fileIndex"] == -1 else f"{head}-{info['fileIndex']}"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_digests(root: str | Path) -> dict[str, str]:
    """Every file under `root` (relative path) and its content's hash: what "byte for byte as it was" compares."""
    return {str(p.relative_to(root)): digest(p.read_bytes()) for p in sorted(Path(root).rglob("*")) if p.is_file()}
