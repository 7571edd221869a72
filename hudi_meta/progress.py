"""Progress of long steps, reported to whoever asks (the CLI draws it on a terminal; nobody else listens).

A step reports `(what, done, total)`: what it is doing now, how many units of it are done, and how many there
are (None while unknown). Reporting is a plain callback so that the core never depends on a terminal.
"""

from __future__ import annotations

from collections.abc import Callable

Report = Callable[[str, int, int | None], None]


def silent(what: str, done: int, total: int | None) -> None:
    """The default reporter: nobody is listening."""
