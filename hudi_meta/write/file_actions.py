"""The report row of a table service's file operations (rollback, unschedule, repair), as hudi-cli's rename
reports give them: operation, source, target, done, error."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FileAction:
    """One file operation of a table service, reported as (operation, source, target, done, error)."""

    operation: str
    path: str  # the file acted on (a move's source), relative to the base path
    done: bool
    error: str | None = None
    target: str | None = None  # where a move puts the file

    def to_dict(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "source": self.path,
            "target": self.target,
            "done": self.done,
            "error": self.error,
        }
