"""The model test's seed in pytest's header, so any failing run can be replayed with HUDI_META_MODEL_SEED."""

from __future__ import annotations

import pytest


def pytest_report_header(config: pytest.Config) -> str:
    from tests.model.test_model import EXAMPLES, SEED

    return f"hudi-meta model test: HUDI_META_MODEL_SEED={SEED} HUDI_META_MODEL_EXAMPLES={EXAMPLES}"
