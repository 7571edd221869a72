"""The LSM timeline (archived instants of Hudi 1.x tables), read and written.

Rules tested (docs/lsm-timeline.md gives each one's Java source):

- instants appended in any number of calls read back equal, by requested time; each call adds one layer-0 file
  named after its batch's first and last requested time, and one manifest version, starting at 1;
- the current version is `_version_`'s number; when that file is missing or holds no number, the highest
  `manifest_N` (`.tmp` and other names are not manifests); no manifest is an empty history;
- a kill after the data file or after the manifest leaves a history that reads as before the call (or as after
  it, where `_version_` is gone), and running the call again finishes it; a call whose file is listed already
  changes nothing;
- a listed file that is missing or unreadable, a manifest that is not one, a `_version_` naming a missing
  manifest, a row without a requested time: CorruptFileError with one line, never fewer instants;
- the data files have the Parquet shape Java's Avro writer gives `HoodieLSMTimelineInstant` (apache/hudi
  `hudi-common/src/main/avro/HoodieLSMTimelineInstant.avsc`), and a file pyarrow writes with that shape (also
  without the `version` column, or with a null completion time) is read;
- the hudi-rs binding (0.5.0) does not read the history at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import uuid
import zipfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_meta.errors import CorruptFileError
from hudi_meta.format import lsm_timeline as lsm
from hudi_meta.format.avro_container import load_schema
from hudi_meta.format.lsm_timeline import ArchivedInstant, append_history, completion_times, read_history
from hudi_meta.storage import FsspecStorage, LocalStorage, Storage
from tests.conftest import FIXTURES_DIR
from tests.crashes import Crash, crash_at

# The fields of apache/hudi hudi-common/src/main/avro/HoodieLSMTimelineInstant.avsc, as read there: name, Avro type,
# default.
JAVA_FIELDS = [
    ("instantTime", ["null", "string"], None),
    ("completionTime", ["null", "string"], None),
    ("action", ["null", "string"], None),
    ("metadata", ["null", "bytes"], None),
    ("plan", ["null", "bytes"], None),
    ("version", "int", 1),
]
# What parquet-avro makes of them: a union with null is an optional column, string a UTF8 byte array, bytes a plain
# byte array, int a required int32. (name, physical type, logical type, optional)
JAVA_PARQUET_COLUMNS = [
    ("instantTime", "BYTE_ARRAY", "STRING", True),
    ("completionTime", "BYTE_ARRAY", "STRING", True),
    ("action", "BYTE_ARRAY", "STRING", True),
    ("metadata", "BYTE_ARRAY", "NONE", True),
    ("plan", "BYTE_ARRAY", "NONE", True),
    ("version", "INT32", "NONE", False),
]
T = "2025122021010"  # 13 digits: T + 4 more make a 17-digit instant time


def instant(n: int, action: str | None = "deltacommit", **kw: Any) -> ArchivedInstant:
    fields: dict[str, Any] = {
        "requested_time": f"{T}{n:04d}",
        "completion_time": f"{T}{n + 1:04d}",
        "action": action,
        "metadata": f"meta {n}".encode(),
        "plan": None,
    }
    return ArchivedInstant(**(fields | kw))


@pytest.fixture(params=["local", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Storage, str]:
    """A storage and the history folder of a table on it."""
    if request.param == "local":
        return LocalStorage(), lsm.table_history_path(str(tmp_path / "t"))
    return FsspecStorage(protocol="memory"), lsm.table_history_path(f"/t-{uuid.uuid4().hex}")


def names(storage: Storage, history: str) -> list[str]:
    return sorted(i.name for i in storage.list_dir(history))


# ---- round trip ----------------------------------------------------------------------------------------------------


def test_round_trip(store: tuple[Storage, str]) -> None:
    s, h = store
    assert read_history(s, h) == [] and completion_times(s, h) == {}  # no folder, no manifest: empty
    first = [instant(5, "commit", plan=b"compaction plan"), instant(1), instant(3, "clean", metadata=None, plan=b"p")]
    second = [instant(7, "replacecommit", plan=b""), instant(9, None)]
    assert append_history(s, h, first).version == 1
    manifest = append_history(s, h, second)
    assert manifest.version == 2
    assert manifest.file_names == [f"{T}0001_{T}0005_0.parquet", f"{T}0007_{T}0009_0.parquet"]
    assert names(s, h) == [*manifest.file_names, "_version_", "manifest_1", "manifest_2"]
    assert s.read_bytes(f"{h}/_version_") == b"2"
    assert all(length == s.size(f"{h}/{name}") for name, length in manifest.files)
    assert read_history(s, h) == sorted(first + second, key=lambda i: i.requested_time)
    assert completion_times(s, h) == {i.requested_time: i.completion_time for i in first + second}
    # the batch is written in requested-time order, so the file name's range holds each row
    with s.open_arrow(f"{h}/{manifest.file_names[0]}") as f:
        rows = pq.read_table(f).column("instantTime").to_pylist()
    assert rows == [f"{T}0001", f"{T}0003", f"{T}0005"]


def test_manifest_json_is_what_java_reads(store: tuple[Storage, str]) -> None:
    s, h = store
    append_history(s, h, [instant(1)])
    content = json.loads(s.read_bytes(f"{h}/manifest_1"))
    assert content == {
        "files": [{"fileName": f"{T}0001_{T}0001_0.parquet", "fileLen": s.size(f"{h}/{T}0001_{T}0001_0.parquet")}]
    }


def test_a_batch_needs_instants_with_instant_times(store: tuple[Storage, str]) -> None:
    s, h = store
    with pytest.raises(ValueError, match="no instants"):
        append_history(s, h, [])
    with pytest.raises(ValueError, match="not a Hudi instant time"):
        append_history(s, h, [instant(1, requested_time="2025-01-01")])
    assert names(s, h) == []


batch_times = st.lists(st.integers(0, 9999), min_size=1, max_size=40, unique=True)


@st.composite
def batches(draw: st.DrawFn) -> list[list[ArchivedInstant]]:
    """Instants of unique requested times, shuffled and cut into batches."""
    times = draw(st.permutations(draw(batch_times)))
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(times) - 1)), max_size=5)))
    bounds = [0, *(c for c in cuts if c < len(times)), len(times)]
    optional_bytes = st.none() | st.binary(max_size=20)
    out = []
    for start, end in zip(bounds, bounds[1:], strict=False):
        batch = []
        for n in times[start:end]:
            batch.append(
                ArchivedInstant(
                    requested_time=f"{T}{n:04d}",
                    completion_time=draw(st.from_regex(r"[0-9]{17}", fullmatch=True)),
                    action=draw(st.none() | st.sampled_from(["commit", "deltacommit", "clean", "rollback"])),
                    metadata=draw(optional_bytes),
                    plan=draw(optional_bytes),
                    version=draw(st.integers(1, 3)),
                )
            )
        out.append(batch)
    return out


@settings(max_examples=60, deadline=None)
@given(batches(), st.sampled_from(["local", "memory"]))
def test_batches_appended_in_several_calls_read_back_equal(parts: list[list[ArchivedInstant]], kind: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        s: Storage = LocalStorage() if kind == "local" else FsspecStorage(protocol="memory")
        h = lsm.table_history_path(tmp if kind == "local" else f"/h-{uuid.uuid4().hex}")
        for k, batch in enumerate(parts, start=1):
            assert append_history(s, h, batch).version == k
        everything = [i for batch in parts for i in batch]
        assert read_history(s, h) == sorted(everything, key=lambda i: i.requested_time)
        assert len(lsm.latest_manifest(s, h).files) == len(parts)


# ---- the current version -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("content", [None, b"", b"garbage", b"1\n", b" 1", b"\xff\xfe", b"\xd9\xa1", b"-1"])
def test_without_a_readable_version_file_the_highest_manifest_is_current(
    store: tuple[Storage, str], content: bytes | None
) -> None:
    """Missing, empty, not a number: Java's `Integer.parseInt` refuses whitespace and non-ASCII digits (here an
    Arabic-Indic one), so a `1` so spelled does not name manifest_1. A negative number Java would take for "no
    history" (every archived instant gone); we list the manifests instead."""
    s, h = store
    append_history(s, h, [instant(1)])
    append_history(s, h, [instant(3)])
    s.replace_atomic(f"{h}/_version_", b"1")
    assert [i.requested_time for i in read_history(s, h)] == [f"{T}0001"]  # the version file decides
    s.delete(f"{h}/_version_")
    if content is not None:
        s.create_atomic(f"{h}/_version_", content)
    s.create_atomic(f"{h}/.manifest_3.1234.tmp", b"{}")  # a temp file of an atomic create: not a manifest
    s.create_atomic(f"{h}/manifest_3.tmp", b"{}")
    assert lsm.latest_version(s, h) == 2
    assert [i.requested_time for i in read_history(s, h)] == [f"{T}0001", f"{T}0003"]
    assert append_history(s, h, [instant(5)]).version == 3  # the writer takes the same version
    assert s.read_bytes(f"{h}/_version_") == b"3"


