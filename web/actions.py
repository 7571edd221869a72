"""Actions (need the UI token, see web/auth.py): schedule an event-time compaction, run a pending one (in this
process: the UI has no Spark session), plan a clean (dry run: nothing is deleted), sync the freshness into the
configured catalog. Each is served at `/tables/<id>/actions/<name>` (a form post: the result is shown on the
page) and at `/api/v1/tables/<id or name>/actions/<name>` (JSON). Every field is read in its own type
(`common.Body`: JSON numbers and booleans, or a form's strings) and checked before the table is opened. Only the
table the store registered is opened: its base path comes from the store, never from the request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint, abort, current_app, flash, jsonify, redirect, render_template, url_for

from hudi_meta.api import Table
from hudi_meta.clean.run import format_reports
from hudi_meta.compaction.schedule import ScheduleRequest
from hudi_meta.errors import BadValueError, HudiMetaError
from hudi_meta.format.links import LinkMode
from hudi_meta.index.browse import TableRow
from hudi_meta.sync.recorded import SyncTarget
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import format_duration_ms, now_ms
from hudi_meta.write.clean_plan import MAX_HOURS_RETAINED, MAX_RETAINED, Policy

from . import store
from .auth import action_required
from .common import INSTANT_RE, Body, action_body, table_by_ref, wants_json

bp = Blueprint("actions", __name__)
Run = Callable[[HudiTable], dict[str, Any]]  # an action with its fields checked, waiting for its table


def _schedule(body: Body) -> Run:
    mode = body.text("mode")
    request_ = ScheduleRequest(
        threshold_ms=body.time_ms("threshold"),
        data_latency_ms=body.duration_ms("data_latency"),
        mode=LinkMode.parse(mode, "mode") if mode is not None else LinkMode.SYMLINK,
        exact=body.flag("exact"),
    )
    request_.validate(now_ms())
    return lambda table: _scheduled(table, request_)


def _api(table: HudiTable) -> Table:
    """The registered table as the Python API opens it, on the UI's store: the CLI's operations, the same code."""
    return Table(table.uri, store.engine(), table.storage.options)


def _scheduled(table: HudiTable, request_: ScheduleRequest) -> dict[str, Any]:
    result = _api(table).schedule(request_)
    return {**result.to_dict(), "message": str(result)}


def _run(body: Body) -> Run:
    instant = body.text("instant")
    if instant is not None and not INSTANT_RE.match(instant.strip()):
        raise BadValueError(f"instant: not an instant time: {instant[:40]!r} (17 digits, e.g. 20261128141800297)")
    return lambda table: _ran(table, instant.strip() if instant is not None else None)


def _ran(table: HudiTable, instant: str | None) -> dict[str, Any]:
    """Run the pending compaction `instant` (None: the oldest) with the local engine, as `hudi-meta compaction
    run --engine local` does, index what it wrote, and say what that was from its commit."""
    summary = _api(table).run_compaction(instant)
    table.reload()
    done = table.timeline.instant(summary.instant)
    assert done is not None and done.is_completed
    stats = [s for group in table.timeline.commit_metadata(done).partition_to_write_stats.values() for s in group]
    return {
        "message": f"completed compaction {summary.instant}: {len(stats)} base files written "
        f"({summary.records_written} records, {summary.bytes_written} bytes), {summary.log_files_compacted} log "
        f"files merged, {summary.links} kept as links or copies, in {format_duration_ms(summary.duration_ms)}",
        **summary.to_dict(),
        "files": [
            {"partition": s.partition_path, "path": s.path, "records": s.num_writes, "bytes": s.total_write_bytes}
            for s in stats
        ],
    }


def _clean(body: Body) -> Run:
    text = body.text("policy")
    policy = Policy.parse(text, "policy") if text is not None else None
    retained = body.whole("retained", 0, MAX_RETAINED)
    hours = body.whole("hours", 0, MAX_HOURS_RETAINED)
    return lambda table: _cleaned(table, policy, retained, hours)


def _cleaned(table: HudiTable, policy: Policy | None, retained: int | None, hours: int | None) -> dict[str, Any]:
    outcome = _api(table).clean(policy, retained, hours, dry_run=True)
    summary = outcome.plan.summary if outcome.plan is not None else outcome.note or "nothing to clean"
    return {"message": f"clean plan (dry run, nothing deleted): {summary}", "files": format_reports(outcome.reports)}


def _sync(body: Body) -> Run:
    catalog = current_app.config.get("CATALOG")
    if not catalog:
        raise HudiMetaError("no catalog is configured for this UI: sync is not available")
    target = SyncTarget(**catalog)
    target.validate()
    return lambda table: _synced(table, target)


def _synced(table: HudiTable, target: SyncTarget) -> dict[str, Any]:
    t = target
    report = _api(table).sync(t.mode, t.uri, t.database, t.name, t.timeout_s, t.as_datasource)
    changes = len(report.actions)
    message = f"synced {', '.join(report.tables)}: {changes} changes" if changes else "catalog up to date"
    return {"message": message, **report.to_dict()}


# each action: the fields it takes, and what checks them (before its table is opened) into a run
ACTIONS: dict[str, tuple[tuple[str, ...], Callable[[Body], Run]]] = {
    "schedule": (("threshold", "data_latency", "mode", "exact"), _schedule),
    "run": (("instant",), _run),
    "clean": (("policy", "retained", "hours"), _clean),
    "sync": ((), _sync),
}


@bp.post("/tables/<int:table_id>/actions/<name>")
@action_required
def act(table_id: int, name: str) -> Any:
    """Run an action from the table's page: its result is flashed (a clean's plan and a run's files shown)."""
    return _act(table_by_ref(table_id), name)


@bp.post("/api/v1/tables/<table_ref>/actions/<name>")
@action_required
def act_api(table_ref: str, name: str) -> Any:
    """Run an action (schedule, run, clean, sync) on a table; the body holds its fields (needs the token)."""
    return _act(table_by_ref(table_ref), name)


def _act(row: TableRow, name: str) -> Any:
    if name not in ACTIONS:
        abort(404, f"no action {name!r} ({', '.join(ACTIONS)})")
    try:
        fields, check = ACTIONS[name]
        run = check(action_body(fields))  # every field, before anything is read or written
        options = (current_app.config.get("STORAGE_OPTIONS") or {}).get(row.base_path)
        result = run(HudiTable.open(row.base_path, options))
    except HudiMetaError as e:
        if wants_json():
            abort(400, str(e))
        flash(f"{name}: {e}", "error")
        return redirect(url_for("tables.table", table_id=row.id)), 303
    if wants_json():
        return jsonify(result)
    if name in ("clean", "run"):
        return render_template(f"{name}_result.html", table=row, result=result, name=name)
    flash(result["message"])
    return redirect(url_for("tables.table", table_id=row.id)), 303
