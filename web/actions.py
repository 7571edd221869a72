"""Actions (need the UI token, see web/auth.py): schedule an event-time compaction, plan a clean (dry run:
nothing is deleted), sync the freshness into the configured catalog. Each is served at
`/tables/<id>/actions/<name>` (a form post: the result is shown on the page) and at
`/api/v1/tables/<id>/actions/<name>` (JSON). Only the table the store registered is opened: its base path comes
from the store, never from the request."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, current_app, flash, jsonify, redirect, render_template, request, url_for

from hudi_meta.clean import check_cleanable, format_reports, run_clean
from hudi_meta.compaction.schedule import MODES, ScheduleRequest, schedule_compaction
from hudi_meta.errors import HudiMetaError
from hudi_meta.planning.clean import CleanPolicy
from hudi_meta.sync.recorded import SyncTarget, sync_recorded
from hudi_meta.table.table import HudiTable
from hudi_meta.times import format_time_ms, parse_duration_ms, parse_time_ms

from . import store
from .auth import action_required
from .common import table_or_404, wants_json

bp = Blueprint("actions", __name__)
ACTIONS = ("schedule", "clean", "sync")


def _field(name: str) -> str | None:
    value = (request.form.get(name) or (request.get_json(silent=True) or {}).get(name) or "").strip()
    return str(value) or None


def _int_field(name: str) -> int | None:
    value = _field(name)
    if value is None:
        return None
    if not value.isdigit() or len(value) > 9:
        raise HudiMetaError(f"{name} must be a whole number, got {value[:40]!r}")
    return int(value)


def _schedule(table: HudiTable) -> dict[str, Any]:
    threshold, latency = _field("threshold"), _field("data_latency")
    mode = _field("mode") or "symlink"
    if mode not in MODES:
        raise HudiMetaError(f"mode must be one of {', '.join(MODES)}")
    request_ = ScheduleRequest(
        threshold_ms=parse_time_ms(threshold) if threshold else None,
        data_latency_ms=parse_duration_ms(latency) if latency else None,
        mode=mode,
        exact=_field("exact") in ("on", "true", "1"),
    )
    result = schedule_compaction(store.engine(), table, request_)
    plan = result.plan
    out = {
        "instant": result.instant,
        "reason": result.reason,
        "threshold_ms": result.threshold_ms,
        "operations": len(plan.operations) if plan else 0,
        "links": sum(len(op.symlink_operations) for op in plan.operations) if plan else 0,
    }
    if result.instant:
        threshold_text = format_time_ms(result.threshold_ms) if result.threshold_ms is not None else "-"
        out["message"] = (
            f"scheduled compaction {result.instant}: {out['operations']} operations, {out['links']} links, "
            f"threshold {threshold_text}"
        )
    else:
        out["message"] = f"nothing scheduled: {result.reason}"
    return out


def _clean(table: HudiTable) -> dict[str, Any]:
    policy = CleanPolicy.from_properties(
        table.config.props, _field("policy"), _int_field("retained"), _int_field("hours")
    )
    check_cleanable(table)
    outcome = run_clean(store.engine(), table, policy, execute=False)
    summary = outcome.plan.summary if outcome.plan is not None else outcome.note or "nothing to clean"
    return {"message": f"clean plan (dry run, nothing deleted): {summary}", "files": format_reports(outcome.reports)}


def _sync(table: HudiTable) -> dict[str, Any]:
    catalog = current_app.config.get("CATALOG")
    if not catalog:
        raise HudiMetaError("no catalog is configured for this UI: sync is not available")
    report = sync_recorded(store.engine(), table, SyncTarget(**catalog))
    changes = len(report.actions)
    message = f"synced {', '.join(report.tables)}: {changes} changes" if changes else "catalog up to date"
    return {"message": message, **report.as_dict()}


RUNNERS = {"schedule": _schedule, "clean": _clean, "sync": _sync}


@bp.post("/tables/<int:table_id>/actions/<name>")
@bp.post("/api/v1/tables/<int:table_id>/actions/<name>", endpoint="act_api")
@action_required
def act(table_id: int, name: str) -> Any:
    if name not in RUNNERS:
        abort(404, f"no action {name!r} ({', '.join(ACTIONS)})")
    row = table_or_404(table_id)
    try:
        options = (current_app.config.get("STORAGE_OPTIONS") or {}).get(row.base_path)
        result = RUNNERS[name](HudiTable.open(row.base_path, options))
    except HudiMetaError as e:
        if wants_json():
            abort(400, str(e))
        flash(f"{name}: {e}", "error")
        return redirect(url_for("tables.table", table_id=table_id)), 303
    if wants_json():
        return jsonify(result)
    if name == "clean":
        return render_template("clean_plan.html", table=row, result=result)
    flash(result["message"])
    return redirect(url_for("tables.table", table_id=table_id)), 303
