"""Benchmark the header-only log scan against a full decode of every block.

    python bench/bench_header_scan.py [--blocks 10000] [--records 20] [--runs 3] [--keep DIR]

One log file of `--blocks` Avro data blocks (each `--records` records of an 8-field trips schema with an
event-time long, INSTANT_TIME + SCHEMA + MIN_EVENT_TIME headers) is written into a temp dir; writing it is
timed and printed but not part of the measurement. Then, in this same process, best of `--runs` each:

- header scan: `read_blocks` (framing, corrupt-block detection and header maps; no content is decoded).
- full decode: `read_blocks`, then `read_content` + `decode_avro_records` for every block (record by record).
- reader's decode: `read_blocks`, then `decode_log_blocks`, what the file-group reader and the compaction
  do: Arrow, one open of the file, and consecutive blocks of one schema decoded together in one columnar
  read (this flat schema; see hudi_meta/format/avro_columnar.py), or one by one where that does not apply.

Figures only: the script checks what each mode read (block and record counts), never how long it took.
Wall times depend on the machine and its page cache (the file was just written, so reads are warm);
compare the ratio header-scan/full-decode within one run of the script.
"""

from __future__ import annotations

import json
import platform
import random
import sys
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
from timing import measure
from workspace import bench_parser, work_dir

from hudi_meta.file_group.reader import ReadStats, decode_log_blocks
from hudi_meta.format.block_content import decode_avro_records
from hudi_meta.format.log_reader import read_blocks, read_content
from hudi_meta.format.log_writer import EncodedBlock, append_blocks, avro_data_block
from hudi_meta.storage import LocalStorage

SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "trips_record",
        "namespace": "hoodie.trips",
        "fields": [
            {"name": "_hoodie_commit_time", "type": ["null", "string"], "default": None},
            {"name": "_hoodie_record_key", "type": ["null", "string"], "default": None},
            {"name": "_hoodie_partition_path", "type": ["null", "string"], "default": None},
            {"name": "event_ts", "type": "long"},  # event time, epoch ms
            {"name": "rider", "type": ["null", "string"], "default": None},
            {"name": "driver", "type": ["null", "string"], "default": None},
            {"name": "fare", "type": ["null", "double"], "default": None},
            {"name": "city", "type": ["null", "string"], "default": None},
        ],
    },
    separators=(",", ":"),
)
CITIES = ["san_francisco", "sao_paulo", "chennai", "amsterdam", "berlin"]
BLOCKS_PER_APPEND = 500  # one append (one delta commit) writes this many blocks


def _records(rng: random.Random, instant: str, block: int, n: int) -> list[dict[str, Any]]:
    base_ts = 1_700_000_000_000 + block * 60_000
    city = rng.choice(CITIES)
    return [
        {
            "_hoodie_commit_time": instant,
            "_hoodie_record_key": f"{block:08d}-{i:04d}-{rng.getrandbits(64):016x}",
            "_hoodie_partition_path": f"city={city}",
            "event_ts": base_ts + rng.randint(-3_600_000, 3_600_000),
            "rider": f"rider-{rng.randint(0, 999)}",
            "driver": f"driver-{rng.randint(0, 999)}" if rng.random() < 0.95 else None,
            "fare": round(rng.uniform(5, 120), 2),
            "city": city,
        }
        for i in range(n)
    ]


def write_log(path: str, blocks: int, records: int) -> tuple[int, int]:
    """Write the benchmark log file; return (size in bytes, total records)."""
    rng = random.Random(42)
    storage = LocalStorage()
    total = 0
    for first in range(0, blocks, BLOCKS_PER_APPEND):
        instant = str(20250101000000000 + first)
        batch: list[EncodedBlock] = []
        for block in range(first, min(first + BLOCKS_PER_APPEND, blocks)):
            recs = _records(rng, instant, block, records)
            min_event_time = min(r["event_ts"] for r in recs)
            batch.append(avro_data_block(recs, SCHEMA, instant, min_event_time))
            total += len(recs)
        append_blocks(storage, path, batch)
    return storage.size(path), total


def header_scan(storage: LocalStorage, path: str) -> tuple[int, int]:
    blocks = read_blocks(storage, path)
    return len(blocks), sum(1 for b in blocks if b.min_event_time is not None)


def full_decode(storage: LocalStorage, path: str) -> tuple[int, int]:
    blocks = read_blocks(storage, path)
    records = 0
    for block in blocks:
        assert block.schema is not None
        records += len(decode_avro_records(read_content(storage, path, block), block.schema))
    return len(blocks), records


def reader_decode(storage: LocalStorage, path: str) -> tuple[int, int]:
    blocks = read_blocks(storage, path)
    tables, _, _ = decode_log_blocks(storage, [(path, b) for b in blocks], None, ReadStats())
    return len(blocks), sum(t.num_rows for t in tables)


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__, keep="write the log file into DIR and keep it", runs=3)
    parser.add_argument("--blocks", type=int, default=10_000, help="Avro data blocks in the log file")
    parser.add_argument("--records", type=int, default=20, help="records per block")
    args = parser.parse_args(argv)

    with work_dir("bench-header-scan-", args.keep) as directory:
        path = str(directory / ".bench0000-0000-0000-0000-000000000000-0_20250101000000000.log.1_0-1-0")
        Path(path).unlink(missing_ok=True)
        write, (size, total_records) = measure(lambda: write_log(path, args.blocks, args.records))

        storage = LocalStorage()
        scan, (scan_blocks, with_met) = measure(lambda: header_scan(storage, path), args.runs)
        full, (full_blocks, full_records) = measure(lambda: full_decode(storage, path), args.runs)
        arrow, arrow_counts = measure(lambda: reader_decode(storage, path), args.runs)
        # What each mode read (not how long it took).
        if (scan_blocks, with_met, full_blocks, full_records, *arrow_counts) != (
            args.blocks,
            args.blocks,
            args.blocks,
            total_records,
            args.blocks,
            total_records,
        ):
            print(f"unexpected counts: {scan_blocks=} {with_met=} {full_blocks=} {full_records=} {arrow_counts=}")
            return 1

        mb = size / 1e6
        print("hudi-meta header-only scan vs full decode")
        print(
            f"  log file: {args.blocks:,} Avro data blocks x {args.records} records "
            f"({total_records:,} records), {mb:.1f} MB; written in {write.best:.1f} s (not measured)"
        )
        print(
            f"  python {platform.python_version()}, fastavro {fastavro.__version__}, "
            f"pyarrow {pa.__version__}; best of {args.runs} runs each, page cache warm"
        )
        print()
        rows = [
            ("header scan (read_blocks)", scan),
            ("full decode (+read_content, decode_avro_records)", full),
            ("reader's decode (+decode_log_blocks)", arrow),
        ]
        width = max(len(name) for name, _ in rows)
        print(f"{'mode':<{width}}  {'best s':>8}  {'median s':>8}  {'blocks/s':>10}  {'MB/s':>8}")
        for name, t in rows:
            rates = f"{args.blocks / t.best:>10,.0f}  {mb / t.best:>8.1f}"
            print(f"{name:<{width}}  {t.best:>8.3f}  {t.median:>8.3f}  {rates}")
        print()
        print(f"ratio header-scan / full-decode (blocks/s): {full.best / scan.best:.1f}x")
        print(f"ratio header-scan / reader's decode (blocks/s): {arrow.best / scan.best:.1f}x")
        print(f"reader's decode / full decode (blocks/s): {full.best / arrow.best:.2f}x")
        return 0


if __name__ == "__main__":
    sys.exit(main())