def test_a_version_file_without_its_manifest_raises(store: tuple[Storage, str]) -> None:
    s, h = store
    append_history(s, h, [instant(1)])
    s.replace_atomic(f"{h}/_version_", b"7")
    with pytest.raises(CorruptFileError, match="manifest_7: the LSM history's latest manifest is missing"):
        read_history(s, h)
    with pytest.raises(CorruptFileError):
        append_history(s, h, [instant(3)])


def test_a_version_file_alone_is_no_history_but_a_damaged_one(store: tuple[Storage, str]) -> None:
    s, h = store
    s.create_atomic(f"{h}/_version_", b"1")
    with pytest.raises(CorruptFileError):
        read_history(s, h)


# ---- a kill between steps ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("step", lsm.CRASH_POINTS)
def test_a_kill_between_steps_reads_as_before_and_a_rerun_finishes(store: tuple[Storage, str], step: str) -> None:
    s, h = store
    before = [instant(1), instant(3)]
    append_history(s, h, before)
    batch = [instant(5, "commit", plan=b"plan"), instant(7)]
    with crash_at(lsm.set_crash_hook, step), pytest.raises(Crash):
        append_history(s, h, batch)
    assert read_history(s, h) == before
    assert s.read_bytes(f"{h}/_version_") == b"1"
    assert ("manifest_2" in names(s, h)) == (step == "after-manifest")
    manifest = append_history(s, h, batch)  # the retry: deletes the leftovers, writes them again
    assert manifest.version == 2 and s.read_bytes(f"{h}/_version_") == b"2"
    assert read_history(s, h) == before + batch


