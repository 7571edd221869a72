"""Link lineage in the index: every link's physical target, the earlier link it was kept through (`via`), and a
state that tells the truth after an interrupted compaction run (`pending`: on disk, not committed).

Expected values come from the files: link names and symlink targets on disk, the plans the scheduler returned.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.run import CRASH_POINTS, run_compaction, set_crash_hook
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.format.file_names import LogFileName
from hudi_meta.format.links import LinkMode
from hudi_meta.index.db import make_engine
from hudi_meta.index.fingerprint import index_fingerprint
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.lineage import Lineage, resolve_links
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.queries import link_rows
from hudi_meta.index.registry import table_id_of
from hudi_meta.index.states import LinkState
from tests.compaction.core import CoreTable, at, rows
from tests.crashes import Crash, crash_at

P = "region=eu"


# ---- resolve_links (pure) ---------------------------------------------------------------------------------------


def _log(instant: str, version: int) -> str:
    return LogFileName("f1", instant, version, "1-0-1").name


def test_a_link_kept_again_goes_through_the_earlier_link_to_the_file() -> None:
    physical = _log("100", 3)
    first, second, third = _log("200", 2), _log("300", 2), _log("400", 2)
    # symlink mode: every plan names the physical file
    symlinks = resolve_links({(P, first): physical, (P, second): physical, (P, third): physical})
    # copy mode: a plan names the file it kept, the earlier copy
    copies = resolve_links({(P, first): physical, (P, second): first, (P, third): second})
    expected = {
        (P, first): Lineage(physical, None),
        (P, second): Lineage(physical, first),
        (P, third): Lineage(physical, second),
    }
    assert symlinks == expected
    assert copies == expected


def test_a_kept_physical_file_has_no_via_and_files_do_not_mix() -> None:
    kept_once, appended = _log("100", 2), _log("200", 3)  # the second was appended to slice 200, never a link
    links = {
        (P, _log("200", 2)): kept_once,
        (P, _log("300", 2)): kept_once,
        (P, _log("300", 3)): appended,
        ("region=us", _log("300", 2)): kept_once,  # same names in another partition: another file
    }
    assert resolve_links(links) == {
        (P, _log("200", 2)): Lineage(kept_once, None),
        (P, _log("300", 2)): Lineage(kept_once, _log("200", 2)),
        (P, _log("300", 3)): Lineage(appended, None),
        ("region=us", _log("300", 2)): Lineage(kept_once, None),
    }


def test_a_cycle_of_links_ends() -> None:
    a, b = _log("200", 2), _log("300", 2)
    found = resolve_links({(P, a): b, (P, b): a})
    assert set(found) == {(P, a), (P, b)}


# ---- real tables ------------------------------------------------------------------------------------------------


def _table(tmp_path: Path) -> CoreTable:
    """One file group: a base file and six log files with event times 10, 100, 200, 300, 400, 500 s."""
    table = CoreTable(tmp_path / "t")
    table.write(rows(("a", 0, 1.0)))
    for i, seconds in enumerate((10, 100, 200, 300, 400, 500)):
        table.write(rows((f"k{i}", seconds, float(i))))
    return table


def _index(engine: Engine, table: CoreTable) -> dict[str, dict[str, Any]]:
    Indexer(engine, table.table).run()
    table_id = table_id_of(engine, table.path)
    assert table_id is not None
    return {r["link"]: r for r in link_rows(engine, table_id)}


def _on_disk(table: CoreTable) -> dict[str, str | None]:
    """Log files in the partition: name -> symlink target (None for a file, a copy included)."""
    directory = Path(table.path) / P
    return {p.name: (os.readlink(p) if p.is_symlink() else None) for p in directory.iterdir() if ".log." in p.name}


def _planned(engine: Engine, table: CoreTable, threshold_s: int, mode: str) -> tuple[str, dict[str, str]]:
    result = schedule_compaction(
        engine, table.table, ScheduleRequest(threshold_ms=at(threshold_s), mode=LinkMode(mode))
    )
    assert result.instant is not None and result.plan is not None, result.reason
    return result.instant, {s.symlink: s.target for op in result.plan.operations for s in op.symlink_operations}


def _fresh_fingerprint(tmp_path: Path, table: CoreTable, name: str) -> dict[str, list[tuple[object, ...]]]:
    url = f"sqlite:///{tmp_path / name}"
    upgrade(url)
    fresh = make_engine(url)
    try:
        Indexer(fresh, table.table).run()
        table_id = table_id_of(fresh, table.path)
        assert table_id is not None
        return index_fingerprint(fresh, table_id)
    finally:
        fresh.dispose()


@pytest.mark.parametrize("mode", ["symlink", "copy"])
def test_show_links_records_the_chain_of_a_link_kept_twice(engine: Engine, tmp_path: Path, mode: str) -> None:
    table = _table(tmp_path)
    first, first_links = _planned(engine, table, 50, mode)  # merges the 10 s file, keeps five as links
    run_compaction(table.table, first)
    second, second_links = _planned(engine, table, 150, mode)  # merges the 100 s link, keeps four links again
    run_compaction(table.table, second)
    links = _index(engine, table)

    assert set(links) == set(first_links) | set(second_links)
    disk = _on_disk(table)
    for name, target in first_links.items():  # the first compaction links the physical files themselves
        assert disk[target] is None and LogFileName.parse(target).instant < first
        assert (links[name]["target"], links[name]["via"], links[name]["state"]) == (target, None, "created")
    # the second one keeps the first one's links: each of its links goes through the link of the same file
    by_target = {target: name for name, target in first_links.items()}
    for name, planned_target in second_links.items():
        physical = planned_target if mode == "symlink" else first_links[planned_target]
        if mode == "symlink":
            assert disk[name] == physical  # a symlink points at the physical file, never at a link
        assert links[name]["target"] == physical
        assert links[name]["via"] == by_target[physical]
        assert LogFileName.parse(links[name]["via"]).instant == first
        assert (links[name]["compaction_instant"], links[name]["state"]) == (second, "created")
    table_id = table_id_of(engine, table.path)
    assert table_id is not None
    assert index_fingerprint(engine, table_id) == _fresh_fingerprint(tmp_path, table, "fresh.db")


@pytest.mark.parametrize("mode", ["symlink", "copy"])
def test_show_links_after_a_crashed_run_says_which_links_exist(engine: Engine, tmp_path: Path, mode: str) -> None:
    assert "after-link" in CRASH_POINTS
    table = _table(tmp_path)
    first, first_links = _planned(engine, table, 50, mode)
    run_compaction(table.table, first)
    second, second_links = _planned(engine, table, 150, mode)
    assert len(second_links) >= 3
    table_id = table_id_of(engine, table.path)
    assert table_id is not None
    scheduled = {r["link"]: r for r in link_rows(engine, table_id)}  # as the scheduler recorded them
    assert all(scheduled[n]["state"] == "planned" and scheduled[n]["via"] is not None for n in second_links)
    links = _index(engine, table)
    assert {links[n]["state"] for n in second_links} == {"planned"}  # scheduled, nothing ran

    with crash_at(set_crash_hook, "after-link", after=2), pytest.raises(Crash):  # two links made, the rest not
        run_compaction(table.table, second)
    made = {n for n in second_links if n in _on_disk(table)}
    assert len(made) == 2
    links = _index(engine, table)
    for name in second_links:
        row = links[name]
        assert row["state"] == ("pending" if name in made else "planned"), name
        assert row["compaction_instant"] == second
        assert row["via"] is not None and LogFileName.parse(row["via"]).instant == first
    assert {links[n]["state"] for n in first_links} == {"created"}  # the committed compaction is untouched
    assert index_fingerprint(engine, table_id) == _fresh_fingerprint(tmp_path, table, "fresh-crashed.db")

    run_compaction(table.table, second)  # the run is resumed and commits
    links = _index(engine, table)
    assert {links[n]["state"] for n in second_links} == {"created"}
    assert all(links[n]["via"] is not None for n in second_links)


def test_states_of_links_are_the_link_states(engine: Engine, tmp_path: Path) -> None:
    """Every state `show links` prints is a LinkState, including a link whose file was cleaned (`removed`)."""
    table = _table(tmp_path)
    first, first_links = _planned(engine, table, 50, "symlink")
    run_compaction(table.table, first)
    second, _ = _planned(engine, table, 150, "symlink")
    with crash_at(set_crash_hook, "after-link"), pytest.raises(Crash):
        run_compaction(table.table, second)
    gone = next(iter(first_links))
    (Path(table.path) / P / gone).unlink()  # as a cleaner removes an old slice's link
    links = _index(engine, table)
    assert links[gone]["state"] == LinkState.REMOVED
    assert {r["state"] for r in links.values()} == set(LinkState)
