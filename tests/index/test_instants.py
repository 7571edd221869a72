"""The store's instants across archival (docs/archival.md section 6): an instant off the active timeline is
archived when older than the first active instant and completed in the store, or completed in the table's archive
when the store saw it pending; anything else is gone."""

from __future__ import annotations

from hudi_meta.index.instants import StoredInstant, archived_or_gone

DONE = StoredInstant("completed", "c", False)


def test_archived_or_gone_by_the_rule() -> None:
    stored = {
        "001": DONE,  # completed, older than the first active instant: archived
        "002": StoredInstant("inflight", None, False),  # pending in the store, completed in the archive: archived
        "003": StoredInstant("requested", None, False),  # pending, not in the archive: a rolled-back write, gone
        "004": StoredInstant("completed", "c4", True),  # marked before: still archived
        "010": DONE,  # active
        "011": StoredInstant("inflight", None, False),  # newer than the first active instant: gone
    }
    reads: list[int] = []

    def archive() -> dict[str, str | None]:
        reads.append(1)
        return {"002": "005"}

    found, gone = archived_or_gone(stored, {"010"}, "010", archive)
    assert found == {"001": "c", "002": "005", "004": "c4"}
    assert gone == ["003", "011"]
    assert reads == [1]  # read once, and only because the store saw an older instant pending


def test_the_archive_is_not_read_when_the_store_saw_every_moved_instant_completed() -> None:
    def archive() -> dict[str, str | None]:
        raise AssertionError("read")

    assert archived_or_gone({"001": DONE, "002": DONE}, {"002"}, "002", archive) == ({"001": "c"}, [])
    assert archived_or_gone({"001": DONE}, set(), None, archive) == ({}, ["001"])  # an empty timeline: no rule
