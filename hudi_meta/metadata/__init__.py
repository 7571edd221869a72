"""The metadata table (MDT, `<base>/.hoodie/metadata`) kept in step with what hudi-meta commits.

`record.py` holds the one record type the parts share: what a data-table action changes in an MDT partition
(`records.py` derives them, `writer.py` writes them as an MDT delta commit). Reading the `files` partition is
`hudi_meta.table.metadata_table`. docs/metadata-table.md states every rule with its Java source.
"""
