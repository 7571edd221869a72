"""Errors a user can cause. The CLI turns each into one line on stderr and exit code 2."""

from collections.abc import Mapping
from typing import Any


def first_line(e: BaseException) -> str:
    """An exception as one line: its message's first line, or its type's name when it has no message."""
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


class HudiMetaError(Exception):
    """Base class for errors with a message a person can act on."""


class BadValueError(HudiMetaError):
    """A value a user typed (an option, a form or JSON field, a configuration key) that is not what it must be:
    not a time, a duration out of range, non-ASCII digits. The message names the value, never the option: the
    caller that knows where it came from names that."""


class ParameterError(BadValueError):
    """Parameters of the Python API that do not go together or are out of range. The message names them as the
    API does (`begin`, `as_of`); a front end that took them under other names re-words it (`worded`: the CLI's
    `--begin`, `--as-of`)."""

    def __init__(self, template: str, *parameters: str) -> None:
        self.template = template  # the message with `{parameter}` where each parameter is named
        self.parameters = parameters
        super().__init__(self.worded({}))

    def worded(self, names: Mapping[str, str]) -> str:
        """The message with each parameter under its name in `names` (the API's own where not given)."""
        return self.template.format_map({p: names.get(p, p) for p in self.parameters})


class TableNotFoundError(HudiMetaError):
    """The given base path does not exist."""


class NotAHudiTableError(HudiMetaError):
    """The path exists but holds no `.hoodie/hoodie.properties`."""


class UnsupportedTableError(HudiMetaError):
    """The table uses a feature this tool does not read (e.g. Lance base files)."""


class TablePropertiesError(HudiMetaError):
    """`hoodie.properties` lacks a key every Hudi table has, or holds a value Hudi does not define: the file is
    damaged or not a Hudi table's, and reading on would guess (an empty file read as COPY_ON_WRITE skips the
    logs). The message names the file and the key."""

    def __init__(self, path: str, key: str, problem: str) -> None:
        super().__init__(
            f"{path}: {problem}; the file is damaged or not a Hudi table's: restore the table's hoodie.properties"
        )
        self.path = path
        self.key = key


class CorruptFileError(HudiMetaError):
    """A file could not be decoded (not a partial block: the whole file is unreadable)."""


class InstantExistsError(HudiMetaError):
    """Refused to overwrite an instant file that already exists."""


class BlockDecodeError(ValueError):
    """A log block whose framing is valid but whose content cannot be decoded.

    Not a HudiMetaError: it names no file. Framing damage never raises it (the log reader marks such blocks
    CORRUPT and readers skip them, as Java does); readers that would otherwise drop the block's records turn
    it into an UndecodableBlockError naming the file and the offset.
    """


class UnsupportedContentError(BlockDecodeError):
    """Valid content this package does not read (HFile blocks, Kryo delete blocks, recursive Avro records)."""


class UndecodableBlockError(HudiMetaError):
    """A log block with valid framing whose content cannot be decoded: reading on would drop its records."""

    def __init__(self, path: str, offset: int, block_type: str, reason: str) -> None:
        reason = " ".join(reason.split())  # one line: fastavro and Arrow messages span several
        super().__init__(f"cannot decode the {block_type} block at offset {offset} of {path}: {reason}")
        self.path = path
        self.offset = offset
        self.block_type = block_type
        self.reason = reason


class StoreError(HudiMetaError):
    """The store at a URL or path the user gave does not work (cannot connect, not a database, no driver)."""

    def __init__(self, label: str, cause: BaseException) -> None:
        reason = getattr(cause, "orig", None) or cause
        super().__init__(f"metadata store {label}: {first_line(reason)}")


class NotIndexedError(HudiMetaError):
    """A read of the index (`show`, metrics) for a table the store has not indexed yet."""

    def __init__(self, base_path: str) -> None:
        super().__init__(f"table {base_path} is not indexed: index it first")
        self.base_path = base_path


class StaleIndexError(HudiMetaError):
    """The table's version or timeline layout changed since it was indexed (a Java writer upgraded or downgraded
    it): what the store says of it is stale until `hudi-meta index` runs again."""


# ---- Table services and writes -------------------------------------------------------------------------------------


class WriteInProgressError(HudiMetaError):
    """A write is pending on the table: scheduling now would lose its records (try again once it is done)."""


class WriteConflictError(HudiMetaError):
    """A write appended into a slice that a compaction took after the write planned its files."""


class TableLockTimeoutError(HudiMetaError):
    """Another process held the table lock for longer than we wait."""


class LiveWriterError(HudiMetaError):
    """The pending write still has a live heartbeat: its writer is running, so it must not be rolled back."""


class HeartbeatExpiredError(HudiMetaError):
    """This writer's own heartbeat went stale: another writer may have rolled its instant back."""


class PlanTakenBackError(HudiMetaError):
    """The compaction could not keep merge order and was taken back (nothing lost): schedule again. `report` says
    what taking it back did (the log files it moved back into the compacted slice)."""

    def __init__(self, message: str, report: Any) -> None:  # compaction.unschedule.UnscheduleReport
        super().__init__(message)
        self.report = report


class CompletedCompactionError(ParameterError):
    """A completed compaction is rolled back only when asked for explicitly (`completed_compaction`)."""


class CleanedDataError(HudiMetaError):
    """A time-travel or incremental read needs files that a clean deleted."""


class NotFreshError(HudiMetaError):
    """The read-optimized view does not hold all data before the time asked for (strict reads)."""


# ---- Settings ------------------------------------------------------------------------------------------------------


class LimitError(HudiMetaError):
    """A trigger or strategy limit out of range, or given where nothing uses it; `field` names it (the request's
    field, the service configuration's key), `reason` says what is wrong."""

    def __init__(self, field: str, value: int, reason: str) -> None:
        super().__init__(f"{field} = {value}: {reason}")
        self.field = field
        self.reason = reason


class CleanConfigError(HudiMetaError):
    """A clean policy or retention that Hudi would refuse (unknown policy, negative or non-numeric retention)."""


class CleanParameterError(CleanConfigError, ParameterError):
    """A clean's policy or retention as the caller gave it (`policy`, `retained`, `hours`), refused naming them."""


class ArchivalConfigError(HudiMetaError):
    """Archival limits Hudi would refuse (`hoodie.keep.max.commits` not above `hoodie.keep.min.commits`, or that
    not above `hoodie.clean.commits.retained`)."""


class ConfigError(HudiMetaError):
    """A configuration file that cannot be used, with the file and key to fix."""


# ---- Storage, formats and catalogs ---------------------------------------------------------------------------------


class NoAppendError(HudiMetaError, OSError):
    """An append to an existing object: object stores rewrite objects whole, never in place."""


class AvroSchemaError(BlockDecodeError):
    """An Avro schema (a block's SCHEMA header) that is not valid Avro."""


class CatalogUnavailableError(HudiMetaError):
    """The catalog could not be reached or dropped the connection (worth a retry)."""


class UnavailableError(HudiMetaError):
    """A service hudi-meta needs (a catalog) stayed unreachable through every retry: worth running again later,
    so the CLI exits 4, not the usage error's 2."""


class Abandoned(HudiMetaError):
    """A compaction left pending because the service is stopping; the next run finishes it."""
