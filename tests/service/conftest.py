"""Service fixtures: stores on both databases (from tests/index); the Hive metastore is tests/conftest.py's."""

from __future__ import annotations

from tests.index.conftest import _pg_upgraded_template, db_url, engine  # noqa: F401  (fixtures)
