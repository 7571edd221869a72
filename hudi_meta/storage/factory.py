"""Pick a storage for a path or URI: plain paths and file:// are local, other schemes go to fsspec."""

from __future__ import annotations

import os
from urllib.parse import urlparse

import fsspec

from hudi_meta.storage.base import Storage
from hudi_meta.storage.fsspec_store import FsspecStorage
from hudi_meta.storage.local import LocalStorage


def storage_for(uri: str) -> tuple[Storage, str]:
    """Return (storage, path inside it) for `uri`; local paths come back absolute."""
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file") or len(parsed.scheme) == 1:  # len 1: a Windows drive
        path = parsed.path if parsed.scheme == "file" else uri
        return LocalStorage(), os.path.abspath(path).rstrip("/") or "/"
    fs, path = fsspec.core.url_to_fs(uri)
    return FsspecStorage(fs), str(path).rstrip("/")
