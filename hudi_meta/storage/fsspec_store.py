"""Storage over any fsspec file system (memory, object stores). No symlinks: links become copies."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, BinaryIO, cast

import fsspec

from hudi_meta.storage.base import FileInfo, Storage


class FsspecStorage(Storage):
    supports_symlinks = False

    def __init__(self, fs: Any | None = None, protocol: str = "memory") -> None:
        self.fs = fs if fs is not None else fsspec.filesystem(protocol)

    def exists(self, path: str) -> bool:
        return bool(self.fs.exists(path))

    def is_dir(self, path: str) -> bool:
        return bool(self.fs.isdir(path))

    def list_dir(self, path: str) -> list[FileInfo]:
        if not self.fs.isdir(path):
            return []
        infos = []
        for e in self.fs.ls(path, detail=True):
            name = str(e["name"])
            if name.rstrip("/") == path.rstrip("/"):
                continue
            infos.append(FileInfo(name, int(e.get("size") or 0), e["type"] == "directory"))
        return sorted(infos, key=lambda i: i.path)

    def size(self, path: str) -> int:
        return int(self.fs.size(path))

    def modified_time_ms(self, path: str) -> int:
        t = self.fs.modified(path)  # a datetime; naive ones are UTC (s3fs, memory)
        if t.tzinfo is None:
            t = t.replace(tzinfo=dt.UTC)
        return int(t.timestamp() * 1000)

    def open_read(self, path: str) -> BinaryIO:
        return cast(BinaryIO, self.fs.open(path, "rb"))

    def create_atomic(self, path: str, data: bytes) -> None:
        if self.fs.exists(path):
            raise FileExistsError(path)
        tmp = f"{path}.{uuid.uuid4().hex}.tmp"
        self.fs.pipe_file(tmp, data)
        if self.fs.exists(path):
            self.fs.rm_file(tmp)
            raise FileExistsError(path)
        self.fs.mv(tmp, path)

    def replace_atomic(self, path: str, data: bytes) -> None:
        self.fs.pipe_file(path, data)

    def append(self, path: str, data: bytes) -> int:
        # Object stores cannot append: rewrite the whole object (a single atomic put).
        old = self.fs.cat_file(path) if self.fs.exists(path) else b""
        self.fs.pipe_file(path, old + data)
        return len(old)

    def delete(self, path: str) -> None:
        if self.fs.exists(path):
            self.fs.rm_file(path)

    def makedirs(self, path: str) -> None:
        self.fs.makedirs(path, exist_ok=True)

    def copy_atomic(self, source: str, dest: str) -> None:
        self.create_atomic(dest, self.fs.cat_file(source))

    def link_target(self, path: str) -> str | None:
        return None
