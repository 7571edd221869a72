"""The named steps of metadata-table writes, where crash tests kill the process (`hudi_meta.crash_points`)."""

from __future__ import annotations

from hudi_meta.crash_points import CrashPoints

CRASH_AT_ENV = "HUDI_META_MDT_CRASH_AT"
INIT_POINTS = (
    "init-after-cleanup",
    "init-after-properties",
    "init-after-file-group",
    "init-after-inflight",
    "init-after-base-file",
    "init-after-commit",
)
COMMIT_POINTS = ("after-requested", "after-inflight", "after-log-file", "before-complete", "after-complete")
ROLLBACK_POINTS = (
    "rollback-after-requested",
    "rollback-after-unpublish",
    "rollback-after-files",
    "rollback-after-complete",
)
CRASH_POINTS = INIT_POINTS + COMMIT_POINTS + ROLLBACK_POINTS
_crash = CrashPoints(CRASH_AT_ENV, CRASH_POINTS)
set_crash_hook = _crash.set_hook
crash_point = _crash.reach
