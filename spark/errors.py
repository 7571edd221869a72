"""Errors raised inside Spark tasks, brought back to the driver as the error the task raised.

A task that raises a `HudiMetaError` (an undecodable block, say) fails the job with a Java exception that
wraps the Python traceback; the driver turns it back into one `HudiMetaError` line with the task's message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from hudi_meta.errors import HudiMetaError

_TASK_ERROR = re.compile(r"^hudi_meta\.errors\.(?P<kind>\w+): (?P<message>.+)$", re.MULTILINE)


@contextmanager
def task_errors() -> Iterator[None]:
    """Re-raise a failed job whose task raised a `HudiMetaError` as that error's message (one line)."""
    try:
        yield
    except HudiMetaError:
        raise
    except Exception as e:  # py4j or pyspark exceptions carry the task's traceback as text
        found = _TASK_ERROR.findall(str(e))
        if not found:
            raise
        raise HudiMetaError(found[-1][1].strip()) from e
