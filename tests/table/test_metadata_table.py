"""The metadata table's `files` partition reader (hudi_meta/table/metadata_table.py).

Independent checks, per fixture table whose metadata table Java wrote: the listing equals what is on storage
(every base and log file of a partition whose instant completed on the data timeline, with its size on disk),
and the latest file slices built from it equal the ones hudi-rs lists (hudi-rs reads through the metadata table
for table versions 8 and 9). The merge rules are checked against a model written from Java's
`combineFileSystemMetadata` comments.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.file_group.fs_view import BaseFile, LogFile, build_file_groups, latest_slice_for_snapshot, visible_groups
from hudi_meta.format.file_names import BaseFileName, LogFileName
from hudi_meta.table.metadata_table import (
    FileInfo,
    FilesRecord,
    MetadataTableError,
    combine_files_records,
    merge_log_records,
    merge_with_base,
    read_files_partition,
)
from hudi_meta.table.table import HudiTable
from tests.conftest import FIXTURES_DIR, table_id

MDT_ZIPS = sorted(
    z
    for z in FIXTURES_DIR.rglob("*.zip")
    if any("/.hoodie/metadata/files/" in n for n in zipfile.ZipFile(z).namelist())
)


def storage_listing(table: HudiTable) -> dict[str, dict[str, int]]:
    """Partition -> file name -> size of every data file on disk whose instant is committed on the data table."""
    inputs = table.view_inputs()
    root = Path(table.base_path)
    listing: dict[str, dict[str, int]] = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        rel = "" if Path(directory) == root else str(Path(directory).relative_to(root))
        for name in files:
            log, base = LogFileName.try_parse(name), BaseFileName.try_parse(name)
            instant = log.instant if log else base.instant if base else None
            if instant is not None and inputs.is_committed(instant):
                listing.setdefault(rel, {})[name] = (Path(directory) / name).stat().st_size
    return listing


def test_every_mdt_fixture_is_covered() -> None:
    assert len(MDT_ZIPS) >= 6 and any("v8_" in z.name for z in MDT_ZIPS)


@pytest.mark.parametrize("archive", MDT_ZIPS, ids=table_id)
def test_files_partition_equals_storage(archive: Path, fixture_table) -> None:  # type: ignore[no-untyped-def]
    table = HudiTable.open(str(fixture_table(archive)))
    listing = read_files_partition(table)
    on_disk = storage_listing(table)
    assert {p: dict(files) for p, files in listing.files.items() if files} == on_disk
    assert sorted(listing.partitions) == sorted(on_disk)
    assert listing.base_file is not None and listing.base_file.startswith("files/files-0000-0_")


@pytest.mark.parametrize("archive", MDT_ZIPS, ids=table_id)
def test_latest_slices_agree_with_hudi_rs(archive: Path, fixture_table) -> None:  # type: ignore[no-untyped-def]
    """File slices built from the metadata table's listing (hudi-meta's file-system view) are the ones hudi-rs
    plans, base file sizes included."""
    from hudi import HudiTableBuilder

    base = fixture_table(archive)
    table = HudiTable.open(str(base))
    listing = read_files_partition(table)
    ext = "." + table.config.base_file_format.lower()
    bases, logs = [], []
    for partition, files in listing.files.items():
        for name, size in files.items():
            log = LogFileName.try_parse(name)
            if log is not None:
                logs.append(LogFile(partition, name, size, log))
            elif (parsed := BaseFileName.try_parse(name)) is not None and parsed.extension == ext:
                bases.append(BaseFile(partition, name, size, parsed))
    inputs = table.view_inputs()
    ours = {}
    for fg in visible_groups(build_file_groups(bases, logs, inputs), inputs):
        picked = latest_slice_for_snapshot(fg, inputs)
        if picked is not None:
            b, ls = picked
            ours[(fg.partition, fg.file_id)] = (b.name if b else "", b.size if b else 0, sorted(lf.name for lf in ls))
    rs = HudiTableBuilder.from_base_uri(str(base)).build()
    theirs = {
        (s.partition_path, s.file_id): (s.base_file_name, s.base_file_size, sorted(s.log_file_names))
        for s in rs.get_file_slices()
    }
    assert ours == theirs


def test_a_table_without_metadata_table_is_refused(fixture_table) -> None:  # type: ignore[no-untyped-def]
    archive = FIXTURES_DIR / "sample_table/mor/avro/v9_txns_simple_nometa.zip"
    with pytest.raises(MetadataTableError, match="has no metadata table"):
        read_files_partition(HudiTable.open(str(fixture_table(archive))))


# ---- merge rules ------------------------------------------------------------------------------------


def rec(entries: dict[str, tuple[int, bool]], key: str = "p") -> FilesRecord:
    return FilesRecord(key, 2, {n: FileInfo(s, d) for n, (s, d) in entries.items()})


def test_combine_follows_java() -> None:
    older = rec({"a": (10, False), "b": (5, False), "t": (0, True)})
    newer = rec({"a": (7, False), "b": (0, True), "c": (0, True), "t": (0, True), "n": (3, False)})
    merged = combine_files_records(older, newer).files
    assert merged == {
        "a": FileInfo(10, False),  # larger size wins
        "t": FileInfo(0, True),  # deleted twice: the tombstone stays
        "c": FileInfo(0, True),  # unknown file deleted: the tombstone is carried for the base merge
        "n": FileInfo(3, False),
    }  # b: deleted, gone with its tombstone
    with pytest.raises(ValueError, match="cannot merge"):
        combine_files_records(older, rec({}, key="q"))
    with pytest.raises(ValueError, match="has size 0"):
        combine_files_records(older, rec({"z": (0, False)}))


names = st.sampled_from(["f1", "f2", "f3"])
entry = st.tuples(st.integers(min_value=1, max_value=9), st.booleans()).map(lambda t: (t[0] if not t[1] else 0, t[1]))
record_st = st.dictionaries(names, entry, max_size=3).map(rec)


@given(base=st.one_of(st.none(), record_st), logs=st.lists(st.one_of(record_st, st.just("p")), max_size=5))
def test_two_stage_merge(base: FilesRecord | None, logs: list[FilesRecord | str]) -> None:
    """Logs merged among themselves, then with the base: a DELETE-block key drops the log records before it (and
    the base record when nothing follows it; a record after it merges with the base again, as Java's scanner
    hands the base merge that record alone), a file the logs last delete is listed only when stage one dropped the
    tombstone with a live log entry and the base lists it, a file the logs last add is live with a size no smaller
    than that add."""
    combine = combine_files_records
    merged = merge_with_base({"p": base} if base else {}, merge_log_records(logs, combine), combine).get("p")
    last_delete = max((i for i, r in enumerate(logs) if isinstance(r, str)), default=-1)
    after = [r for r in logs[last_delete + 1 :] if isinstance(r, FilesRecord)]
    start = base
    if (base is None or last_delete >= 0) and not after:
        assert merged is None
        return
    assert merged is not None
    for name in ("f1", "f2", "f3"):
        in_logs = [r.files[name] for r in after if name in r.files]
        base_info = start.files.get(name) if start else None
        got = merged.files.get(name)
        if not in_logs:
            assert got == base_info
        elif in_logs[-1].is_deleted:
            if got is not None and not got.is_deleted:
                assert got == base_info and any(not i.is_deleted for i in in_logs)
        else:
            live = [i.size for i in in_logs if not i.is_deleted] + ([base_info.size] if base_info else [])
            assert got is not None and not got.is_deleted
            assert in_logs[-1].size <= got.size <= max(live)


def test_a_log_add_then_delete_keeps_a_base_file_as_java_does() -> None:
    """Stage one drops the tombstone together with the live log entry, so the base entry survives stage two
    (Java's two-stage merge, reproduced rather than corrected: readers must list what Java lists)."""
    logs = merge_log_records([rec({"f": (5, False)}), rec({"f": (0, True)})], combine_files_records)
    merged = merge_with_base({"p": rec({"f": (3, False)})}, logs, combine_files_records)
    assert merged["p"].files == {"f": FileInfo(3, False)}
