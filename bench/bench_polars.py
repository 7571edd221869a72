"""Benchmark what polars (the optional `fast` extra) buys: both places hudi-meta uses it, with it and without it.

    python bench/bench_polars.py [--blocks 2000] [--records 100] [--keys 1000000] [--runs 3] [--keep DIR]

polars is made absent in this same process the way a missing install is (`import polars` raises ImportError),
so both sides of each ratio run on the same data, interleaved, one run of each at a time after an untimed one of
each (best of `--runs`):

- Avro decode: one log file of `--blocks` Avro data blocks x `--records` records (bench_header_scan.py's
  8-field trips schema), decoded as the file-group reader and the compaction decode it (`decode_log_blocks`:
  consecutive blocks of one schema in one columnar read by polars; without polars record by record with
  fastavro, hudi_meta/format/avro_columnar.py).
- key hash: the 64-bit hash of `--keys` record keys that a streamed compaction keeps to find a key its base
  file holds twice (hudi_meta/compaction/stream.py: polars' vectorised hash; without polars Python's string
  hash), with the duplicate check (`_repeats`) after it.

Then, not timed: the size polars takes installed (its distributions' files) and a cold `import polars` in a
fresh interpreter. The script checks that both paths decode the same records and find the same repeats, never
how long anything took. Compare the ratios within one run of the script.
"""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import fastavro
import numpy as np
import pyarrow as pa
from bench_header_scan import write_log
from timing import Timings, measure
from workspace import bench_parser, work_dir

from hudi_meta.compaction import stream
from hudi_meta.file_group.reader import ReadStats, decode_log_blocks
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.storage import LocalStorage

T = TypeVar("T")


@contextmanager
def without_polars() -> Iterator[None]:
    """`import polars` fails inside, as when it is not installed (a None entry in sys.modules)."""
    missing = object()
    saved = sys.modules.get("polars", missing)
    sys.modules["polars"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if saved is missing:
            del sys.modules["polars"]
        else:
            sys.modules["polars"] = saved  # type: ignore[assignment]


def interleaved(fast: Callable[[], T], slow: Callable[[], T], runs: int) -> tuple[Timings, Timings, T, T]:
    """Best-of timings of `fast` (polars) and `slow` (no polars), one run of each in turn, after one untimed run
    of each (polars' import, pyarrow's allocator pool); their last results."""
    fast()
    with without_polars():
        slow()
    with_it, without_it = Timings(), Timings()
    for _ in range(runs):
        fast_result = with_it.run(fast)
        with without_polars():
            slow_result = without_it.run(slow)
    return with_it, without_it, fast_result, slow_result


def decode(storage: LocalStorage, path: str) -> pa.Table:
    blocks = read_blocks(storage, path)
    tables, _, _ = decode_log_blocks(storage, [(path, b) for b in blocks], None, ReadStats())
    return pa.concat_tables(tables)


def hash_keys(keys: pa.Array) -> bool:
    """What a streamed compaction does with its keys: hash them (in batches of its size), look for a repeat."""
    rows = stream.BATCH_ROWS
    return stream._repeats([stream._hash(keys.slice(i, rows)) for i in range(0, len(keys), rows)])


def installed_mb(*names: str) -> float:
    """MB the files of these installed distributions take (0 for one not installed)."""
    total = 0
    for name in names:
        try:
            files = importlib.metadata.distribution(name).files or []
        except importlib.metadata.PackageNotFoundError:
            continue
        total += sum(p.stat().st_size for f in files if (p := Path(str(f.locate()))).is_file())
    return total / 1e6


def cold_import_s() -> float:
    code = "import time; t = time.perf_counter(); import polars; print(time.perf_counter() - t)"
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__, keep="write the log file into DIR and keep it", runs=3)
    parser.add_argument("--blocks", type=int, default=2_000, help="Avro data blocks in the log file")
    parser.add_argument("--records", type=int, default=100, help="records per block")
    parser.add_argument("--keys", type=int, default=1_000_000, help="record keys hashed")
    args = parser.parse_args(argv)
    try:
        import polars
    except ImportError:
        print("polars is not installed: pip install 'hudi-meta[fast]' to compare both paths")
        return 1

    with work_dir("bench-polars-", args.keep) as directory:
        path = str(directory / ".bench0000-0000-0000-0000-000000000000-0_20250101000000000.log.1_0-1-0")
        Path(path).unlink(missing_ok=True)
        write, (size, total_records) = measure(lambda: write_log(path, args.blocks, args.records))
        storage = LocalStorage()
        dec_fast, dec_slow, table_fast, table_slow = interleaved(
            lambda: decode(storage, path), lambda: decode(storage, path), args.runs
        )
        keys = pa.array([f"{i:08d}-{(i * 2654435761) % 2**32:016x}" for i in range(args.keys)], pa.string())
        hash_fast, hash_slow, repeat_fast, repeat_slow = interleaved(
            lambda: hash_keys(keys), lambda: hash_keys(keys), args.runs
        )
        with_dup = pa.concat_arrays([keys, keys.slice(args.keys // 2, 1)])  # one key twice: both must see it
        # What each path gave (not how long it took).
        if table_fast.num_rows != total_records or not table_fast.equals(table_slow):
            print(f"the two decodes differ: {table_fast.num_rows} / {table_slow.num_rows} of {total_records} rows")
            return 1
        with without_polars():
            slow_dup = hash_keys(with_dup)
        if repeat_fast or repeat_slow or not hash_keys(with_dup) or not slow_dup:
            print(f"the two hashes found different repeats: {repeat_fast=} {repeat_slow=} {slow_dup=}")
            return 1

        mb = size / 1e6
        print("hudi-meta with polars (the `fast` extra) and without it")
        print(
            f"  log file: {args.blocks:,} Avro data blocks x {args.records} records ({total_records:,} records), "
            f"{mb:.1f} MB; written in {write.best:.1f} s (not measured); {args.keys:,} record keys"
        )
        print(
            f"  python {platform.python_version()}, polars {polars.__version__}, fastavro {fastavro.__version__}, "
            f"pyarrow {pa.__version__}, numpy {np.__version__}; best of {args.runs} interleaved runs each"
        )
        print()
        rows = [
            ("Avro decode (decode_log_blocks)", dec_fast, dec_slow, f"{total_records / 1e6:.2f}M records"),
            ("key hash + repeat check (stream)", hash_fast, hash_slow, f"{args.keys / 1e6:.2f}M keys"),
        ]
        width = max(len(name) for name, *_ in rows)
        print(f"{'what':<{width}}  {'polars s':>9}  {'without s':>9}  {'gain':>6}  size")
        for name, fast, slow, what in rows:
            print(f"{name:<{width}}  {fast.best:>9.3f}  {slow.best:>9.3f}  {slow.best / fast.best:>5.1f}x  {what}")
        print(f"  medians: decode {dec_fast.median:.3f} / {dec_slow.median:.3f} s, hash {hash_fast.median:.3f} / "
              f"{hash_slow.median:.3f} s")  # fmt: skip
        print()
        print(
            f"polars installed: {installed_mb('polars', 'polars-runtime-32', 'polars-runtime-64'):.0f} MB; "
            f"a cold `import polars` {cold_import_s():.2f} s (not measured against anything)"
        )
        return 0


if __name__ == "__main__":
    sys.exit(main())
