"""Local disk, memory and S3 (s3fs against moto on loopback) honour the same contract: atomic create never
overwrites, reads of ranges, idempotent deletes; object stores create files whole and never append."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from hudi_meta.errors import NoAppendError
from hudi_meta.storage import FsspecStorage, LocalStorage, Storage, storage_for
from tests.conftest import S3Server


@pytest.fixture(params=["local", "memory", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Storage, str]:
    if request.param == "local":
        return LocalStorage(), str(tmp_path)
    if request.param == "s3":
        server: S3Server = request.getfixturevalue("s3_server")
        return storage_for(f"s3://{server.bucket()}/root", server.options)
    return FsspecStorage(protocol="memory"), f"/t-{uuid.uuid4().hex}"


def test_create_atomic_refuses_overwrite(store: tuple[Storage, str]) -> None:
    s, root = store
    path = f"{root}/d/f"
    s.create_atomic(path, b"one")
    with pytest.raises(FileExistsError):
        s.create_atomic(path, b"two")
    assert s.read_bytes(path) == b"one"
    assert [i.name for i in s.list_dir(f"{root}/d")] == ["f"]


def test_create_atomic_stream_creates_whole_or_nothing(store: tuple[Storage, str]) -> None:
    """A file written in pieces appears at the end, complete; an error inside leaves nothing (no temp file either);
    an existing name is refused and kept."""
    s, root = store
    path = f"{root}/d/f"
    with s.create_atomic_stream(path) as f:
        f.write(b"one ")
        f.write(b"two")
    assert s.read_bytes(path) == b"one two"
    with pytest.raises(FileExistsError), s.create_atomic_stream(path) as f:
        f.write(b"three")
    assert s.read_bytes(path) == b"one two"
    with pytest.raises(RuntimeError), s.create_atomic_stream(f"{root}/d/g") as f:
        f.write(b"half")
        raise RuntimeError("the writer gave up")
    assert [i.name for i in s.list_dir(f"{root}/d")] == ["f"]


def test_a_local_listing_leaves_out_a_file_removed_while_it_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spark tasks compact file groups of one partition at once: one lists the directory while another's temp
    file is linked and removed. The listing skips the vanished entry instead of failing the task."""
    (tmp_path / "keep").write_bytes(b"k")
    (tmp_path / ".f.parquet.0123.tmp").write_bytes(b"t")
    scandir = os.scandir

    def scan_then_remove(path: str) -> list[os.DirEntry[str]]:
        entries = list(scandir(path))
        (tmp_path / ".f.parquet.0123.tmp").unlink()  # the other task finished between scan and stat
        return entries

    monkeypatch.setattr(os, "scandir", scan_then_remove)
    assert [i.name for i in LocalStorage().list_dir(str(tmp_path))] == ["keep"]


def test_append_read_range_delete(store: tuple[Storage, str]) -> None:
    s, root = store
    path = f"{root}/log"
    assert s.append(path, b"abc") == 0
    if s.supports_append:
        assert s.append(path, b"defg") == 3
    else:
        with pytest.raises(NoAppendError, match="objects cannot be appended to"):
            s.append(path, b"defg")
        s.replace_atomic(path, b"abcdefg")
    assert s.size(path) == 7 and s.read_range(path, 2, 3) == b"cde"
    s.delete(path)
    s.delete(path)  # idempotent
    assert not s.exists(path)


def test_copy_atomic(store: tuple[Storage, str]) -> None:
    s, root = store
    s.create_atomic(f"{root}/a", b"data")
    s.copy_atomic(f"{root}/a", f"{root}/b")
    assert s.read_bytes(f"{root}/b") == b"data"
    with pytest.raises(FileExistsError):
        s.copy_atomic(f"{root}/a", f"{root}/b")


