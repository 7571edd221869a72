"""Turn planned operations into a Hudi compaction plan with link operations (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from hudi_meta.compaction.plan_records import PlannedOperation
from hudi_meta.compaction.strategies import CompactionStrategy
from hudi_meta.format.links import (
    CARRY_KEY,
    CARRY_LOG_VERSION,
    EVENT_TIME_FIELD_PARAM,
    EXACT_BLOCKED_PARAM,
    EXACT_KEY,
    MODE_KEY,
    link_name,
)
from hudi_meta.format.table_service_metadata import (
    CompactionOperation,
    CompactionPlan,
    CompactionStrategyInfo,
    SymlinkOperation,
)
from hudi_meta.gc_pause import paused_gc


def link_operations(op: PlannedOperation, instant: str) -> tuple[SymlinkOperation, ...]:
    """`.F_B.log.v_tok` kept from slice B becomes `.F_C.log.i_tok` in slice C (i = 2, 3, ... in order: 1 is the
    carry log); a link always points at the physical file, never at another link."""
    first = CARRY_LOG_VERSION + 1
    links = []
    for i, kept in enumerate(op.to_keep, start=first):
        links.append(SymlinkOperation(link_name(kept.name, instant, i), kept.physical))
    return tuple(links)


def exact_blocked_by(plan: CompactionPlan) -> list[str]:
    """The pending instants that keep an exact plan's commit from publishing exact (`EXACT_BLOCKED_PARAM`)."""
    params = plan.strategy.strategy_params if plan.strategy else {}
    return [i for i in params.get(EXACT_BLOCKED_PARAM, "").split(",") if i]


@paused_gc()
def build_plan(
    operations: Sequence[PlannedOperation],
    strategy: CompactionStrategy,
    instant: str,
    mode: str = "symlink",
    exact: bool = False,
    event_time_field: str | None = None,
    exact_blocked: Sequence[str] = (),
) -> CompactionPlan:
    """The Hudi compaction plan that `<instant>.compaction.requested` holds for `operations`.

    Each operation merges its base file and `to_compact` logs (stock Hudi's fields, so Java Hudi and hudi-rs
    still read the plan) and names its kept logs as link operations into slice `instant`. The strategy's
    params carry the threshold, the event-time field it was measured by, the link `mode` and the `exact` flag,
    and always reserve log version 1 of the new slice for the carry log (and, for an exact plan, the pending
    instants `exact_blocked` that keep its commit from publishing exact): the executor, rollback and clean act on
    the plan alone, never on the request that produced it. Pure: `instant` must be the compaction's own instant
    time.
    """
    params = {**strategy.params(), MODE_KEY: mode, EXACT_KEY: str(exact).lower(), CARRY_KEY: "true"}
    if event_time_field:
        params[EVENT_TIME_FIELD_PARAM] = event_time_field
    if exact_blocked:
        params[EXACT_BLOCKED_PARAM] = ",".join(exact_blocked)
    return CompactionPlan(
        operations=tuple(
            CompactionOperation(
                base_instant_time=op.slice.base_instant,
                file_id=op.slice.file_id,
                partition_path=op.slice.partition,
                data_file_path=op.slice.base_file,
                delta_file_paths=tuple(f.name for f in op.to_compact),
                metrics=op.metrics(),
                symlink_operations=link_operations(op, instant),
            )
            for op in operations
        ),
        strategy=CompactionStrategyInfo(compactor_class_name=strategy.name, strategy_params=params),
    )
