"""Errors a user can cause. The CLI turns each into one line on stderr and exit code 2."""


class HudiMetaError(Exception):
    """Base class for errors with a message a person can act on."""


class BadValueError(HudiMetaError):
    """A value a user typed (an option, a form or JSON field, a configuration key) that is not what it must be:
    not a time, a duration out of range, non-ASCII digits. The message names the value, never the option: the
    caller that knows where it came from names that."""


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
        text = str(reason).strip().splitlines()[0] if str(reason).strip() else type(reason).__name__
        super().__init__(f"metadata store {label}: {text}")
