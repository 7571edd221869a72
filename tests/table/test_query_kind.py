"""The query kind is a closed set (issue 37): Hudi's `hoodie.datasource.query.type` names (snapshot,
read_optimized, incremental) and ours (ro, time-travel) name the same `QueryKind`, parsed where a query is made."""

from __future__ import annotations

import pytest

from hudi_meta.errors import BadValueError
from hudi_meta.table.table import Query, QueryKind

SPELLINGS = {  # what users type -> the kind, by the design (docs: read --query)
    "snapshot": "snapshot",
    "SNAPSHOT": "snapshot",
    "ro": "ro",
    "read_optimized": "ro",
    "read-optimized": "ro",
    "incremental": "incremental",
    "time-travel": "time-travel",
    "time_travel": "time-travel",
}


@pytest.mark.parametrize(("text", "kind"), SPELLINGS.items())
def test_every_spelling_makes_one_kind(text: str, kind: str) -> None:
    begin = "0" if kind == "incremental" else None
    as_of = "0" if kind == "time-travel" else None
    query = Query(text, begin=begin, as_of=as_of)
    assert isinstance(query.kind, QueryKind) and query.kind.value == kind


def test_an_unknown_kind_is_one_line_naming_the_choices() -> None:
    with pytest.raises(BadValueError, match="query: expected one of snapshot, ro, incremental, time-travel, got 'x'"):
        Query("x")
