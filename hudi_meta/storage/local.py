"""Local file system storage: atomic creates via a temp file and a hard link, real symlinks."""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator
from typing import BinaryIO

import pyarrow as pa

from hudi_meta.storage.base import FileInfo, Storage


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class LocalStorage(Storage):
    supports_symlinks = True

    def exists(self, path: str) -> bool:
        return os.path.lexists(path)

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(path)

    def list_dir(self, path: str) -> list[FileInfo]:
        try:
            entries = list(os.scandir(path))
        except (FileNotFoundError, NotADirectoryError):
            return []
        infos = []
        for e in entries:
            # an entry gone since the scan (another task's temp file, say) is left out: a listing is not a
            # snapshot anyway, and the entry would have been missed had the scan come a moment later
            with contextlib.suppress(FileNotFoundError):
                infos.append(self._info(path, e))
        return sorted(infos, key=lambda i: i.path)

    @staticmethod
    def _info(directory: str, e: os.DirEntry[str]) -> FileInfo:
        if e.is_symlink():
            target = os.path.join(directory, os.readlink(e.path))
            size = os.stat(e.path).st_size if os.path.exists(e.path) else 0
            return FileInfo(e.path, size, False, os.path.normpath(target))
        st = e.stat()
        return FileInfo(e.path, st.st_size, e.is_dir(), None)

    def size(self, path: str) -> int:
        return os.stat(path).st_size

    def modified_time_ms(self, path: str) -> int:
        return os.stat(path).st_mtime_ns // 1_000_000

    def open_read(self, path: str) -> BinaryIO:
        return open(path, "rb")

    def open_arrow(self, path: str) -> pa.NativeFile:
        return pa.OSFile(path, "rb")

    def _write_temp(self, path: str, data: bytes) -> str:
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        tmp = os.path.join(directory, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        return tmp

    def create_atomic(self, path: str, data: bytes) -> None:
        tmp = self._write_temp(path, data)
        try:
            os.link(tmp, path)  # fails with FileExistsError instead of overwriting
        finally:
            os.unlink(tmp)
        _fsync_dir(os.path.dirname(path))

    @contextlib.contextmanager
    def create_atomic_stream(self, path: str) -> Iterator[BinaryIO]:
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        tmp = os.path.join(directory, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
        try:
            with open(tmp, "wb") as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            os.link(tmp, path)  # fails with FileExistsError instead of overwriting
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        _fsync_dir(directory)

    def replace_atomic(self, path: str, data: bytes) -> None:
        tmp = self._write_temp(path, data)
        os.replace(tmp, path)
        _fsync_dir(os.path.dirname(path))

    def append(self, path: str, data: bytes) -> int:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "ab") as f:
            offset = f.tell()
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        return offset

    def delete(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    def makedirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def symlink(self, target: str, link: str) -> None:
        os.symlink(target, link)

    def copy_atomic(self, source: str, dest: str) -> None:
        directory = os.path.dirname(dest)
        tmp = os.path.join(directory, f".{os.path.basename(dest)}.{uuid.uuid4().hex}.tmp")
        shutil.copyfile(source, tmp)
        try:
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            os.link(tmp, dest)
        finally:
            os.unlink(tmp)

    def link_target(self, path: str) -> str | None:
        if not os.path.islink(path):
            return None
        return os.path.normpath(os.path.join(os.path.dirname(path), os.readlink(path)))
