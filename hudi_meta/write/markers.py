"""Write markers: `.hoodie/.temp/<instant>/<partition>/<file>.marker.<TYPE>`, created before a write
touches a data file, so a failed write can be rolled back without listing the table.

We write direct markers (one empty file each, Java's `DirectWriteMarkers`). Java's default is timeline-server
markers (`hoodie.write.markers.type=TIMELINE_SERVER_BASED`): the same names, one per line, in files
`.hoodie/.temp/<instant>/MARKERS<n>` (and `MARKERS.type` naming the kind; `MarkerUtils`). Both are read, so a
failed Java write is rolled back from its markers too.
"""

from __future__ import annotations

import contextlib
import posixpath
import re
from dataclasses import dataclass

from hudi_meta.storage.base import Storage

CREATE = "CREATE"  # a new base file
APPEND = "APPEND"  # blocks appended to a log file
_SUFFIX = ".marker."
_MARKERS_FILE = re.compile(r"MARKERS\d+")  # timeline-server markers; `MARKERS.type` names their kind
MARKER_TYPE_FILE = "MARKERS.type"


@dataclass(frozen=True)
class Marker:
    partition: str
    file_name: str
    kind: str

    @property
    def path(self) -> str:
        """The marked data file, relative to the base path."""
        return f"{self.partition}/{self.file_name}" if self.partition else self.file_name


def markers_dir(meta_path: str, instant: str) -> str:
    return posixpath.join(meta_path, ".temp", instant)


def create_marker(storage: Storage, meta_path: str, instant: str, partition: str, file_name: str, kind: str) -> None:
    directory = (
        posixpath.join(markers_dir(meta_path, instant), partition) if partition else markers_dir(meta_path, instant)
    )
    with contextlib.suppress(FileExistsError):  # one marker per file and kind, whoever writes it first
        storage.create_atomic(posixpath.join(directory, f"{file_name}{_SUFFIX}{kind}"), b"")


def delete_marker(storage: Storage, meta_path: str, instant: str, partition: str, file_name: str, kind: str) -> None:
    """Withdraw a marker for a file this write did not end up writing (its name was taken by another writer)."""
    directory = (
        posixpath.join(markers_dir(meta_path, instant), partition) if partition else markers_dir(meta_path, instant)
    )
    storage.delete(posixpath.join(directory, f"{file_name}{_SUFFIX}{kind}"))


def list_markers(storage: Storage, meta_path: str, instant: str) -> list[Marker]:
    """The markers of `instant`, direct and timeline-server ones alike."""
    root = markers_dir(meta_path, instant)
    found: set[Marker] = set()

    def walk(path: str, partition: str) -> None:
        for info in storage.list_dir(path):
            if info.is_dir:
                walk(info.path, f"{partition}/{info.name}" if partition else info.name)
            elif not partition and _MARKERS_FILE.fullmatch(info.name):
                found.update(_parse(line) for line in storage.read_bytes(info.path).decode().splitlines() if line)
            elif _SUFFIX in info.name:
                name, _, kind = info.name.rpartition(_SUFFIX)
                found.add(Marker(partition, name, kind))

    walk(root, "")
    return sorted(found, key=lambda m: (m.partition, m.file_name, m.kind))


def _parse(line: str) -> Marker:
    """`partition/file.marker.TYPE`, relative to the marker folder (a line of a `MARKERS<n>` file)."""
    path, _, kind = line.strip().rpartition(_SUFFIX)
    partition, _, name = path.rpartition("/")
    return Marker(partition, name, kind)


def delete_markers(storage: Storage, meta_path: str, instant: str) -> None:
    root = markers_dir(meta_path, instant)
    for m in list_markers(storage, meta_path, instant):
        directory = posixpath.join(root, m.partition) if m.partition else root
        with contextlib.suppress(FileNotFoundError):  # a timeline-server marker has no file of its own
            storage.delete(posixpath.join(directory, f"{m.file_name}{_SUFFIX}{m.kind}"))
    for info in storage.list_dir(root):
        if not info.is_dir and (_MARKERS_FILE.fullmatch(info.name) or info.name == MARKER_TYPE_FILE):
            storage.delete(info.path)
