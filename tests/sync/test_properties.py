"""The published properties (docs/catalog-and-freshness.md section 3) and the merge: only our keys change, unknown
values are removed rather than left stating an old freshness, nothing changes when nothing changed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.freshness import Freshness
from hudi_meta.sync.properties import LAST_COMMIT_TIME_SYNC, changes, published

NONE = Freshness(None, None, None, False, None, 0, 0, 0, None, 0, 0, 0, 0, None)


def freshness(threshold: int | None, watermark: int | None, instant: str | None, exact: bool) -> Freshness:
    return Freshness(threshold, watermark, instant, exact, None, 0, 0, 0, None, 0, 0, 0, 0, None)


def test_the_published_values() -> None:
    props = published(freshness(1_795_305_600_000, 1_795_305_599_500, "20261123000000000", True), "20261123000001000")
    assert props == {
        "hoodie.ro.event.time.threshold": "2026-11-22T00:00:00.000Z",
        "hoodie.ro.event.time.threshold.ms": "1795305600000",
        "hoodie.ro.event.time.watermark": "2026-11-21T23:59:59.500Z",
        "hoodie.ro.event.time.watermark.ms": "1795305599500",
        "hoodie.ro.event.time.compaction.instant": "20261123000000000",
        "hoodie.ro.event.time.exact": "true",
        LAST_COMMIT_TIME_SYNC: "20261123000001000",
    }


def test_nothing_is_claimed_without_a_completed_event_time_compaction() -> None:
    assert published(NONE, "20261123000001000") == {
        **{k: None for k in published(NONE, None) if k != LAST_COMMIT_TIME_SYNC},
        LAST_COMMIT_TIME_SYNC: "20261123000001000",
    }


KEYS = st.sampled_from(["a", "b", "hoodie.ro.event.time.threshold", "hoodie.ro.event.time.exact", "x.y"])
VALUES = st.text(alphabet="0123tf", max_size=3)


@given(st.dictionaries(KEYS, VALUES), st.dictionaries(KEYS, st.none() | VALUES))
def test_applying_the_changes_shows_what_is_wanted_and_keeps_the_rest(
    current: dict[str, str], wanted: dict[str, str | None]
) -> None:
    diff = changes(current, wanted)
    after = dict(current)
    for k, v in diff.items():
        if v is None:
            after.pop(k, None)
        else:
            after[k] = v
    assert {k: after.get(k) for k in wanted} == wanted
    assert {k: v for k, v in after.items() if k not in wanted} == {k: v for k, v in current.items() if k not in wanted}
    assert changes(after, wanted) == {}  # a second sync changes nothing
    assert set(diff) <= set(wanted)
