"""Failure injection at named steps of a table service, for crash tests.

A service names its steps (`CrashPoints.reach("after-link")`). A test either sets the environment variable
to a step name, and the process kills itself with SIGKILL there (a real kill -9 between two writes), or sets a
hook that runs at every step and may raise to stop the service there, leaving the table as that kill would.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable


class CrashPoints:
    def __init__(self, env: str, points: tuple[str, ...]) -> None:
        self.env = env  # the variable whose value names the step to be killed at
        self.points = points
        self._hook: Callable[[str], None] | None = None

    def set_hook(self, hook: Callable[[str], None] | None) -> None:
        """`hook(step)` runs at every crash point in this process (None removes it)."""
        self._hook = hook

    def reach(self, step: str) -> None:
        assert step in self.points, step
        if os.environ.get(self.env) == step:
            os.kill(os.getpid(), signal.SIGKILL)
        if self._hook is not None:
            self._hook(step)
