"""The service's configuration: one TOML file (`hudi-meta.toml`), read and checked in full before anything runs.

Every mistake is one `ConfigError` line naming the file and the key (`tables[1].mode: expected symlink or
copy, got 'hard'`): unknown keys first (each with the closest known key, so a misspelt key is never reported as
the key it meant being missing), then wrong types, bad values, settings that would do nothing (a key of another
trigger, engine or clean policy; `sync = true` without a `[catalog]`), and table paths that are not Hudi tables.
Durations are written as `90s`, `30m`, `2h`; the UI token may also come from `HUDI_META_UI_TOKEN` (the
environment wins, so a token need not sit in a file).

```toml
[store]
url = "postgresql://hudi@db/hudi_meta"   # default: the embedded SQLite store

[spark]
engine = "spark"            # spark (in this process) | spark-submit | local (no Spark)
master = "local[2]"         # or spark://host:7077
submit_args = []            # extra spark-submit arguments (engine spark-submit)

[catalog]                   # where `sync` publishes (tables with sync = true)
mode = "hms"                # hms | hiveserver2
uri = "thrift://127.0.0.1:9083"   # required in a [catalog]
database = "default"
timeout = "30s"

[ui]
enabled = true
host = "127.0.0.1"
port = 8080
token = "..."

[service]
interval = "30s"            # pause between rounds over the tables
lease = "60s"               # a table's lease: another process takes it over this long after its holder died
retry_backoff = "30s"       # after a failure; doubled per failure in a row, up to max_backoff
max_backoff = "15m"
keep_steps = 1000           # step records kept per table

[[tables]]
path = "/data/events"       # required
event_time_field = "ts"     # default: the table's hoodie.payload.event.time.field
data_latency = "30m"        # T = now - data_latency (default: hoodie.compaction.event.time.data.latency)
trigger = "event-time"      # event-time | num-commits | time-elapsed
# max_delta_commits = 5     # num-commits only (default: hoodie.compact.inline.max.delta.commits, else 5)
# max_delta_seconds = 3600  # time-elapsed only (default: hoodie.compact.inline.max.delta.seconds, else 3600)
mode = "symlink"            # symlink | copy
exact = false
schedule_interval = "5m"    # at most one scheduling attempt this often
clean = true
clean_policy = "KEEP_LATEST_COMMITS"   # or KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS (default: the table's)
clean_retained = 10         # commits or file versions, by policy (default: hoodie.clean.*.retained, else 10 or 3)
# clean_hours = 24          # KEEP_LATEST_BY_HOURS only (default: hoodie.clean.hours.retained, else 24)
sync = true                 # publish to [catalog] (default: true when there is a [catalog], else false)
sync_database = "default"   # default: [catalog].database, else the table's hoodie.database.name
sync_name = "events"        # default: hoodie.table.name
# skip_ro_suffix = true     # HiveSyncTool's layout: the read-optimized view as NAME (default: the registrations found)
# sync_strategy = "RO"      # RO | RT | ALL: the views to register (hoodie.datasource.hive_sync.table.strategy)
storage_options = { endpoint_url = "https://s3.example", key = "...", secret = "..." }  # fsspec (s3fs) options
```
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from hudi_meta.compaction.schedule import MAX_DELTA_COMMITS, MAX_DELTA_SECONDS, Limit, ScheduleRequest
from hudi_meta.compaction.triggers import Trigger
from hudi_meta.errors import CleanConfigError, ConfigError, HudiMetaError, LimitError, first_line
from hudi_meta.format import config_keys as keys
from hudi_meta.format.links import LinkMode
from hudi_meta.index.event_time_source import check_event_time_field
from hudi_meta.spelling import Spelled, closest
from hudi_meta.storage.factory import normalize_uri
from hudi_meta.sync.catalog import SyncMode
from hudi_meta.sync.hive_schema import TableStrategy
from hudi_meta.sync.recorded import MAX_TIMEOUT_S, MIN_TIMEOUT_S
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import parse_duration_ms
from hudi_meta.values import parse_identifier
from hudi_meta.write.clean_plan import (
    KEEP_LATEST_BY_HOURS,
    MAX_HOURS_RETAINED,
    MAX_RETAINED,
    CleanPolicy,
    Policy,
    misplaced_retention,
)

CONFIG_ENV = "HUDI_META_CONFIG"
TOKEN_ENV = "HUDI_META_UI_TOKEN"
DEFAULT_FILE = "hudi-meta.toml"
ENGINES = ("spark", "spark-submit", "local")

T = TypeVar("T")
S = TypeVar("S", bound=Spelled)
D = TypeVar("D")

# Every key each part of the file takes ("" is the top level, "tables" each [[tables]] entry): a key not listed is
# reported before any value is read, with the closest listed key.
KEYS: dict[str, tuple[str, ...]] = {
    "": ("store", "spark", "catalog", "ui", "service", "tables"),
    "store": ("url",),
    "spark": ("engine", "master", "submit_args"),
    "catalog": ("mode", "uri", "database", "timeout"),
    "ui": ("enabled", "host", "port", "token"),
    "service": ("interval", "lease", "retry_backoff", "max_backoff", "keep_steps"),
    "tables": (
        "path",
        "storage_options",
        "event_time_field",
        "data_latency",
        "trigger",
        "max_delta_commits",
        "max_delta_seconds",
        "mode",
        "exact",
        "schedule_interval",
        "clean",
        "clean_policy",
        "clean_retained",
        "clean_hours",
        "sync",
        "sync_database",
        "sync_name",
        "skip_ro_suffix",
        "sync_strategy",
    ),
}


@dataclass(frozen=True)
class SparkSettings:
    engine: str = "spark"
    master: str = "local[2]"
    submit_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class CatalogSettings:
    mode: SyncMode
    uri: str
    database: str | None = None
    timeout_s: float = 30.0


@dataclass(frozen=True)
class UiSettings:
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = 8080
    token: str | None = None


@dataclass(frozen=True)
class LoopSettings:
    interval_s: float = 30.0
    lease_s: float = 60.0
    retry_backoff_s: float = 30.0
    max_backoff_s: float = 900.0
    keep_steps: int = 1000  # step records kept per table


@dataclass(frozen=True)
class TableSettings:
    path: str
    event_time_field: str | None = None
    data_latency_ms: int | None = None
    trigger: Trigger = Trigger.EVENT_TIME
    max_delta_commits: int | None = None  # None: the table's hoodie.compact.inline.max.delta.commits, else 5
    max_delta_seconds: int | None = None  # None: the table's hoodie.compact.inline.max.delta.seconds, else 3600
    mode: LinkMode = LinkMode.SYMLINK
    exact: bool = False
    schedule_interval_s: float = 0.0
    clean: bool = True
    clean_policy: Policy | None = None  # None: the table's hoodie.clean.policy
    clean_retained: int | None = None
    clean_hours: int | None = None
    sync: bool = True
    sync_database: str | None = None
    sync_name: str | None = None
    skip_ro_suffix: bool | None = None  # None with sync_strategy None: the registrations found (sync_table)
    sync_strategy: TableStrategy | None = None
    storage_options: dict[str, object] = field(default_factory=dict)  # fsspec options (credentials): never shown

    def open(self) -> HudiTable:
        return HudiTable.open(self.path, self.storage_options)

    def schedule_request(self) -> ScheduleRequest:
        """The event-time compaction the service asks for each round (T = now - data latency)."""
        return ScheduleRequest(
            data_latency_ms=self.data_latency_ms,
            mode=self.mode,
            exact=self.exact,
            trigger=self.trigger,
            max_delta_commits=self.max_delta_commits,
            max_delta_seconds=self.max_delta_seconds,
        )

    def __repr__(self) -> str:  # storage options hold credentials: never print them
        return f"TableSettings(path={self.path!r}, mode={self.mode!r}, ...)"


@dataclass(frozen=True)
class ServiceConfig:
    source: str  # the file it was read from
    store_url: str | None = None
    spark: SparkSettings = field(default_factory=SparkSettings)
    catalog: CatalogSettings | None = None
    ui: UiSettings = field(default_factory=UiSettings)
    loop: LoopSettings = field(default_factory=LoopSettings)
    tables: tuple[TableSettings, ...] = ()


class _Section:
    """Typed reads of one TOML table (of the keys `KEYS[kind]` lists); each error names `file: prefix.key`."""

    def __init__(self, source: str, prefix: str, values: Any, kind: str | None = None) -> None:
        self.source, self.prefix = source, prefix
        self.known = KEYS[prefix if kind is None else kind]
        if not isinstance(values, dict):
            self.fail("", f"expected a table ([{prefix}]), got {_kind(values)}")
        self.values: dict[str, Any] = values

    def fail(self, key: str, message: str) -> None:
        where = f"{self.prefix}.{key}" if key and self.prefix else key or self.prefix
        raise ConfigError(f"config {self.source}: {where}: {message}")

    def get(self, key: str, kind: type[T], default: T | None = None, required: bool = False) -> T | None:
        assert key in self.known, f"{key} is read but not listed in KEYS"
        if key not in self.values:
            if required:
                self.fail(key, "required")
            return default
        value = self.values[key]
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            self.fail(key, f"expected {_kind_name(kind)}, got {_kind(value)} {value!r}")
        return value  # type: ignore[no-any-return]

    def text(self, key: str, default: str | None = None, required: bool = False) -> str | None:
        value = self.get(key, str, default, required)
        if value is not None and not value.strip():
            self.fail(key, "must not be empty")
        return value

    def spelled(self, key: str, kind: type[S], default: D) -> S | D:
        """A `Spelled` value (any of its spellings, Hudi's too), `default` when the key is not given."""
        value = self.text(key)
        return default if value is None else self.convert(key, value, kind.parse)

    def choice(self, key: str, choices: Mapping[str, Any] | tuple[str, ...], default: str) -> str:
        value = self.text(key, default) or default
        if value not in choices:
            self.fail(key, f"expected one of {', '.join(choices)}, got {value!r}")
        return value

    def duration_s(self, key: str, default: float, minimum_ms: int = 0, maximum_ms: int | None = None) -> float:
        value = self.text(key)
        if value is None:
            return default
        ms = self.convert(key, value, parse_duration_ms)
        if ms < minimum_ms:
            self.fail(key, f"must be at least {minimum_ms} ms, got {value!r}")
        if maximum_ms is not None and ms > maximum_ms:
            self.fail(key, f"must be at most {maximum_ms // 1000} s, got {value!r}")
        return ms / 1000

    def whole(self, key: str, default: int | None, low: int, high: int) -> int | None:
        value = self.get(key, int, default)
        if value is not None and not low <= value <= high:
            self.fail(key, f"expected a whole number from {low} to {high}, got {value}")
        return value

    def convert(self, key: str, value: str, parse: Callable[[str], T]) -> T:
        try:
            return parse(value)
        except HudiMetaError as e:
            self.fail(key, str(e))
            raise  # unreachable: fail raises


def _kind(value: object) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "text", list: "a list", dict: "a table"}.get(
        type(value), type(value).__name__
    )


