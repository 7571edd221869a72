"""The storage interface every layer above uses; paths are absolute strings (no scheme for local)."""

from __future__ import annotations

import io
import posixpath
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

import pyarrow as pa


@dataclass(frozen=True)
class FileInfo:
    """One directory entry. `link_target` is set for symlinks (the path they point at)."""

    path: str
    size: int
    is_dir: bool
    link_target: str | None = None

    @property
    def name(self) -> str:
        return posixpath.basename(self.path.rstrip("/"))


class Storage(ABC):
    """Minimal file operations. Completed files are created atomically and never overwritten.

    Paths are paths inside the storage; `uri(path)` gives the full URI (scheme included) that `storage_for`
    turns back into an equal storage, and `options` the fsspec storage options it needs for that (credentials,
    endpoint): writers, tasks and readers rebuild the storage of a table from those two, never from a bare path.
    """

    supports_symlinks: bool = False
    supports_append: bool = True  # object stores: False (every write creates its files whole)

    def uri(self, path: str) -> str:
        """The full URI of `path` (local disk: the path itself)."""
        return path

    @property
    def options(self) -> dict[str, object]:
        """What `storage_for` needs besides the URI to build an equal storage (none for local disk)."""
        return {}

    @abstractmethod
    def exists(self, path: str) -> bool: ...

    @abstractmethod
    def is_dir(self, path: str) -> bool: ...

    @abstractmethod
    def list_dir(self, path: str) -> list[FileInfo]:
        """Entries directly under `path`; a missing directory lists as empty."""

    @abstractmethod
    def size(self, path: str) -> int: ...

    @abstractmethod
    def modified_time_ms(self, path: str) -> int:
        """When `path` was last written, in epoch ms (Java reads heartbeats this way)."""

    @abstractmethod
    def open_read(self, path: str) -> BinaryIO: ...

    def open_arrow(self, path: str) -> pa.NativeFile:
        """A file for pyarrow readers whose buffers Arrow owns. pyarrow's IO threads must not hold buffers of a
        Python file object: one released after interpreter shutdown began aborts the process (issue 9)."""
        sink = pa.BufferOutputStream()
        sink.write(self.read_bytes(path))
        return pa.BufferReader(sink.getvalue())

    def read_bytes(self, path: str) -> bytes:
        with self.open_read(path) as f:
            return f.read()

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        with self.open_read(path) as f:
            f.seek(offset)
            return f.read(length)

    @abstractmethod
    def create_atomic(self, path: str, data: bytes) -> None:
        """Create `path` with `data` all at once; raise FileExistsError if it exists."""

    @contextmanager
    def create_atomic_stream(self, path: str) -> Iterator[BinaryIO]:
        """Create `path` from what is written to the yielded file, all at once when the block ends without an
        error (FileExistsError if it exists then); nothing is created if it raises. Here: in memory, then
        `create_atomic`; a store that can write a file in pieces keeps memory flat."""
        buffer = io.BytesIO()
        yield buffer
        self.create_atomic(path, buffer.getvalue())

    @abstractmethod
    def replace_atomic(self, path: str, data: bytes) -> None:
        """Write `path` all at once, replacing any previous content (for mutable config files)."""

    @abstractmethod
    def append(self, path: str, data: bytes) -> int:
        """Append `data` (creating the file if needed), flush it durably; return the offset written at. Where
        `supports_append` is False only a new file can be written this way (an existing one is an error)."""

    @abstractmethod
    def delete(self, path: str) -> None:
        """Delete a file; a missing file is not an error (deletes are idempotent)."""

    @abstractmethod
    def makedirs(self, path: str) -> None: ...

    def symlink(self, target: str, link: str) -> None:
        """Create `link` pointing at `target`; only where `supports_symlinks`."""
        raise NotImplementedError(f"{type(self).__name__} has no symlinks")

    @abstractmethod
    def copy_atomic(self, source: str, dest: str) -> None:
        """Copy `source` to a new file `dest` atomically; raise FileExistsError if `dest` exists."""

    @abstractmethod
    def link_target(self, path: str) -> str | None:
        """The path a symlink points at (absolute), or None for a regular file."""
