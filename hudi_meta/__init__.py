"""hudi-meta: metadata service and event-time partial compaction for Apache Hudi MOR tables.

The core package is engine-neutral: it never imports pyspark or flask. Layers flow one way:
storage -> format -> table -> index -> planning -> execution -> commit -> sync.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["CompactionSummary", "HudiMetaError", "NotFreshError", "Table", "__version__", "open_table"]

if TYPE_CHECKING:
    from hudi_meta.api import CompactionSummary, Table, open_table
    from hudi_meta.errors import HudiMetaError, NotFreshError


def __getattr__(name: str) -> Any:
    """The Python API (docs/python-api.md) on first use: `import hudi_meta.format...` stays light."""
    if name in ("HudiMetaError", "NotFreshError"):
        from hudi_meta import errors

        return getattr(errors, name)
    if name in __all__:
        from hudi_meta import api

        return getattr(api, name)
    raise AttributeError(f"module 'hudi_meta' has no attribute {name!r}")
