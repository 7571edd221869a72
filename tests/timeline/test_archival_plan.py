"""Archival planning as a pure function: hypothesis over random layout-2 timelines (commits, delta commits,
compactions pending and completed, replace commits, cleans with an earliest instant to retain, rollbacks,
savepoints, pending instants of every action, compactions holding live links) against each rule written as a
set condition (docs/archival.md), plus examples for Java's rules and the settings.

Rules checked:

- nothing is archived while the completed commits number at most max; otherwise the archived commits are the
  oldest ones, at most count - min of them, and as many as the boundaries allow;
- only completed instants are archived: commits, delta commits, replace commits, and the cleans and rollbacks
  requested before the newest archived commit, all of them;
- everything archived is older than everything left (the rule `fs_view.is_committed` relies on);
- never at or after: any pending instant; the newest completed commit before the earliest pending write (Java);
  a completed instant of an action not archived (savepoint); the latest completed clean or its earliest instant
  to retain; the first replace commit at or after the latest clean's retain point (Java); the latest completed
  compaction; the first compaction holding live links.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_meta.errors import ArchivalConfigError
from hudi_meta.timeline.archival_plan import (
    ArchivalSettings,
    TimelineInstant,
    count_reach,
    plan_archival,
)

COMMITS = {"commit", "deltacommit", "replacecommit"}
WRITE_TIMELINE = COMMITS | {"compaction", "logcompaction", "clustering"}


def t(n: int) -> str:
    return f"2026010100{n:05d}00"[:17]


def done(n: int, action: str = "deltacommit", compaction: bool = False) -> TimelineInstant:
    return TimelineInstant(t(n), action, True, t(n + 1000), compaction)


def pending(n: int, action: str = "deltacommit") -> TimelineInstant:
    return TimelineInstant(t(n), action, False)


@st.composite
def timelines(draw: st.DrawFn) -> tuple[list[TimelineInstant], str | None, frozenset[str], ArchivalSettings]:
    instants = []
    for n in range(1, draw(st.integers(1, 40)) + 1):
        kind = draw(
            st.sampled_from(
                ["deltacommit"] * 6
                + ["commit", "compaction", "compaction", "replacecommit", "clean", "clean", "rollback", "savepoint"]
            )
        )
        completed = draw(st.integers(0, 12)) > 0 or kind == "savepoint"  # savepoints have no pending state
        if kind == "compaction" and completed:
            instants.append(done(n, "commit", compaction=True))
        elif completed:
            instants.append(done(n, kind))
        else:
            instants.append(pending(n, kind))
    cleans = [i for i in instants if i.completed and i.action == "clean"]
    retain = None
    with_retain = draw(st.booleans())
    if cleans and with_retain:
        retain = draw(st.sampled_from([i.requested_time for i in instants]))
    compactions = [i.requested_time for i in instants if i.compaction]
    holders = frozenset(draw(st.sets(st.sampled_from(compactions), max_size=2))) if compactions else frozenset()
    low = draw(st.integers(1, 12))
    high = draw(st.integers(low + 1, low + 12))
    draw(st.randoms()).shuffle(instants)  # the planner sorts
    return instants, retain, holders, ArchivalSettings(low, high)


def expected_boundary(instants: list[TimelineInstant], retain: str | None, holders: frozenset[str]) -> str | None:
    """Every rule's boundary as a set condition; the earliest counts."""
    ordered = sorted(instants, key=lambda i: i.requested_time)
    times: list[str] = []
    waiting = [i.requested_time for i in ordered if not i.completed]
    times += waiting[:1]
    writes = [i.requested_time for i in ordered if not i.completed and i.action in WRITE_TIMELINE]
    if writes:
        before = [
            i.requested_time for i in ordered if i.completed and i.action in COMMITS and i.requested_time < writes[0]
        ]
        times.append(before[-1] if before else writes[0])
    times += [i.requested_time for i in ordered if i.completed and i.action not in COMMITS | {"clean", "rollback"}][:1]
    cleans = [i.requested_time for i in ordered if i.completed and i.action == "clean"]
    if cleans:
        times.append(min(cleans[-1], retain or cleans[-1]))
    replaces = [i.requested_time for i in ordered if i.action in ("replacecommit", "clustering")]
    lower = (retain or cleans[-1]) if cleans else ""
    times += [r for r in replaces if r >= lower][:1]
    times += [i.requested_time for i in ordered if i.compaction][-1:]
    times += sorted(holders)[:1]
    return min(times, default=None)


@settings(max_examples=400, deadline=None)
@given(timelines())
def test_the_plan_keeps_every_rule(
    case: tuple[list[TimelineInstant], str | None, frozenset[str], ArchivalSettings],
) -> None:
    instants, retain, holders, limits = case
    plan = plan_archival(instants, limits, retain, holders)
    archived = {i.requested_time for i in plan.instants}
    commits = sorted(i.requested_time for i in instants if i.completed and i.action in COMMITS)
    assert plan.completed_commits == len(commits)
    assert [i.requested_time for i in plan.instants] == sorted(archived)

    if len(commits) <= limits.max_commits:
        assert not archived
        return
    boundary = expected_boundary(instants, retain, holders)
    allowed = [c for c in commits if boundary is None or c < boundary]
    chosen = allowed[: len(commits) - limits.min_commits]
    assert sorted(archived & set(commits)) == chosen  # the oldest, as many as the count and the boundaries allow
    assert len(commits) - len(chosen) >= limits.min_commits
    newest = chosen[-1] if chosen else ""
    extras = {
        i.requested_time
        for i in instants
        if i.completed and i.action in ("clean", "rollback") and i.requested_time < newest
    }
    assert archived == set(chosen) | extras

    for i in instants:
        if i.requested_time in archived:
            assert i.completed
            assert boundary is not None and i.requested_time < boundary or boundary is None
        else:  # everything archived is older than everything left
            assert all(a < i.requested_time for a in archived)
    if not any(not i.completed for i in instants) and boundary is None:
        assert len(chosen) == len(commits) - limits.min_commits


