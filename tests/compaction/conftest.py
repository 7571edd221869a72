"""Compaction fixtures: stores on both databases (from tests/index); the SQLite `engine` is tests/conftest.py's."""

from __future__ import annotations

from tests.index.conftest import _pg_upgraded_template, db_url  # noqa: F401  (fixtures)
