"""Errors a user can cause. The CLI turns each into one line on stderr and exit code 2."""


class HudiMetaError(Exception):
    """Base class for errors with a message a person can act on."""


class TableNotFoundError(HudiMetaError):
    """The given base path does not exist."""


class NotAHudiTableError(HudiMetaError):
    """The path exists but holds no `.hoodie/hoodie.properties`."""


class UnsupportedTableError(HudiMetaError):
    """The table uses a feature this tool does not read (e.g. Lance base files)."""


class CorruptFileError(HudiMetaError):
    """A file could not be decoded (not a partial block: the whole file is unreadable)."""


class InstantExistsError(HudiMetaError):
    """Refused to overwrite an instant file that already exists."""
