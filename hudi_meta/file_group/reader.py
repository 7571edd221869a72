"""The stateless file-group reader: one file slice (base file + log files) in, one Arrow table out.

Blocks are read in log order; a rollback command block drops every earlier block of its target instant;
blocks of instants the caller does not see as committed (or after a time-travel point) are skipped; corrupt
blocks (bad framing) are skipped and counted, as Java does, but a block whose framing is valid and whose
content cannot be decoded stops the read: dropping it would lose committed records.

Records merge in `merge.records` by the rules of `merge.rules` (the table's payload class or merge mode): first
the log records among themselves in log order, then the log winner of each key with the base record. A record
with `_hoodie_is_deleted = true` that wins is a delete.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_meta.errors import CorruptFileError, UndecodableBlockError, first_line
from hudi_meta.file_group.merge.records import LogPart, SliceRecords, merge_slice
from hudi_meta.file_group.merge.rules import MergeSpec
from hudi_meta.file_group.record_keys import (
    record_key_array,
)
from hudi_meta.format.avro_arrow import arrow_schema_from_avro_json
from hudi_meta.format.block_content import (
    BlockDecodeError,
    conform,
    decode_avro_blocks_together,
    decode_data_block,
    decode_delete_records,
)
from hudi_meta.format.log_block import AVRO_BLOCK_TYPES, BlockType, LogBlock
from hudi_meta.format.log_reader import read_blocks, read_contents
from hudi_meta.storage.base import Storage


@dataclass
class ReadStats:
    """Counters a read reports (compaction write stats reuse them)."""

    log_blocks: int = 0
    corrupt_blocks: int = 0
    rollback_blocks: int = 0
    log_records: int = 0  # data records
    log_deletes: int = 0  # delete records (Java's log scanner counts both as log records)
    skipped_blocks: int = 0


def visible_blocks(
    blocks: Sequence[tuple[str, LogBlock]], is_visible: Callable[[str], bool], stats: ReadStats
) -> list[tuple[str, LogBlock]]:
    """Apply rollback command blocks and instant visibility to (path, block) pairs in log order."""
    kept: list[tuple[str, LogBlock]] = []
    for path, block in blocks:
        if block.is_corrupt:
            stats.corrupt_blocks += 1
            continue
        if block.block_type == BlockType.COMMAND:
            if block.is_rollback:
                stats.rollback_blocks += 1
                target = block.target_instant_time
                kept = [(p, b) for p, b in kept if b.instant_time != target]
            continue
        stats.log_blocks += 1
        if block.instant_time is None or not is_visible(block.instant_time):
            stats.skipped_blocks += 1
            continue
        kept.append((path, block))
    return kept


RUN_BYTES = 32 << 20  # Avro content decoded in one columnar read at most (raw bytes held until it is decoded)


def decode_log_blocks(
    storage: Storage,
    blocks: Sequence[tuple[str, LogBlock]],
    schema: pa.Schema | None,
    stats: ReadStats,
) -> tuple[list[pa.Table], list[LogPart], pa.Schema | None]:
    """Each visible block's records in log order: a table per data block, deletes as they are. Consecutive
    Avro data blocks of one SCHEMA header are decoded together (`decode_avro_blocks_together`), one by one when
    that does not apply; each file's contents are read through one open file."""
    decoder = _LogDecoder(schema, stats)
    run: list[tuple[str, LogBlock, bytes]] = []  # Avro data blocks of one schema waiting to be decoded
    run_bytes = 0
    for path, file_blocks in groupby(blocks, key=itemgetter(0)):
        in_file = [block for _, block in file_blocks]
        for block, content in zip(in_file, read_contents(storage, path, in_file), strict=True):
            joins = block.block_type in AVRO_BLOCK_TYPES and block.schema is not None
            if run and (not joins or block.schema != run[0][1].schema or run_bytes + len(content) > RUN_BYTES):
                decoder.decode_run(run)
                run, run_bytes = [], 0
            if joins:
                run.append((path, block, content))
                run_bytes += len(content)
            else:
                decoder.decode(path, block, content)
    decoder.decode_run(run)
    return decoder.tables, decoder.parts, decoder.schema