def test_a_kill_after_the_manifest_without_a_version_file_reads_as_after(store: tuple[Storage, str]) -> None:
    """Java deletes `_version_` before writing it again: killed in between, readers take the highest manifest."""
    s, h = store
    append_history(s, h, [instant(1)])
    with crash_at(lsm.set_crash_hook, "after-manifest"), pytest.raises(Crash):
        append_history(s, h, [instant(3)])
    s.delete(f"{h}/_version_")
    assert [i.requested_time for i in read_history(s, h)] == [f"{T}0001", f"{T}0003"]
    assert append_history(s, h, [instant(3)]).version == 2  # listed already: nothing to do
    assert not s.exists(f"{h}/_version_")
    assert [i.requested_time for i in read_history(s, h)] == [f"{T}0001", f"{T}0003"]


def test_a_leftover_data_file_is_written_again(store: tuple[Storage, str]) -> None:
    """A file of the batch's name that no manifest lists (a writer stopped while writing it) is replaced."""
    s, h = store
    s.create_atomic(f"{h}/{T}0001_{T}0003_0.parquet", b"PAR1 torn")
    append_history(s, h, [instant(1), instant(3)])
    assert [i.requested_time for i in read_history(s, h)] == [f"{T}0001", f"{T}0003"]


def test_a_batch_archived_already_changes_nothing(store: tuple[Storage, str]) -> None:
    s, h = store
    append_history(s, h, [instant(1), instant(3)])
    files = {n: s.read_bytes(f"{h}/{n}") for n in names(s, h)}
    assert append_history(s, h, [instant(3), instant(1)]).version == 1
    assert {n: s.read_bytes(f"{h}/{n}") for n in names(s, h)} == files