def _kind_name(kind: type) -> str:
    names = {bool: "true or false", int: "a whole number", float: "a number", str: "text", list: "a list"}
    return names.get(kind, "a table" if kind is dict else kind.__name__)


def config_path(given: str | None) -> Path:
    """`--config`, else $HUDI_META_CONFIG; a missing file is one line."""
    text = given or os.environ.get(CONFIG_ENV)
    if not text:
        raise ConfigError(f"no configuration: give --config FILE or set {CONFIG_ENV} (see {DEFAULT_FILE} in README)")
    path = Path(text).expanduser()
    if not path.is_file():
        raise ConfigError(f"config {path}: no such file")
    return path


def load_config(path: Path, check_tables: bool = True) -> ServiceConfig:
    """Read and check `path`; `check_tables` also checks that each table path holds a Hudi table."""
    source = str(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"config {source}: not valid TOML: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"config {source}: cannot be read: {e}") from None
    _check_unknown_keys(source, raw)
    root = _Section(source, "", raw)
    store = _store(root)
    spark = _spark(_section(root, "spark"))
    catalog = _catalog(_section(root, "catalog"))
    ui = _ui(_section(root, "ui"))
    loop = _loop(_section(root, "service"))
    tables_raw = root.get("tables", list, [])
    assert tables_raw is not None
    tables = tuple(
        _table(_Section(source, f"tables[{i}]", t, "tables"), check_tables, catalog is not None)
        for i, t in enumerate(tables_raw)
    )
    seen: dict[str, int] = {}
    for i, t in enumerate(tables):
        key = os.path.realpath(t.path)
        if key in seen:
            raise ConfigError(f"config {source}: tables[{i}].path: the same table as tables[{seen[key]}]")
        seen[key] = i
    return ServiceConfig(source, store, spark, catalog, ui, loop, tables)


def _check_unknown_keys(source: str, raw: dict[str, Any]) -> None:
    """Every key that no part of the file takes, in one line, each with the closest key that part does take:
    before any value is read, so a misspelt key is never reported as the key it meant being missing."""
    found: list[str] = []

    def check(prefix: str, values: Any, kind: str) -> None:
        if not isinstance(values, dict):
            return  # reported as a wrong type when read
        for key in values:
            if key not in KEYS[kind]:
                close = closest(key, KEYS[kind])
                hint = f" (did you mean {close}?)" if close else ""
                found.append(f"{prefix}.{key}: unknown key{hint}" if prefix else f"{key}: unknown key{hint}")

    check("", raw, "")
    for name in KEYS[""]:
        if name != "tables":
            check(name, raw.get(name), name)
    tables = raw.get("tables")
    for i, table in enumerate(tables if isinstance(tables, list) else []):
        check(f"tables[{i}]", table, "tables")
    if found:
        raise ConfigError(f"config {source}: {'; '.join(found)}")


def _section(root: _Section, name: str) -> _Section | None:
    values = root.get(name, dict)
    return _Section(root.source, name, values) if values is not None else None


def _store(root: _Section) -> str | None:
    store = _section(root, "store")
    if store is None:
        return None
    url = store.text("url")
    return url


def _spark(s: _Section | None) -> SparkSettings:
    if s is None:
        return SparkSettings()
    engine = s.choice("engine", ENGINES, "spark")
    master = s.text("master", "local[2]") or "local[2]"
    args = s.get("submit_args", list, [])
    if args is None or not all(isinstance(a, str) for a in args):
        s.fail("submit_args", "expected a list of text")
    if args and engine != "spark-submit":  # settings that would do nothing are refused
        s.fail("submit_args", f'used by engine = "spark-submit" only (the engine is {engine})')
    if "master" in s.values and engine == "local":
        s.fail("master", 'engine = "local" runs without Spark: leave master out, or pick engine spark or spark-submit')
    return SparkSettings(engine, master, tuple(args or ()))


def _catalog(s: _Section | None) -> CatalogSettings | None:
    if s is None:
        return None
    mode = s.spelled("mode", SyncMode, SyncMode.HMS)
    uri = s.text("uri", required=True)
    database = s.text("database")
    if database is not None:
        s.convert("database", database, parse_identifier)
    timeout = s.duration_s("timeout", 30.0, int(MIN_TIMEOUT_S * 1000), int(MAX_TIMEOUT_S * 1000))
    assert uri is not None
    return CatalogSettings(mode, uri, database, timeout)


def _ui(s: _Section | None) -> UiSettings:
    token = os.environ.get(TOKEN_ENV) or None
    if s is None:
        return UiSettings(token=token)
    enabled = s.get("enabled", bool, True)
    host = s.text("host", "127.0.0.1") or "127.0.0.1"
    port = s.whole("port", 8080, 0, 65535)
    in_file = s.text("token")
    token = token or in_file
    return UiSettings(bool(enabled), host, int(port or 0), token)


def _loop(s: _Section | None) -> LoopSettings:
    if s is None:
        return LoopSettings()
    interval = s.duration_s("interval", 30.0)
    lease = s.duration_s("lease", 60.0, minimum_ms=1000)
    backoff = s.duration_s("retry_backoff", 30.0)
    most = s.duration_s("max_backoff", 900.0)
    if most < backoff:
        s.fail("max_backoff", f"must be at least retry_backoff ({backoff:g} s)")
    keep = s.whole("keep_steps", 1000, 10, 10_000_000) or 1000
    return LoopSettings(interval, lease, backoff, most, keep)


def _properties(s: _Section, path: str, options: dict[str, object]) -> dict[str, str]:
    """The table's hoodie.properties (a local path or any URI with its storage options), or one line saying why
    the path is not a table (the options are never part of it)."""
    try:
        return dict(HudiTable.open(path, options).config.props)
    except HudiMetaError as e:
        s.fail("path", f"{path} is not a Hudi table ({first_line(e)})")
    except (OSError, ValueError) as e:
        s.fail("path", f"{path} cannot be read: {type(e).__name__}")
    raise AssertionError("unreachable")


def _table(s: _Section, check: bool, has_catalog: bool) -> TableSettings:
    path = s.text("path", required=True)
    assert path is not None
    options = s.get("storage_options", dict, {})
    if options is None or not all(isinstance(v, (str, int, float, bool)) for v in options.values()):
        s.fail("storage_options", "expected a table of text, numbers and booleans")
    props = _properties(s, path, options or {}) if check else {}
    latency = s.text("data_latency")
    if check and latency is None and keys.DATA_LATENCY.text(props) is None:
        s.fail("data_latency", f"required: the table sets no {keys.DATA_LATENCY.name} (give a duration such as 30m)")
    policy = s.spelled("clean_policy", Policy, None)
    settings = TableSettings(
        path=str(Path(path).expanduser().resolve()) if "://" not in path else normalize_uri(path),
        event_time_field=s.text("event_time_field"),
        data_latency_ms=s.convert("data_latency", latency, parse_duration_ms) if latency else None,
        trigger=s.spelled("trigger", Trigger, Trigger.EVENT_TIME),
        max_delta_commits=_limit(s, MAX_DELTA_COMMITS),
        max_delta_seconds=_limit(s, MAX_DELTA_SECONDS),
        mode=s.spelled("mode", LinkMode, LinkMode.SYMLINK),
        exact=bool(s.get("exact", bool, False)),
        schedule_interval_s=s.duration_s("schedule_interval", 0.0),
        clean=bool(s.get("clean", bool, True)),
        clean_policy=policy,
        clean_retained=s.whole("clean_retained", None, 0, MAX_RETAINED),
        clean_hours=s.whole("clean_hours", None, 0, MAX_HOURS_RETAINED),
        sync=bool(s.get("sync", bool, has_catalog)),
        sync_database=s.text("sync_database"),
        sync_name=s.text("sync_name"),
        skip_ro_suffix=s.get("skip_ro_suffix", bool, None),
        sync_strategy=s.spelled("sync_strategy", TableStrategy, None),
        storage_options=dict(options or {}),
    )
    if check and settings.event_time_field:
        _check_event_time_field(s, settings)
    if settings.clean:
        _check_clean(s, settings, props if check else {})
    if settings.sync and not has_catalog:
        s.fail("sync", "true needs a [catalog] (catalog.uri) to publish to: add one, or set sync = false")
    for key, value in (("sync_database", settings.sync_database), ("sync_name", settings.sync_name)):
        if value is not None:
            s.convert(key, value, parse_identifier)
    _check_limits(s, settings.schedule_request(), props if check else None)
    return settings


def _check_event_time_field(s: _Section, settings: TableSettings) -> None:
    """The field must be a column of the table, as the indexer requires (its warning for a table without a schema
    yet is logged when the service registers the table)."""
    assert settings.event_time_field is not None
    try:
        check_event_time_field(settings.open(), settings.event_time_field)
    except HudiMetaError as e:
        s.fail("event_time_field", first_line(e))


def _limit(s: _Section, limit: Limit) -> int | None:
    return s.whole(limit.field, None, limit.low, limit.high)


def _check_limits(s: _Section, request: ScheduleRequest, props: dict[str, str] | None) -> None:
    """The trigger's limits as the scheduler takes them: a key the trigger does not use is refused (it would do
    nothing), and with the table's properties (`props`), a limit left to the table must be a number there."""
    for limit in (MAX_DELTA_COMMITS, MAX_DELTA_SECONDS):
        try:
            limit.check(request)
            if props is not None:
                limit.of(request, props)
        except LimitError as e:
            s.fail(e.field, e.reason)
        except HudiMetaError as e:
            s.fail(limit.field, f"not given, and {e}")


def _check_clean(s: _Section, t: TableSettings, props: dict[str, str]) -> None:
    """The clean step's policy as it will take it (the key, else the table's, else Hudi's default), and the
    retention that policy keeps: clean_hours for KEEP_LATEST_BY_HOURS, clean_retained for the others."""
    policy = t.clean_policy
    try:
        name = CleanPolicy.from_properties(props, policy).name
    except CleanConfigError as e:  # the table's policy or retention in hoodie.properties
        s.fail("clean_policy", str(e))
        raise  # unreachable: fail raises
    key = keys.CLEAN_POLICY.name
    of = "" if policy is not None else f" (the table's {key})" if key in props else " (the default)"
    misplaced = misplaced_retention(name, t.clean_retained, t.clean_hours)
    if misplaced == "hours":
        s.fail("clean_hours", f"is for {KEEP_LATEST_BY_HOURS}; the policy is {name}{of}, which keeps clean_retained")
    if misplaced == "retained":
        s.fail("clean_retained", f"the policy is {KEEP_LATEST_BY_HOURS}{of}, which keeps clean_hours")
