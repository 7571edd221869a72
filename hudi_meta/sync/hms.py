"""`sync --mode hms`: the Hive metastore's Thrift API, through the client pymetastore ships.

Why pymetastore (0.4.x): of the maintained PyPI clients it is the newest (Thrift bindings generated for the
current metastore API, thrift>=0.16, typed, Python 3.8+, released 2024), and its generated `ThriftHiveMetastore`
client can create and alter tables; its own wrapper is read-only, so only the raw client is used. `hmsclient`
(0.1.1, 2019, older bindings, pulls in click) works too but is unmaintained; pyiceberg's Hive client is built
for Iceberg tables (it rewrites table parameters Iceberg owns); `hive-metastore-client` pins thrift 0.13 and
overwrites parameters on create. A table is altered from the object the metastore returned, with only its
parameters changed, so the storage descriptor and every other property stay as they were.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeVar

from pymetastore.hive_metastore import ThriftHiveMetastore, ttypes
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException
from thrift.transport import TSocket, TTransport

from hudi_meta.errors import CatalogUnavailableError, HudiMetaError
from hudi_meta.sync.catalog import CatalogTable, Column, Partition, RetryPolicy, catalog_address, with_retries
from hudi_meta.sync.thrift_errors import UNAVAILABLE

T = TypeVar("T")


class HmsCatalog:
    def __init__(self, uri: str, policy: RetryPolicy, timeout_s: float) -> None:
        self.uri = uri
        self.host, self.port = catalog_address("hms", uri)
        self.policy = policy
        self.timeout_s = timeout_s
        self.transport: TTransport.TBufferedTransport | None = None
        self.client: Any = None
        self.calls: Counter[str] = Counter()  # Thrift calls made, by method (benchmarks and metrics)
        self._call(lambda: None)  # connect now: a wrong URI fails here, in one line

    # ---- connection -------------------------------------------------------------------------------

    def _connect(self) -> None:
        self.close()
        sock = TSocket.TSocket(self.host, self.port)
        sock.setTimeout(int(self.timeout_s * 1000))
        transport = TTransport.TBufferedTransport(sock)
        try:
            transport.open()
        except UNAVAILABLE as e:
            raise CatalogUnavailableError(f"cannot connect to {self.host}:{self.port}: {e}") from e
        self.transport = transport
        self.client = _Counted(ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport)), self.calls)

    def _call(self, call: Callable[[], T]) -> T:
        def attempt() -> T:
            if self.client is None:
                self._connect()
            try:
                return call()
            except UNAVAILABLE as e:
                self.close()
                raise CatalogUnavailableError(str(e) or type(e).__name__) from e
            except ttypes.MetaException as e:
                raise HudiMetaError(f"metastore {self.uri}: {e.message}") from e
            except TApplicationException as e:
                raise HudiMetaError(f"metastore {self.uri}: {e.message or e}") from e

        return with_retries(self.uri, self.policy, self.close, attempt)

    def close(self) -> None:
        if self.transport is not None:
            with contextlib.suppress(*UNAVAILABLE):
                self.transport.close()
        self.transport = None
        self.client = None

    # ---- the Catalog interface ----------------------------------------------------------------------

    def database_exists(self, database: str) -> bool:
        def call() -> bool:
            try:
                self.client.get_database(database)
                return True
            except ttypes.NoSuchObjectException:
                return False

        return self._call(call)

    def create_database(self, database: str) -> None:
        def call() -> None:
            # created already by a sync that failed before it heard back, or by someone else: fine
            with contextlib.suppress(ttypes.AlreadyExistsException):
                self.client.create_database(ttypes.Database(name=database, parameters={}))

        self._call(call)

    def _raw_table(self, database: str, name: str) -> Any:
        try:
            return self.client.get_table(database, name)
        except ttypes.NoSuchObjectException:
            return None

    def get_table(self, database: str, name: str) -> CatalogTable | None:
        raw = self._call(lambda: self._raw_table(database, name))
        if raw is None:
            return None
        sd = raw.sd
        return CatalogTable(
            database=raw.dbName,
            name=raw.tableName,
            columns=tuple(Column(c.name, c.type) for c in sd.cols or []),
            partition_columns=tuple(Column(c.name, c.type) for c in raw.partitionKeys or []),
            location=sd.location or "",
            input_format=sd.inputFormat or "",
            output_format=sd.outputFormat or "",
            serde=sd.serdeInfo.serializationLib if sd.serdeInfo else "",
            serde_properties=dict(sd.serdeInfo.parameters or {}) if sd.serdeInfo else {},
            properties=dict(raw.parameters or {}),
        )

    def _storage(self, table: CatalogTable, location: str) -> Any:
        return ttypes.StorageDescriptor(
            cols=[ttypes.FieldSchema(name=c.name, type=c.type, comment="") for c in table.columns],
            location=location,
            inputFormat=table.input_format,
            outputFormat=table.output_format,
            compressed=False,
            numBuckets=-1,
            serdeInfo=ttypes.SerDeInfo(
                name=table.name, serializationLib=table.serde, parameters=dict(table.serde_properties)
            ),
            bucketCols=[],
            sortCols=[],
            parameters={},
            storedAsSubDirectories=False,
        )

    def create_table(self, table: CatalogTable) -> None:
        now = int(time.time())
        raw = ttypes.Table(
            tableName=table.name,
            dbName=table.database,
            owner="hudi-meta",
            createTime=now,
            lastAccessTime=0,
            retention=0,
            sd=self._storage(table, table.location),
            partitionKeys=[ttypes.FieldSchema(name=c.name, type=c.type, comment="") for c in table.partition_columns],
            parameters=dict(table.properties),
            tableType="EXTERNAL_TABLE" if table.properties.get("EXTERNAL") == "TRUE" else "MANAGED_TABLE",
        )

        def call() -> None:
            # a retry after the first create went through: the next steps compare with what is there
            with contextlib.suppress(ttypes.AlreadyExistsException):
                self.client.create_table(raw)

        self._call(call)

    def set_properties(self, database: str, name: str, changes: Mapping[str, str | None]) -> None:
        def call() -> None:
            raw = self._raw_table(database, name)
            if raw is None:
                raise HudiMetaError(f"table {database}.{name} disappeared from metastore {self.uri} during the sync")
            params = dict(raw.parameters or {})
            for key, value in changes.items():
                if value is None:
                    params.pop(key, None)
                else:
                    params[key] = value
            if params != (raw.parameters or {}):
                raw.parameters = params
                self.client.alter_table(database, name, raw)

        self._call(call)

    def partitions(self, database: str, name: str) -> dict[tuple[str, ...], str]:
        raw = self._call(lambda: self.client.get_partitions(database, name, -1))
        return {tuple(p.values): p.sd.location or "" for p in raw}

    def move_partitions(self, database: str, name: str, partitions: list[Partition]) -> None:
        def call(p: Partition) -> None:
            raw = self.client.get_partition(database, name, list(p.values))
            if raw.sd.location != p.location:  # a retry after the alter went through changes nothing
                raw.sd.location = p.location
                self.client.alter_partition(database, name, raw)

        for p in partitions:
            self._call(partial(call, p))

    def drop_partitions(self, database: str, name: str, values: list[tuple[str, ...]]) -> None:
        def call(v: tuple[str, ...]) -> None:
            with contextlib.suppress(ttypes.NoSuchObjectException):  # dropped already (a retry, or someone else)
                self.client.drop_partition(database, name, list(v), False)

        for v in values:
            self._call(partial(call, v))

    def add_partitions(self, database: str, name: str, partitions: list[Partition]) -> None:
        if not partitions:
            return
        table = self.get_table(database, name)
        if table is None:
            raise HudiMetaError(f"table {database}.{name} disappeared from metastore {self.uri} during the sync")
        now = int(time.time())
        raw = [
            ttypes.Partition(
                values=list(p.values),
                dbName=database,
                tableName=name,
                createTime=now,
                lastAccessTime=0,
                sd=self._storage(table, p.location),
                parameters={},
            )
            for p in partitions
        ]
        request = ttypes.AddPartitionsRequest(
            dbName=database, tblName=name, parts=raw, ifNotExists=True, needResult=False
        )
        self._call(lambda: self.client.add_partitions_req(request))


class _Counted:
    """A Thrift client whose calls are counted by method name."""

    def __init__(self, client: Any, calls: Counter[str]) -> None:
        self._client = client
        self._calls = calls

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self._calls[name] += 1
            return method(*args, **kwargs)

        return call


def connect(uri: str, policy: RetryPolicy, timeout_s: float) -> HmsCatalog:
    return HmsCatalog(uri, policy, timeout_s)
