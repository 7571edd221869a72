"""Progress bars on the terminal (tqdm on stderr) for long commands: one bar per phase a step reports, drawn
only when stderr is a terminal and the command is not printing JSON; scripts and pipes see nothing."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hudi_meta.progress import Report, silent


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
