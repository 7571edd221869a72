"""Concurrent writers with heartbeats (Java's LAZY failed-writes cleaning): a live writer is never rolled
back, a dead one (kill -9, heartbeat expired) is rolled back by the next write, and a writer whose instant
is gone or whose heartbeat went stale refuses to commit.

Writers run as real subprocesses: this module is also the writer program (`python -m tests.write.test_heartbeat
<mode> <table> <signal dir>`). Expected rows come from a simple model: the rows before plus each committed
write's rows (a later ordering value wins per key), and hudi-rs must read the same.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_meta.errors import HudiMetaError, LiveWriterError
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import now_ms
from hudi_meta.timeline.instant import Action
from hudi_meta.timeline.timeline import TimelineWriter, new_instant_time
from hudi_meta.write.failed_writes import rollback_failed_write, rollback_failed_writes
from hudi_meta.write.heartbeat import (
    HEARTBEAT_DIR,
    HeartbeatConfig,
    is_expired,
    read_heartbeat,
)
from hudi_meta.write.writer import WriteClient, create_table
from tests.write.test_writer import EXPIRY_S, HEARTBEAT_PROPS, batch, hudi_rs_rows, rows, write_demo

REPO = Path(__file__).resolve().parents[2]
SLOW_IDS = [100, 101]
FAST_IDS = [200]


def eu_file_id(table: HudiTable) -> str:
    return next(fg.file_id for fg in table.file_groups() if fg.partition == "region=eu")


def model(before: list[dict[str, object]], *writes: pa.Table) -> list[dict[str, object]]:
    """The snapshot after `writes` committed on top of `before`: upserts by id, the larger `ts` wins."""
    by_id = {r["id"]: r for r in before}
    for data in writes:
        for r in rows(data):
            old = by_id.get(r["id"])
            if old is None or int(str(r["ts"])) >= int(str(old["ts"])):
                by_id[r["id"]] = r
    return [by_id[k] for k in sorted(by_id, key=str)]


def heartbeat_file(path: Path, instant: str) -> Path:
    return path / ".hoodie" / HEARTBEAT_DIR / instant


# ---- the writer program ------------------------------------------------------------------------------------


def _writer_main(mode: str, table_path: str, signals: str) -> int:
    """Begin a deltacommit into the eu file group, write one block, say `ready`, then (slow) wait for `go` and
    commit, or (die) wait to be killed."""
    table = HudiTable.open(table_path)
    with WriteClient(table) as w:
        w.begin()
        w.append_log("region=eu", eu_file_id(table), batch("eu", SLOW_IDS, 9_000))
        Path(signals, "instant").write_text(w.instant)
        Path(signals, "ready").touch()
        deadline = time.monotonic() + 120
        while mode == "die" or not Path(signals, "go").exists():
            if time.monotonic() > deadline:
                return 2
            time.sleep(0.01)
        try:
            w.commit()
        except HudiMetaError as e:
            print(e, file=sys.stderr)
            return 3
    return 0


@contextmanager
def writer_process(mode: str, path: Path, signals: Path) -> Iterator[subprocess.Popen[bytes]]:
    signals.mkdir()
    cmd = [sys.executable, "-m", "tests.write.test_heartbeat", mode, str(path), str(signals)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(cmd, cwd=REPO, env=env, stderr=subprocess.PIPE) as proc:
        try:
            deadline = time.monotonic() + 60
            while not (signals / "ready").exists():
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "the writer never got ready"
                time.sleep(0.01)
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


# ---- two processes -----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_slow_writer_survives_a_concurrent_writer(tmp_path: Path) -> None:
    path = tmp_path / "demo"
    before = rows(write_demo(path).read("snapshot"))
    with writer_process("slow", path, tmp_path / "signals") as proc:
        slow_instant = (tmp_path / "signals" / "instant").read_text()
        # writer 2 does what every write starts with, then writes and commits while writer 1 holds its instant
        table = HudiTable.open(str(path))
        assert rollback_failed_writes(table) == []
        time.sleep(EXPIRY_S * 3)  # several expiry windows: writer 1's heartbeat thread keeps it live
        assert rollback_failed_writes(HudiTable.open(str(path))) == []
        w2 = WriteClient(HudiTable.open(str(path)))
        w2.begin()
        w2.append_log("region=eu", eu_file_id(table), batch("eu", FAST_IDS, 9_500))
        w2.commit()
        (tmp_path / "signals" / "go").touch()
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    table = HudiTable.open(str(path))
    assert table.timeline.is_completed(slow_instant)
    assert not any(i.action == Action.ROLLBACK for i in table.timeline.instants)
    expected = model(before, batch("eu", SLOW_IDS, 9_000), batch("eu", FAST_IDS, 9_500))
    assert rows(table.read("snapshot")) == expected
    assert hudi_rs_rows(path, "snapshot") == expected
    assert not (path / ".hoodie" / HEARTBEAT_DIR / slow_instant).exists()


@pytest.mark.slow
def test_killed_writer_is_rolled_back_by_the_next_write(tmp_path: Path) -> None:
    path = tmp_path / "demo"
    before = rows(write_demo(path).read("snapshot"))
    with writer_process("die", path, tmp_path / "signals") as proc:
        dead = (tmp_path / "signals" / "instant").read_text()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert heartbeat_file(path, dead).exists()  # kill -9: nobody deleted it
    assert rows(HudiTable.open(str(path)).read("snapshot")) == before
    time.sleep(EXPIRY_S * 2)  # the dead writer's heartbeat is now older than interval * tolerable misses

    table = HudiTable.open(str(path))
    reports = rollback_failed_writes(table)
    assert [r.target for r in reports] == [dead]
    w = WriteClient(HudiTable.open(str(path)))
    w.begin()
    w.append_log("region=eu", eu_file_id(table), batch("eu", FAST_IDS, 9_500))
    w.commit()
    table = HudiTable.open(str(path))
    assert table.timeline.instant(dead) is None
    assert not heartbeat_file(path, dead).exists()
    expected = model(before, batch("eu", FAST_IDS, 9_500))
    assert rows(table.read("snapshot")) == expected
    assert hudi_rs_rows(path, "snapshot") == expected


# ---- one process -------------------------------------------------------------------------------------------


def test_stalled_writer_that_was_rolled_back_refuses_to_commit(tmp_path: Path) -> None:
    """The defect as filed: writer 1 stalls, writer 2 rolls it back, writer 1 must not complete its instant."""
    path = tmp_path / "demo"
    before = rows(write_demo(path).read("snapshot"))
    w1 = WriteClient(HudiTable.open(str(path)))
    w1.begin()
    w1.append_log("region=eu", eu_file_id(w1.table), batch("eu", SLOW_IDS, 9_000))
    assert w1.heartbeat is not None
    w1.heartbeat.stop(delete=False)  # a stall: no beats for longer than the expiry window
    time.sleep(EXPIRY_S * 2)
    assert [r.target for r in rollback_failed_writes(HudiTable.open(str(path)))] == [w1.instant]
    with pytest.raises(HudiMetaError, match=f"refusing to commit {w1.instant}"):
        w1.commit()
    table = HudiTable.open(str(path))
    assert table.timeline.instant(w1.instant) is None
    assert rows(table.read("snapshot")) == before == hudi_rs_rows(path, "snapshot")


@pytest.mark.parametrize("state", ["inflight", "requested"])
def test_commit_refuses_when_its_instant_file_is_gone(tmp_path: Path, state: str) -> None:
    path = tmp_path / "demo"
    before = rows(write_demo(path).read("snapshot"))
    with WriteClient(HudiTable.open(str(path))) as w:
        w.begin()
        w.append_log("region=eu", eu_file_id(w.table), batch("eu", SLOW_IDS, 9_000))
        (path / ".hoodie" / f"{w.instant}.deltacommit.{state}").unlink()  # removed by someone else
        with pytest.raises(HudiMetaError, match=rf"\.deltacommit\.{state} is gone"):
            w.commit()
    assert not (path / ".hoodie" / f"{w.instant}.deltacommit").exists()
    assert rows(HudiTable.open(str(path)).read("snapshot")) == before


def test_heartbeat_file_lifecycle(tmp_path: Path) -> None:
    path = tmp_path / "demo"
    write_demo(path)
    w = WriteClient(HudiTable.open(str(path)))
    w.begin()
    storage, meta = w.table.storage, w.table.meta_path
    first = read_heartbeat(storage, meta, w.instant)
    assert first.exists and first.last_beat_ms is not None
    time.sleep(EXPIRY_S * 2)  # two expiry windows = four intervals: the thread beat meanwhile
    later = read_heartbeat(storage, meta, w.instant).last_beat_ms
    assert later is not None and later > first.last_beat_ms
    w.append_log("region=eu", eu_file_id(w.table), batch("eu", SLOW_IDS, 9_000))
    w.commit()
    assert not heartbeat_file(path, w.instant).exists()
    assert w.heartbeat is not None and not w.heartbeat.running


def test_failed_write_in_a_context_manager_stops_beating_and_expires(tmp_path: Path) -> None:
    path = tmp_path / "demo"
    before = rows(write_demo(path).read("snapshot"))
    with pytest.raises(KeyError), WriteClient(HudiTable.open(str(path))) as w:
        w.begin()
        w.append_log("region=eu", eu_file_id(w.table), batch("eu", SLOW_IDS, 9_000))
        w.append_log("region=nowhere", "no-such-file-group", batch("eu", [1], 9_000))
    assert w.heartbeat is not None and not w.heartbeat.running
    assert heartbeat_file(path, w.instant).exists()  # left to expire, like a dead writer's
    time.sleep(EXPIRY_S * 2)
    assert [r.target for r in rollback_failed_writes(HudiTable.open(str(path)))] == [w.instant]
    assert rows(HudiTable.open(str(path)).read("snapshot")) == before


def test_explicit_rollback_of_a_live_writer_needs_force(tmp_path: Path) -> None:
    path = tmp_path / "demo"
    before = rows(write_demo(path).read("snapshot"))
    with WriteClient(HudiTable.open(str(path))) as w:
        w.begin()
        w.append_log("region=eu", eu_file_id(w.table), batch("eu", SLOW_IDS, 9_000))
        with pytest.raises(LiveWriterError):
            rollback_failed_write(HudiTable.open(str(path)), w.instant, dry_run=False)
        report = rollback_failed_write(HudiTable.open(str(path)), w.instant, force=True, dry_run=False)
        assert report.target == w.instant
        with pytest.raises(HudiMetaError, match="is gone"):
            w.commit()
    assert rows(HudiTable.open(str(path)).read("snapshot")) == before


def test_pending_write_without_heartbeat_file_expires_with_its_instant_time(tmp_path: Path) -> None:
    """A writer that died before its first beat: rolled back once its instant is older than the window."""
    path = tmp_path / "demo"
    table = write_demo(path)
    config = HeartbeatConfig.from_props(dict(table.config.props))
    assert config.expiry_ms == 200
    writer = TimelineWriter(table.storage, table.timeline_path)
    young = new_instant_time(i.requested_time for i in table.timeline.instants)
    now = time.time() * 1000
    writer.request(Action.DELTA_COMMIT, young)  # requested and inflight, but no heartbeat file
    writer.start(Action.DELTA_COMMIT, young)
    assert not is_expired(table.storage, table.meta_path, young, config, at_ms=int(now))
    assert is_expired(table.storage, table.meta_path, young, config, at_ms=int(now) + 10_000)
    assert rollback_failed_writes(HudiTable.open(str(path)), HeartbeatConfig(60_000, 2)) == []
    time.sleep(EXPIRY_S * 2)
    assert [r.target for r in rollback_failed_writes(HudiTable.open(str(path)))] == [young]


def test_two_writers_planning_the_same_new_log_file(tmp_path: Path) -> None:
    """Both writers plan the same new log file; the one that writes second takes the next free version."""
    path = tmp_path / "demo"
    before = rows(write_demo(path).read("snapshot"))
    w1 = WriteClient(HudiTable.open(str(path)))
    w2 = WriteClient(HudiTable.open(str(path)), instant=str(int(w1.instant) + 1))
    fid = eu_file_id(w1.table)
    planned = w1.targets()[("region=eu", fid)].log_file
    assert w2.targets()[("region=eu", fid)].log_file == planned
    w1.begin()
    w2.begin()
    s2 = w2.append_log("region=eu", fid, batch("eu", FAST_IDS, 9_500))
    w2.commit()
    s1 = w1.append_log("region=eu", fid, batch("eu", SLOW_IDS, 9_000))
    w1.commit()
    assert s2.path == f"region=eu/{planned}"
    assert s1.path != s2.path and s2.log_version is not None and s1.log_version == s2.log_version + 1
    for stat, instant in ((s1, w1.instant), (s2, w2.instant)):
        blocks = read_blocks(w1.table.storage, str(path / stat.path))
        assert [b.instant_time for b in blocks] == [instant]
    expected = model(before, batch("eu", FAST_IDS, 9_500), batch("eu", SLOW_IDS, 9_000))
    assert rows(HudiTable.open(str(path)).read("snapshot")) == expected
    assert hudi_rs_rows(path, "snapshot") == expected


if __name__ == "__main__":
    sys.exit(_writer_main(*sys.argv[1:4]))


def test_a_java_heartbeat_file_expires_by_its_modification_time(tmp_path: Path) -> None:
    """Java writes empty heartbeat files and reads their modification time: so do we."""
    path = tmp_path / "demo"
    table = write_demo(path)
    config = HeartbeatConfig.from_props(dict(table.config.props))
    writer = TimelineWriter(table.storage, table.timeline_path)
    pending = new_instant_time(i.requested_time for i in table.timeline.instants)
    writer.request(Action.DELTA_COMMIT, pending)
    writer.start(Action.DELTA_COMMIT, pending)
    beat = path / ".hoodie" / ".heartbeat" / pending
    beat.parent.mkdir(exist_ok=True)
    beat.write_bytes(b"")  # as Java's HoodieHeartbeatClient leaves it
    now_s = time.time()
    assert not is_expired(table.storage, table.meta_path, pending, config, at_ms=int(now_s * 1000))
    assert rollback_failed_writes(HudiTable.open(str(path))) == []  # a live Java writer is left alone
    os.utime(beat, (now_s - 60, now_s - 60))  # its writer stopped beating a minute ago
    assert is_expired(table.storage, table.meta_path, pending, config, at_ms=int(now_s * 1000))
    assert [r.target for r in rollback_failed_writes(HudiTable.open(str(path)))] == [pending]


@pytest.mark.usefixtures("los_angeles")
def test_a_writer_without_a_heartbeat_yet_is_judged_by_its_instant_in_the_timeline_zone(tmp_path: Path) -> None:
    """Rule (Java's heartbeat client): a pending write with no heartbeat file is dead once its instant is older than
    the expiry window. On a LOCAL table the instant is local time: read as UTC, a write that just began in Los
    Angeles looks hours old, and another process would roll back a live writer."""
    local = HEARTBEAT_PROPS | {"hoodie.table.timeline.timezone": "LOCAL"}
    table = create_table(str(tmp_path / "t"), "t", ["id"], "ts", extra_props=local)
    config = HeartbeatConfig.from_props(dict(table.config.props))
    writer = TimelineWriter(table.storage, table.timeline_path)
    just_now = table.new_instant_time()
    writer.request(Action.DELTA_COMMIT, just_now)  # its writer has not beaten yet
    assert rollback_failed_writes(HudiTable.open(table.base_path)) == []
    assert is_expired(
        table.storage, table.meta_path, just_now, config, at_ms=now_ms() + 60_000, zone=table.config.timeline_timezone
    )
