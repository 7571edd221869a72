"""The table lock (`hudi_meta.write.lock`): Java's file-system lock file, re-entrant per thread, taken over once it
expires or once its holder on this host is gone. Rules from the module docstring: a held lock is never taken from
a live holder; a holder killed inside its section does not stop the table."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hudi_meta.errors import TableLockTimeoutError
from hudi_meta.format.config_keys import LOCK_WAIT_MS
from hudi_meta.storage import storage_for
from hudi_meta.storage.base import Storage
from hudi_meta.write.lock import file_lock, table_lock

SHORT_WAIT = {LOCK_WAIT_MS.name: "300"}


def _owner(host: str, pid: int) -> str:
    return f"commit 1 by {host}:{pid} at 2026-11-28T00:00:00+00:00 0000"


def test_reentered_by_its_holder_and_released_once(tmp_path: Path) -> None:
    storage, meta = storage_for(str(tmp_path))
    lock = tmp_path / "lock"
    with table_lock(storage, meta, {}, "outer"):
        with table_lock(storage, meta, SHORT_WAIT, "inner"):
            assert lock.exists()
        assert lock.exists(), "the inner section does not release the outer one's lock"
    assert not lock.exists()


def test_another_thread_waits(tmp_path: Path) -> None:
    storage, meta = storage_for(str(tmp_path))
    errors: list[BaseException] = []

    def other() -> None:
        try:
            with table_lock(storage, meta, SHORT_WAIT, "other"):
                pass
        except TableLockTimeoutError as e:
            errors.append(e)

    with table_lock(storage, meta, {}, "holder"):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert len(errors) == 1 and "held by another process (holder by" in str(errors[0])


def test_a_dead_holder_on_this_host_is_taken_over_at_once(tmp_path: Path) -> None:
    storage, meta = storage_for(str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (tmp_path / "lock").write_text(_owner(socket.gethostname(), int(gone.stdout)))
    with table_lock(storage, meta, SHORT_WAIT, "after a kill"):
        assert "after a kill by" in (tmp_path / "lock").read_text()


@pytest.mark.parametrize("where", ["live process here", "other host"])
def test_a_live_or_unknown_holder_keeps_it(tmp_path: Path, where: str) -> None:
    storage, meta = storage_for(str(tmp_path))
    host = socket.gethostname() if where == "live process here" else socket.gethostname() + "-elsewhere"
    holder = _owner(host, os.getpid() if where == "live process here" else 1)
    (tmp_path / "lock").write_text(holder)
    with (
        pytest.raises(TableLockTimeoutError, match="held by another process"),
        table_lock(storage, meta, SHORT_WAIT, "x"),
    ):
        pass
    assert (tmp_path / "lock").read_text() == holder


def test_a_renewed_lock_is_not_taken_over_as_expired_and_an_abandoned_one_is(tmp_path: Path) -> None:
    """Rule (`file_lock`, `renew`): a long section keeps its lock fresh, so another process does not take it over
    as expired while the holder lives; a lock nobody renews is taken over once older than the expiry."""
    storage, _ = storage_for(str(tmp_path))
    path = str(tmp_path / "run.lock")
    with file_lock(storage, path, "long run", expire_ms=300, wait_ms=0, renew=True):
        time.sleep(0.8)  # more than twice the expiry
        with pytest.raises(TableLockTimeoutError, match="long run by"):
            _in_another_thread(lambda: _take(storage, path))
    (tmp_path / "run.lock").write_text(_owner("elsewhere", 1))  # a holder on another host that stopped renewing
    time.sleep(0.4)
    _take(storage, path)


def _take(storage: Storage, path: str) -> None:
    with file_lock(storage, path, "second", expire_ms=300, wait_ms=0):
        pass


def _in_another_thread(call: Callable[[], None]) -> None:
    """Run `call` in a thread of its own (the lock is re-entrant per thread) and raise what it raised."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            call()
        except BaseException as e:  # handed back to the caller
            errors.append(e)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
