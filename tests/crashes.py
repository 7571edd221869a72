"""A kill -9 at a table service's crash point, staged in process (see `hudi_meta.crash_points`).

The hook raises `Crash` where the service would have died; what the service wrote until then stays on disk,
as after a real kill. Subprocess tests that need a real SIGKILL set the service's environment variable instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

Hook = Callable[[str], None]


class Crash(Exception):
    """Stands for a kill -9 at a crash point."""


@contextmanager
def crash_at(set_hook: Callable[[Hook | None], None], step: str, after: int = 1) -> Iterator[None]:
    """Within the block, the service raises `Crash` the `after`-th time it reaches `step`."""
    seen = 0

    def hook(at_step: str) -> None:
        nonlocal seen
        if at_step == step:
            seen += 1
            if seen == after:
                raise Crash(step)

    set_hook(hook)
    try:
        yield
    finally:
        set_hook(None)
