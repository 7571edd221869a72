"""The names `hudi_meta/api.py` and `hudi_meta/cli/clean_command.py` still import from here: clean planning moved
to `hudi_meta.write.clean_plan` (the metadata table cleans itself with it too, so it sits below both). Delete this
module once those two import from there."""

from __future__ import annotations

from hudi_meta.write.clean_plan import MAX_HOURS_RETAINED, MAX_RETAINED, CleanPolicy, Policy

__all__ = ["MAX_HOURS_RETAINED", "MAX_RETAINED", "CleanPolicy", "Policy"]
