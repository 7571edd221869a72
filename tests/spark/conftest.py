"""Spark test fixtures (the session-scoped `spark` fixture lives in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def table_path(tmp_path: Path) -> str:
    return str(tmp_path / "events")
