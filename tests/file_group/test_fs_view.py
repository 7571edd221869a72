"""File slicing as a pure function of a listing and timeline facts (v6 by name, v8+ by completion)."""

from __future__ import annotations

from hudi_meta.file_group.fs_view import (
    BaseFile,
    LogFile,
    ViewInputs,
    build_file_groups,
    latest_base_for_ro,
    latest_slice_for_snapshot,
)
from hudi_meta.format.file_names import BaseFileName, LogFileName

F = "f1-0"


def base(instant: str) -> BaseFile:
    name = BaseFileName(F, "1-0-1", instant).name
    return BaseFile("p", name, 10, BaseFileName.parse(name))


def log(instant: str, version: int = 1) -> LogFile:
    name = LogFileName(F, instant, version).name
    return LogFile("p", name, 10, LogFileName.parse(name))


def inputs(version: int, completed: dict[str, str], pending: dict[tuple[str, str], str] | None = None) -> ViewInputs:
    return ViewInputs(version, completed, min(completed) if completed else None, pending or {})


def test_v6_logs_join_the_slice_named_in_their_file_name() -> None:
    view = inputs(6, {"100": "100", "200": "200"})
    groups = build_file_groups([base("100")], [log("100", 1), log("100", 2)], view)
    fs = groups[("p", F)].slices["100"]
    assert [lf.parsed.version for lf in fs.sorted_logs()] == [1, 2]


def test_v6_pending_compaction_opens_a_slice_and_snapshot_merges_both() -> None:
    view = inputs(6, {"100": "100", "200": "200"}, {("p", F): "300"})
    groups = build_file_groups([base("100"), base("300")], [log("100"), log("300")], view)
    fg = groups[("p", F)]
    assert sorted(fg.slices) == ["100", "300"]
    found = latest_slice_for_snapshot(fg, view)
    assert found is not None
    b, logs = found
    assert b == base("100")  # the compaction's base file is not committed yet
    assert [lf.parsed.instant for lf in logs] == ["100", "300"]
    assert latest_base_for_ro(fg, view) == base("100")


def test_v6_completed_compaction_serves_new_base() -> None:
    view = inputs(6, {"100": "100", "300": "300"})
    groups = build_file_groups([base("100"), base("300")], [log("100"), log("300")], view)
    found = latest_slice_for_snapshot(groups[("p", F)], view)
    assert found is not None and found[0] == base("300") and [f.parsed.instant for f in found[1]] == ["300"]


def test_v8_logs_slice_by_completion_time() -> None:
    # deltacommit 250 was requested before compaction 300 but completed after it: it joins slice 300.
    view = inputs(8, {"100": "110", "200": "210", "250": "320", "300": "310"})
    groups = build_file_groups([base("100"), base("300")], [log("200"), log("250")], view)
    fg = groups[("p", F)]
    assert [lf.parsed.instant for lf in fg.slices["100"].log_files] == ["200"]
    assert [lf.parsed.instant for lf in fg.slices["300"].log_files] == ["250"]


def test_v8_pending_deltacommit_goes_to_latest_slice() -> None:
    view = inputs(8, {"100": "110"})
    groups = build_file_groups([base("100")], [log("400")], view)
    assert groups[("p", F)].slices["100"].log_files[0].parsed.instant == "400"


def test_time_travel_hides_later_slices() -> None:
    view = inputs(6, {"100": "100", "300": "300"})
    groups = build_file_groups([base("100"), base("300")], [log("100")], view)
    found = latest_slice_for_snapshot(groups[("p", F)], view, as_of="200")
    assert found is not None and found[0] == base("100")
