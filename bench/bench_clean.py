"""Benchmark clean planning from the index for many file groups, and how fast a clean deletes files.

    python bench/bench_clean.py [--file-groups 50000] [--slices 5] [--retained 2] [--delete-files 20000]
                                [--backends sqlite,postgresql] [--runs 3] [--keep DIR]

The table is a v6 MOR table compacted `--slices - 1` times in symlink mode: per file group, slice 0 is an
insert's base file with 2 log files, and every later slice is a compaction's base file, a symlink to the slice
before's leftover log file (what event-time compaction keeps) and one new log file. The policy is
KEEP_LATEST_FILE_VERSIONS with `--retained` versions, so per file group the older slices expire: their base
and log files go, their symlinks go as links, and the leftover log file of the newest expired slice stays
(the oldest retained slice links it). Every log file holds one committed block of its own deltacommit.

Planning: each store (a SQLite file; a fresh PostgreSQL database through $HUDI_META_TEST_PG) is upgraded and
filled directly with what the indexer would have written (file groups, slices, log files with their link
targets, blocks), not by indexing 250,000 real files; filling is timed and printed but not measured. Then,
best of `--runs` each, in this process:

- read: `clean.groups_from_index(engine, table_id)`, the planner's input (slices, links, block instants);
- plan: `write.clean_plan.plan_clean(groups, timeline, policy, now)` (pure Python; the timeline facts are plain
  data here, the command reads them from the table's timeline);
- serialise: the `HoodieCleanerPlan` Avro file (`cleaner_plan(...).to_bytes()`, what `<t>.clean.requested`
  holds);
- total: the three in a row. slices/s = slices planned over / seconds.

Deleting: a real table (local file system) with enough file groups for `--delete-files` deletions is written
(empty data files, real symlinks; not measured), planned, its `<t>.clean.requested` written, then
`write.clean.execute_clean` is timed: inflight instant, every symlink unlinked, the link check (one listing per
partition), every other file deleted, `<t>.clean` written. Each run gets fresh files and a new instant (the
files are recreated between runs, not timed). files/s = files and links deleted over seconds.

Figures only, no timed assertions: the script checks the plan's deletions, links and kept targets, that the
clean deleted exactly them and left no link dangling, and exits non-zero otherwise.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from timing import Timings, measure
from workspace import bench_parser, fill_store, parse_backends, store, work_dir

from hudi_meta.clean.run import groups_from_index
from hudi_meta.format.file_names import BaseFileName, LogFileName
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action, Instant, State
from hudi_meta.timeline.timeline import TimelineWriter
from hudi_meta.write.clean import cleaner_plan, execute_clean
from hudi_meta.write.clean_plan import (
    DELETE_LINK,
    KEEP_LATEST_FILE_VERSIONS,
    CleanFile,
    CleanGroup,
    CleanPlanResult,
    CleanPolicy,
    CleanSlice,
    CleanTimeline,
    TimelineEntry,
    plan_clean,
)
from hudi_meta.write.writer import create_table

PARTITIONS = 10
BASE = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
TABLE_ROW: dict[str, Any] = {
    "id": 1,
    "base_path": "/bench/clean",
    "name": "clean",
    "table_type": "MERGE_ON_READ",
    "table_version": 6,
    "timeline_layout": 1,
    "record_key_fields": "id",
}
TOKEN = "1-0-1"


def instant(hours: int) -> str:
    return (BASE + dt.timedelta(hours=hours)).strftime("%Y%m%d%H%M%S") + "000"


def timeline(slices: int) -> CleanTimeline:
    """Slice k's base instant is instant(2k) (k = 0: the insert's deltacommit, else a compaction's commit); the
    deltacommit of its log files is instant(2k + 1). Everything completed."""
    entries = [
        TimelineEntry(instant(h), "commit" if h % 2 == 0 and h > 0 else "deltacommit", True) for h in range(2 * slices)
    ]
    return CleanTimeline(tuple(entries))


def expected(groups: int, slices: int, retained: int) -> dict[str, int]:
    """Deletions, links among them and kept link targets of the policy over the generated table."""
    expired = max(0, slices - max(retained, 1))
    if expired == 0:
        return {"deletions": 0, "links": 0, "kept": 0}
    per_group = {"deletions": 3 * expired - 1, "links": expired - 1, "kept": 1}
    return {k: v * groups for k, v in per_group.items()}


def file_id(g: int) -> str:
    return f"{g:08x}-0000-4000-8000-000000000000-0"


def partition(g: int) -> str:
    return f"region=r{g % PARTITIONS:02d}"


def generate(groups: int, slices: int) -> list[CleanGroup]:
    """The table as plain planner input (what `groups_from_index` returns for the filled store)."""
    out = []
    for g in range(1, groups + 1):
        part, fid = partition(g), file_id(g)
        found: list[CleanSlice] = []
        leftover = ""
        for k in range(slices):
            base, writes = instant(2 * k), instant(2 * k + 1)
            files = [CleanFile(BaseFileName(fid, TOKEN, base).name, instants=(base,))]
            if k == 0:
                first = LogFileName(fid, base, 1, TOKEN).name
                files.append(CleanFile(first, instants=(writes,)))
                kept = LogFileName(fid, base, 2, TOKEN).name
            else:
                files.append(CleanFile(LogFileName(fid, base, 2, TOKEN).name, link_target=leftover))
                kept = LogFileName(fid, base, 3, TOKEN).name
            files.append(CleanFile(kept, instants=(writes,)))
            leftover = f"{part}/{kept}"
            found.append(CleanSlice(base, tuple(files)))
        out.append(CleanGroup(part, fid, tuple(found)))
    return out


def store_rows(groups: list[CleanGroup]) -> dict[str, list[dict[str, Any]]]:
    """Rows per store table (explicit ids, table id 1) holding `groups` as the indexer would."""
    rows: dict[str, list[dict[str, Any]]] = {"file_group": [], "file_slice": [], "log_file": [], "log_block": []}
    sid = lid = 0
    for gid, group in enumerate(groups, 1):
        rows["file_group"].append(
            {"id": gid, "table_id": 1, "partition_path": group.partition, "file_id": group.file_id, "replaced": False}
        )
        for s in group.slices:
            sid += 1
            base, logs = s.files[0], s.files[1:]
            rows["file_slice"].append(
                {
                    "id": sid,
                    "file_group_id": gid,
                    "base_instant": s.base_instant,
                    "base_file": base.name,
                    "base_file_size": 4_000_000,
                    "base_committed": True,
                }
            )
            for f in logs:
                lid += 1
                parsed = LogFileName.parse(f.name)
                rows["log_file"].append(
                    {
                        "id": lid,
                        "table_id": 1,
                        "file_slice_id": sid,
                        "partition_path": group.partition,
                        "name": f.name,
                        "file_id": group.file_id,
                        "base_instant": s.base_instant,
                        "version": parsed.version,
                        "write_token": TOKEN,
                        "size": 200_000,
                        "indexed_offset": 200_000,
                        "is_link": f.link_target is not None,
                        "link_target": f.link_target,
                    }
                )
                for i in f.instants:
                    rows["log_block"].append(
                        {
                            "id": lid,
                            "table_id": 1,
                            "log_file_id": lid,
                            "offset": 0,
                            "length": 200_000,
                            "block_type": "avro_data",
                            "instant": i,
                            "record_count": 500,
                            "min_event_time": 0,
                            "max_event_time": 0,
                            "min_event_time_source": "stats",
                            "status": "committed",
                        }
                    )
    return rows


def figures(result: CleanPlanResult) -> dict[str, int]:
    return {
        "deletions": len(result.deletions),
        "links": sum(a.operation == DELETE_LINK for a in result.deletions),
        "kept": len(result.kept),
    }


def plan_rounds(
    engine: Engine, tl: CleanTimeline, policy: CleanPolicy, runs: int
) -> tuple[tuple[Timings, Timings, Timings], CleanPlanResult, bytes]:
    read, plan_t, ser = Timings(), Timings(), Timings()
    for _ in range(runs):
        groups = read.run(partial(groups_from_index, engine, 1))
        result = plan_t.run(partial(plan_clean, groups, tl, policy, 0))
        data = ser.run(partial(serialise, result))
    return (read, plan_t, ser), result, data


def serialise(result: CleanPlanResult) -> bytes:
    return cleaner_plan("/bench/clean", result).to_bytes()


# ---------------------------------------------------------------- deleting


def materialise(base_path: Path, groups: list[CleanGroup]) -> None:
    """Empty data files and real (relative) symlinks for every file of `groups`."""
    for group in groups:
        folder = base_path / group.partition
        folder.mkdir(parents=True, exist_ok=True)
        for s in group.slices:
            for f in s.files:
                path = folder / f.name
                if path.is_symlink() or path.exists():
                    continue
                if f.link_target is not None:
                    os.symlink(os.path.basename(f.link_target), path)
                else:
                    path.write_bytes(b"")


cpu_seconds: list[float] = []  # process CPU of each timed clean (the rest of its wall time waits on the disk)


def delete_rounds(
    work: Path, groups: list[CleanGroup], tl: CleanTimeline, policy: CleanPolicy, runs: int
) -> tuple[Timings, int, str | None]:
    """Timings of `runs` cleans of fresh copies of the files, the files each deleted, and an error if any."""
    base = work / "delete-table"
    table = create_table(str(base), "clean", ["id"], "ts", ["region"])
    result = plan_clean(groups, tl, policy, 0)
    deleted = {a.path for a in result.deletions}
    timings = Timings()
    cpu_seconds.clear()
    for run in range(runs):
        materialise(base, groups)
        t = f"2027010100000{run:04d}"
        plan = cleaner_plan(str(base), result)
        TimelineWriter(table.storage, table.timeline_path).request(Action.CLEAN, t, plan.to_bytes())
        table = HudiTable.open(str(base))
        cpu = time.process_time()
        done = timings.run(partial(execute_clean, table, Instant(t, Action.CLEAN, State.REQUESTED), plan))
        cpu_seconds.append(time.process_time() - cpu)
        gone = {r.path for r in done.reports if r.done}
        left = {str(p.relative_to(base)) for p in base.glob("region=*/*") if p.is_symlink() or p.exists()}
        dangling = [p for p in base.glob("region=*/*") if p.is_symlink() and not p.exists()]
        if gone != deleted or left & deleted or dangling or done.metadata.total_files_deleted != len(deleted):
            return timings, len(gone), f"run {run}: deleted {len(gone)} of {len(deleted)}, {len(dangling)} dangling"
    return timings, len(deleted), None


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__, keep="work directory to use and keep (tables, stores)", runs=3)
    parser.add_argument("--file-groups", type=int, default=50_000, help="file groups to plan over")
    parser.add_argument("--slices", type=int, default=5, help="slices per file group")
    parser.add_argument("--retained", type=int, default=2, help="file versions retained (KEEP_LATEST_FILE_VERSIONS)")
    parser.add_argument("--delete-files", type=int, default=20_000, help="files and links the timed clean deletes")
    parser.add_argument("--backends", default="sqlite,postgresql", help="stores to plan from, comma-separated")
    args = parser.parse_args(argv)
    backends = parse_backends(parser, args.backends)
    if args.slices < 2 or args.retained < 1 or args.retained >= args.slices:
        parser.error("need --slices >= 2 and 1 <= --retained < --slices, so that slices expire")
    n, slices = args.file_groups, args.slices
    policy = CleanPolicy(KEEP_LATEST_FILE_VERSIONS, file_versions_retained=args.retained)
    tl = timeline(slices)
    want = expected(n, slices, args.retained)

    gen, groups = measure(partial(generate, n, slices))
    rows = store_rows(groups)
    print(
        f"{n:,} file groups x {slices} slices ({len(rows['log_file']):,} log files, "
        f"{sum(r['is_link'] for r in rows['log_file']):,} of them symlinks), {PARTITIONS} partitions; "
        f"generated in {gen.best:.1f} s (not measured)"
    )
    print(
        f"{policy.describe()}: {want['deletions']:,} deletions ({want['links']:,} links), "
        f"{want['kept']:,} link targets kept\n"
    )
    results: list[tuple[str, float, float, float, float]] = []
    with work_dir("bench-clean-", args.keep) as work:
        for backend in backends:
            with store(backend, work, keep=args.keep is not None) as engine:
                filled, _ = measure(partial(fill_store, engine, TABLE_ROW, rows))
                print(f"{backend}: filled in {filled.best:.1f} s (not measured)")
                (read, plan_t, ser), result, data = plan_rounds(engine, tl, policy, args.runs)
                got = figures(result)
                if got != want:
                    print(f"{backend}: unexpected plan {got}, expected {want}")
                    return 1
                total = min(map(sum, zip(read.seconds, plan_t.seconds, ser.seconds, strict=True)))
                results.append((backend, read.best, plan_t.best, ser.best, total))
                print(f"{backend}: plan of {got['deletions']:,} deletions, {len(data):,} bytes serialised")

        per_group = 3 * (slices - args.retained) - 1
        delete_groups = max(1, -(-args.delete_files // per_group))
        small = generate(delete_groups, slices)
        timings, deleted, error = delete_rounds(work, small, tl, policy, args.runs)
        if error:
            print(f"delete: {error}")
            return 1

    print(f"\nplanning, best of {args.runs}, {n:,} file groups, {n * slices:,} slices:\n")
    header = ("backend", "read s", "plan s", "serialise s", "total s", "total slices/s", "read/total")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for backend, read_s, plan_s, ser_s, total_s in results:
        row = (
            backend,
            f"{read_s:.3f}",
            f"{plan_s:.3f}",
            f"{ser_s:.3f}",
            f"{total_s:.3f}",
            f"{n * slices / total_s:,.0f}",
            f"{read_s / total_s:.2f}",
        )
        print("| " + " | ".join(row) + " |")
    links = sum(1 for g in small for s in g.slices[: slices - args.retained][1:] for f in s.files if f.link_target)
    print(
        f"\ndeleting, best of {args.runs}: {deleted:,} files ({links:,} of them symlinks) in {timings.best:.3f} s "
        f"(median {timings.median:.3f} s): {deleted / timings.best:,.0f} files/s; process CPU "
        f"{min(cpu_seconds):.3f} s (the rest is waiting on unlink)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
