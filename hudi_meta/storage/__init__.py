"""Storage: the one seam between hudi-meta and a file system (local disk or any fsspec store)."""

from hudi_meta.storage.base import FileInfo, Storage
from hudi_meta.storage.factory import storage_for
from hudi_meta.storage.fsspec_store import FsspecStorage
from hudi_meta.storage.local import LocalStorage

__all__ = ["FileInfo", "FsspecStorage", "LocalStorage", "Storage", "storage_for"]
