"""hudi-rs (the `hudi` package), the independent reader every compatibility check compares with."""

from __future__ import annotations

import pyarrow as pa

from hudi_meta.table.table import HudiTable


def rs_read_table(path: str, query: str = "snapshot", metadata: bool | None = None) -> pa.Table:
    """hudi-rs's snapshot or read-optimized ("ro") read of the table at `path` (absolute, as hudi-rs 0.5 needs).
    `metadata`: list files through the metadata table (None: when the table has one, as Java's readers do; not on
    version 6, whose metadata table hudi-rs 0.5 does not read)."""
    from hudi import HudiReadOptions, HudiTableBuilder

    if metadata is None:
        config = HudiTable.open(path).config
        metadata = bool(config.metadata_partitions) and config.version >= 8
    builder = HudiTableBuilder.from_base_uri(path)
    if metadata:
        builder = builder.with_hudi_option("hoodie.metadata.enable", "true")
    opts = {"hoodie.read.use.read_optimized.mode": "true"} if query == "ro" else {}
    batches = builder.build().read(HudiReadOptions(hudi_options=opts))
    return pa.Table.from_batches(batches) if batches else pa.table({})
