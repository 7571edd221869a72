"""Local and fsspec storage honour the same contract: atomic create never overwrites."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from hudi_meta.storage import FsspecStorage, LocalStorage, Storage, storage_for


@pytest.fixture(params=["local", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Storage, str]:
    if request.param == "local":
        return LocalStorage(), str(tmp_path)
    return FsspecStorage(protocol="memory"), f"/t-{uuid.uuid4().hex}"


def test_create_atomic_refuses_overwrite(store: tuple[Storage, str]) -> None:
    s, root = store
    path = f"{root}/d/f"
    s.create_atomic(path, b"one")
    with pytest.raises(FileExistsError):
        s.create_atomic(path, b"two")
    assert s.read_bytes(path) == b"one"
    assert [i.name for i in s.list_dir(f"{root}/d")] == ["f"]


def test_append_read_range_delete(store: tuple[Storage, str]) -> None:
    s, root = store
    path = f"{root}/log"
    assert s.append(path, b"abc") == 0
    assert s.append(path, b"defg") == 3
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