@settings(max_examples=200, deadline=None)
@given(timelines())
def test_count_reach_is_the_newest_commit_the_count_alone_archives(
    case: tuple[list[TimelineInstant], str | None, frozenset[str], ArchivalSettings],
) -> None:
    instants, _, _, limits = case
    plain = [TimelineInstant(i.requested_time, "deltacommit", True) for i in instants]
    plain = [p for p, i in zip(plain, instants, strict=True) if i.completed and i.action in COMMITS]  # no boundary
    reach = count_reach(instants, limits)
    unbounded = plan_archival(plain, limits)
    assert reach == (unbounded.instants[-1].requested_time if unbounded.instants else None)


def test_java_keeps_the_newest_completed_commit_before_the_earliest_pending_write() -> None:
    """TimelineArchiverV2.getCommitInstantsToArchive, step 1: commits 1-5, 7, 8 done, 6 pending."""
    instants = [done(n) for n in (1, 2, 3, 4, 5, 7, 8)] + [pending(6)]
    plan = plan_archival(instants, ArchivalSettings(1, 2))
    assert [i.requested_time for i in plan.instants] == [t(n) for n in (1, 2, 3, 4)]
    assert plan.boundary is not None and plan.boundary.time == t(5) and "pending" in plan.boundary.reason
    # no completed commit before the pending one: the pending one is the boundary, nothing is archived
    plan = plan_archival([pending(1, "compaction"), *(done(n) for n in range(2, 9))], ArchivalSettings(1, 2))
    assert plan.instants == () and "compaction" in plan.summary


def test_cleans_and_rollbacks_go_with_the_commits_before_the_newest_archived_one() -> None:
    instants = [done(1), done(2, "clean"), done(3), done(4, "rollback"), done(5), done(6), done(7, "clean"), done(8)]
    instants += [done(n) for n in range(9, 14)]
    plan = plan_archival(instants, ArchivalSettings(3, 5), clean_retain=t(5))
    # the latest clean (7) retains from 5: commits 1 and 3 go, clean 2 with them; rollback 4 is after commit 3
    assert [(i.requested_time, i.action) for i in plan.instants] == [
        (t(1), "deltacommit"),
        (t(2), "clean"),
        (t(3), "deltacommit"),
    ]
    assert "retains from" in plan.summary


def test_the_latest_compaction_and_live_links_stay() -> None:
    instants = [done(n) for n in range(1, 11)] + [done(4, "commit", compaction=True)]
    instants = sorted({i.requested_time: i for i in instants}.values(), key=lambda i: i.requested_time)
    plan = plan_archival(instants, ArchivalSettings(2, 4))
    assert [i.requested_time for i in plan.instants] == [t(1), t(2), t(3)]
    assert "latest completed compaction" in plan.summary
    more = [*instants, done(11, "commit", compaction=True)]
    assert len(plan_archival(more, ArchivalSettings(2, 4)).instants) == 9
    held = plan_archival(more, ArchivalSettings(2, 4), link_holders=frozenset({t(4)}))
    assert [i.requested_time for i in held.instants] == [t(1), t(2), t(3)] and "links" in held.summary


def test_a_savepoint_stops_archival() -> None:
    instants = [done(n) for n in range(1, 11)] + [TimelineInstant(t(6) + "x", "savepoint", True, t(2000))]
    plan = plan_archival(instants, ArchivalSettings(1, 2))
    assert [i.requested_time for i in plan.instants] == [t(n) for n in range(1, 7)]


def test_a_replacecommit_waits_for_the_clean_of_its_replaced_files() -> None:
    instants = [done(1), done(2, "replacecommit"), *(done(n) for n in range(3, 10))]
    assert [i.requested_time for i in plan_archival(instants, ArchivalSettings(1, 2)).instants] == [t(1)]
    with_clean = [*instants, done(10, "clean")]
    plan = plan_archival(with_clean, ArchivalSettings(1, 2), clean_retain=t(5))
    assert [i.requested_time for i in plan.instants] == [t(n) for n in range(1, 5)]


def test_settings_are_java_s_and_refused_as_java_refuses_them() -> None:
    assert ArchivalSettings.from_properties({}) == ArchivalSettings(20, 30)
    props = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "4", "hoodie.clean.commits.retained": "1"}
    assert ArchivalSettings.from_properties(props) == ArchivalSettings(2, 4)
    assert ArchivalSettings.from_properties(props, 3, 9) == ArchivalSettings(3, 9)
    with pytest.raises(ArchivalConfigError, match=r"hoodie.keep.max.commits=4 must be greater than .*min.commits=4"):
        ArchivalSettings.from_properties(props, 4)
    with pytest.raises(
        ArchivalConfigError, match=r"min.commits=2 must be greater than hoodie.clean.commits.retained=10"
    ):
        ArchivalSettings.from_properties({}, 2, 4)
    with pytest.raises(ArchivalConfigError, match="not a whole number"):
        ArchivalSettings.from_properties({"hoodie.keep.max.commits": "many"})
    with pytest.raises(ArchivalConfigError, match="from 1"):
        ArchivalSettings(0, 4)
