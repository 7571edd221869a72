"""Writer heartbeats as Java Hudi keeps them: `.hoodie/.heartbeat/<instant>`, rewritten by a background
thread every `hoodie.client.heartbeat.interval_in_ms` while the write runs, deleted when the write completes
or is rolled back. A heartbeat older than interval * `hoodie.client.heartbeat.tolerable.misses` is expired:
its writer is presumed dead and only then may another writer roll its instant back.

Java reads the file's modification time and writes empty files; we read the modification time too, and
each of our beats also writes its time (epoch milliseconds) as the content, which a store whose modification
times are coarse or missing can fall back on.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import posixpath
import threading
from dataclasses import dataclass

from hudi_meta.errors import HeartbeatExpiredError
from hudi_meta.format.config_keys import HEARTBEAT_INTERVAL_MS, HEARTBEAT_TOLERABLE_MISSES
from hudi_meta.storage.base import Storage
from hudi_meta.table.times import now_ms
from hudi_meta.timeline.instant import instant_epoch_ms

HEARTBEAT_DIR = ".heartbeat"


@dataclass(frozen=True)
class HeartbeatConfig:
    interval_ms: int = HEARTBEAT_INTERVAL_MS.default
    tolerable_misses: int = HEARTBEAT_TOLERABLE_MISSES.default

    def __post_init__(self) -> None:
        if self.interval_ms <= 0 or self.tolerable_misses <= 0:
            raise ValueError(f"{HEARTBEAT_INTERVAL_MS.name} and {HEARTBEAT_TOLERABLE_MISSES.name} must be positive")

    @classmethod
    def from_props(cls, props: dict[str, str]) -> HeartbeatConfig:
        return cls(HEARTBEAT_INTERVAL_MS.of(props), HEARTBEAT_TOLERABLE_MISSES.of(props))

    @property
    def expiry_ms(self) -> int:
        """How old a heartbeat may get before its writer counts as dead (Java: interval * misses)."""
        return self.interval_ms * self.tolerable_misses


def heartbeat_path(meta_path: str, instant: str) -> str:
    return posixpath.join(meta_path, HEARTBEAT_DIR, instant)


def started_ms(instant: str, zone: dt.tzinfo = dt.UTC) -> int | None:
    """When a write's instant time was taken, read in the timeline's `zone`, or None for text that is not one."""
    try:
        return instant_epoch_ms(instant, zone)
    except ValueError:
        return None


@dataclass(frozen=True)
class HeartbeatState:
    """What storage says about an instant's heartbeat: no file, a file without a readable time, or a time."""

    exists: bool
    last_beat_ms: int | None


def read_heartbeat(storage: Storage, meta_path: str, instant: str) -> HeartbeatState:
    path = heartbeat_path(meta_path, instant)
    try:
        content = storage.read_bytes(path)
    except FileNotFoundError:
        return HeartbeatState(False, None)
    text = content.decode("ascii", "replace").strip()
    if text.isdigit():
        return HeartbeatState(True, int(text))
    try:  # a Java heartbeat: an empty file whose modification time is the last beat
        return HeartbeatState(True, storage.modified_time_ms(path))
    except (OSError, NotImplementedError):
        return HeartbeatState(True, None)


def is_expired(
    storage: Storage,
    meta_path: str,
    instant: str,
    config: HeartbeatConfig,
    at_ms: int | None = None,
    zone: dt.tzinfo = dt.UTC,
) -> bool:
    """Whether the writer of pending `instant` is dead: its heartbeat is older than the expiry window, or it
    has no heartbeat file and the instant itself (read in the timeline's `zone`) is older than that window (it died
    before its first beat)."""
    at_ms = now_ms() if at_ms is None else at_ms
    state = read_heartbeat(storage, meta_path, instant)
    if state.exists:
        return state.last_beat_ms is not None and at_ms - state.last_beat_ms > config.expiry_ms
    started = started_ms(instant, zone)
    return started is None or at_ms - started > config.expiry_ms


def delete_heartbeat(storage: Storage, meta_path: str, instant: str) -> None:
    storage.delete(heartbeat_path(meta_path, instant))


class Heartbeat:
    """The heartbeat of one write: `start` beats once, then a daemon thread beats every interval until `stop`.

    The thread never raises (a failed beat is recorded): `check` tells the writer before it commits whether
    its heartbeat stayed fresh the whole time, as Java's `abortIfHeartbeatExpired` does.
    """

    def __init__(self, storage: Storage, meta_path: str, instant: str, config: HeartbeatConfig) -> None:
        self.storage = storage
        self.meta_path = meta_path
        self.instant = instant
        self.config = config
        self.last_beat_ms: int | None = None
        self.beats = 0
        self.stale_since_ms: int | None = None  # first time a beat came later than the expiry window
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def path(self) -> str:
        return heartbeat_path(self.meta_path, self.instant)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Beat once (so the heartbeat exists before the instant does), then keep beating in the background."""
        if self._thread is not None:
            return
        self.storage.makedirs(posixpath.join(self.meta_path, HEARTBEAT_DIR))
        self.beat()
        if self.error is not None:
            raise OSError(f"cannot write heartbeat {self.path}: {self.error}")
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{self.instant}", daemon=True)
        self._thread.start()

    def beat(self) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            t = now_ms()
            try:
                self.storage.replace_atomic(self.path, str(t).encode("ascii"))
            except OSError as e:
                self.error = str(e)
                return
            if self.last_beat_ms is not None and t - self.last_beat_ms > self.config.expiry_ms:
                self.stale_since_ms = self.stale_since_ms or self.last_beat_ms
            self.last_beat_ms = t
            self.beats += 1

    def _run(self) -> None:
        while not self._stop.wait(self.config.interval_ms / 1000):
            self.beat()

    def check(self, at_ms: int | None = None) -> None:
        """Raise unless every gap between beats, and the time since the last one, stayed within the window."""
        at_ms = now_ms() if at_ms is None else at_ms
        if self.last_beat_ms is None:
            raise HeartbeatExpiredError(f"instant {self.instant} never had a heartbeat")
        if self.stale_since_ms is not None or at_ms - self.last_beat_ms > self.config.expiry_ms:
            since = self.stale_since_ms or self.last_beat_ms
            raise HeartbeatExpiredError(
                f"heartbeat of instant {self.instant} expired (no beat for more than {self.config.expiry_ms} ms "
                f"after {since}); another writer may have rolled it back"
            )

    def stop(self, delete: bool = True) -> None:
        """Stop beating and, unless told not to (a test simulating a dead writer), delete the heartbeat file."""
        with self._lock:
            self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        if delete:
            with contextlib.suppress(OSError):
                delete_heartbeat(self.storage, self.meta_path, self.instant)
