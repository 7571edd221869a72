"""`compaction schedule` and `compaction run`."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from hudi_meta.api import (
    LOG_FILE_SIZE_THRESHOLD,
    MAX_DELTA_COMMITS,
    MAX_DELTA_SECONDS,
    CompactionOperation,
    LinkMode,
    MapTasks,
    Report,
    ScheduleRequest,
    Strategy,
    Trigger,
    check_data_latency,
    check_threshold,
    format_duration_ms,
    now_ms,
    open_table,
    parse_duration_ms,
    parse_time_ms,
)
from hudi_meta.cli import compaction_admin_commands
from hudi_meta.cli.common import (
    INSTANT,
    TEXT,
    Choice,
    SpelledChoice,
    Subparsers,
    add_command,
    arg_type,
    require_spark,
)
from hudi_meta.cli.output import write_json, write_json_object
from hudi_meta.cli.terminal import terminal_progress

STRATEGY = SpelledChoice(Strategy)
TRIGGER = SpelledChoice(Trigger)
MODE = SpelledChoice(LinkMode)
ENGINE = Choice.of(("spark", "local"))
# checked against now while the command line is read: a threshold from 1970 to now, T = now - D after 1970
THRESHOLD = arg_type(lambda text: check_threshold(parse_time_ms(text), now_ms()), "threshold")
DATA_LATENCY = arg_type(lambda text: check_data_latency(parse_duration_ms(text), now_ms()), "data latency")


def add_commands(sub: Subparsers) -> None:
    compaction = add_command(sub, "compaction", None, "schedule or run compactions")
    csub = compaction.add_subparsers(dest="compaction_command", required=True, parser_class=type(compaction))

    schedule = add_command(csub, "schedule", schedule_command, "plan a compaction from the index")
    schedule.add_argument("table", type=TEXT, help="table base path")
    when = schedule.add_mutually_exclusive_group()
    when.add_argument("--threshold", type=THRESHOLD, help="event time T (ISO-8601 or epoch ms), from 1970 to now")
    when.add_argument(
        "--data-latency",
        type=DATA_LATENCY,
        help="T = now - D, e.g. 30m, 2h (default: hoodie.compaction.event.time.data.latency)",
    )
    MODE.add(schedule, "--mode", LinkMode.SYMLINK, "how leftover log files reach the new slice")
    schedule.add_argument("--exact", action="store_true", help="records after T stay out of the base file")
    STRATEGY.add(schedule, "--strategy", Strategy.EVENT_TIME, "which log files to compact (Hudi's class names too)")
    TRIGGER.add(schedule, "--trigger", Trigger.EVENT_TIME, "when to schedule at all (Hudi's enum names too)")
    for limit, what in (
        (MAX_DELTA_COMMITS, "num-commits trigger: schedule after this many delta commits since the last compaction"),
        (MAX_DELTA_SECONDS, "time-elapsed trigger: schedule this many seconds after the last compaction"),
        (LOG_FILE_SIZE_THRESHOLD, "log-file-size strategy: compact slices with at least this many log bytes"),
    ):
        default = f"(default: the table's {limit.key}, else {limit.default})"
        schedule.add_argument("--" + limit.field.replace("_", "-"), type=int, metavar="N", help=f"{what} {default}")
    schedule.add_argument("--json", action="store_true", help="print the result as a JSON array of one object")

    run = add_command(csub, "run", run_command, "execute a pending compaction")
    run.add_argument("table", type=TEXT, help="table base path")
    run.add_argument("--instant", type=INSTANT, help="the compaction instant to run (default: the oldest pending one)")
    run.add_argument("--spark-master", type=TEXT, default="local[2]", help="Spark master URL (--engine spark)")
    ENGINE.add(run, "--engine", "spark", "spark: tasks on Spark; local: in this process")
    run.add_argument("--json", action="store_true", help="print what the run did as one JSON object")
    compaction_admin_commands.add_subcommands(csub)


def schedule_command(args: argparse.Namespace) -> int:
    request = ScheduleRequest(
        threshold_ms=args.threshold,
        data_latency_ms=args.data_latency,
        mode=args.mode,
        exact=args.exact,
        strategy=args.strategy,
        trigger=args.trigger,
        log_file_size_threshold=args.log_file_size_threshold,
        max_delta_commits=args.max_delta_commits,
        max_delta_seconds=args.max_delta_seconds,
    )
    request.validate(now_ms())  # the options together, before the table or the store is opened
    with open_table(args.table, args.db) as table:
        result = table.schedule(request)
    if args.json:
        write_json([result.to_dict()])
    else:
        print(result)
    return 0


def reporting_tasks(progress: Report) -> MapTasks:
    """Tasks one after another in this process, each reported as done."""

    def tasks(task: Callable[[CompactionOperation], Any], ops: Sequence[CompactionOperation]) -> list[Any]:
        results = []
        for n, op in enumerate(ops):
            progress("compaction: file groups", n, len(ops))
            results.append(task(op))
        progress("compaction: file groups", len(ops), len(ops))
        return results

    return tasks


def phase_reporter(progress: Report) -> Callable[[str], None]:
    return lambda phase: progress(f"compaction: {phase}", 0, None)


def run_command(args: argparse.Namespace) -> int:
    if args.engine == "spark":
        require_spark("compaction run --engine spark")
    with open_table(args.table, args.db) as table, terminal_progress() as progress:
        summary = table.run_compaction(
            args.instant,
            map_tasks=reporting_tasks(progress),
            on_phase=phase_reporter(progress),
            progress=progress,
            spark_master=args.spark_master if args.engine == "spark" else None,
        )
    if args.json:
        write_json_object(summary.to_dict())
    else:
        print(
            f"completed compaction {summary.instant}: {summary.operations} file groups, "
            f"{summary.records_written} records and {summary.bytes_written} bytes written, "
            f"{summary.log_files_compacted} log files merged, {summary.links} kept as links or copies, "
            f"in {format_duration_ms(summary.duration_ms)}"
        )
    return 0
