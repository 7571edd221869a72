"""Pick a storage for a path or URI: plain paths and file:// are local, other schemes go to fsspec.

Object-store credentials and endpoints come from the storage options given with the URI (the service's
configuration) and from the standard environment every S3 tool honours (`AWS_ENDPOINT_URL`,
`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`), which s3fs reads through botocore.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlparse

import fsspec

from hudi_meta.storage.base import Storage
from hudi_meta.storage.fsspec_store import FsspecStorage
from hudi_meta.storage.local import LocalStorage


def is_local(uri: str) -> bool:
    scheme = urlparse(uri).scheme
    return scheme in ("", "file") or len(scheme) == 1  # len 1: a Windows drive


def storage_for(uri: str, options: Mapping[str, object] | None = None) -> tuple[Storage, str]:
    """Return (storage, path inside it) for `uri`; local paths come back absolute."""
    if is_local(uri):
        parsed = urlparse(uri)
        path = parsed.path if parsed.scheme == "file" else uri
        return LocalStorage(), os.path.abspath(path).rstrip("/") or "/"
    fs, path = fsspec.core.url_to_fs(uri, **dict(options or {}))
    return FsspecStorage(fs), str(path).rstrip("/")


def normalize_uri(uri: str) -> str:
    """One spelling per table: local paths absolute without `file://`, others as fsspec names them (s3a:// and
    s3:// are one table), no trailing slash."""
    if is_local(uri):
        return storage_for(uri)[1]
    storage, path = storage_for(uri)
    return storage.uri(path).rstrip("/")
