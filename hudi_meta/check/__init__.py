"""Integrity checks of a table: its files against its timeline (`files`), the index against the files
(`index_drift`)."""
