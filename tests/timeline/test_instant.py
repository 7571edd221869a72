"""Instant file names for both timeline layouts, and v6 instant writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.errors import InstantExistsError
from hudi_meta.storage import LocalStorage
from hudi_meta.timeline.instant import ACTIONS, Action, Instant, State
from hudi_meta.timeline.timeline import Timeline, TimelineWriter, new_instant_time

times = st.integers(min_value=10**16, max_value=10**17 - 1).map(str)
pending_actions = st.sampled_from(sorted(ACTIONS - {Action.SAVEPOINT}))
completed_actions = st.sampled_from(sorted(ACTIONS - {Action.COMPACTION, Action.LOG_COMPACTION, Action.CLUSTERING}))


@given(times, pending_actions, st.sampled_from([State.REQUESTED, State.INFLIGHT]), st.sampled_from([1, 2]))
def test_pending_names_round_trip(t: str, action: Action, state: State, layout: int) -> None:
    instant = Instant(t, action, state)
    assert Instant.parse(instant.file_name(layout)) == instant


@given(times, times, completed_actions)
def test_completed_names_round_trip(t: str, c: str, action: Action) -> None:
    v6 = Instant(t, action, State.COMPLETED)
    assert Instant.parse(v6.file_name(1)) == v6
    v8 = Instant(t, action, State.COMPLETED, c)
    assert v8.file_name(2) == f"{t}_{c}.{action}"
    assert Instant.parse(v8.file_name(2)) == v8


def test_known_names() -> None:
    assert Instant.parse("20250101000000000.inflight") == Instant("20250101000000000", Action.COMMIT, State.INFLIGHT)
    assert (
        Instant(  # a compaction completes as a commit
            "20250101000000000", Action.COMPACTION, State.COMPLETED
        ).file_name(1)
        == "20250101000000000.commit"
    )
    assert Instant.parse("hoodie.properties") is None
    assert Instant.parse("20250101000000000.deltacommit.requested.crc") is None


def test_write_lifecycle_and_refusals(tmp_path: Path) -> None:
    storage = LocalStorage()
    w = TimelineWriter(storage, str(tmp_path))
    t = new_instant_time()
    w.request(Action.DELTA_COMMIT, t)
    w.start(Action.DELTA_COMMIT, t)
    w.start(Action.DELTA_COMMIT, t)  # idempotent
    with pytest.raises(InstantExistsError):
        w.request(Action.DELTA_COMMIT, t)
    w.complete(Action.DELTA_COMMIT, t, b"{}")
    with pytest.raises(InstantExistsError):
        w.complete(Action.DELTA_COMMIT, t, b"{}")
    tl = Timeline.load(storage, str(tmp_path), 1)
    assert tl.is_completed(t) and tl.instant(t) == Instant(t, Action.DELTA_COMMIT, State.COMPLETED)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_new_instant_time_is_strictly_increasing() -> None:
    t1 = new_instant_time()
    assert len(t1) == 17
    assert new_instant_time([t1, "20991231235959999"]) == "21000101000000000"
