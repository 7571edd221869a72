"""Compaction: scheduling from the index (planning is pure, in `hudi_meta.planning`), execution per
operation (engines distribute operations), and the commit."""