@pytest.mark.parametrize("step", lsm.CRASH_POINTS)
def test_a_real_kill_at_each_step(tmp_path: Path, step: str) -> None:
    """kill -9 through the environment variable, in a process of its own."""
    h = lsm.table_history_path(str(tmp_path))
    s = LocalStorage()
    append_history(s, h, [instant(1)])
    script = (
        "import sys\n"
        "from hudi_meta.format.lsm_timeline import ArchivedInstant, append_history\n"
        "from hudi_meta.storage import LocalStorage\n"
        f"append_history(LocalStorage(), sys.argv[1], [ArchivedInstant('{T}0003', '{T}0004', 'commit', b'm', None)])\n"
    )
    env = os.environ | {lsm.CRASH_AT_ENV: step}
    done = subprocess.run([sys.executable, "-c", script, h], env=env, capture_output=True, check=False)
    assert done.returncode == -9, done.stderr.decode()
    assert [i.requested_time for i in read_history(s, h)] == [f"{T}0001"]
    append_history(s, h, [instant(3)])
    assert [i.requested_time for i in read_history(s, h)] == [f"{T}0001", f"{T}0003"]


# ---- damage raises ---------------------------------------------------------------------------------------------------


def damage_missing(s: Storage, h: str, name: str) -> None:
    s.delete(f"{h}/{name}")


def damage_truncated(s: Storage, h: str, name: str) -> None:
    data = s.read_bytes(f"{h}/{name}")
    s.delete(f"{h}/{name}")
    s.create_atomic(f"{h}/{name}", data[: len(data) // 2])


def damage_not_parquet(s: Storage, h: str, name: str) -> None:
    s.delete(f"{h}/{name}")
    s.create_atomic(f"{h}/{name}", b"not a parquet file")


def damage_wrong_types(s: Storage, h: str, name: str) -> None:
    s.delete(f"{h}/{name}")
    table = pa.table({"instantTime": [f"{T}0001"], "version": ["one"]})
    s.create_atomic(f"{h}/{name}", parquet_bytes(table))


def damage_no_instant_time(s: Storage, h: str, name: str) -> None:
    s.delete(f"{h}/{name}")
    table = pa.table({"instantTime": pa.array([None], pa.string()), "completionTime": [f"{T}0002"]})
    s.create_atomic(f"{h}/{name}", parquet_bytes(table))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (damage_missing, "listed by manifest_2 but missing"),
        (damage_truncated, "listed by manifest_2 but unreadable"),
        (damage_not_parquet, "listed by manifest_2 but unreadable"),
        (damage_wrong_types, "listed by manifest_2 but unreadable"),
        (damage_no_instant_time, "row 0 has no instantTime"),
    ],
)
def test_a_damaged_listed_file_raises_never_fewer_instants(
    store: tuple[Storage, str], damage: Any, message: str
) -> None:
    s, h = store
    first = append_history(s, h, [instant(1)]).file_names[0]
    append_history(s, h, [instant(3)])
    damage(s, h, first)
    with pytest.raises(CorruptFileError, match=message) as raised:
        read_history(s, h)
    assert len(str(raised.value).splitlines()) == 1 and first in str(raised.value)
    with pytest.raises(CorruptFileError):
        completion_times(s, h)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b"[]",
        b"{}",
        b'{"files": null}',
        b'{"files": [{"fileLen": 3}]}',
        b'{"files": ["x"]}',
        b'{"files": [{"fileName": "x.parquet", "fileLen": 3}]}',
        b'{"files": [{"fileName": "1_2_10.parquet"}]}',
    ],
)
def test_a_damaged_manifest_raises(store: tuple[Storage, str], content: bytes) -> None:
    """An empty manifest too: Java reads it as an empty history, which would drop every archived instant."""
    s, h = store
    append_history(s, h, [instant(1)])
    s.delete(f"{h}/manifest_1")
    s.create_atomic(f"{h}/manifest_1", content)
    with pytest.raises(CorruptFileError, match="manifest_1") as raised:
        read_history(s, h)
    assert len(str(raised.value).splitlines()) == 1


