"""Issue 9 "The CLI": every option has help text and shows its default, exclusive options are declared,
commands dispatch through `set_defaults(func=...)`, values have one spelling with Hudi's names as aliases."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from hudi_meta.cli.main import build_parser


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command that runs something, as ("compaction run", its parser)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield " ".join(path), parser
    for sub in subs:
        for name, child in sub.choices.items():
            yield from commands(child, (*path, name))


ALL = dict(commands(build_parser()))


def test_the_commands_are_the_documented_ones() -> None:
    assert sorted(ALL) == [
        "archive",
        "check",
        "clean",
        "compaction repair",
        "compaction run",
        "compaction schedule",
        "compaction unschedule",
        "compaction validate",
        "config check",
        "freshness",
        "generate",
        "index",
        "ingest",
        "init-db",
        "metrics",
        "quickstart",
        "read",
        "register",
        "rollback",
        "serve",
        "show",
        "sync",
    ]


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_command_dispatches_through_set_defaults(name: str) -> None:
    assert callable(ALL[name].get_default("func")), name


@pytest.mark.parametrize("name", ["", *sorted(ALL)])
def test_every_option_has_help_and_shows_its_default(name: str) -> None:
    parser = ALL[name] if name else build_parser()
    no_default = (argparse._HelpAction, argparse._VersionAction)
    options = [a for a in parser._actions if a.option_strings and not isinstance(a, no_default)]
    help_text = " ".join(parser.format_help().split())
    for action in options:
        assert action.help, f"{name} {action.option_strings[0]} has no help"
        flag = action.option_strings[-1]  # the long spelling: `-v, --verbose` is read from `--verbose`
        after = help_text[help_text.index(flag, help_text.index("options:")) :]
        assert re.search(r"\(default: [^)]+\)", after.split(" --", 1)[0]), f"{name} {flag}: no default shown"


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_value_has_one_spelling(name: str) -> None:
    """Choices are lower case words joined by hyphens (`event-time`, not `EVENT_TIME_TRIGGER`)."""
    for action in ALL[name]._actions:
        for choice in action.choices or ():
            if isinstance(choice, str):
                assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", choice), (name, choice)


@pytest.mark.parametrize(
    "args, dest, expected",
    [
        # Hudi's CompactionTriggerStrategy names (hoodie.compact.inline.trigger.strategy) and ours
        (["--trigger", "NUM_COMMITS"], "trigger", "num-commits"),
        (["--trigger", "TIME_ELAPSED"], "trigger", "time-elapsed"),
        (["--trigger", "EVENT_TIME_TRIGGER"], "trigger", "event-time"),
        (["--trigger", "event-time"], "trigger", "event-time"),
        # Hudi's compaction strategy classes (hoodie.compaction.strategy), short or fully qualified
        (["--strategy", "LogFileSizeBasedCompactionStrategy"], "strategy", "log-file-size"),
        (
            ["--strategy", "org.apache.hudi.table.action.compact.strategy.UnBoundedCompactionStrategy"],
            "strategy",
            "unbounded",
        ),
        (["--strategy", "EventTimeBasedCompactionStrategy"], "strategy", "event-time"),
        (["--mode", "COPY"], "mode", "copy"),
    ],
)
def test_hudi_names_are_aliases(args: list[str], dest: str, expected: str) -> None:
    parsed = build_parser().parse_args(["compaction", "schedule", "t", *args])
    assert getattr(parsed, dest) == expected


def test_hudi_query_types_are_aliases() -> None:
    # hoodie.datasource.query.type: snapshot | read_optimized | incremental
    parse = build_parser().parse_args
    assert parse(["read", "t", "--query", "read_optimized"]).query == "ro"
    assert parse(["read", "t", "--query", "SNAPSHOT"]).query == "snapshot"
    assert parse(["read", "t", "--query", "incremental"]).query == "incremental"


def test_threshold_and_data_latency_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["compaction", "schedule", "t", "--threshold", "0", "--data-latency", "1h"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        "hudi-meta compaction schedule: error: argument --data-latency: not allowed with argument --threshold"
    )
    usage = " ".join(ALL["compaction schedule"].format_usage().split())
    assert "[--threshold THRESHOLD | --data-latency DATA_LATENCY]" in usage
