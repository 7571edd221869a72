"""The one small interface every catalog client implements (`hms`: the metastore's Thrift API; `hiveserver2`:
SQL through PyHive), the plain records it speaks in, and retries with backoff around its calls.

Clients are imported lazily: without the `hive` extra a sync fails in one line naming the install command.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from hudi_meta.errors import BadValueError, CatalogUnavailableError, HudiMetaError, UnavailableError
from hudi_meta.spelling import Spelled
from hudi_meta.values import ascii_integer, shown

HIVE_EXTRA = "pip install 'hudi-meta[hive]'"


class SyncMode(Spelled):
    """The catalog a sync publishes into: a Hive metastore over Thrift, or HiveServer2 over SQL (PyHive)."""

    HMS = "hms"
    HIVESERVER2 = "hiveserver2"


MODES = tuple(SyncMode.spellings())  # argparse's choices
URI_FORMS = {SyncMode.HMS: (("thrift",), 9083), SyncMode.HIVESERVER2: (("hive", "hiveserver2"), 10000)}  # schemes, port
log = logging.getLogger(__name__)
# thrift logs every failed connect at ERROR, then raises: the failure reaches the user once, in our error line
logging.getLogger("thrift.transport.TSocket").setLevel(logging.CRITICAL)
T = TypeVar("T")


@dataclass(frozen=True)
class Column:
    name: str
    type: str


@dataclass(frozen=True)
class Partition:
    values: tuple[str, ...]
    location: str


@dataclass(frozen=True)
class CatalogTable:
    """A table as registered (or to register): storage descriptor, serde and table properties."""

    database: str
    name: str
    columns: tuple[Column, ...]
    partition_columns: tuple[Column, ...]
    location: str
    input_format: str
    output_format: str
    serde: str
    serde_properties: Mapping[str, str] = field(default_factory=dict)
    properties: Mapping[str, str] = field(default_factory=dict)


class Catalog(Protocol):
    """What a sync needs from a catalog. `set_properties` merges: keys mapped to None are removed, every other
    property stays as it is."""

    def database_exists(self, database: str) -> bool: ...

    def create_database(self, database: str) -> None: ...

    def get_table(self, database: str, name: str) -> CatalogTable | None: ...

    def create_table(self, table: CatalogTable) -> None: ...

    def set_properties(self, database: str, name: str, changes: Mapping[str, str | None]) -> None: ...

    def partitions(self, database: str, name: str) -> dict[tuple[str, ...], str]:
        """Every partition's values and location."""
        ...

    def add_partitions(self, database: str, name: str, partitions: list[Partition]) -> None: ...

    def move_partitions(self, database: str, name: str, partitions: list[Partition]) -> None:
        """Set each partition's location (its values name it)."""
        ...

    def drop_partitions(self, database: str, name: str, values: list[tuple[str, ...]]) -> None:
        """Drop the registrations only: a catalog never deletes the table's files (Hive's deleteData false)."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    first_wait_s: float = 0.5
    max_wait_s: float = 8.0


def with_retries(uri: str, policy: RetryPolicy, reconnect: Callable[[], None], call: Callable[[], T]) -> T:
    """`call()`, retried with exponential backoff while the catalog is unavailable (reconnecting before each
    retry); then one error naming the catalog and the last failure."""
    import tenacity

    def before_retry(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        log.info("catalog %s: %s (attempt %d of %d)", uri, error, state.attempt_number, policy.attempts)
        with contextlib.suppress(CatalogUnavailableError):  # the next attempt fails the same way and is counted
            reconnect()

    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(CatalogUnavailableError),
        stop=tenacity.stop_after_attempt(policy.attempts),
        wait=tenacity.wait_exponential(multiplier=policy.first_wait_s, max=policy.max_wait_s),
        before_sleep=before_retry,
        reraise=True,
    )
    try:
        return retrying(call)
    except CatalogUnavailableError as e:
        raise UnavailableError(f"catalog {uri} unavailable after {policy.attempts} attempts: {e}") from e


def open_catalog(mode: SyncMode | str, uri: str, policy: RetryPolicy | None = None, timeout_s: float = 30) -> Catalog:
    """A connected client for `mode` at `uri` (`thrift://host:port` for hms, `host:port` or `hive://host:port`
    for hiveserver2)."""
    mode = SyncMode.parse(mode, "sync mode")
    modules = {SyncMode.HMS: "hudi_meta.sync.hms", SyncMode.HIVESERVER2: "hudi_meta.sync.hiveserver2"}
    try:
        catalog_address(mode, uri)  # a bad URI is said before the client's module is imported
    except BadValueError as e:
        raise BadValueError(f"catalog URI {shown(uri)}: {e}") from None
    try:
        module = importlib.import_module(modules[mode])
    except ImportError as e:
        missing = (e.name or "a module").split(".")[0]
        raise HudiMetaError(f"sync --mode {mode} needs the hive extra ({missing} is missing): {HIVE_EXTRA}") from e
    catalog: Catalog = module.connect(uri, policy or RetryPolicy(), timeout_s)
    return catalog


def catalog_address(mode: SyncMode | str, uri: str) -> tuple[str, int]:
    """(host, port) of a catalog URI as `mode` writes it (`scheme://host:port` or `host:port`), refused in one
    line (the reason, without the URI: the caller names it) before anything connects."""
    schemes, default_port = URI_FORMS[SyncMode.parse(mode, "sync mode")]
    expected = f"expected [{'|'.join(schemes)}://]host[:port] with a port from 1 to 65535"
    rest = uri
    for scheme in schemes:
        if uri.startswith(f"{scheme}://"):
            rest = uri[len(scheme) + 3 :]
            break
    else:
        if "://" in uri:
            raise BadValueError(expected)
    host, _, port = rest.rstrip("/").partition(":")
    number = ascii_integer(port) if port else default_port
    if not host.strip() or number is None or not 1 <= number <= 65535:
        raise BadValueError(expected)
    return host, number


def same_location(registered: str, base_path: str) -> bool:
    """Whether a catalog location names the table's base path: the metastore writes local paths as `file:/p`
    (`file:///p` and `/p` too), Hadoop's S3 connectors as `s3a://` or `s3n://` where we write `s3://`."""

    def canonical(location: str) -> str:
        text = location.strip().rstrip("/")
        for scheme in ("s3a://", "s3n://"):
            if text.startswith(scheme):
                text = "s3://" + text[len(scheme) :]
        if text.startswith("file:"):
            text = "/" + text[len("file:") :].lstrip("/")
        return text

    return canonical(registered) == canonical(base_path)
