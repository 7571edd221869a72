"""The table lock: the short critical sections in which a writer takes its instant time and requests it, a writer
checks for conflicts and commits, and a scheduler checks for pending writes, takes its instant time and writes its
plan, never interleave (Java's optimistic concurrency control takes its lock around the same steps;
docs/concurrency.md section 2.1).

It is Java's `FileSystemBasedLockProvider` lock, so Java writers configured with that provider take turns with us:
the file `<base>/.hoodie/lock` (or `<hoodie.write.lock.filesystem.path>/lock`), created atomically (an object
store's conditional write) by the holder and deleted to release it. A lock whose file was last written longer ago
than `hoodie.write.lock.filesystem.expire` minutes belongs to a holder that died and is taken over. Java's default
is 0 (never expires); ours is 1 minute when the table does not set it (what Java's own embedded lock config uses),
so that a process killed inside its critical section does not stop the table for good. Acquiring waits up to
`hoodie.write.lock.wait_time_ms` (60 s, Java's default). A thread that holds the lock and asks for it again (a
compaction taking a plan back inside its commit section, say) goes on under the lock it holds.

A lock whose holder named this host and a process that no longer runs (killed inside its section) is taken over at
once rather than after the expiry: the holder is certainly gone (a reused process id only makes us wait).

Taking over an expired lock deletes it and creates it anew: two processes that do this at the same moment may
both believe they hold it (Java has the same window); it only opens after a holder died inside its section.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import posixpath
import re
import socket
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from hudi_meta.errors import TableLockTimeoutError
from hudi_meta.format.config_keys import LOCK_EXPIRE_MINUTES, LOCK_FILESYSTEM_PATH, LOCK_WAIT_MS, ConfigKey
from hudi_meta.storage.base import Storage
from hudi_meta.table.times import now_ms

LOCK_FILE = "lock"

log = logging.getLogger(__name__)
_held = threading.local()  # .paths: the lock files this thread holds


def lock_path(meta_path: str, props: Mapping[str, str]) -> str:
    directory = LOCK_FILESYSTEM_PATH.of(props) or meta_path
    return posixpath.join(directory, LOCK_FILE)


def _number(props: Mapping[str, str], key: ConfigKey[int]) -> int:
    """The key's whole number, else its default (a text that is not one too)."""
    text = (key.text(props) or "").strip()
    return int(text) if text.isascii() and text.isdigit() else key.default


@contextmanager
def table_lock(storage: Storage, meta_path: str, props: Mapping[str, str], what: str) -> Iterator[None]:
    """Hold the table lock for `what` (named in the lock file and in the error when it cannot be had)."""
    expire_ms = _number(props, LOCK_EXPIRE_MINUTES) * 60_000
    with file_lock(storage, lock_path(meta_path, props), what, expire_ms, _number(props, LOCK_WAIT_MS)):
        yield


@contextmanager
def run_lock(storage: Storage, path: str, props: Mapping[str, str], what: str) -> Iterator[None]:
    """Hold lock file `path` for a long section (a compaction run) or refuse at once: it expires as the table lock
    does (`hoodie.write.lock.filesystem.expire`), so a background thread rewrites it every third of that while the
    section runs; a holder killed on another host stops renewing it, and the lock is taken over after the expiry."""
    expire_ms = _number(props, LOCK_EXPIRE_MINUTES) * 60_000
    with file_lock(storage, path, what, expire_ms, wait_ms=0, renew=bool(expire_ms)):
        yield


@contextmanager
def file_lock(
    storage: Storage, path: str, what: str, expire_ms: int, wait_ms: int, renew: bool = False
) -> Iterator[None]:
    """Hold the lock file `path` for `what`, by the rules of the table lock (module docstring); `expire_ms` 0: it
    never expires (only a holder known gone is taken over), `wait_ms` 0: refuse at once when it is held; `renew`:
    rewrite it every third of `expire_ms` while held."""
    held: set[str] = _held.__dict__.setdefault("paths", set())
    key = storage.uri(path)
    if key in held:  # re-entered by the thread that holds it
        yield
        return
    deadline = time.monotonic() + wait_ms / 1000
    owner = f"{what} by {socket.gethostname()}:{os.getpid()} at {dt.datetime.now(dt.UTC).isoformat()} {uuid.uuid4()}"
    pause = 0.005
    while True:
        try:
            storage.create_atomic(path, owner.encode())
            break
        except FileExistsError:
            pass
        if expire_ms and _expired(storage, path, expire_ms):
            log.warning("taking over the expired lock %s", path)
            storage.delete(path)
            continue
        holder = _holder(storage, path)
        if _holder_is_gone(holder) and _holder(storage, path) == holder:  # read again: narrows the takeover race
            log.warning("taking over the lock %s: its holder on this host is gone", path)
            storage.delete(path)
            continue
        if time.monotonic() >= deadline:
            raise TableLockTimeoutError(
                f"{what}: the lock {path} is held by another process ({_holder(storage, path)}); try again, "
                f"or delete the file if its holder is gone"
            ) from None
        time.sleep(pause)
        pause = min(pause * 2, 0.2)
    held.add(key)
    stop = threading.Event()
    renewer = threading.Thread(
        target=_renew, args=(storage, path, owner, expire_ms / 3000, stop), name=f"lock-{what}", daemon=True
    )
    if renew:
        renewer.start()
    try:
        yield
    finally:
        stop.set()
        if renew:
            renewer.join()  # a renewal in flight must not write the lock again after it is deleted below
        held.discard(key)
        if _holder(storage, path) == owner:  # never delete a lock another process took over
            storage.delete(path)


def _renew(storage: Storage, path: str, owner: str, every_s: float, stop: threading.Event) -> None:
    """Rewrite the lock (its modification time is its age) until `stop`, while it is still ours."""
    while not stop.wait(every_s):
        try:
            if _holder(storage, path) == owner:
                storage.replace_atomic(path, owner.encode())
        except OSError as e:  # the next renewal tries again; an expired lock is taken over by design
            log.warning("cannot renew lock %s: %s", path, e)


def _expired(storage: Storage, path: str, expire_ms: int) -> bool:
    try:
        written = storage.modified_time_ms(path)
    except OSError:
        return False  # released meanwhile: the next create takes it
    return now_ms() - written > expire_ms


def _holder_is_gone(holder: str) -> bool:
    """Whether the lock's owner line names a process of this host that is not running."""
    m = re.search(r" by (\S+):(\d+) at ", holder)
    if m is None or m.group(1) != socket.gethostname():
        return False
    try:
        os.kill(int(m.group(2)), 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, owned by another user
        return False
    return False


def _holder(storage: Storage, path: str) -> str:
    try:
        return storage.read_bytes(path).decode("utf-8", "replace")
    except OSError:
        return ""
