"""The CLI goes through the Python API (issue 37, "one front door"): every module under hudi_meta/cli imports from
hudi_meta only the API, the shared errors and values, the CLI's own modules and the entry points of what a
command starts (the service, the web UI, the demo, Spark ingest). Any other import of hudi_meta is a CLI command
reaching around the API into the layers under it."""

from __future__ import annotations

import ast
from pathlib import Path

import hudi_meta.cli

ALLOWED = (
    "hudi_meta.api",  # the front door: every operation, its results and the words it reads and prints with
    "hudi_meta.errors",  # the errors a user sees as one line, caught and re-worded with a flag's name
    "hudi_meta.values",  # the checked values a user types (numbers, names, instants): argparse types
    "hudi_meta.cli",  # the CLI's own modules
    "hudi_meta.service",  # `serve` and `config check`: the service's entry points (config, loop, runner, sockets)
    "hudi_meta.web",  # `serve`: the web UI's app factory
    "hudi_meta.demo",  # `generate` and `quickstart`: the demo's entry points
    "hudi_meta.spark.ingest",  # `ingest`: Spark ingest is an entry point of its own (the `spark` extra)
)
PACKAGE_ROOT = {"__version__"}  # `from hudi_meta import __version__` (`--version`)


def imported(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every import in the module at `path`, at any depth (lazy imports too)."""
    found: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module, [alias.name for alias in node.names]))
    return found


def allowed(module: str, names: list[str]) -> bool:
    if module == "hudi_meta":
        return set(names) <= PACKAGE_ROOT
    if module != "hudi_meta" and not module.startswith("hudi_meta."):
        return True  # not hudi-meta's own
    return any(module == prefix or module.startswith(prefix + ".") for prefix in ALLOWED)


def test_the_cli_imports_only_the_api_of_the_core() -> None:
    folder = Path(hudi_meta.cli.__file__).parent
    modules = sorted(folder.rglob("*.py"))
    assert len(modules) > 10
    wrong = [
        f"{path.relative_to(folder.parent.parent)}:{line}: {module}"
        for path in modules
        for line, module, names in imported(path)
        if not allowed(module, names)
    ]
    assert not wrong, "hudi_meta/cli reaches around hudi_meta.api:\n" + "\n".join(wrong)


def test_the_check_sees_a_reach_around() -> None:
    assert not allowed("hudi_meta.index.store", ["open_store"])
    assert not allowed("hudi_meta.apiary", [])
    assert not allowed("hudi_meta", ["open_table"])
    assert allowed("hudi_meta.api", ["open_table"]) and allowed("sqlalchemy", ["Engine"])
