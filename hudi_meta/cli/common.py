"""What every command group shares: the parser class, value spellings with Hudi's names as aliases, argument
types from the shared value parsers, the checks for the Spark and Hive extras, and the warning when the API could
not bring the store up to date after a command changed the table."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

from hudi_meta.api import (
    DB_ENV,
    HIVE_EXTRA,
    IndexRefresh,
    Spelled,
    fold,
    parse_duration_ms,
    parse_point,
    parse_time_ms,
)
from hudi_meta.errors import BadValueError, HudiMetaError
from hudi_meta.values import parse_instant_time, parse_share, parse_text, parse_whole, shown

EXIT_USAGE = 2
SPARK_EXTRA = "pip install 'hudi-meta[spark]'"
SPARK_MODULES = ("pyspark", "pandas")  # what the `spark` extra installs
HIVE_MODULES = ("pymetastore", "pyhive", "tenacity")  # what the `hive` extra installs

Command = Callable[[argparse.Namespace], int]
Subparsers = Any  # argparse's _SubParsersAction (private generic)
T = TypeVar("T")


class Parser(argparse.ArgumentParser):
    """Usage errors are one line and exit 2, like every other error a user can cause."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """argparse's defaults in help, except where the help already says what the default is (a default
    computed at run time, such as the table's own setting)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        return text if "(default:" in text else super()._get_help_string(action)


def add_global_options(parser: argparse.ArgumentParser, after_command: bool = False) -> None:
    """`--db`, `--debug`, `-v/--verbose` and `-q/--quiet`: given before the command, or after it (`after_command`:
    set only when given there, so they never reset what was given before)."""
    given: dict[str, Any] = {"default": argparse.SUPPRESS} if after_command else {}
    before = " (default: as given before the command)" if after_command else ""
    parser.add_argument(
        "--db",
        type=TEXT,
        help=f"metadata store URL or SQLite file (default: ${DB_ENV}, else a SQLite file in the data folder)",
        **given,
    )
    options = (
        (("--debug",), "print the traceback of any error on stderr"),
        (("-v", "--verbose"), "log what changes a table (instants, deletes, moves)"),
        (("-q", "--quiet"), "log errors only (no warnings)"),
    )
    for flags, text in options:
        parser.add_argument(*flags, action="store_true", help=text + before, **given)


def _global_options_after_command() -> Parser:
    parser = Parser(add_help=False)
    add_global_options(parser, after_command=True)
    return parser


def add_command(sub: Subparsers, name: str, func: Command | None, help: str, **kwargs: Any) -> Parser:
    """A subcommand whose options show their defaults and that runs `func` (None: it has subcommands); the
    global options are taken after it too."""
    kwargs.setdefault("parents", [_global_options_after_command()])
    parser: Parser = sub.add_parser(name, help=help, description=help, formatter_class=HelpFormatter, **kwargs)
    if func is not None:
        parser.set_defaults(func=func)
    return parser


@dataclass(frozen=True, eq=False)  # hashed by identity: argparse looks a `type` up in its registry
class Choice:
    """An option value of a small set, in one spelling (lower case, hyphens) and any case; argparse lists the
    names. The closed sets of the table services (strategy, trigger, link mode, clean policy) are `Spelled`
    enums instead (`SpelledChoice`), with Hudi's spellings as aliases."""

    names: Sequence[str]
    aliases: Mapping[str, str]

    @classmethod
    def of(cls, names: Sequence[str], aliases: Mapping[str, str] | None = None) -> Choice:
        return cls(tuple(names), {fold(k): v for k, v in (aliases or {}).items()})

    def __call__(self, text: str) -> str:
        folded = fold(text)
        if folded in self.names:
            return folded
        # an unknown value goes back as typed: argparse then names it and lists the choices
        return self.aliases.get(folded, text)

    def add(self, parser: argparse.ArgumentParser | Any, flag: str, default: str, help: str) -> None:
        parser.add_argument(flag, type=self, choices=self.names, default=default, help=help)


@dataclass(frozen=True, eq=False)
class SpelledChoice:
    """An option whose value is a `Spelled` enum member, read in any of its spellings (`Spelled.parse`)."""

    kind: type[Spelled]

    def __call__(self, text: str) -> Spelled:
        try:
            return self.kind.parse(text)
        except BadValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    def add(self, parser: argparse.ArgumentParser | Any, flag: str, default: Spelled, help: str) -> None:
        metavar = "{" + ",".join(self.kind.spellings()) + "}"
        parser.add_argument(flag, type=self, default=default, metavar=metavar, help=help)


def arg_type(parse: Callable[[str], T], name: str) -> Callable[[str], T]:
    """An argparse `type` from a value parser: every argument is parsed and range-checked while the command line
    is read, before a command opens a store or a table, and a bad one is argparse's one line naming the option
    (`argument --threshold: not a time: ...`), exit 2."""

    def convert(text: str) -> T:
        try:
            return parse(text)
        except BadValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = name  # argparse names the type in messages for other errors
    return convert


def whole(low: int, high: int) -> Callable[[str], int]:
    """A whole number from `low` to `high` (ASCII digits)."""
    return arg_type(lambda text: parse_whole(text, low, high), "whole number")


TEXT = arg_type(parse_text, "text")  # paths, URLs, field names: not empty
TIME = arg_type(parse_time_ms, "time")  # epoch ms, from 1970 to 9999
POINT = arg_type(parse_point, "time or instant")  # --begin/--end/--as-of, placed in the table's zone later
DURATION = arg_type(parse_duration_ms, "duration")  # ms, at most 100 years
SHARE = arg_type(parse_share, "share")
INSTANT = arg_type(parse_instant_time, "instant time")


def require_spark(what: str) -> None:
    """Refuse before doing anything when the `spark` extra is not installed."""
    missing = [m for m in SPARK_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise HudiMetaError(f"{what} needs Spark ({', '.join(missing)} not installed): {SPARK_EXTRA}")


def require_hive(what: str) -> None:
    """Refuse before doing anything when the `hive` extra (catalog clients) is not installed."""
    missing = [m for m in HIVE_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise HudiMetaError(f"{what} needs the catalog clients ({', '.join(missing)} not installed): {HIVE_EXTRA}")


def parse_columns(text: str) -> list[str]:
    """`--columns a,b`: the names, at least one (an empty list is a mistake, not "every column")."""
    columns = [c.strip() for c in text.split(",") if c.strip()]
    if not columns:
        raise BadValueError(f"expected comma-separated column names, got {shown(text)}")
    return columns


COLUMNS = arg_type(parse_columns, "columns")


def warn_if_not_refreshed(refresh: IndexRefresh) -> None:
    """After a command changed the table: name a store that could not be brought up to date (the table's change
    is done either way, and the next `index` run catches up)."""
    if refresh.failure is not None:
        print(f"hudi-meta: warning: the metadata store was not updated: {refresh.failure}", file=sys.stderr)
