"""The metadata store as the Python API opens it: creating or upgrading its schema, naming it in messages, and a
table's metrics from it (`hudi_meta.metrics`, the one home of the metric values)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url

from hudi_meta.index.db import resolve_db_url
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.store import open_store, store_label
from hudi_meta.metrics import MetricValues, render


@dataclass(frozen=True)
class TableMetrics:
    """A table's metrics (docs/catalog-and-freshness.md section 2) under its label (name, else base path)."""

    label: str
    values: MetricValues  # name -> (help, value); None: not known now

    def exposition(self) -> bytes:
        """The Prometheus text format of the known values."""
        return render({self.label: self.values})


def store_name(store: str | None) -> str:
    """The store `store` (a URL or SQLite file; None: $HUDI_META_DB, else the default file) as messages name it:
    its URL without a password."""
    return store_label(resolve_db_url(store))


def store_exists(store: str | None) -> bool:
    """False only for a SQLite store whose file is not there yet (opening it would create it)."""
    url = make_url(resolve_db_url(store))
    return not (url.get_backend_name() == "sqlite" and url.database and not Path(url.database).exists())


def init_store(store: str | None) -> str:
    """Create the store's schema or upgrade it to the newest; the store's name (`store_name`)."""
    url = resolve_db_url(store)
    open_store(store, must_exist=False)  # names a store that cannot be opened before Alembic tries
    upgrade(url)
    return store_label(url)
