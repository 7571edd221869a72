"""Lineage of a file group, or of the one physical log file a given log file shows: what each compaction merged
into which base file below which threshold, which slice shows which physical file under which name, and which
clean removed what, drawn as an SVG graph."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, render_template

from hudi_meta.index import browse
from hudi_meta.index.browse import LineageRows

from . import store
from .common import table_or_404, text_arg
from .file_stats import group_compactions, log_file_stats
from .lineage_graph import lineage_graph

bp = Blueprint("lineage", __name__)


def lineage_request(table_id: int) -> tuple[LineageRows, str | None]:
    """The lineage rows a request names: `partition` and `file_id`, or `partition` and `file` (a log file
    name, whose group it is). 404 when the store knows no such file group or file."""
    partition = text_arg("partition", required=True)
    file_id = text_arg("file_id")
    name = text_arg("file")
    assert partition is not None
    if (file_id is None) == (name is None):
        abort(400, "give file_id (a file group) or file (a log file name)")
    if name is not None:
        file_id = browse.group_of_file(name)
        if file_id is None:
            abort(404, "not a Hudi file name")
    assert file_id is not None
    rows = browse.lineage(store.connection(), table_id, partition, file_id)
    if rows is None:
        abort(404, "the store knows no such file group")
    if (
        name is not None
        and name not in rows.physical
        and name not in {x.link for x in rows.links} | {x.target for x in rows.links} | set(rows.cleaned)
    ):
        abort(404, "the store knows no such log file")
    return rows, name


@bp.get("/tables/<int:table_id>/lineage")
def lineage(table_id: int) -> Any:
    t = table_or_404(table_id)
    rows, name = lineage_request(table_id)
    conn = store.connection()
    compactions = group_compactions(conn, table_id, rows.partition, rows.file_id)
    names = set(rows.physical) | {x.link for x in rows.links} | {x.target for x in rows.links}
    stats = log_file_stats(conn, table_id, {(rows.partition, n) for n in names})
    graph = lineage_graph(rows, name, compactions, {n: s for (_, n), s in stats.items()})
    return render_template("lineage.html", table=t, rows=rows, graph=graph, focus=name)
