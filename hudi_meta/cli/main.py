"""`hudi-meta` command line.

Errors a user can cause (bad arguments and values, a table or file that is missing or unreadable, a store that does
not work, a missing extra) are one line on stderr and exit code 2; a catalog unreachable through every retry exits 4
(run again later). Anything else is a bug: exit 1 with one line naming a log file that holds the traceback
(`--debug` prints it instead). Ctrl-C exits 130.

Run as a program, the process ends with `os._exit` once its output is flushed: interpreter shutdown is where
native thread pools race it (pyarrow's IO threads releasing Python-owned read buffers after `Py_Finalize`
began abort the process with `terminate called without an active exception`), and a finished command has
nothing left for shutdown to do.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import errno
import os
import sys
import tempfile
import traceback
from collections.abc import Sequence
from pathlib import Path

from sqlalchemy.exc import (
    ArgumentError,
    DatabaseError,
    InterfaceError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)

from hudi_meta import __version__
from hudi_meta.api import store_name
from hudi_meta.cli import (
    archive_command,
    check_command,
    clean_command,
    compaction_admin_commands,
    compaction_commands,
    data_commands,
    freshness_command,
    metrics_command,
    read_command,
    serve_command,
    store_commands,
    sync_command,
)
from hudi_meta.cli.common import EXIT_USAGE, HelpFormatter, Parser, add_global_options
from hudi_meta.cli.terminal import log_errors_only, log_to_stderr
from hudi_meta.errors import HudiMetaError, ParameterError, UnavailableError, first_line

PROG = "hudi-meta"
EXIT_OK = 0
EXIT_BUG = 1
EXIT_UNAVAILABLE = 4  # a catalog unreachable through every retry: run again later (3: check's findings)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
LOG_DIR_ENV = "HUDI_META_LOG_DIR"
# errors of a path the user gave (or that the table names): theirs to fix, not ours
USER_ERRNOS = frozenset(
    {errno.ENOENT, errno.EACCES, errno.EPERM, errno.EISDIR, errno.ENOTDIR, errno.ELOOP, errno.ENAMETOOLONG}
)
# a store that does not work (cannot connect, not a database, no driver); IntegrityError, ProgrammingError and
# the like are the store refusing what hudi-meta sent: bugs
STORE_ERRORS = (OperationalError, InterfaceError, ArgumentError, NoSuchModuleError)


def _is_store_error(e: SQLAlchemyError) -> bool:
    return isinstance(e, STORE_ERRORS) or type(e) is DatabaseError  # plain DatabaseError: e.g. not a SQLite file


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description="Metadata and event-time compaction for Hudi Merge-On-Read tables",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    add_global_options(parser)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser, metavar="COMMAND")
    store_commands.add_commands(sub)
    read_command.add_commands(sub)
    compaction_commands.add_commands(sub)
    compaction_admin_commands.add_commands(sub)
    clean_command.add_commands(sub)
    archive_command.add_commands(sub)
    check_command.add_commands(sub)
    freshness_command.add_commands(sub)
    sync_command.add_commands(sub)
    metrics_command.add_commands(sub)
    data_commands.add_commands(sub)
    serve_command.add_commands(sub)
    return parser


def run(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` and run the command; every outcome is an exit code (nothing is raised)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # usage errors and --help
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        return _interrupted()
    except Exception as e:  # a parser that cannot be built
        given = sys.argv[1:] if argv is None else argv
        return _bug(argparse.Namespace(debug="--debug" in given), e)
    if args.verbose and args.quiet:
        print(f"{PROG}: error: -v/--verbose and -q/--quiet together: give one", file=sys.stderr)
        return EXIT_USAGE
    if args.verbose:
        log_to_stderr()
    if args.quiet:
        log_errors_only()
    try:
        code: int = args.func(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:  # the reader went away (e.g. `| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        return _interrupted()
    except UnavailableError as e:
        return _user_error(args, e, first_line(e), EXIT_UNAVAILABLE)
    except ParameterError as e:  # the API names its parameters; the user typed options
        return _user_error(args, e, e.worded(option_names(e.parameters)).splitlines()[0])
    except HudiMetaError as e:
        return _user_error(args, e, first_line(e))
    except SQLAlchemyError as e:
        if _is_store_error(e):
            return _user_error(args, e, f"metadata store {store_name(args.db)}: {_cause_line(e)}")
        return _bug(args, e)
    except OSError as e:
        if e.errno in USER_ERRNOS and e.filename is not None:
            return _user_error(args, e, f"{e.filename}: {e.strerror}")
        return _bug(args, e)
    except Exception as e:  # everything else is a bug in hudi-meta (SQLAlchemyError too, but the ones above)
        return _bug(args, e)


def main(argv: Sequence[str] | None = None) -> int:
    """The `hudi-meta` entry point. With `argv` (in-process callers, tests) it returns the exit code; as the
    program (`argv` None) it ends the process without interpreter shutdown (see the module docstring)."""
    code = run(argv)
    if argv is None:
        _exit_process(code)
    return code


def option_names(parameters: Sequence[str]) -> dict[str, str]:
    """The option each API parameter is given by: `as_of` by `--as-of` (the CLI's options are named after the
    parameters they set)."""
    return {p: "--" + p.replace("_", "-") for p in parameters}


def _cause_line(e: SQLAlchemyError) -> str:
    cause = getattr(e, "orig", None)
    return first_line(cause if isinstance(cause, BaseException) else e)


def _user_error(args: argparse.Namespace, e: BaseException, line: str, code: int = EXIT_USAGE) -> int:
    if args.debug:
        traceback.print_exception(e, file=sys.stderr)
    print(f"{PROG}: error: {line}", file=sys.stderr)
    return code


def _bug(args: argparse.Namespace, e: BaseException) -> int:
    """Exit 1: one line, the traceback on stderr (--debug) or in a log file the line names."""
    text = "".join(traceback.format_exception(e))
    if args.debug:
        sys.stderr.write(text)
        print(f"{PROG}: internal error: {first_line(e)}", file=sys.stderr)
        return EXIT_BUG
    try:
        log = _write_log(text)
        where = f"traceback in {log}"
    except OSError:
        where = "rerun with --debug for the traceback"
    print(f"{PROG}: internal error: {first_line(e)} (a bug in {PROG}; {where})", file=sys.stderr)
    return EXIT_BUG


def _write_log(text: str) -> Path:
    folder = Path(os.environ.get(LOG_DIR_ENV) or tempfile.gettempdir())
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    path = folder / f"{PROG}-{stamp}-{os.getpid()}.log"
    path.write_text(f"{PROG} {' '.join(sys.argv[1:])}\n{text}")
    return path


def _interrupted() -> int:
    print(f"{PROG}: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _exit_process(code: int) -> None:
    """Flush what the command wrote, stop a Spark session it left running, and end the process now."""
    if "pyspark" in sys.modules:
        from pyspark.sql import SparkSession

        session = SparkSession.getActiveSession()
        if session is not None:
            with contextlib.suppress(Exception):  # the driver JVM also exits when this process ends
                session.stop()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can reach the reader
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
