"""The argparse types built from the shared value parsers (hudi_meta/cli/common.py): any text is a value or
argparse's usage error (one line), never another exception that argparse would turn into a vaguer message."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.cli import common, compaction_commands, serve_command, sync_command

ARG_TYPES: list[Callable[[str], object]] = [
    common.TIME,
    common.POINT,
    common.DURATION,
    common.SHARE,
    common.INSTANT,
    common.TEXT,
    common.COLUMNS,
    common.whole(1, 10),
    compaction_commands.THRESHOLD,
    compaction_commands.DATA_LATENCY,
    sync_command.TIMEOUT,
    sync_command.IDENTIFIER,
    serve_command.PORT,
    serve_command.THREADS,
]


@given(st.one_of(st.text(), st.text(alphabet="0123456789-.:TZdhms ２²", max_size=30)))
def test_every_argument_type_answers_a_value_or_a_usage_error(text: str) -> None:
    for arg_type in ARG_TYPES:
        try:
            arg_type(text)
        except argparse.ArgumentTypeError as e:
            assert str(e) and "\n" not in str(e)
