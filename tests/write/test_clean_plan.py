"""Clean planning as a pure function: hypothesis over random tables (file groups, slices, links, copies,
pending compactions and clustering, inflight writes, savepoints, replaced groups) against an independent
check of the safety rules and of each policy; examples for Java's earliest-commit-to-retain and the config."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_meta.errors import CleanConfigError
from hudi_meta.format.file_names import BaseFileName, LogFileName
from hudi_meta.write.clean_plan import (
    DELETE_FILE,
    DELETE_LINK,
    KEEP,
    KEEP_LATEST_BY_HOURS,
    KEEP_LATEST_COMMITS,
    KEEP_LATEST_FILE_VERSIONS,
    CleanFile,
    CleanGroup,
    CleanPlanResult,
    CleanPolicy,
    CleanSlice,
    CleanTimeline,
    TimelineEntry,
    deletion_order,
    earliest_commit_to_retain,
    plan_clean,
)

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
HOUR_MS = 3_600_000


def instant(hours: int) -> str:
    t = START + dt.timedelta(hours=hours)
    return t.strftime("%Y%m%d%H%M%S") + "000"


def epoch_ms(hours: int) -> int:
    return int((START + dt.timedelta(hours=hours)).timestamp() * 1000)


# ---------------------------------------------------------------- random tables


@dataclass
class Table:
    groups: list[CleanGroup]
    timeline: CleanTimeline


@st.composite
def tables(draw: st.DrawFn) -> Table:
    """A timeline of hourly instants (some pending) and file groups whose slices sit at base instants of it;
    log files of later slices link (symlink) or copy earlier slices' physical log files, as compactions do."""
    n = draw(st.integers(1, 14))
    entries: list[TimelineEntry] = []
    for h in range(1, n + 1):
        action = draw(st.sampled_from(["deltacommit", "deltacommit", "commit", "compaction", "replacecommit", "clean"]))
        completed = draw(st.integers(0, 9)) > 1
        if action == "compaction" and completed:
            action = "commit"  # a completed compaction is a commit on the timeline
        entries.append(TimelineEntry(instant(h), action, completed))
    times = [e.time for e in entries]
    archived = [instant(-h) for h in range(1, 4)]  # older than the active timeline: committed
    pending_compaction_times = [e.time for e in entries if e.action == "compaction" and not e.completed]
    pending_clustering_times = [e.time for e in entries if e.action == "replacecommit" and not e.completed]
    completed_replace = [e.time for e in entries if e.action == "replacecommit" and e.completed]

    groups: list[CleanGroup] = []
    compactions: dict[tuple[str, str], tuple[str, str]] = {}
    clustering: dict[tuple[str, str], str] = {}
    replaced: dict[tuple[str, str], str] = {}
    savepointed: set[str] = set()
    for g in range(draw(st.integers(1, 5))):
        partition = draw(st.sampled_from(["", "p=a", "p=b/q=1"]))
        file_id = f"fg{g}-0"
        key = (partition, file_id)
        bases = sorted(draw(st.sets(st.sampled_from(archived + times), min_size=1, max_size=6)))
        slices: list[CleanSlice] = []
        physical: list[str] = []  # paths of non-link log files written so far (older slices)
        for base in bases:
            files: list[CleanFile] = []
            if draw(st.booleans()):
                name = BaseFileName(file_id, "1-0-1", base).name
                files.append(CleanFile(name, instants=(base,)))
                if draw(st.integers(0, 9)) == 0:
                    savepointed.add(name)
            for v in range(1, draw(st.integers(0, 4)) + 1):
                name = LogFileName(file_id, base, v, "1-0-1").name
                kind = draw(st.sampled_from(["file", "file", "link", "copy"])) if physical else "file"
                written = tuple(sorted(draw(st.sets(st.sampled_from(archived + times), max_size=2))))
                if kind == "link":
                    files.append(CleanFile(name, link_target=draw(st.sampled_from(physical)), instants=written))
                    continue
                copy_of = draw(st.sampled_from(physical)) if kind == "copy" else None
                files.append(CleanFile(name, copy_of=copy_of, instants=written))
                physical.append(f"{partition}/{name}" if partition else name)
            slices.append(CleanSlice(base, tuple(files)))
        if pending_compaction_times and draw(st.integers(0, 3)) == 0:
            c = draw(st.sampled_from(pending_compaction_times))
            before = [b for b in bases if b < c]
            if before:
                compactions[key] = (c, before[-1])
                if c not in bases:
                    slices.append(CleanSlice(c, ()))  # the slice a pending compaction opens
        if pending_clustering_times and draw(st.integers(0, 4)) == 0:
            clustering[key] = draw(st.sampled_from(pending_clustering_times))
        if completed_replace and draw(st.integers(0, 4)) == 0:
            replaced[key] = draw(st.sampled_from(completed_replace))
        draw(st.randoms()).shuffle(slices)  # the planner must not rely on the order it gets
        groups.append(CleanGroup(partition, file_id, tuple(slices)))
    return Table(
        groups, CleanTimeline(tuple(entries), compactions, clustering, replaced, frozenset(savepointed), dt.UTC)
    )


