"""New instant times follow the table's timeline zone (`hoodie.table.timeline.timezone`), as Java's
`HoodieInstantTimeGenerator` does: UTC tables get UTC times, LOCAL tables the writer's own zone. An instant in the
wrong zone sorts hours away from the instants Java writers take next, so a compaction or rollback could sort before
writes it follows."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from hudi_meta.timeline.instant import instant_epoch_ms
from hudi_meta.write.writer import create_table


@pytest.mark.usefixtures("los_angeles")
@pytest.mark.parametrize(("setting", "offset_hours"), [("UTC", {0}), ("LOCAL", {-7, -8})])
def test_a_new_instant_is_in_the_timeline_zone(tmp_path: Path, setting: str, offset_hours: set[int]) -> None:
    table = create_table(
        str(tmp_path / "t"), "t", ["id"], "ts", extra_props={"hoodie.table.timeline.timezone": setting}
    )
    instant = table.new_instant_time()
    now_ms = int(dt.datetime.now(dt.UTC).timestamp() * 1000)
    as_utc_digits = instant_epoch_ms(instant, dt.UTC)  # the digits read as if they were UTC
    # whole hours between the digits and UTC now: the zone's offset (a minute of slack for a slow machine)
    hours = round((as_utc_digits - now_ms) / 3_600_000)
    assert hours in offset_hours, (instant, hours)
    assert abs(instant_epoch_ms(instant, table.config.timeline_timezone) - now_ms) < 60_000
