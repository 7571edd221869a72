"""Text output of rows about a table (issue 29): one time format (ISO-8601 UTC), durations as `4m 12s`,
yes/no, mappings as `key=value`, lists comma-separated; never a Python repr. JSON keeps what is stored."""

from __future__ import annotations

import io
import json

from hudi_meta.cli.output import readable, write_rows

ROW = {
    "instant": "20261128141203586",
    "threshold": 1_795_874_523_575,
    "exact": False,
    "lag_ms": 252_000,
    "summary": {"compacted": True, "partitions": ["region=eu", "region=us"], "threshold": "1795874523575"},
    "log_files": [".a.log.1_0-1-0", ".b.log.1_0-1-0"],
    "records": 3,
    "via": None,
}


def test_text_is_read_by_people() -> None:
    assert readable(ROW) == {
        "instant": "20261128141203586",  # an instant stays an instant
        "threshold": "2026-11-28T14:02:03.575Z",
        "exact": "no",
        "lag_ms": "4m 12s",
        "summary": "compacted=yes partitions=region=eu,region=us threshold=2026-11-28T14:02:03.575Z",
        "log_files": ".a.log.1_0-1-0, .b.log.1_0-1-0",
        "records": 3,  # a count stays a number
        "via": None,
    }
    text = io.StringIO()
    write_rows([ROW], as_json=False, out=text)
    assert "False" not in text.getvalue() and "{" not in text.getvalue() and "[" not in text.getvalue()


def test_json_keeps_what_is_stored() -> None:
    out = io.StringIO()
    write_rows([ROW], as_json=True, out=out)
    assert json.loads(out.getvalue()) == [ROW]
