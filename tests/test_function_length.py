"""Issue 37: no function in hudi_meta/ is over 80 lines (def line to last line), so each reads on one screen."""

from __future__ import annotations

import ast
from pathlib import Path

import hudi_meta

MAX_LINES = 80
PACKAGE = Path(hudi_meta.__file__).parent


def long_functions(root: Path, limit: int = MAX_LINES) -> list[str]:
    """`path:line name (length)` of every function or method under `root` longer than `limit` lines."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name} ({length})")
    return found


def test_long_functions_counts_def_to_last_line(tmp_path: Path) -> None:
    """The counter itself: a function of exactly `limit` lines passes, one line more is reported."""
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES - 1))
    (tmp_path / "ok.py").write_text(f"def fits():\n{body}\n")
    (tmp_path / "long.py").write_text(
        f"class C:\n    def over(self):\n    {body.replace(chr(10), chr(10) + '    ')}\n        y = 0\n"
    )
    assert long_functions(tmp_path) == [f"{tmp_path.name}/long.py:2 over ({MAX_LINES + 1})"]


def test_no_function_over_80_lines() -> None:
    assert long_functions(PACKAGE) == []
