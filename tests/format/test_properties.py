"""hoodie.properties: Java Properties escapes and the table checksum."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.format.properties import (
    checksum_ok,
    format_properties,
    parse_properties,
    table_checksum,
    with_checksum,
)

keys = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=20)
values = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)


@given(st.dictionaries(keys, values, max_size=8))
def test_round_trip(props: dict[str, str]) -> None:
    assert parse_properties(format_properties(props)) == props


def test_java_escapes_and_checksum() -> None:
    text = '#c\nhoodie.table.name=trips\nhoodie.database.name=default\nschema={"a"\\:1}\nk = v\\\n  w\n'
    props = parse_properties(text)
    assert props["schema"] == '{"a":1}' and props["k"] == "vw"
    assert checksum_ok(with_checksum(props))
    assert not checksum_ok({**props, "hoodie.table.checksum": "1"})


def test_fixture_checksum_value() -> None:
    # v6_trips_8i1u: hoodie.database.name=default, table v6_trips_8i1u, checksum 3843273058
    assert table_checksum("v6_trips_8i1u", "default") == 3843273058
