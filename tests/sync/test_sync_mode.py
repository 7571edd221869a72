"""The sync mode is a closed set (issue 37): `SyncTarget` and `open_catalog` take it in any spelling and refuse
others in one line, before anything connects."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hudi_meta.errors import BadValueError
from hudi_meta.sync.catalog import SyncMode, catalog_address, open_catalog
from hudi_meta.sync.recorded import SyncTarget


def test_a_target_holds_a_sync_mode() -> None:
    target = SyncTarget("HMS", "thrift://h:9083")
    assert target.mode is SyncMode.HMS and SyncTarget("hiveserver2", "h:1").mode is SyncMode.HIVESERVER2
    assert catalog_address(SyncMode.HIVESERVER2, "hive://h") == ("h", 10000)


@pytest.mark.parametrize("make", [lambda: SyncTarget("glue", "x:1"), lambda: open_catalog("glue", "x:1")])
def test_an_unknown_mode_is_one_line(make: Callable[[], object]) -> None:
    with pytest.raises(BadValueError, match="sync mode: expected one of hms, hiveserver2, got 'glue'"):
        make()