policies = st.builds(
    CleanPolicy,
    st.sampled_from([KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS]),
    st.integers(0, 8),
    st.integers(0, 5),
    st.integers(0, 16),
)


# ---------------------------------------------------------------- the independent check


def path(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


def expected_earliest(tl: CleanTimeline, policy: CleanPolicy, now_ms: int) -> str | None:
    commit_actions = {"commit", "deltacommit", "replacecommit", "compaction"}
    done = sorted(e.time for e in tl.instants if e.completed and e.action in commit_actions)
    waiting = sorted(e.time for e in tl.instants if not e.completed and e.action in commit_actions)
    if policy.name == KEEP_LATEST_COMMITS:
        n = policy.commits_retained
        if n == 0 or len(done) <= n:
            return None
        nth = done[-n]  # count - n, 0-based
        if waiting and nth > waiting[0]:
            earlier = [t for t in done if t < waiting[0]]
            return earlier[-1] if earlier else None
        return nth
    if policy.name == KEEP_LATEST_BY_HOURS:
        cutoff = dt.datetime.fromtimestamp((now_ms - policy.hours_retained * HOUR_MS) / 1000, dt.UTC)
        text = cutoff.strftime("%Y%m%d%H%M%S") + f"{cutoff.microsecond // 1000:03d}"
        return min((t for t in done if t >= text), default=None)
    return None


def expected_expired(t: Table, policy: CleanPolicy, now_ms: int) -> set[tuple[str, str, str]]:
    """(partition, file id, base instant) of every slice the policy expires, by Hudi's rules written as set
    conditions (not the planner's newest-first walk)."""
    tl = t.timeline
    done = {e.time for e in tl.instants if e.completed}
    waiting = {e.time for e in tl.instants if not e.completed}
    first = min(e.time for e in tl.instants)
    earliest = expected_earliest(tl, policy, now_ms)

    def committed(b: str) -> bool:
        return b in done or (b < first and b not in waiting)

    out = set()
    for g in t.groups:
        key = (g.partition, g.file_id)
        live = {s.base_instant for s in g.slices if committed(s.base_instant)}
        comp = tl.pending_compactions.get(key)
        for s in g.slices:
            b = s.base_instant
            protected = (
                not committed(b)
                or key in tl.pending_clustering
                or (comp is not None and b >= comp[1])
                or any(i in waiting for f in s.files for i in f.instants)
                or any(f.name in tl.savepointed_files for f in s.files)
            )
            if protected:
                continue
            if key in tl.replaced:
                r = tl.replaced[key]
                if policy.name == KEEP_LATEST_FILE_VERSIONS or (earliest is not None and r < earliest):
                    out.add((*key, b))
                continue
            if b == max(live):
                continue  # latest slice
            if policy.name == KEEP_LATEST_FILE_VERSIONS:
                versions = {v for v in live if comp is None or v < comp[1]}
                keep = policy.file_versions_retained - (1 if comp is not None else 0)
                if len({v for v in versions if v > b}) >= keep:
                    out.add((*key, b))
            elif earliest is not None and any(b < v < earliest for v in live):
                out.add((*key, b))
    return out


def check_plan(t: Table, policy: CleanPolicy, now_ms: int, result: CleanPlanResult) -> None:
    files = {path(g.partition, f.name): (g, s, f) for g in t.groups for s in g.slices for f in s.files}
    paths = [a.path for a in result.actions]
    assert len(paths) == len(set(paths)) and set(paths) <= files.keys()
    deleted = {a.path for a in result.deletions}

    # operations: a symlink goes as a link, everything else as a file; KEEP only for targets of kept links
    remaining_links = {p: f.link_target for p, (_, _, f) in files.items() if f.link_target and p not in deleted}
    for a in result.actions:
        f = files[a.path][2]
        assert (a.operation == DELETE_LINK) == (f.link_target is not None and a.operation != KEEP)
        if a.operation == KEEP:
            assert a.path in remaining_links.values()
    # no link is left dangling by the clean (a target goes only when no remaining link points at it)
    assert not deleted & set(remaining_links.values())
    # links go before their targets
    order = [a.path for a in deletion_order(result.actions)]
    assert order == [a.path for a in result.deletions]
    for i, p in enumerate(order):
        target = files[p][2].link_target
        if target in deleted:
            assert order.index(target) > i

    # slices are cleaned whole (kept link targets aside), and exactly the slices the policy expires
    by_slice: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for a in result.actions:
        g, s, _ = files[a.path]
        by_slice[(g.partition, g.file_id, s.base_instant)].add(a.path)
    for (part, _, _), planned in by_slice.items():
        _, s, _ = files[next(iter(planned))]
        assert planned == {path(part, f.name) for f in s.files}
    empty = {(g.partition, g.file_id, s.base_instant) for g in t.groups for s in g.slices if not s.files}
    assert set(by_slice) == expected_expired(t, policy, now_ms) - empty


@settings(max_examples=300, deadline=None)
@given(tables(), policies, st.integers(0, 36))
def test_plan_follows_the_safety_rules_and_the_policy(t: Table, policy: CleanPolicy, now_hours: int) -> None:
    now_ms = epoch_ms(now_hours)
    result = plan_clean(t.groups, t.timeline, policy, now_ms)
    expected = expected_earliest(t.timeline, policy, now_ms)
    found = result.earliest_commit_to_retain
    assert (found.time if found else None) == expected
    check_plan(t, policy, now_ms, result)


@settings(max_examples=150, deadline=None)
@given(tables(), policies, st.integers(0, 36))
def test_cleaning_again_right_after_finds_nothing_new(t: Table, policy: CleanPolicy, now_hours: int) -> None:
    """The table after a clean (its deleted files gone), cleaned again with the same policy and time: only kept
    link targets come up again, nothing is deleted twice and no link dangles."""
    now_ms = epoch_ms(now_hours)
    first = plan_clean(t.groups, t.timeline, policy, now_ms)
    gone = {a.path for a in first.deletions}
    after = [
        CleanGroup(
            g.partition,
            g.file_id,
            tuple(
                CleanSlice(s.base_instant, tuple(f for f in s.files if path(g.partition, f.name) not in gone))
                for s in g.slices
                if not s.files or any(path(g.partition, f.name) not in gone for f in s.files)
            ),
        )
        for g in t.groups
    ]
    again = plan_clean(after, t.timeline, policy, now_ms)
    assert not {a.path for a in again.deletions} & gone
    targets = {f.link_target for g in after for s in g.slices for f in s.files if f.link_target}
    assert not {a.path for a in again.deletions} & (targets - {a.path for a in again.deletions})


# ---------------------------------------------------------------- examples


def commits(n: int, pending_at: int | None = None) -> CleanTimeline:
    entries = [TimelineEntry(instant(h), "deltacommit", True) for h in range(1, n + 1)]
    if pending_at is not None:
        entries[pending_at - 1] = TimelineEntry(instant(pending_at), "compaction", False)
    return CleanTimeline(tuple(entries))


def test_earliest_commit_to_retain_as_java_counts() -> None:
    policy = CleanPolicy(KEEP_LATEST_COMMITS, commits_retained=10)
    assert earliest_commit_to_retain(commits(10), policy, 0) is None  # not more than N commits yet
    found = earliest_commit_to_retain(commits(15), policy, 0)
    assert found is not None and found.time == instant(6)  # "15 instants, 10 retained: the 6th"
    capped = earliest_commit_to_retain(commits(15, pending_at=3), policy, 0)
    assert capped is not None and capped.time == instant(2)  # never after the first pending compaction
    hours = CleanPolicy(KEEP_LATEST_BY_HOURS, hours_retained=5)
    found = earliest_commit_to_retain(commits(15), hours, epoch_ms(12))
    assert found is not None and found.time == instant(7)
    assert earliest_commit_to_retain(commits(15), hours, epoch_ms(40)) is None  # no commit in the window
    # the cutoff is formatted in the timeline's zone, like Java's instant times
    tz = dt.timezone(dt.timedelta(hours=2))
    local = CleanTimeline(tuple(TimelineEntry(instant(h + 2), "deltacommit", True) for h in range(1, 16)), timezone=tz)
    found = earliest_commit_to_retain(local, hours, epoch_ms(12))
    assert found is not None and found.time == instant(9)


def test_a_retained_link_keeps_its_target_and_links_go_first() -> None:
    """Slice A holds a late log file; compactions B and C each link it (links point at the physical file)."""
    a, b, c = instant(1), instant(3), instant(5)
    late = LogFileName("f-0", a, 2, "1-0-1").name
    groups = [
        CleanGroup(
            "p",
            "f-0",
            (
                CleanSlice(
                    a, (CleanFile(f"f-0_1-0-1_{a}.parquet"), CleanFile(LogFileName("f-0", a, 1).name), CleanFile(late))
                ),
                CleanSlice(
                    b,
                    (
                        CleanFile(f"f-0_1-0-1_{b}.parquet"),
                        CleanFile(LogFileName("f-0", b, 2).name, link_target=f"p/{late}"),
                    ),
                ),
                CleanSlice(
                    c,
                    (
                        CleanFile(f"f-0_1-0-1_{c}.parquet"),
                        CleanFile(LogFileName("f-0", c, 2).name, link_target=f"p/{late}"),
                    ),
                ),
            ),
        )
    ]
    tl = CleanTimeline(
        tuple(TimelineEntry(instant(h), "commit" if h in (3, 5) else "deltacommit", True) for h in range(1, 7))
    )
    one = plan_clean(groups, tl, CleanPolicy(KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1), 0)
    ops = {a.path.split("/")[1]: a.operation for a in one.actions}
    assert ops[late] == KEEP  # C is retained and links it
    assert ops[LogFileName("f-0", b, 2).name] == DELETE_LINK
    assert ops[f"f-0_1-0-1_{a}.parquet"] == DELETE_FILE and f"f-0_1-0-1_{c}.parquet" not in ops
    assert [x.operation for x in one.deletions][0] == DELETE_LINK

    # once no retained slice links it (the newest slice compacted it), the target goes after its links
    d = instant(6)
    groups = [CleanGroup("p", "f-0", (*groups[0].slices, CleanSlice(d, (CleanFile(f"f-0_1-0-1_{d}.parquet"),))))]
    tl = CleanTimeline((*tl.instants[:5], TimelineEntry(d, "commit", True)))
    two = plan_clean(groups, tl, CleanPolicy(KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1), 0)
    order = [x.path.split("/")[1] for x in two.deletions]
    assert late in order and order.index(late) > max(order.index(LogFileName("f-0", s, 2).name) for s in (b, c))
    assert not two.kept


def test_policy_from_properties_and_overrides() -> None:
    assert CleanPolicy.from_properties({}) == CleanPolicy(KEEP_LATEST_COMMITS, 10, 3, 24)
    props = {
        "hoodie.clean.policy": "KEEP_LATEST_FILE_VERSIONS",
        "hoodie.clean.fileversions.retained": "2",
        "hoodie.clean.commits.retained": "4",
    }
    assert CleanPolicy.from_properties(props).retained == 2
    assert CleanPolicy.from_properties(props, "keep-latest-commits").retained == 4
    assert CleanPolicy.from_properties(props, retained=7).file_versions_retained == 7
    assert CleanPolicy.from_properties(props, "KEEP_LATEST_BY_HOURS", hours=3).hours_retained == 3
    bad = [
        ({}, {"policy": "KEEP_EVERYTHING"}, "unknown clean policy"),
        ({"hoodie.clean.policy": "nope"}, {}, "hoodie.clean.policy"),
        ({}, {"retained": -1}, "from 0 to 2147483647"),
        ({}, {"retained": 2**31}, "from 0 to 2147483647"),
        ({}, {"policy": "keep-latest-by-hours", "hours": 876001}, "hours must be from 0 to 876000"),
        ({"hoodie.clean.hours.retained": "2147483647", "hoodie.clean.policy": "KEEP_LATEST_BY_HOURS"}, {}, "range"),
        ({}, {"policy": "keep-latest-by-hours", "retained": 2}, "hours H, not retained N"),
        ({}, {"hours": 2}, "hours is for"),
        ({"hoodie.clean.commits.retained": "ten"}, {}, "not a whole number"),
    ]
    for p, kw, message in bad:
        with pytest.raises(CleanConfigError, match=message):
            CleanPolicy.from_properties(p, **kw)  # type: ignore[arg-type]
