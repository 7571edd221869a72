"""Record keys built from key fields, as Hudi's key generators spell them: a simple key is the value's text, a
complex key `f1:v1,f2:v2`; a null value reads "None". The model spells each value with Python's `str`, one row
at a time; the vectorised build must give the same keys for every column type."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudi_meta.file_group.merge.rules import MergeSpec
from hudi_meta.file_group.record_keys import record_key_array, record_keys

COLUMN_TYPES = {
    "string": (pa.string(), st.text()),
    "large_string": (pa.large_string(), st.text()),
    "int8": (pa.int8(), st.integers(-(2**7), 2**7 - 1)),
    "int32": (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    "int64": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "uint64": (pa.uint64(), st.integers(0, 2**64 - 1)),
    "float64": (pa.float64(), st.floats(allow_nan=False)),
    "bool": (pa.bool_(), st.booleans()),
    "date": (pa.date32(), st.dates(min_value=dt.date(1, 1, 1))),
}


def model_key(values: list[object], names: tuple[str, ...], complex_key: bool) -> str:
    if not complex_key and len(values) == 1:
        return str(values[0])
    return ",".join(f"{n}:{v}" for n, v in zip(names, values, strict=True))


@st.composite
def keyed_tables(draw: st.DrawFn) -> tuple[pa.Table, MergeSpec]:
    kinds = draw(st.lists(st.sampled_from(sorted(COLUMN_TYPES)), min_size=1, max_size=3))
    rows = draw(st.integers(0, 12))
    columns = {}
    for i, kind in enumerate(kinds):
        arrow_type, values = COLUMN_TYPES[kind]
        columns[f"k{i}"] = pa.array(draw(st.lists(st.none() | values, min_size=rows, max_size=rows)), arrow_type)
    complex_key = len(kinds) > 1 or draw(st.booleans())
    table = pa.table(columns)
    return table, MergeSpec(tuple(columns), None, populate_meta_fields=False, complex_key=complex_key)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(keyed_tables())
def test_keys_spell_every_value_as_the_key_generators_do(case: tuple[pa.Table, MergeSpec]) -> None:
    table, spec = case
    rows = table.to_pylist()
    names = spec.record_key_fields
    expected = [model_key([r[f] for f in names], names, spec.complex_key) for r in rows]
    assert record_keys(table, spec) == expected
    keys = record_key_array(table, spec)
    assert keys.type == pa.string() and keys.to_pylist() == expected


def test_the_meta_column_wins_where_meta_fields_are_populated() -> None:
    table = pa.table({"_hoodie_record_key": ["a", None], "id": [1, 2]})
    spec = MergeSpec(("id",), None)
    assert record_keys(table, spec) == ["a", "None"]
    assert record_keys(table, spec, use_meta_column=False) == ["1", "2"]
    assert record_key_array(table, spec, use_meta_column=False).to_pylist() == ["1", "2"]
