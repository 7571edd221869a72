"""Opening the metadata store a user named (`--db`, `$HUDI_META_DB`, or the default SQLite file): every front end
(the CLI, the web UI, the spark-submit entry, the service) opens it here, with the same errors."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from hudi_meta.errors import HudiMetaError, StoreError
from hudi_meta.index.db import make_engine, resolve_db_url
from hudi_meta.index.migrate import current_revision, head_revision, upgrade


def store_label(url: str) -> str:
    """The store as the user named it: a SQLite file's path, otherwise the URL without its password."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return url
    if parsed.get_backend_name() == "sqlite" and parsed.database:
        return parsed.database
    return parsed.render_as_string(hide_password=True)


def open_store(db: str | None, must_exist: bool = True, create: bool = True) -> Engine:
    """The metadata store's engine. A new SQLite store (no file yet, or a file without tables) gets its schema
    on first use (`create`); a store at an older schema, or a server database without one, is a user error
    naming `init-db`: a shared store is never migrated behind its owner's back."""
    url = resolve_db_url(db)
    label = store_label(url)
    try:
        parsed = make_url(url)
    except ArgumentError as e:
        raise HudiMetaError(f"not a metadata store URL: {url!r}") from e
    if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
        folder = Path(parsed.database).parent
        if not folder.is_dir():
            raise HudiMetaError(f"metadata store {label}: folder {folder} does not exist")
        if Path(parsed.database).is_dir():
            raise HudiMetaError(f"metadata store {label} is a folder, not a SQLite file")
    try:
        revision = current_revision(url)
        if must_exist and revision is None and create and parsed.get_backend_name() == "sqlite":
            upgrade(url)  # the embedded store, new: nothing to migrate
            revision = current_revision(url)
        if must_exist and revision is None:
            raise HudiMetaError(f"the metadata store {label} has no schema yet: run `hudi-meta init-db` first")
        if must_exist and revision is not None and revision != head_revision():
            raise HudiMetaError(
                f"the metadata store {label} has schema {revision}, this hudi-meta needs {head_revision()}: "
                f"run `hudi-meta init-db` to upgrade it"
            )
        return make_engine(url)
    except SQLAlchemyError as e:
        raise StoreError(label, e) from e