def test_local_symlinks_resolve(tmp_path: Path) -> None:
    s = LocalStorage()
    s.create_atomic(str(tmp_path / "target"), b"x")
    s.symlink("target", str(tmp_path / "link"))
    assert s.link_target(str(tmp_path / "link")) == str(tmp_path / "target")
    info = next(i for i in s.list_dir(str(tmp_path)) if i.name == "link")
    assert info.link_target == str(tmp_path / "target") and info.size == 1


def test_storage_for_picks_by_scheme(tmp_path: Path) -> None:
    assert isinstance(storage_for(str(tmp_path))[0], LocalStorage)
    assert storage_for(f"file://{tmp_path}")[1] == str(tmp_path)
    assert isinstance(storage_for("memory://x/y")[0], FsspecStorage)


def test_modified_time_moves_with_a_rewrite(store: tuple[Storage, str]) -> None:
    import time

    storage, root = store
    path = f"{root}/beat"
    before = time.time_ns() // 1_000_000
    storage.replace_atomic(path, b"")
    first = storage.modified_time_ms(path)
    assert before - 2000 <= first <= time.time_ns() // 1_000_000 + 2000
    time.sleep(0.02)
    storage.replace_atomic(path, b"")
    assert storage.modified_time_ms(path) >= first


def test_uris_round_trip(store: tuple[Storage, str]) -> None:
    """A storage's URI of a path and its options build an equal storage: what tasks and readers rebuild."""
    s, root = store
    s.create_atomic(f"{root}/f", b"x")
    again, path = storage_for(s.uri(f"{root}/f"), s.options)
    assert type(again) is type(s) and path == f"{root}/f" and again.read_bytes(path) == b"x"


RACER = """
import sys, time
from hudi_meta.storage import storage_for
from hudi_meta.timeline.timeline import TimelineWriter
uri, path, at, n = sys.argv[1:]
storage, base = storage_for(uri)
while time.time() < float(at):
    time.sleep(0.001)
try:
    TimelineWriter(storage, base + "/.hoodie").complete("commit", path, ("writer " + n).encode())
    print("won")
except Exception as e:
    print("error:", str(e).splitlines()[0])
"""


def test_processes_racing_to_complete_one_instant_on_s3_end_with_one_winner(s3_server: S3Server) -> None:
    """Four processes complete the same instant on S3 at once (what two compaction runs or writers do at their
    commit): the conditional write lets exactly one create `<instant>.commit`; the others get one clear error,
    and the file holds the winner's content, never an overwrite."""
    bucket = s3_server.bucket()
    at = str(time.time() + 3)
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, f"s3://{bucket}/t", "20260101000000000", at, str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **s3_server.env},
        )
        for n in range(4)
    ]
    outcomes = [r.communicate(timeout=120) for r in racers]
    said = [out.strip() for out, _ in outcomes]
    assert said.count("won") == 1, outcomes
    assert all(s.startswith("error: ") for s in said if s != "won"), said
    winner = said.index("won")
    storage, base = storage_for(f"s3://{bucket}/t", s3_server.options)
    assert storage.read_bytes(f"{base}/.hoodie/20260101000000000.commit") == f"writer {winner}".encode()


def test_s3_sees_what_another_client_wrote_after_it_listed(s3_server: S3Server) -> None:
    """s3fs caches listings: a storage that listed a folder still sees a file another client created after."""
    bucket = s3_server.bucket()
    mine, _ = storage_for(f"s3://{bucket}", s3_server.options)
    theirs, _ = storage_for(f"s3://{bucket}", s3_server.options | {"skip_instance_cache": True})
    mine.create_atomic(f"{bucket}/d/a", b"1")
    assert [i.name for i in mine.list_dir(f"{bucket}/d")] == ["a"]
    theirs.create_atomic(f"{bucket}/d/b", b"22")
    assert mine.exists(f"{bucket}/d/b") and mine.size(f"{bucket}/d/b") == 2
    assert [i.name for i in mine.list_dir(f"{bucket}/d")] == ["a", "b"]
