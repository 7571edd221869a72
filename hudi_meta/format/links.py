"""The on-disk contract of event-time compaction: link names, plan parameters and commit metadata keys."""

from __future__ import annotations

from hudi_meta.format.file_names import LogFileName

SYMLINK_OPERATIONS_KEY = "hoodie.compaction.symlink.operations"  # completed commit extraMetadata (JSON)
THRESHOLD_KEY = "hoodie.compaction.event.time.threshold"  # completed commit extraMetadata (epoch ms)
MODE_KEY = "mode"  # plan strategyParams: symlink or copy
EXACT_KEY = "exact"  # plan strategyParams: "true" in exact mode
THRESHOLD_PARAM = "threshold"  # plan strategyParams: T in epoch ms
EXACT_LOG_VERSION = 1  # exact mode: records after T go to `.F_C.log.1_...`, before the links


def link_name(kept: str, instant: str, index: int) -> str:
    """`.F_B.log.v_tok` kept from slice B becomes `.F_C.log.i_tok` in the compaction's slice C."""
    parsed = LogFileName.parse(kept)
    return LogFileName(parsed.file_id, instant, index, parsed.write_token).name


def exact_log_name(file_id: str, instant: str) -> str:
    """Exact mode's log file of records after T in the compaction's slice (ordered before the links)."""
    return LogFileName(file_id, instant, EXACT_LOG_VERSION).name
