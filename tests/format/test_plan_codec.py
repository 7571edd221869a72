"""The compaction plan's own Avro encoder writes, byte for byte, what fastavro writes for `plan.to_avro()`.

fastavro is the oracle: it encodes from the schema file alone. Every plan `to_bytes` writes must equal
fastavro's container with the same sync marker, and read back equal.
"""

import io
import math

import fastavro
from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.format.avro_container import load_schema, write_encoded_container
from hudi_meta.format.plan_codec import encode_compaction_plan
from hudi_meta.format.table_service_metadata import (
    CompactionOperation,
    CompactionPlan,
    CompactionStrategyInfo,
    SymlinkOperation,
)
from tests.format.test_table_service_metadata import compaction_plans

SCHEMA = fastavro.parse_schema(load_schema("HoodieCompactionPlan"))


def fastavro_datum(plan: CompactionPlan) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, SCHEMA, plan.to_avro())
    return buf.getvalue()


def fastavro_container(plan: CompactionPlan, sync: bytes) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, SCHEMA, [plan.to_avro()], sync_marker=sync)
    return buf.getvalue()


@given(st.booleans().flatmap(compaction_plans))
def test_datum_equals_fastavro(plan: CompactionPlan) -> None:
    assert encode_compaction_plan(plan) == fastavro_datum(plan)


odd_floats = st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 5e-324, 1.7976931348623157e308])


@given(
    metrics=st.dictionaries(st.text(max_size=3), odd_floats | st.floats(), max_size=5),
    long_text=st.text(min_size=1024, max_size=1100),
    count=st.integers(1020, 1030),
)
def test_edges_equal_fastavro(metrics: dict[str, float], long_text: str, count: int) -> None:
    """NaN and infinities, strings and counts past the encoder's one-table varints (1,024)."""
    ops = tuple(
        CompactionOperation(
            base_instant_time="20250101000000000",
            file_id=f"f{i}",
            partition_path=long_text if i == 0 else "",
            delta_file_paths=(long_text,) * (count if i == 0 else 1),
            metrics=metrics,
            symlink_operations=(SymlinkOperation(long_text, "t"),) * (count if i == 1 else 1),
        )
        for i in range(count)
    )
    plan = CompactionPlan(
        operations=ops,
        extra_metadata={long_text: long_text},
        strategy=CompactionStrategyInfo(compactor_class_name=None, version=-(2**31)),
        missing_schedule_partitions=(long_text,),
    )
    assert encode_compaction_plan(plan) == fastavro_datum(plan)


@given(compaction_plans(with_symlinks=True), st.binary(min_size=16, max_size=16))
def test_container_equals_fastavro_and_reads_back(plan: CompactionPlan, sync: bytes) -> None:
    data = write_encoded_container(encode_compaction_plan(plan), "HoodieCompactionPlan", sync)
    assert data == fastavro_container(plan, sync)
    assert CompactionPlan.from_bytes(data) == plan


def test_to_bytes_uses_a_random_sync_marker() -> None:
    """The sync marker stays random per file, as Avro writers make it (fastavro: os.urandom)."""
    plan = CompactionPlan()
    first, second = plan.to_bytes(), plan.to_bytes()
    assert first[-16:] != second[-16:]
    assert first == fastavro_container(plan, first[-16:])
