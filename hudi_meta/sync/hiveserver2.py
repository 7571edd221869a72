"""`sync --mode hiveserver2`: SQL through PyHive against a HiveServer2 endpoint (Hive's, or Spark's Thrift server).

Properties change with `ALTER TABLE ... SET TBLPROPERTIES` (and `UNSET` for keys to remove), which merge into
what the table has; tables are registered with the DDL HiveSyncTool's JDBC mode runs. The server resolves the
table's input format class for DDL, so it needs Hudi's hadoop-mr classes on its class path, as any server
that serves Hudi tables has.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import unquote

from pyhive import exc, hive
from thrift.transport import TSocket, TTransport

from hudi_meta.errors import CatalogUnavailableError, HudiMetaError
from hudi_meta.sync.catalog import CatalogTable, Column, Partition, RetryPolicy, catalog_address, with_retries
from hudi_meta.sync.thrift_errors import UNAVAILABLE

T = TypeVar("T")


def literal(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def server_message(e: Exception) -> str:
    """The server's own message out of a PyHive error (its argument is the Thrift response)."""
    response = e.args[0] if e.args else None
    status = getattr(response, "status", None)
    message = getattr(status, "errorMessage", None) or str(e)
    return " ".join(str(message).split())[:500]


class HiveServer2Catalog:
    def __init__(self, uri: str, policy: RetryPolicy, timeout_s: float) -> None:
        self.uri = uri
        self.host, self.port = catalog_address("hiveserver2", uri)
        self.policy = policy
        self.timeout_s = timeout_s
        self.connection: Any = None
        self._call(lambda cursor: None)  # connect now: a wrong URI fails here, in one line

    def _connect(self) -> None:
        self.close()
        sock = TSocket.TSocket(self.host, self.port)
        sock.setTimeout(int(self.timeout_s * 1000))
        try:  # NOSASL: a plain buffered transport, as PyHive builds it, with our timeout
            self.connection = hive.connect(thrift_transport=TTransport.TBufferedTransport(sock), username="hudi-meta")
        except UNAVAILABLE as e:
            raise CatalogUnavailableError(f"cannot connect to {self.host}:{self.port}: {e}") from e

    def _call(self, call: Callable[[Any], T]) -> T:
        def attempt() -> T:
            if self.connection is None:
                self._connect()
            try:
                cursor = self.connection.cursor()
                try:
                    return call(cursor)
                finally:
                    cursor.close()
            except UNAVAILABLE as e:
                self.close()
                raise CatalogUnavailableError(str(e) or type(e).__name__) from e
            except exc.Error as e:
                raise HudiMetaError(f"hiveserver2 {self.uri}: {server_message(e)}") from e

        return with_retries(self.uri, self.policy, self.close, attempt)

    def _rows(self, sql: str) -> list[tuple[Any, ...]]:
        def call(cursor: Any) -> list[tuple[Any, ...]]:
            cursor.execute(sql)
            return [tuple(r) for r in cursor.fetchall()] if cursor.description else []

        return self._call(call)

    def _execute(self, ddl: str) -> None:
        """A statement whose result is never read (CREATE, ALTER): executed, not fetched. Spark 3.5's Thrift server
        describes a `Result` column for DDL but answers the fetch with no columns, which PyHive cannot read."""
        self._call(lambda cursor: cursor.execute(ddl))

    def close(self) -> None:
        if self.connection is not None:
            with contextlib.suppress(*UNAVAILABLE, exc.Error):
                self.connection.close()
        self.connection = None

    # ---- the Catalog interface ----------------------------------------------------------------------

    def database_exists(self, database: str) -> bool:
        return any(r[0] == database for r in self._rows(f"SHOW DATABASES LIKE {literal(database)}"))

    def create_database(self, database: str) -> None:
        self._execute(f"CREATE DATABASE IF NOT EXISTS {ident(database)}")

    def get_table(self, database: str, name: str) -> CatalogTable | None:
        tables = self._rows(f"SHOW TABLES IN {ident(database)} LIKE {literal(name)}")
        if not any(name in r for r in tables):
            return None
        full = f"{ident(database)}.{ident(name)}"
        properties = {str(k): str(v) for k, v in self._rows(f"SHOW TBLPROPERTIES {full}")}
        return _from_describe(database, name, self._rows(f"DESCRIBE FORMATTED {full}"), properties)

    def create_table(self, table: CatalogTable) -> None:
        def columns(cols: tuple[Column, ...]) -> str:
            return ", ".join(f"{ident(c.name)} {c.type}" for c in cols)

        def pairs(values: Mapping[str, str]) -> str:
            return ", ".join(f"{literal(k)}={literal(v)}" for k, v in values.items())

        properties = {k: v for k, v in table.properties.items() if k != "EXTERNAL"}
        sql = (
            f"CREATE {'EXTERNAL ' if table.properties.get('EXTERNAL') == 'TRUE' else ''}TABLE IF NOT EXISTS "
            f"{ident(table.database)}.{ident(table.name)} ({columns(table.columns)})"
            + (f" PARTITIONED BY ({columns(table.partition_columns)})" if table.partition_columns else "")
            + f" ROW FORMAT SERDE {literal(table.serde)}"
            + (f" WITH SERDEPROPERTIES ({pairs(table.serde_properties)})" if table.serde_properties else "")
            + f" STORED AS INPUTFORMAT {literal(table.input_format)} OUTPUTFORMAT {literal(table.output_format)}"
            + f" LOCATION {literal(table.location)}"
            + (f" TBLPROPERTIES ({pairs(properties)})" if properties else "")
        )
        self._execute(sql)

    def set_properties(self, database: str, name: str, changes: Mapping[str, str | None]) -> None:
        full = f"{ident(database)}.{ident(name)}"
        sets = {k: v for k, v in changes.items() if v is not None}
        unsets = [k for k, v in changes.items() if v is None]
        if sets:
            pairs = ", ".join(f"{literal(k)}={literal(v)}" for k, v in sets.items())
            self._execute(f"ALTER TABLE {full} SET TBLPROPERTIES ({pairs})")
        if unsets:
            self._execute(f"ALTER TABLE {full} UNSET TBLPROPERTIES IF EXISTS ({', '.join(map(literal, unsets))})")

    def _partition_names(self, full: str) -> list[str]:
        return [str(r[0]) for r in self._rows(f"SHOW PARTITIONS {full}")]

    def partitions(self, database: str, name: str) -> dict[tuple[str, ...], str]:
        """SHOW PARTITIONS, then each partition's location from DESCRIBE FORMATTED (one query per partition:
        SQL has no listing of partition locations)."""
        full = f"{ident(database)}.{ident(name)}"
        out = {}
        for spec in self._partition_names(full):
            pairs = [(unquote(k), unquote(v)) for k, v in (part.split("=", 1) for part in spec.split("/"))]
            values = tuple(v for _, v in pairs)
            where = ", ".join(f"{ident(k)}={literal(v)}" for k, v in pairs)
            rows = self._rows(f"DESCRIBE FORMATTED {full} PARTITION ({where})")
            out[values] = next((str(r[1]).strip() for r in rows if str(r[0]).strip().rstrip(":") == "Location"), "")
        return out

    def _specs(self, database: str, name: str, values: list[tuple[str, ...]]) -> list[str]:
        table = self.get_table(database, name)
        if table is None:
            raise HudiMetaError(f"table {database}.{name} disappeared from {self.uri} during the sync")
        keys = [c.name for c in table.partition_columns]
        return [
            "PARTITION (" + ", ".join(f"{ident(k)}={literal(v)}" for k, v in zip(keys, vs, strict=True)) + ")"
            for vs in values
        ]

    def add_partitions(self, database: str, name: str, partitions: list[Partition]) -> None:
        if not partitions:
            return
        specs = self._specs(database, name, [p.values for p in partitions])
        added = " ".join(f"{spec} LOCATION {literal(p.location)}" for spec, p in zip(specs, partitions, strict=True))
        self._execute(f"ALTER TABLE {ident(database)}.{ident(name)} ADD IF NOT EXISTS {added}")

    def move_partitions(self, database: str, name: str, partitions: list[Partition]) -> None:
        specs = self._specs(database, name, [p.values for p in partitions])
        for spec, p in zip(specs, partitions, strict=True):
            self._execute(f"ALTER TABLE {ident(database)}.{ident(name)} {spec} SET LOCATION {literal(p.location)}")

    def drop_partitions(self, database: str, name: str, values: list[tuple[str, ...]]) -> None:
        """Dropped from an EXTERNAL table, which keeps its files: the registration goes, the data stays."""
        if values:
            specs = ", ".join(self._specs(database, name, values))
            self._execute(f"ALTER TABLE {ident(database)}.{ident(name)} DROP IF EXISTS {specs}")


