"""The on-disk contract of event-time compaction: link names, plan parameters and commit metadata keys.

The `hoodie.*` names below are this module's own, not `format/config_keys.py`'s: they are fields our compaction
writes into a plan's strategyParams and a commit's extraMetadata, not settings anyone sets (no default, nothing
to document but what the field holds), so they live with the rest of the contract they belong to. A plan
parameter that reuses a config key's name (the event-time field) names it through the registry.
"""

from __future__ import annotations

from hudi_meta.format.config_keys import EVENT_TIME_FIELD
from hudi_meta.format.file_names import LogFileName, log_file_id_and_token, log_file_name
from hudi_meta.format.table_service_metadata import CompactionOperation, CompactionPlan
from hudi_meta.spelling import Spelled

SYMLINK_OPERATIONS_KEY = "hoodie.compaction.symlink.operations"  # completed commit extraMetadata (JSON)
THRESHOLD_KEY = "hoodie.compaction.event.time.threshold"  # completed commit extraMetadata (epoch ms)
MODE_KEY = "mode"  # plan strategyParams: symlink or copy
EXACT_RESULT_KEY = "hoodie.compaction.event.time.exact"  # completed commit extraMetadata: "true" if RO is as of T
EXACT_KEY = "exact"  # plan strategyParams: "true" in exact mode
CARRY_KEY = "carry"  # plan strategyParams: "true" when version 1 of the new slice is kept for the carry log
THRESHOLD_PARAM = "threshold"  # plan strategyParams: T in epoch ms
# plan strategyParams: the event-time field the plan was cut with (Hudi's key), so the executor merges by the same
# field the index measured, whatever hoodie.properties says (the index may have been given one the table lacks)
EVENT_TIME_FIELD_PARAM = EVENT_TIME_FIELD.name
# plan strategyParams of an exact plan scheduled while compactions or clusterings were pending (their instants,
# comma separated): their base files join RO whatever this plan does, so its commit never publishes exact
EXACT_BLOCKED_PARAM = "hoodie.compaction.event.time.exact.blocked.by"
CARRY_LOG_VERSION = 1  # `.F_C.log.1_...`: records the new slice carries before its links (compaction/layout.py)


class LinkMode(Spelled):
    """How a log file left after T reaches the compaction's slice (`--mode`, the plan's `mode` parameter)."""

    SYMLINK = "symlink"
    COPY = "copy"


def plan_link_mode(plan: CompactionPlan) -> LinkMode:
    """The link mode a plan was scheduled with (plans record it; a plan without it made symlinks)."""
    params = plan.strategy.strategy_params if plan.strategy else {}
    return LinkMode.parse(params.get(MODE_KEY, LinkMode.SYMLINK), MODE_KEY)


def link_name(kept: str, instant: str, index: int) -> str:
    """`.F_B.log.v_tok` kept from slice B becomes `.F_C.log.i_tok` in the compaction's slice C."""
    file_id, write_token = log_file_id_and_token(kept)
    return log_file_name(file_id, instant, index, write_token)


def carry_log_name(file_id: str, instant: str) -> str:
    """The compaction's carry log in its slice (ordered before the links): exact mode's versions after T, and
    versions that must stay log records for the slice to merge as before (see compaction/layout.py)."""
    return LogFileName(file_id, instant, CARRY_LOG_VERSION).name


def has_carry_log(plan: CompactionPlan) -> bool:
    """Plans keep version 1 for the carry log (exact-mode plans always did; others since the carry log)."""
    params = plan.strategy.strategy_params if plan.strategy else {}
    return params.get(EXACT_KEY) == "true" or params.get(CARRY_KEY) == "true"


def plan_event_time_field(plan: CompactionPlan) -> str | None:
    """The event-time field a plan was cut with (None: a plan of another strategy, or one written before plans
    recorded it)."""
    params = plan.strategy.strategy_params if plan.strategy else {}
    return params.get(EVENT_TIME_FIELD_PARAM) or None


def is_exact(plan: CompactionPlan) -> bool:
    """True for a plan scheduled in exact mode."""
    return plan.strategy is not None and plan.strategy.strategy_params.get(EXACT_KEY) == "true"


def reserved_log_files(plan: CompactionPlan, op: CompactionOperation, instant: str) -> frozenset[str]:
    """Log file names a compaction creates in its slice: its links and its carry log.

    Writers must not take these names, and readers must not read them before the compaction commits."""
    names = {s.symlink for s in op.symlink_operations}
    if has_carry_log(plan):
        names.add(carry_log_name(op.file_id, instant))
    return frozenset(names)