def test_a_manifest_with_unknown_keys_and_no_lengths_reads(store: tuple[Storage, str]) -> None:
    """Java ignores unknown keys; the lengths are not needed to read."""
    s, h = store
    name = append_history(s, h, [instant(1)]).file_names[0]
    s.delete(f"{h}/manifest_1")
    s.create_atomic(f"{h}/manifest_1", json.dumps({"files": [{"fileName": name, "x": 1}], "y": 2}).encode())
    assert read_history(s, h) == [instant(1)]


def test_an_empty_manifest_list_is_an_empty_history(store: tuple[Storage, str]) -> None:
    s, h = store
    s.create_atomic(f"{h}/manifest_1", b'{"files" : [ ]}')
    assert read_history(s, h) == []


def test_two_completion_times_for_one_instant_raise(store: tuple[Storage, str]) -> None:
    s, h = store
    append_history(s, h, [instant(1)])
    append_history(s, h, [instant(1, completion_time=f"{T}0009"), instant(3)])
    assert len(read_history(s, h)) == 3
    with pytest.raises(CorruptFileError, match="two completion times"):
        completion_times(s, h)


# ---- Java's shape --------------------------------------------------------------------------------------------------


def test_our_avsc_is_javas() -> None:
    schema = load_schema("HoodieLSMTimelineInstant")
    assert (schema["namespace"], schema["name"]) == ("org.apache.hudi.avro.model", "HoodieLSMTimelineInstant")
    assert [(f["name"], f["type"], f["default"]) for f in schema["fields"]] == JAVA_FIELDS


def test_data_files_have_the_parquet_shape_of_javas_avro_writer(store: tuple[Storage, str]) -> None:
    s, h = store
    name = append_history(s, h, [instant(1)]).file_names[0]
    with s.open_arrow(f"{h}/{name}") as f:
        parquet = pq.ParquetFile(f)
    columns = [parquet.schema.column(i) for i in range(len(parquet.schema))]
    found = [(c.name, c.physical_type, c.logical_type.type, c.max_definition_level == 1) for c in columns]
    assert found == JAVA_PARQUET_COLUMNS
    assert all(c.max_repetition_level == 0 and c.path == c.name for c in columns)  # flat: no groups, no lists
    footer = parquet.metadata.metadata
    assert json.loads(footer[b"parquet.avro.schema"]) == load_schema("HoodieLSMTimelineInstant")


def parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


def java_shaped_table(rows: list[dict[str, Any]], drop: tuple[str, ...] = ()) -> pa.Table:
    """Rows in the shape of JAVA_PARQUET_COLUMNS, built here without the module's schema."""
    types = {"BYTE_ARRAY": pa.binary(), "INT32": pa.int32()}
    fields = [
        pa.field(n, pa.string() if logical == "STRING" else types[physical], nullable=optional)
        for n, physical, logical, optional in JAVA_PARQUET_COLUMNS
        if n not in drop
    ]
    return pa.Table.from_pylist(rows, schema=pa.schema(fields))


def install(s: Storage, h: str, table: pa.Table, name: str) -> None:
    """A history of one file written by someone else, with Java's manifest and version file."""
    data = parquet_bytes(table)
    s.create_atomic(f"{h}/{name}", data)
    s.create_atomic(f"{h}/manifest_1", json.dumps({"files": [{"fileName": name, "fileLen": len(data)}]}).encode())
    s.create_atomic(f"{h}/_version_", b"1")


