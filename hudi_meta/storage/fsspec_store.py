"""Storage over any fsspec file system (object stores such as S3 through s3fs, memory): no symlinks (links are
copies) and no appends (every file is written whole, once).

"Create if absent" is one request: `pipe_file(mode="create")`, which s3fs sends as a PUT with `If-None-Match: *`
(S3 conditional writes), so two writers racing for one name (an instant file, a base file, a link, a marker)
end with one winner and a `FileExistsError` for the other, never an overwrite; the memory file system does the
same in process. A file system that cannot create exclusively refuses rather than overwrite.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, BinaryIO, cast

import fsspec

from hudi_meta.errors import NoAppendError
from hudi_meta.storage.base import FileInfo, Storage


class FsspecStorage(Storage):
    supports_symlinks = False
    supports_append = False

    def __init__(self, fs: Any | None = None, protocol: str = "memory") -> None:
        self.fs = fs if fs is not None else fsspec.filesystem(protocol)

    def uri(self, path: str) -> str:
        return str(self.fs.unstrip_protocol(path))

    @property
    def options(self) -> dict[str, object]:
        return dict(getattr(self.fs, "storage_options", {}) or {})

    def _fresh(self, path: str) -> str:
        """Forget what the file system cached about `path` (s3fs answers from its listing cache otherwise, and
        another process may have written since)."""
        self.fs.invalidate_cache(path)
        return path

    def exists(self, path: str) -> bool:
        return bool(self.fs.exists(self._fresh(path)))

    def is_dir(self, path: str) -> bool:
        return bool(self.fs.isdir(self._fresh(path)))

    def list_dir(self, path: str) -> list[FileInfo]:
        try:  # never from s3fs's listing cache: another writer may have added files since
            entries = self.fs.ls(path, detail=True, refresh=True)
        except (FileNotFoundError, NotADirectoryError):
            return []
        infos = []
        for e in entries:
            name = str(e["name"])
            if name.rstrip("/") == path.rstrip("/"):
                continue
            infos.append(FileInfo(name, int(e.get("size") or 0), e["type"] == "directory"))
        return sorted(infos, key=lambda i: i.path)

    def size(self, path: str) -> int:
        return int(self.fs.size(self._fresh(path)))

    def modified_time_ms(self, path: str) -> int:
        t = self.fs.modified(self._fresh(path))  # a datetime; naive ones are UTC (s3fs, memory)
        if t.tzinfo is None:
            t = t.replace(tzinfo=dt.UTC)
        return int(t.timestamp() * 1000)

    def open_read(self, path: str) -> BinaryIO:
        return cast(BinaryIO, self.fs.open(path, "rb"))

    def read_bytes(self, path: str) -> bytes:
        return bytes(self.fs.cat_file(path))

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        return bytes(self.fs.cat_file(path, start=offset, end=offset + length))

    def create_atomic(self, path: str, data: bytes) -> None:
        self.fs.pipe_file(path, data, mode="create")  # FileExistsError when the name is taken

    def replace_atomic(self, path: str, data: bytes) -> None:
        self.fs.pipe_file(path, data)

    def append(self, path: str, data: bytes) -> int:
        if self.exists(path):
            raise NoAppendError(f"{self.uri(path)}: objects cannot be appended to (write a new file)")
        self.create_atomic(path, data)
        return 0

    def delete(self, path: str) -> None:
        if self.exists(path):
            self.fs.rm_file(path)

    def makedirs(self, path: str) -> None:
        self.fs.makedirs(path, exist_ok=True)

    def copy_atomic(self, source: str, dest: str) -> None:
        self.create_atomic(dest, self.fs.cat_file(source))

    def link_target(self, path: str) -> str | None:
        return None
