"""Golden compaction cases: merging a Java compaction plan's inputs with our file-group reader gives
the base file Java wrote for that operation (data columns)."""

from __future__ import annotations

import posixpath
from functools import partial
from typing import Any

import pyarrow.parquet as pq

from hudi_meta.file_group.fs_view import ViewInputs
from hudi_meta.file_group.reader import read_file_slice
from hudi_meta.format.file_names import BaseFileName
from hudi_meta.table.table import HudiTable
from tests.conftest import table_zips
from tests.table.test_fixture_reads import data_rows


def golden_cases(fixture_table: Any) -> list[tuple[HudiTable, str, Any, str]]:
    cases = []
    for archive in table_zips():
        table = HudiTable.open(str(fixture_table(archive)))
        tl = table.timeline
        for instant in tl.completed():
            if not tl.is_compaction(instant.requested_time):
                continue
            plan = table.compaction_plan(instant.requested_time)
            for op in plan.operations:
                directory = posixpath.join(table.base_path, op.partition_path or "")
                outputs = [
                    f.name
                    for f in table.storage.list_dir(directory)
                    if (p := BaseFileName.try_parse(f.name)) is not None
                    and p.file_id == op.file_id
                    and p.instant == instant.requested_time
                ]
                assert len(outputs) == 1, (archive, op.file_id)
                cases.append((table, instant.requested_time, op, outputs[0]))
    return cases


def test_merged_inputs_equal_java_output(fixture_table: Any) -> None:
    cases = golden_cases(fixture_table)
    assert len(cases) >= 10  # "a dozen file-group compactions" across the fixtures
    for table, instant, op, output in cases:
        partition = op.partition_path or ""

        def rel(name: str, partition: str = partition) -> str:
            return f"{partition}/{name}" if partition else name

        inputs = table.view_inputs()
        merged = read_file_slice(
            table.storage,
            table.base_path,
            rel(op.data_file_path) if op.data_file_path else None,
            [rel(n) for n in op.delta_file_paths],
            table.merge_spec,
            partial(_visible_before, inputs, instant),
        )
        java = pq.read_table(posixpath.join(table.base_path, rel(output)))
        assert data_rows(merged) == data_rows(java), (table.base_path, op.file_id)


def _visible_before(inputs: ViewInputs, instant: str, t: str) -> bool:
    return inputs.is_committed(t) and t < instant