def _from_describe(database: str, name: str, rows: list[tuple[Any, ...]], properties: dict[str, str]) -> CatalogTable:
    """A table out of DESCRIBE FORMATTED (columns, `# Partition Information`, then `# Detailed Table
    Information` as name/value rows)."""
    columns: list[Column] = []
    partition_columns: list[Column] = []
    details: dict[str, str] = {}
    section = "columns"
    for row in rows:
        key = str(row[0] or "").strip()
        value = str(row[1] or "").strip() if len(row) > 1 else ""
        if key == "# Partition Information":
            section = "partitions"
        elif key.startswith("# Detailed Table Information"):
            section = "details"
        elif not key or key.startswith("#"):
            continue
        elif section == "columns":
            columns.append(Column(key, value))
        elif section == "partitions":
            partition_columns.append(Column(key, value))
        else:
            details[key] = value
    data = [c for c in columns if c.name not in {p.name for p in partition_columns}]
    return CatalogTable(
        database=database,
        name=name,
        columns=tuple(data),
        partition_columns=tuple(partition_columns),
        location=details.get("Location", ""),
        input_format=details.get("InputFormat", ""),
        output_format=details.get("OutputFormat", ""),
        serde=details.get("Serde Library", ""),
        serde_properties=_bracketed(details.get("Storage Properties", "")),
        properties=properties,
    )


def _bracketed(text: str) -> dict[str, str]:
    """`[a=1, b=2]` (how Spark prints storage properties) -> {"a": "1", "b": "2"}."""
    inner = text.strip().removeprefix("[").removesuffix("]")
    return dict(part.split("=", 1) for part in inner.split(", ") if "=" in part)


def connect(uri: str, policy: RetryPolicy, timeout_s: float) -> HiveServer2Catalog:
    return HiveServer2Catalog(uri, policy, timeout_s)
