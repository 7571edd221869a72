"""The one timing helper of the benchmarks: wall seconds of repeated runs, reported as best and median.

The best run is the one least disturbed by other work on the machine, so the scripts report it; the median
shows how much the runs spread. Data generation is timed with the same helper (one run) and printed as
"not measured".
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class Timings:
    """Wall seconds of the runs of one thing, in the order they ran."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    def run(self, fn: Callable[[], T]) -> T:
        """Call `fn` once, record how long it took, return what it returned."""
        start = time.perf_counter()
        result = fn()
        self.seconds.append(time.perf_counter() - start)
        return result

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def measure(fn: Callable[[], T], runs: int = 1, before: Callable[[], object] | None = None) -> tuple[Timings, T]:
    """Run `fn` `runs` times (`before` first each time, not timed); the timings and the last run's result."""
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    timings = Timings()
    for _ in range(runs):
        if before is not None:
            before()
        result = timings.run(fn)
    return timings, result
