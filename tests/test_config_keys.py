"""Issue 37: Hudi config keys have one home, `hudi_meta/format/config_keys.py` (the compaction's plan parameters
and commit metadata keys theirs, `hudi_meta/format/links.py`); code names a key through it, never as a literal.

The check reads every module under hudi_meta/ and spark/ with `ast` and reports each string constant (or f-string
fragment) that starts with `hoodie.`; docstrings are prose and are skipped, and so is the file name
`hoodie.properties`. What may still hold one is listed below with its reason.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import hudi_meta
from hudi_meta.format import config_keys, links
from hudi_meta.format.config_keys import ConfigKey

REPO = Path(hudi_meta.__file__).parent.parent
ROOTS = ("hudi_meta", "spark")
REGISTRIES = ("hudi_meta/format/config_keys.py", "hudi_meta/format/links.py")
# files another change is rewriting, left to it (path prefixes): hudi_meta/cli/ and hudi_meta/api.py were, until the
# front door (the CLI through hudi_meta.api) merged; they hold no key literal now, so nothing is pending
PENDING: tuple[str, ...] = ()
# literals that start with `hoodie.` but name no key, each with its file and why
NOT_KEYS = {
    ("hudi_meta/format/avro_arrow.py", "hoodie."): "the Avro namespace `hoodie.<table>` of Hudi's record schemas",
}
# field names inside the metadata table's own payload records (HoodieMetadataRecord) that start with `hoodie.`: none
# today; one would be listed here as (file, name), since it is a record field, not a config key
MDT_FIELD_NAMES: frozenset[tuple[str, str]] = frozenset()
_KEY_TOKEN = re.compile(r"hoodie\.[A-Za-z0-9_.]*")
PROPERTIES_FILE = "hoodie.properties"


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the string constants that are docstrings or other bare string statements (prose, not values)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }


def key_literals(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of each string constant in `source` that starts with a `hoodie.` name other than the file
    `hoodie.properties`; docstrings are left out."""
    tree = ast.parse(source)
    prose = _docstrings(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in prose:
            continue
        token = _KEY_TOKEN.match(node.value)
        if token is not None and token.group().rstrip(".") != PROPERTIES_FILE:
            yield node.lineno, node.value


def stray_key_literals() -> list[str]:
    """`path:line 'text'` of every key literal outside the registries and the lists above."""
    found = []
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel in REGISTRIES or rel.startswith(PENDING):
                continue
            for line, text in key_literals(path.read_text(encoding="utf-8")):
                if (rel, text) not in NOT_KEYS and (rel, text) not in MDT_FIELD_NAMES:
                    found.append(f"{rel}:{line} {text!r}")
    return found


def registry() -> list[ConfigKey[object]]:
    return [v for v in vars(config_keys).values() if isinstance(v, ConfigKey)]


def test_finder_reports_keys_and_skips_prose() -> None:
    source = '''"""Reads `hoodie.table.name`."""
KEY = "hoodie.table.type"
FILE = "hoodie.properties"
def f(x: str) -> str:
    """hoodie.docs are prose."""
    return f"hoodie.{x}" + "see hoodie.table.name" + ".hoodie/hoodie.properties"
'''
    assert list(key_literals(source)) == [(2, "hoodie.table.type"), (6, "hoodie.")]


def test_no_hoodie_key_literal_outside_the_registry() -> None:
    assert stray_key_literals() == []


def test_allowances_still_needed() -> None:
    """An allowance whose literal is gone is dropped from the list, so the list never hides a new one."""
    for rel, text in NOT_KEYS.keys() | MDT_FIELD_NAMES:
        assert text in [t for _, t in key_literals((REPO / rel).read_text(encoding="utf-8"))], (rel, text)


def test_registry_names_are_unique_and_documented() -> None:
    keys = registry()
    names = [k.name for k in keys]
    assert len(names) == len(set(names)) > 40
    for key in keys:
        assert key.name.startswith("hoodie."), key.name
        assert key.doc and "\n" not in key.doc, key.name
        assert key.of({}) == key.default


def test_links_keys_are_not_config_keys() -> None:
    """links.py holds the plan and commit fields only; one that reuses a config key's name takes it from the
    registry (the event-time field), so no name is spelled in both."""
    names = {k.name for k in registry()}
    spelled = {text for _, text in key_literals(Path(links.__file__).read_text(encoding="utf-8"))}
    assert spelled and not spelled & names
    assert config_keys.EVENT_TIME_FIELD.name == links.EVENT_TIME_FIELD_PARAM


@pytest.mark.parametrize(
    ("key", "props", "value"),
    [
        (config_keys.POPULATE_META_FIELDS, {}, True),
        (config_keys.POPULATE_META_FIELDS, {"hoodie.populate.meta.fields": "FALSE"}, False),
        (config_keys.MIN_EVENT_TIME_HEADER, {"hoodie.log.block.min.event.time.header": "True"}, True),
        (config_keys.TABLE_VERSION, {"hoodie.table.version": "9"}, 9),
        (config_keys.EVENT_TIME_FIELD, {"hoodie.payload.event.time.field": ""}, ""),
        (config_keys.TIMELINE_TIMEZONE, {}, "LOCAL"),
    ],
)
def test_of_reads_text_or_default(key: ConfigKey[object], props: dict[str, str], value: object) -> None:
    assert key.of(props) == value


def test_or_default_takes_empty_as_unset() -> None:
    assert config_keys.ARCHIVELOG_FOLDER.or_default({"hoodie.archivelog.folder": ""}) == "archived"
    assert config_keys.ARCHIVELOG_FOLDER.of({"hoodie.archivelog.folder": ""}) == ""
    assert config_keys.CLEAN_POLICY.or_default({}) == "KEEP_LATEST_COMMITS"
