"""Compaction: scheduling from the index (planning is pure: `strategies`, `layout`, `plan`), execution per
operation (engines distribute operations), and the commit."""
