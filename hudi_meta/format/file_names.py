"""Hudi data file names: log files `.{fileId}_{instant}.log.{version}_{token}` and base files
`{fileId}_{token}_{instant}.{ext}`, parsed into records and formatted back byte for byte."""

from __future__ import annotations

import re
from dataclasses import dataclass

LOG_FILE_RE = re.compile(
    r"^\.(?P<file_id>[^_]+)_(?P<instant>[^.]+)\.(?P<ext>log|archive)\.(?P<version>\d+)"
    r"(?:_(?P<token>\d+-\d+-\d+))?(?P<cdc>\.cdc)?$"
)
BASE_FILE_RE = re.compile(r"^(?P<file_id>[^_.][^_]*)_(?P<token>[^_]+)_(?P<instant>\d+)(?P<ext>\.[A-Za-z0-9.]+)$")

UNKNOWN_WRITE_TOKEN = "1-0-1"
LOGFILE_BASE_VERSION = 1


def log_sort_key(instant: str, version: int, write_token: str, cdc: bool = False) -> tuple[str, int, str, bool]:
    """Hudi's log file order from a name's parts (what `LogFileName.sort_key` gives, without parsing a name): instant,
    version, then the write token as a string (`10-0-1` before `9-0-1`, no token first), then the suffix, as
    Java's `HoodieLogFile.LogFileComparator` and hudi-rs order them."""
    return (instant, version, write_token, cdc)


def log_file_name(
    file_id: str, instant: str, version: int, write_token: str, extension: str = "log", cdc: bool = False
) -> str:
    """A log file's name from its parts (`LogFileName.name` without building one: plans name 10^5 links)."""
    token = f"_{write_token}" if write_token else ""
    suffix = ".cdc" if cdc else ""
    return f".{file_id}_{instant}.{extension}.{version}{token}{suffix}"


def _log_match(name: str) -> re.Match[str]:
    m = LOG_FILE_RE.match(name)
    if m is None:
        raise ValueError(f"not a Hudi log file name: {name!r}")
    return m


def log_file_id_and_token(name: str) -> tuple[str, str]:
    """The file id and write token ("" if none) of a log file name (ValueError if it is none)."""
    m = _log_match(name)
    return m["file_id"], m["token"] or ""


@dataclass(frozen=True, order=False)
class LogFileName:
    """A parsed log file name. `instant` is the slice's base instant (v6) or the deltacommit (v8+)."""

    file_id: str
    instant: str
    version: int
    write_token: str = UNKNOWN_WRITE_TOKEN
    extension: str = "log"
    cdc: bool = False

    @classmethod
    def parse(cls, name: str) -> LogFileName:
        file_id, instant, extension, version, token, cdc = _log_match(
            name
        ).groups()  # one call: a plan parses 10^5 names
        return cls(file_id, instant, int(version), token or "", extension, cdc is not None)

    @classmethod
    def try_parse(cls, name: str) -> LogFileName | None:
        m = LOG_FILE_RE.match(name)
        return cls.parse(name) if m else None

    @property
    def name(self) -> str:
        return log_file_name(self.file_id, self.instant, self.version, self.write_token, self.extension, self.cdc)

    def sort_key(self) -> tuple[str, int, str, bool]:
        """Hudi's log file order: instant, then version, then write token, then suffix."""
        return log_sort_key(self.instant, self.version, self.write_token, self.cdc)

    def with_version(self, version: int, write_token: str | None = None) -> LogFileName:
        token = self.write_token if write_token is None else write_token
        return LogFileName(self.file_id, self.instant, version, token, self.extension, self.cdc)


@dataclass(frozen=True)
class BaseFileName:
    """A parsed base file name; `instant` is the commit (or compaction) that wrote it."""

    file_id: str
    write_token: str
    instant: str
    extension: str = ".parquet"

    @classmethod
    def parse(cls, name: str) -> BaseFileName:
        m = BASE_FILE_RE.match(name)
        if m is None:
            raise ValueError(f"not a Hudi base file name: {name!r}")
        return cls(m["file_id"], m["token"], m["instant"], m["ext"])

    @classmethod
    def try_parse(cls, name: str) -> BaseFileName | None:
        return cls.parse(name) if BASE_FILE_RE.match(name) else None

    @property
    def name(self) -> str:
        return f"{self.file_id}_{self.write_token}_{self.instant}{self.extension}"


def is_log_file(name: str) -> bool:
    return LOG_FILE_RE.match(name) is not None


def slice_of_file(name: str) -> tuple[str, str] | None:
    """(file id, instant) of a base or log file name (for v6 log files the instant is the slice's base
    instant); None for other names."""
    log = LogFileName.try_parse(name)
    if log is not None:
        return log.file_id, log.instant
    base = BaseFileName.try_parse(name)
    return (base.file_id, base.instant) if base is not None else None
