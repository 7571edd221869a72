"""What long commands show on stderr: progress bars (tqdm) for each phase a step reports, drawn only when stderr
is a terminal and the command is not printing JSON (scripts and pipes see nothing), and hudi-meta's log lines
(`--verbose`, and always for `serve`)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hudi_meta.api import Report, silent


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to the `sys.stderr` of the moment (tests and the service swap it), not the one at setup."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def log_to_stderr() -> None:
    """Show hudi-meta's INFO log lines (what changed a table: instants written, files deleted or moved) on stderr."""
    logger = logging.getLogger("hudi_meta")
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def log_errors_only() -> None:
    """`-q`: hudi-meta's warnings (a lock taken over, a setting ignored) are not shown; errors still are."""
    logging.getLogger("hudi_meta").setLevel(logging.ERROR)


@contextmanager
def terminal_progress(enabled: bool = True) -> Iterator[Report]:
    """A reporter drawing bars on stderr (`enabled` and a terminal), else `silent`; bars are closed on exit."""
    if not enabled or not sys.stderr.isatty():
        yield silent
        return
    from tqdm import tqdm

    bars: dict[str, Any] = {}

    def report(what: str, done: int, total: int | None) -> None:
        bar = bars.get(what)
        if bar is None:
            for other in bars.values():
                other.close()
            bars.clear()
            bar = bars[what] = tqdm(desc=what, total=total, file=sys.stderr, leave=False, dynamic_ncols=True)
        if total is not None and bar.total != total:
            bar.total = total
        bar.update(done - bar.n)

    try:
        yield report
    finally:
        for bar in bars.values():
            bar.close()