def test_a_file_pyarrow_writes_with_javas_shape_is_read(store: tuple[Storage, str]) -> None:
    s, h = store
    rows = [
        {
            "instantTime": f"{T}0003",
            "completionTime": None,
            "action": "deltacommit",
            "metadata": b"m",
            "plan": None,
            "version": 1,
        },
        {
            "instantTime": f"{T}0001",
            "completionTime": f"{T}0002",
            "action": "commit",
            "metadata": None,
            "plan": b"p",
            "version": 1,
        },
    ]
    install(s, h, java_shaped_table(rows), f"{T}0001_{T}0003_0.parquet")
    assert read_history(s, h) == [
        ArchivedInstant(f"{T}0001", f"{T}0002", "commit", None, b"p", 1),
        ArchivedInstant(f"{T}0003", f"{T}0003", "deltacommit", b"m", None, 1),  # a null completion time: requested
    ]
    assert completion_times(s, h) == {f"{T}0001": f"{T}0002", f"{T}0003": f"{T}0003"}
    append_history(s, h, [instant(5)])  # ours goes on from there
    assert [i.requested_time for i in read_history(s, h)] == [f"{T}0001", f"{T}0003", f"{T}0005"]


def test_columns_a_file_lacks_read_as_their_defaults(store: tuple[Storage, str]) -> None:
    """Java reads with its schema, which fills a missing column with the field's default."""
    s, h = store
    rows = [{"instantTime": f"{T}0001", "completionTime": f"{T}0002", "action": "commit"}]
    install(s, h, java_shaped_table(rows, drop=("metadata", "plan", "version")), f"{T}0001_{T}0001_1.parquet")
    assert read_history(s, h) == [ArchivedInstant(f"{T}0001", f"{T}0002", "commit", None, None, 1)]


# ---- hudi-rs -------------------------------------------------------------------------------------------------------


@pytest.fixture
def v8_table(tmp_path: Path) -> Path:
    """A copy of a Java-written table version 8 (MERGE_ON_READ, six delta commits and a compaction)."""
    with zipfile.ZipFile(FIXTURES_DIR / "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip") as zf:
        zf.extractall(tmp_path, [n for n in zf.namelist() if not n.startswith("__MACOSX/")])
    return tmp_path / "v8_trips_8i3u1d"


def test_hudi_rs_does_not_read_the_history(v8_table: Path) -> None:
    """hudi 0.5.0 (hudi-rs) lists archived instants of layout 2 tables as none (its LSM reader is a TODO), even
    with archived reads on: we archive the first two delta commits as Java would, and its timeline no longer has
    them. When this fails, hudi reads the history: test it reads what we wrote."""
    from hudi import HudiTable

    timeline_dir = v8_table / ".hoodie" / "timeline"
    archived = []
    for requested in ("20251220210108078", "20251220210123755"):
        (completed,) = timeline_dir.glob(f"{requested}_*.deltacommit")
        completion = completed.name.split("_")[1].split(".")[0]
        archived.append(ArchivedInstant(requested, completion, "deltacommit", completed.read_bytes(), None))
    append_history(LocalStorage(), lsm.table_history_path(str(v8_table)), archived)
    for instant_ in archived:
        for state in timeline_dir.glob(f"{instant_.requested_time}*"):
            state.unlink()
    assert completion_times(LocalStorage(), lsm.table_history_path(str(v8_table))) == {
        "20251220210108078": "20251220210109593",
        "20251220210123755": "20251220210124336",
    }
    table = HudiTable(str(v8_table), {"hoodie.internal.timeline.archived.enabled": "true"})
    listed = [i.timestamp for i in table.get_timeline().get_completed_deltacommits()]
    assert listed == ["20251220210125441", "20251220210127080", "20251220210128625", "20251220210130911"]
