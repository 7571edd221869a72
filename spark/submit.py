"""The entry point for `spark-submit`: run a pending compaction of a table on the cluster spark-submit targets.

    spark-submit --master spark://HOST:7077 [spark options] "$(python -m hudi_meta.spark.submit --path)" \\
        compact TABLE [--instant C] [--db URL]

`--path` (run with plain Python) prints this file's path, which spark-submit takes as the application. The
session comes from spark-submit (`--master`, `--conf`, ...); its executors must import `hudi_meta` (installed on
every node, or shipped with `--py-files`). With `--db` the table is indexed into that store after the commit.
Exit 0 on success, 2 with one line on stderr for an error a user can fix (as `hudi-meta`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hudi_meta.errors import HudiMetaError, first_line


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hudi_meta.spark.submit", description=__doc__.splitlines()[0])
    parser.add_argument("--path", action="store_true", help="print the path to give spark-submit, and exit")
    sub = parser.add_subparsers(dest="command")
    compact = sub.add_parser("compact", help="run a pending compaction on Spark")
    compact.add_argument("table", help="table base path")
    compact.add_argument("--instant", help="the compaction to run (default: the oldest pending one)")
    compact.add_argument("--db", help="metadata store to index the table into afterwards")
    args = parser.parse_args(argv)
    if args.path:
        print(__file__)
        return 0
    if args.command != "compact":
        parser.error("give a command: compact")
    try:
        from hudi_meta.spark.compaction import run
        from hudi_meta.spark.session import spark_session

        from hudi_meta.compaction.run import runnable_instant
        from hudi_meta.table.table import HudiTable

        table = HudiTable.open(args.table)
        instant = runnable_instant(table, args.instant)
        spark = spark_session(None, f"hudi-meta compaction {instant}")  # master and conf: spark-submit's
        done = run(spark, table, instant)
        if args.db:
            from hudi_meta.index.indexer import Indexer
            from hudi_meta.index.store import open_store

            Indexer(open_store(args.db), HudiTable.open(args.table)).run()
        print(f"completed compaction {done.requested_time}", flush=True)
        return 0
    except HudiMetaError as e:
        print(f"hudi-meta: error: {first_line(e)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