class _LogDecoder:
    """The decoded records of a slice's log blocks, appended in log order."""

    def __init__(self, schema: pa.Schema | None, stats: ReadStats) -> None:
        self.schema, self.stats = schema, stats
        self.tables: list[pa.Table] = []
        self.parts: list[LogPart] = []
        self.rows = 0

    def decode_run(self, run: Sequence[tuple[str, LogBlock, bytes]]) -> None:
        """Avro data blocks of one SCHEMA header: together if that applies, else one by one."""
        if len(run) > 1:
            self._infer_schema(run[0][1])
            together = decode_avro_blocks_together([b for _, b, _ in run], [c for _, _, c in run], self.schema)
            if together is not None:
                for (_, block, _), table in zip(run, together, strict=True):
                    self._add(block, table)
                return
        for path, block, content in run:
            self.decode(path, block, content)

    def decode(self, path: str, block: LogBlock, content: bytes) -> None:
        try:
            if block.block_type == BlockType.DELETE:
                deletes = tuple(decode_delete_records(content))
                self.stats.log_deletes += len(deletes)
                self.parts.append(LogPart(block.instant_time or "", self.rows, self.rows, deletes))
                return
            self._infer_schema(block)
            table = decode_data_block(block, content, self.schema)
        except BlockDecodeError as e:
            raise UndecodableBlockError(path, block.offset, block.block_type.name, str(e)) from e
        self._add(block, table)

    def _infer_schema(self, block: LogBlock) -> None:
        """The slice's schema from the first Avro block, when the caller gave none (a Parquet block has its own)."""
        if self.schema is None and block.schema is not None and block.block_type != BlockType.PARQUET_DATA:
            self.schema = arrow_schema_from_avro_json(block.schema)

    def _add(self, block: LogBlock, table: pa.Table) -> None:
        if self.schema is None:
            self.schema = table.schema
        self.stats.log_records += table.num_rows
        self.parts.append(LogPart(block.instant_time or "", self.rows, self.rows + table.num_rows))
        self.tables.append(table)
        self.rows += table.num_rows


def read_base_file(storage: Storage, path: str, columns: Sequence[str] | None = None) -> pa.Table:
    with base_file_errors(path), storage.open_arrow(path) as f:
        # one file, read whole: no dataset layer and no pre-buffering IO threads (much faster on small files)
        return pq.ParquetFile(f, pre_buffer=False).read(columns=list(columns) if columns else None)


@contextmanager
def base_file_errors(path: str) -> Iterator[None]:
    """Turn a failure to read the base file `path` into one CorruptFileError line naming it."""
    try:
        yield
    except (pa.ArrowException, OSError) as e:
        raise CorruptFileError(f"unreadable base file {path}: {first_line(e)}") from e


def read_slice_records(
    storage: Storage,
    base_path: str,
    base_file: str | None,
    log_files: Sequence[str],
    spec: MergeSpec,
    is_visible: Callable[[str], bool],
    stats: ReadStats | None = None,
    schema: pa.Schema | None = None,
) -> SliceRecords:
    """Decode one slice without merging. Paths are relative to `base_path`; logs must be in log order."""
    stats = stats if stats is not None else ReadStats()
    base = read_base_file(storage, posixpath.join(base_path, base_file)) if base_file else None
    if base is not None:
        schema = base.schema if schema is None else schema
        base = conform(base, schema)
    found: list[tuple[str, LogBlock]] = []
    for rel in log_files:
        path = posixpath.join(base_path, rel)
        found.extend((path, b) for b in read_blocks(storage, path))
    tables, parts, schema = decode_log_blocks(storage, visible_blocks(found, is_visible, stats), schema, stats)
    log_rows = pa.concat_tables([conform(t, schema) for t in tables]) if tables and schema is not None else None
    keys = record_key_array(log_rows, spec) if log_rows is not None else pa.array([], pa.string())
    return SliceRecords(schema, base, log_rows, parts, keys, spec)


def read_file_slice(
    storage: Storage,
    base_path: str,
    base_file: str | None,
    log_files: Sequence[str],
    spec: MergeSpec,
    is_visible: Callable[[str], bool],
    stats: ReadStats | None = None,
    schema: pa.Schema | None = None,
) -> pa.Table:
    """Merge one slice. Paths are relative to `base_path`; logs must be in log order."""
    records = read_slice_records(storage, base_path, base_file, log_files, spec, is_visible, stats, schema)
    return merge_slice(records, spec).table
