"""Fuzz tests for the header-only log reader: truncation, flipped bytes, overwritten ranges and garbage.

Base logs of 5-20 mixed valid blocks (one of them with data blocks larger than the reader's 16 KiB first
chunk) are written with the `log_writer` helpers, and the Java-written fixture logs are loaded; then they
are mutated. For every mutated file `read_blocks` must return (a read budget turns a non-terminating scan
into a failure instead of a hang), cover the file contiguously, keep every block whose bytes and following
magic (or the end of the file) are untouched, and decode byte-identical blocks to the original content.
Decoding any other non-corrupt block may fail, but only with `BlockDecodeError`, which a reader's decode turns
into an `UndecodableBlockError` naming the file and offset (Java fails on such content too: it is never skipped).

Expected results follow Java's `HoodieLogFileReader` (see `docs/hudi-format.md` section 1) everywhere,
with no exceptions: fewer than 6 bytes after a block are the end of the file (the block is kept and those
bytes form one CORRUPT block), and a non-empty footer makes a block corrupt whatever its size. Regression
tests at the end pin the divergences the modules used to have.

The fixture logs under `tests/data/` must be present: a missing fixture is a failure, never a skip.
"""

from __future__ import annotations

import io
import json
import os
import random
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import fastavro
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_meta.errors import UndecodableBlockError
from hudi_meta.format.avro_arrow import arrow_schema_from_avro_json
from hudi_meta.format.block_content import (
    BlockDecodeError,
    DeleteRecord,
    decode_avro_records,
    decode_data_block,
    decode_data_block_at,
    decode_delete_block_at,
    decode_delete_records,
    decode_parquet,
    encode_avro_records,
)
from hudi_meta.format.log_block import MAGIC, BlockType, HeaderKey, LogBlock
from hudi_meta.format.log_reader import read_blocks, read_content, scan_blocks
from hudi_meta.format.log_writer import (
    EncodedBlock,
    append_blocks,
    avro_data_block,
    delete_block,
    parquet_data_block,
    rollback_block,
)
from hudi_meta.storage import LocalStorage
from tests.conftest import FIXTURES_DIR

FIXTURE_LOGS = FIXTURES_DIR / "log_files"
FIXTURE_DIRS = ["valid_log_avro_data", "valid_log_delete", "valid_log_parquet_data", "valid_log_rollback"]

# With `filterwarnings = error`, Hypothesis's failure report imports libcst (to suggest an @example patch),
# whose DeprecationWarning would turn every real failure into an INTERNALERROR or FlakyStrategyDefinition.
pytestmark = pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")

FUZZ = settings(max_examples=200, deadline=None)
FUZZ_LIGHT = settings(max_examples=100, deadline=None)


# ---------------------------------------------------------------- budgeted storage (termination guard)


class _BudgetedFile:
    """A read-only file that fails the test once the reader has made too many reads."""

    def __init__(self, f: BinaryIO, budget: int) -> None:
        self._f = f
        self._budget = budget
        self.reads = 0

    def read(self, n: int = -1) -> bytes:
        self.reads += 1
        if self.reads > self._budget:
            raise AssertionError(f"reader exceeded {self._budget} reads: it does not make progress")
        return self._f.read(n)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> _BudgetedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BudgetedStorage(LocalStorage):
    """LocalStorage whose readers may do a bounded number of reads per byte of file.

    The scan advances at least one byte per step and reads a constant number of times per step
    (files here are far below the 1 MiB scan window), so 8 reads per byte is a generous bound.
    """

    def open_read(self, path: str) -> BinaryIO:
        budget = 8 * (self.size(path) + 8)
        return _BudgetedFile(super().open_read(path), budget)  # type: ignore[return-value]


STORAGE = BudgetedStorage()


# ---------------------------------------------------------------- base logs


@dataclass(frozen=True)
class Original:
    """One valid block of a base log and what decoding it must give."""

    offset: int
    data: bytes
    block_type: BlockType
    header: Mapping[int, str]
    content: bytes
    expected: Any  # records (data blocks), DeleteRecords (delete) or None (command)

    @property
    def end(self) -> int:
        return self.offset + len(self.data)

    def __repr__(self) -> str:
        return f"<{self.block_type.name} block at {self.offset}, {len(self.data)} bytes>"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # Hypothesis's printer: no field dump
        p.text(repr(self))


@dataclass(frozen=True)
class BaseLog:
    name: str
    data: bytes
    blocks: tuple[Original, ...]

    # Short reprs: Hypothesis prints the test's arguments (fixtures included) in failure reports, and a
    # huge repr raises HypothesisWarning, an error under `filterwarnings = error`.
    def __repr__(self) -> str:
        return f"<BaseLog {self.name}: {len(self.blocks)} blocks, {self.size} bytes>"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(repr(self))

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def schemas(self) -> frozenset[str]:
        return frozenset(o.header[HeaderKey.SCHEMA] for o in self.blocks if HeaderKey.SCHEMA in o.header)

    def block_at(self, pos: int) -> int:
        """Index of the block holding byte `pos`."""
        return next(i for i, o in enumerate(self.blocks) if o.offset <= pos < o.end)


# No '#' in generated strings: block contents never contain the magic, so corrupt spans are predictable.
_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-./=éß日本"

TRIP_SCHEMA = (
    '{"type":"record","name":"trips_record","namespace":"hoodie.trips","fields":['
    '{"name":"_hoodie_commit_time","type":["null","string"],"default":null},'
    '{"name":"_hoodie_record_key","type":["null","string"],"default":null},'
    '{"name":"_hoodie_partition_path","type":["null","string"],"default":null},'
    '{"name":"ts","type":"long"},'
    '{"name":"rider","type":["null","string"],"default":null},'
    '{"name":"fare","type":["null","double"],"default":null},'
    '{"name":"seats","type":["null","long"],"default":null},'
    '{"name":"active","type":["null","boolean"],"default":null}]}'
)
TRIP_ARROW = pa.schema(
    [
        pa.field("_hoodie_commit_time", pa.string()),
        pa.field("_hoodie_record_key", pa.string()),
        pa.field("_hoodie_partition_path", pa.string()),
        pa.field("ts", pa.int64(), nullable=False),
        pa.field("rider", pa.string()),
        pa.field("fare", pa.float64()),
        pa.field("seats", pa.int64()),
        pa.field("active", pa.bool_()),
    ]
)


def _text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(n))


def _trip(rng: random.Random, instant: str) -> dict[str, Any]:
    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.15 else value

    return {
        "_hoodie_commit_time": instant,
        "_hoodie_record_key": _text(rng, 12),
        "_hoodie_partition_path": f"city={_text(rng, 6)}",
        "ts": rng.randint(1_600_000_000_000, 1_800_000_000_000),
        "rider": maybe(_text(rng, rng.randint(0, 20))),
        "fare": maybe(rng.uniform(-1e6, 1e6)),
        "seats": maybe(rng.randint(-(2**63), 2**63 - 1)),
        "active": maybe(rng.random() < 0.5),
    }


# Record counts that make a data block larger than the reader's first 16 KiB chunk (its footer then lies
# beyond that chunk and is read separately).
BIG_RECORDS = {"avro": 300, "parquet": 500}
_HEADER_CHUNK = 16 * 1024
WINDOWS = (1, 100, 3_000, 40_000)  # read windows to scan with besides the default: below, about and above a block


def _random_block(
    rng: random.Random, kind: str, instant: str, n_records: int | None = None
) -> tuple[EncodedBlock, Any]:
    if kind in ("avro", "parquet"):
        n = rng.randint(1, 6) if n_records is None else n_records
        records = [_trip(rng, instant) for _ in range(n)]
        met = min(r["ts"] for r in records) if rng.random() < 0.5 else None
        if kind == "avro":
            return avro_data_block(records, TRIP_SCHEMA, instant, met), records
        table = pa.Table.from_pylist(records, schema=TRIP_ARROW)
        return parquet_data_block(table, TRIP_SCHEMA, instant, met), records
    if kind == "delete":
        deletes = [
            DeleteRecord(
                _text(rng, 12),
                rng.choice([None, f"city={_text(rng, 5)}"]),
                rng.choice([None, rng.randint(-(2**63), 2**63 - 1), _text(rng, 5)]),
            )
            for _ in range(rng.randint(1, 5))
        ]
        met = rng.randint(0, 2**40) if rng.random() < 0.3 else None
        # None ordering is written as natural order (IntWrapper 0) and decodes as 0.
        expected = [
            DeleteRecord(d.record_key, d.partition_path, 0 if d.ordering_value is None else d.ordering_value)
            for d in deletes
        ]
        return delete_block(deletes, instant, met), expected
    assert kind == "rollback"
    return rollback_block(instant, str(int(instant) - rng.randint(1, 1000))), None


def build_base(directory: Path, seed: int, last: str, big: bool = False) -> BaseLog:
    """A log of 5-20 random valid blocks ending with a block of kind `last`, written with append_blocks.

    With `big`, one Avro and one Parquet block in the middle hold enough records to exceed 16 KiB.
    """
    rng = random.Random(seed)
    n = rng.randint(5, 20)
    kinds = [rng.choice(["avro", "avro", "parquet", "delete", "rollback"]) for _ in range(n - 1)] + [last]
    sizes: list[int | None] = [None] * n
    if big:
        kinds[1:3] = ["avro", "parquet"]
        sizes[1:3] = [BIG_RECORDS["avro"], BIG_RECORDS["parquet"]]
    instant = 20250101000000000 + seed * 10**9
    built = [
        _random_block(rng, k, str(instant + i * 1000), m) for i, (k, m) in enumerate(zip(kinds, sizes, strict=True))
    ]
    if big:
        assert all(len(enc.data) - 14 > _HEADER_CHUNK for enc, _ in built[1:3])
    path = str(directory / f".base-{seed}-0_{instant}.log.1_0-1-0")
    storage = LocalStorage()
    offsets: list[int] = []
    i = 0
    while i < n:  # several appends, as successive delta commits would do
        step = rng.randint(1, 5)
        offsets += append_blocks(storage, path, [b for b, _ in built[i : i + step]])
        i += step
    read = read_blocks(storage, path)
    assert [b.offset for b in read] == offsets and not any(b.is_corrupt for b in read)
    originals = tuple(
        Original(b.offset, enc.data, b.block_type, b.header, read_content(storage, path, b), expected)
        for b, (enc, expected) in zip(read, built, strict=True)
    )
    return BaseLog(f"seed{seed}-{last}{'-big' if big else ''}", Path(path).read_bytes(), originals)


def load_fixture(name: str) -> BaseLog:
    files = list((FIXTURE_LOGS / name).glob(".*"))
    assert len(files) == 1, f"expected one fixture log in {FIXTURE_LOGS / name}, found {files}"
    (path,) = files
    storage = LocalStorage()
    (block,) = read_blocks(storage, str(path))
    content = read_content(storage, str(path), block)
    return BaseLog(
        name,
        path.read_bytes(),
        (Original(0, path.read_bytes(), block.block_type, block.header, content, _decode(block, content)),),
    )


@pytest.fixture(scope="module")
def work_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("log-fuzz")


# (seed, kind of the last block, with big blocks) of the generated base logs.
BASE_SPECS = [
    (0, "avro", False),
    (1, "parquet", False),
    (2, "delete", False),
    (3, "rollback", False),
    (4, "delete", True),
]
N_BASES = len(BASE_SPECS) + len(FIXTURE_DIRS)


@pytest.fixture(scope="module")
def bases(work_dir: Path) -> list[BaseLog]:
    logs = [build_base(work_dir, seed, last, big) for seed, last, big in BASE_SPECS]
    logs += [load_fixture(name) for name in FIXTURE_DIRS]
    assert len(logs) == N_BASES
    return logs


# ---------------------------------------------------------------- checks


def _decode_raw(block: LogBlock, content: bytes, target: pa.Schema | None = None) -> Any:
    """The module's decoder for this block type; a returned table must be usable (its names decode)."""
    if block.block_type == BlockType.DELETE:
        return decode_delete_records(content)
    if block.block_type == BlockType.COMMAND:
        return None
    table = decode_data_block(block, content, target)
    assert len(table.schema.names) == table.num_columns  # a returned table's column names decode
    return table


def _decode(block: LogBlock, content: bytes) -> Any:
    """Decoded content in the form `Original.expected` holds."""
    decoded = _decode_raw(block, content)
    return decoded.to_pylist() if isinstance(decoded, pa.Table) else decoded


def _check_decode_contract(block: LogBlock, content: bytes, base: BaseLog, path: str) -> None:
    """Decoding succeeds or raises BlockDecodeError, both as read and conformed to the table schema; a reader's
    decode (`decode_*_at`) then raises UndecodableBlockError naming the file and the block's offset.

    Content damaged inside valid framing is not a corrupt block: Java fails on it too, so it must stop a reader
    with a clean one-line error (never another exception type, never a skip).
    """
    targets = [None, *(arrow_schema_from_avro_json(s) for s in sorted(base.schemas))]
    for target in targets if block.block_type != BlockType.DELETE else [None]:
        try:
            _decode_raw(block, content, target)
        except BlockDecodeError:
            with pytest.raises(UndecodableBlockError) as raised:
                if block.block_type == BlockType.DELETE:
                    decode_delete_block_at(path, block, content)
                else:
                    decode_data_block_at(path, block, content, target)
            e = raised.value
            assert (e.path, e.offset, e.block_type) == (path, block.offset, block.block_type.name)
            assert "\n" not in str(e) and f"offset {block.offset} of {path}" in str(e)
        except Exception as e:  # struct.error, EOFError, UnicodeDecodeError, ...: always a failure
            raise AssertionError(
                f"{block.block_type.name} block at {block.offset}: decoding raised {type(e).__name__}, "
                f"not BlockDecodeError: {e}"
            ) from e


_verified: set[tuple[bytes, int]] = set()


def _check_identical(block: LogBlock, content: bytes, original: Original) -> None:
    assert block.block_type == original.block_type
    assert block.header == original.header
    assert block.footer == {}
    assert content == original.content
    key = (original.data, block.content_offset - block.offset)
    if key not in _verified:  # decoding is deterministic: do it once per distinct block
        assert _decode(block, content) == original.expected
        if original.block_type == BlockType.AVRO_DATA and original.expected is not None:
            assert block.schema is not None
            assert decode_avro_records(content, block.schema) == original.expected
        _verified.add(key)


def check_file(path: Path, base: BaseLog, start: int = 0, intact: Iterable[tuple[int, int]] = ()) -> list[LogBlock]:
    """Read the mutated log at `path`; check coverage, intact blocks and the decode contract.

    `intact` lists (original index, offset in the mutated file) of blocks that must be read back unchanged.
    """
    data = path.read_bytes()
    blocks = read_blocks(STORAGE, str(path), start)
    for window in WINDOWS:  # the reader's read window moves with blocks: what it finds must not depend on it
        with path.open("rb") as f:
            assert list(scan_blocks(f, len(data), start, str(path), window)) == blocks, f"window {window}"
    pos = start
    for b in blocks:
        assert b.offset == pos, f"gap or overlap at {pos}: {blocks}"
        assert b.length > 0
        pos += b.length
    assert pos == len(data)
    assert sum(b.length for b in blocks) == len(data) - start

    by_bytes = {o.data: o for o in base.blocks}
    for b in blocks:
        if b.is_corrupt:
            assert b.header == {} and b.content_length == 0
            continue
        assert b.offset + 22 <= b.content_offset <= b.content_offset + b.content_length <= b.offset + b.length
        content = read_content(STORAGE, str(path), b)
        assert len(content) == b.content_length
        original = by_bytes.get(data[b.offset : b.offset + b.length])
        if original is not None:
            _check_identical(b, content, original)
        else:
            _check_decode_contract(b, content, base, str(path))

    at = {b.offset: b for b in blocks}
    for index, offset in intact:
        original = base.blocks[index]
        assert offset in at, f"block {index} ({original.block_type.name}) lost at {offset}: {blocks}"
        b = at[offset]
        assert not b.is_corrupt and b.length == len(original.data)
        assert data[offset : offset + b.length] == original.data
    return blocks


def _summary(blocks: list[LogBlock]) -> list[tuple[str, int, int]]:
    return [(b.block_type.name, b.offset, b.length) for b in blocks]


def _expected_truncated(base: BaseLog, t: int) -> list[tuple[str, int, int]]:
    """Java's reading of `base` cut to `t` bytes.

    Complete blocks are read; a torn tail is one CORRUPT block. Java treats fewer than 6 bytes after a
    block as EOF (`readFully` of the next magic fails), so that block stays valid and only those bytes
    are corrupt.
    """
    complete = [o for o in base.blocks if o.end <= t]
    boundary = complete[-1].end if complete else 0
    expected = [(o.block_type.name, o.offset, len(o.data)) for o in complete]
    if t > boundary:
        expected.append(("CORRUPT", boundary, t - boundary))
    return expected


def _write(path: Path, data: bytes | bytearray) -> Path:
    path.write_bytes(bytes(data))
    return path


# ---------------------------------------------------------------- the base logs themselves


def test_base_logs_are_valid(bases: list[BaseLog], work_dir: Path) -> None:
    for base in bases:
        assert 1 <= len(base.blocks) <= 20
        if not base.name.startswith("valid_log"):
            assert len(base.blocks) >= 5
            if base.name.endswith("-big"):
                assert sum(len(o.data) - 14 > _HEADER_CHUNK for o in base.blocks) == 2
            assert len({o.block_type for o in base.blocks}) >= 2  # a mix of block types
            assert MAGIC not in b"".join(o.data[6:] for o in base.blocks)
        blocks = check_file(
            _write(work_dir / "pristine", base.data),
            base,
            intact=[(i, o.offset) for i, o in enumerate(base.blocks)],
        )
        assert _summary(blocks) == [(o.block_type.name, o.offset, len(o.data)) for o in base.blocks]


# ---------------------------------------------------------------- (a) truncation


@pytest.mark.parametrize("index", range(N_BASES))
def test_truncate_at_every_offset_of_last_block(bases: list[BaseLog], work_dir: Path, index: int) -> None:
    base = bases[index]
    last = base.blocks[-1]
    path = _write(work_dir / f"trunc-{index}", base.data)
    # Cut the same file shorter and shorter (os.truncate is far cheaper than rewriting it every time).
    for t in range(base.size, last.offset - 1, -1):
        os.truncate(path, t)
        expected = _expected_truncated(base, t)
        if t % 64 == 0 or t - last.offset < 64 or base.size - t < 64:
            # Full check (coverage, intact blocks, decoding) at both ends and every 64th cut.
            intact = [(i, o.offset) for i, o in enumerate(base.blocks) if o.end <= t]
            blocks = check_file(path, base, intact=intact)
        else:
            blocks = read_blocks(STORAGE, str(path))
        assert _summary(blocks) == expected, f"cut at {t}"
        for b, o in zip(blocks, base.blocks, strict=False):
            assert b.is_corrupt or b.header == o.header
        if last.offset < t < base.size:
            assert blocks[-1].is_corrupt and sum(b.is_corrupt for b in blocks) == 1


@given(data=st.data())
@FUZZ_LIGHT
def test_truncate_at_random_offset(bases: list[BaseLog], work_dir: Path, data: st.DataObject) -> None:
    base = data.draw(st.sampled_from(bases), label="base")
    t = data.draw(st.integers(0, base.size), label="cut")
    intact = [(i, o.offset) for i, o in enumerate(base.blocks) if o.end <= t]
    blocks = check_file(_write(work_dir / "trunc-random", base.data[:t]), base, intact=intact)
    assert _summary(blocks) == _expected_truncated(base, t)


# ---------------------------------------------------------------- (b) flipped bytes, overwritten ranges


@given(data=st.data())
@FUZZ
def test_single_byte_flip(bases: list[BaseLog], work_dir: Path, data: st.DataObject) -> None:
    base = data.draw(st.sampled_from(bases), label="base")
    p = data.draw(st.integers(0, base.size - 1), label="position")
    mask = data.draw(st.integers(1, 255), label="xor")
    mutated = bytearray(base.data)
    mutated[p] ^= mask
    k = base.block_at(p)
    hit = base.blocks[k]
    in_magic = p < hit.offset + len(MAGIC)
    intact = [
        (i, o.offset)
        for i, o in enumerate(base.blocks)
        if i != k and not (i == k - 1 and in_magic)  # a broken magic makes the block before it corrupt
    ]
    blocks = check_file(_write(work_dir / "flip", mutated), base, intact=intact)

    # Exactly one region changes: the hit block (plus the one before it when its magic broke).
    span_start = base.blocks[k - 1].offset if in_magic and k > 0 else hit.offset
    outside = [(o.block_type.name, o.offset, len(o.data)) for o in base.blocks if not span_start <= o.offset < hit.end]
    assert [x for x in _summary(blocks) if not span_start <= x[1] < hit.end] == outside
    changed = [b for b in blocks if span_start <= b.offset < hit.end]
    if in_magic:
        assert _summary(changed) == [("CORRUPT", span_start, hit.end - span_start)]
    else:
        assert len(changed) == 1 and changed[0].offset == hit.offset
        assert changed[0].length == len(hit.data)  # valid with the same size, or CORRUPT over the block


mutations = st.one_of(
    st.tuples(st.just("flip"), st.floats(0, 1, exclude_max=True), st.binary(min_size=1, max_size=1)),
    st.tuples(st.just("overwrite"), st.floats(0, 1, exclude_max=True), st.binary(min_size=1, max_size=64)),
)


@given(data=st.data(), muts=st.lists(mutations, min_size=1, max_size=8))
@FUZZ
def test_random_flips_and_overwrites(
    bases: list[BaseLog], work_dir: Path, data: st.DataObject, muts: list[tuple[str, float, bytes]]
) -> None:
    base = data.draw(st.sampled_from(bases), label="base")
    mutated = bytearray(base.data)
    touched = bytearray(base.size)
    for op, where, payload in muts:
        p = int(where * base.size)
        if op == "flip":
            mutated[p] ^= payload[0] or 0xFF
            touched[p] = 1
        else:
            chunk = payload[: base.size - p]
            mutated[p : p + len(chunk)] = chunk
            touched[p : p + len(chunk)] = b"\x01" * len(chunk)
    # A block survives when its bytes and the magic after it (or EOF) are untouched.
    intact = [
        (i, o.offset)
        for i, o in enumerate(base.blocks)
        if not any(touched[o.offset : min(o.end + len(MAGIC), base.size)])
    ]
    check_file(_write(work_dir / "overwrite", mutated), base, intact=intact)


# ---------------------------------------------------------------- (c) garbage between blocks, (d) at start

garbage_bytes = st.one_of(
    st.binary(min_size=1, max_size=300),
    st.binary(min_size=1, max_size=300).map(lambda b: b.replace(b"#", b"$")),  # no magic possible
    st.binary(max_size=40).map(lambda b: MAGIC + b),  # looks like a block start
    st.sampled_from([b"#", b"#HUDI", b"#HUDI#", b"HUDI#", b"#HUDI#\x00\x00\x00\x00\x00\x00\x00\x20"]),
)


@given(data=st.data(), garbage=garbage_bytes)
@FUZZ_LIGHT
def test_garbage_between_blocks(bases: list[BaseLog], work_dir: Path, data: st.DataObject, garbage: bytes) -> None:
    base = data.draw(st.sampled_from([b for b in bases if len(b.blocks) > 1]), label="base")
    k = data.draw(st.integers(1, len(base.blocks)), label="insert before block")  # len = append at end
    at = base.blocks[k].offset if k < len(base.blocks) else base.size
    g = len(garbage)
    # Java: fewer than 6 bytes after the last block are the end of the file, so that block is kept.
    eof_tail = k == len(base.blocks) and g < len(MAGIC)
    blocks = check_file(
        _write(work_dir / "garbage", base.data[:at] + garbage + base.data[at:]),
        base,
        intact=[(i, o.offset) for i, o in enumerate(base.blocks[: k if eof_tail else k - 1])]
        + [(i, o.offset + g) for i, o in enumerate(base.blocks) if i >= k],
    )
    expected = [(o.block_type.name, o.offset, len(o.data)) for o in base.blocks[: k - 1]]
    prev = base.blocks[k - 1]
    if eof_tail:  # too short to hold a magic, whatever the bytes
        expected += [(prev.block_type.name, prev.offset, len(prev.data)), ("CORRUPT", base.size, g)]
        assert _summary(blocks) == expected
        return
    if b"#" in garbage:
        return  # garbage may hold (parts of) a magic: only the general properties above apply
    # The block before the garbage is not followed by a magic, so Java calls it corrupt as well.
    expected.append(("CORRUPT", prev.offset, len(prev.data) + g))
    expected += [(o.block_type.name, o.offset + g, len(o.data)) for o in base.blocks[k:]]
    assert _summary(blocks) == expected


@given(data=st.data(), garbage=garbage_bytes)
@FUZZ_LIGHT
def test_garbage_at_file_start(bases: list[BaseLog], work_dir: Path, data: st.DataObject, garbage: bytes) -> None:
    base = data.draw(st.sampled_from(bases), label="base")
    g = len(garbage)
    blocks = check_file(
        _write(work_dir / "garbage-start", garbage + base.data),
        base,
        intact=[(i, o.offset + g) for i, o in enumerate(base.blocks)],
    )
    assert blocks[0].offset == 0
    if b"#" not in garbage:
        expected = [("CORRUPT", 0, g)] + [(o.block_type.name, o.offset + g, len(o.data)) for o in base.blocks]
        assert _summary(blocks) == expected


def test_scan_from_a_block_offset(bases: list[BaseLog], work_dir: Path) -> None:
    """`start` resumes a scan at a known block offset (e.g. an indexed position)."""
    base = bases[0]
    path = _write(work_dir / "resume", base.data)
    for i, o in enumerate(base.blocks):
        blocks = check_file(path, base, start=o.offset, intact=[(j, b.offset) for j, b in enumerate(base.blocks)][i:])
        assert len(blocks) == len(base.blocks) - i


@pytest.mark.parametrize("cut", ["intact", "torn"])
def test_read_window_ending_around_every_block_boundary(bases: list[BaseLog], work_dir: Path, cut: str) -> None:
    """A window that ends anywhere from 20 bytes before to 20 bytes after a block's end (inside its reverse
    pointer, inside the next magic, just past it) reads the same blocks as the default window; also when
    the file is torn right after that block's next magic."""
    base = bases[0]
    for i, o in enumerate(base.blocks[:-1]):
        data = base.data if cut == "intact" else base.data[: o.end + 3]
        path = _write(work_dir / f"window-{cut}", data)
        expected = read_blocks(STORAGE, str(path))
        for window in range(max(1, o.end - 20), o.end + 21):
            with path.open("rb") as f:  # starting at each block's offset puts the window's end at `window`
                start = base.blocks[i].offset
                got = list(scan_blocks(f, len(data), start, str(path), window - start))
            assert got == [b for b in expected if b.offset >= start], (i, window)


# ---------------------------------------------------------------- regressions


@pytest.mark.parametrize("tail", [b"#", b"#H", b"#HU", b"#HUD", b"#HUDI", b"\x00\x01\x02", b"\xff" * 5, b"HUDI#"])
def test_partial_magic_after_block_is_eof(bases: list[BaseLog], work_dir: Path, tail: bytes) -> None:
    """Regression (log_reader._read_block): 1-5 bytes after a block (e.g. a torn next magic) made that block
    CORRUPT; Java's isBlockCorrupt treats a short read of the next magic as EOF and keeps the block."""
    for base in bases:
        blocks = check_file(
            _write(work_dir / "partial-magic", base.data + tail),
            base,
            intact=[(i, o.offset) for i, o in enumerate(base.blocks)],
        )
        expected = [(o.block_type.name, o.offset, len(o.data)) for o in base.blocks]
        assert _summary(blocks) == [*expected, ("CORRUPT", base.size, len(tail))], base.name


_SCHEMA_MANGLES = {
    "fields-key": ('"fields"', '"fieldr"'),  # fastavro accepts it; arrow_schema_from_avro_json: KeyError
    "field-name-key": ('"name":"ts"', '"namd":"ts"'),  # fastavro SchemaParseException (not a ValueError)
    "field-type-key": ('"type":"long"}', '"typd":"long"}'),  # fastavro SchemaParseException
}


@pytest.mark.parametrize("mangle", sorted(_SCHEMA_MANGLES))
def test_mangled_schema_header_raises_block_decode_error(bases: list[BaseLog], mangle: str) -> None:
    """Regression (fixed in 1cb6deb): these leaked SchemaParseException / KeyError."""
    old, new = _SCHEMA_MANGLES[mangle]
    original = next(o for o in bases[0].blocks if o.block_type == BlockType.AVRO_DATA)
    schema = original.header[HeaderKey.SCHEMA]
    assert old in schema
    header = {int(HeaderKey.SCHEMA): schema.replace(old, new)}
    block = LogBlock(0, len(original.data), BlockType.AVRO_DATA, header=header)
    with pytest.raises(BlockDecodeError):
        decode_data_block(block, original.content)


def test_union_of_two_non_null_branches_decodes() -> None:
    """Regression (issue 8, defect 3): ["null", "long", "string"] raised BlockDecodeError ('unsupported Avro
    union') and readers skipped the block as if it were corrupt. It reads as parquet-avro and Spark give it:
    a struct with one member per non-null branch, the written one set (values as fastavro decodes them)."""
    schema = '{"type":"record","name":"r","fields":[{"name":"v","type":["null","long","string"],"default":null}]}'
    content = encode_avro_records([{"v": 1}, {"v": "x"}, {"v": None}], schema)
    parsed = fastavro.parse_schema(json.loads(schema))
    datums, pos = [], 8
    for _ in range(3):
        (length,) = struct.unpack_from(">i", content, pos)
        datums.append(fastavro.schemaless_reader(io.BytesIO(content[pos + 4 : pos + 4 + length]), parsed, None))
        pos += 4 + length
    assert datums == [{"v": 1}, {"v": "x"}, {"v": None}]
    block = LogBlock(0, 0, BlockType.AVRO_DATA, header={int(HeaderKey.SCHEMA): schema})
    assert decode_data_block(block, content).to_pylist() == [
        {"v": {"member0": 1, "member1": None}},
        {"v": {"member0": None, "member1": "x"}},
        {"v": None},
    ]


@pytest.mark.parametrize("with_target", [pytest.param(False, id="as-read"), pytest.param(True, id="conformed")])
def test_damaged_parquet_column_name_raises_block_decode_error(bases: list[BaseLog], with_target: bool) -> None:
    """Regression. As read (block_content.decode_parquet): a non-UTF-8 column name in the Parquet footer gave
    a table whose names raised UnicodeDecodeError on first use (names decode lazily). Conformed (fixed in
    1cb6deb): conform() leaked that UnicodeDecodeError."""
    original = next(o for b in bases for o in b.blocks if o.block_type == BlockType.PARQUET_DATA)
    damaged = original.content.replace(b"rider", b"r\xffder")  # the name as stored in the Parquet footer
    assert damaged != original.content
    block = LogBlock(0, len(original.data), BlockType.PARQUET_DATA, header=original.header)
    with pytest.raises(BlockDecodeError):
        decode_data_block(block, damaged, TRIP_ARROW if with_target else None)
    with pytest.raises(BlockDecodeError):
        decode_parquet(damaged)
    assert decode_data_block(block, original.content).to_pylist() == original.expected


@pytest.mark.parametrize("kind", ["avro", "parquet"])
@pytest.mark.parametrize("big", [False, True], ids=["small", "big"])
@pytest.mark.parametrize("followed", [False, True], ids=["last", "followed"])
@pytest.mark.parametrize("count", [1, -1, 2**31 - 1])
def test_nonzero_footer_count_makes_block_corrupt(
    work_dir: Path, kind: str, big: bool, followed: bool, count: int
) -> None:
    """Regression (log_reader._read_block): the footer of a block larger than the first 16 KiB chunk was not
    read, so a non-zero footer count went unnoticed there. The footer enum is empty, so any footer entry
    makes Java fail on the block: it is CORRUPT whatever the block's size, and the next block is kept."""
    rng = random.Random(f"{kind}-{big}")
    block, records = _random_block(rng, kind, "20250101000000000", BIG_RECORDS[kind] if big else 3)
    assert (len(block.data) - 14 > _HEADER_CHUNK) == big  # block size field: all bytes after magic + size
    after = rollback_block("20250101000001000", "20250101000000000").data if followed else b""
    footer_at = len(block.data) - 8 - 4  # the int32 count, right before the int64 reverse pointer
    assert block.data[footer_at : footer_at + 4] == b"\x00\x00\x00\x00"

    path = _write(work_dir / f"footer-{kind}", block.data + after)
    pristine = read_blocks(STORAGE, str(path))
    assert [(b.block_type, b.offset, b.length, b.footer) for b in pristine][:1] == [
        (block.block_type, 0, len(block.data), {})
    ]
    content = read_content(STORAGE, str(path), pristine[0])
    assert decode_data_block(pristine[0], content).to_pylist() == records

    mutated = bytearray(block.data)
    mutated[footer_at : footer_at + 4] = struct.pack(">i", count)
    blocks = read_blocks(STORAGE, str(_write(path, mutated + after)))
    expected = [("CORRUPT", 0, len(block.data))]
    if followed:
        expected.append(("COMMAND", len(block.data), len(after)))
        assert blocks[1].is_rollback and blocks[1].footer == {}
    assert _summary(blocks) == expected


# ---------------------------------------------------------------- Java-written fixture logs


@pytest.mark.parametrize("name", FIXTURE_DIRS)
def test_fixture_log_reads_as_one_block(name: str) -> None:
    files = list((FIXTURE_LOGS / name).glob(".*"))
    assert len(files) == 1, f"expected one fixture log in {FIXTURE_LOGS / name}, found {files}"
    path = str(files[0])
    storage = LocalStorage()
    blocks = read_blocks(storage, path)
    assert len(blocks) == 1
    (block,) = blocks
    assert not block.is_corrupt
    assert (block.offset, block.length) == (0, storage.size(path))
    assert block.footer == {}
    content = read_content(storage, path, block)
    if name == "valid_log_avro_data":
        assert block.block_type == BlockType.AVRO_DATA
        assert block.schema is not None
        records = decode_avro_records(content, block.schema)
        assert len(records) == 1
        assert decode_data_block(block, content).to_pylist() == records
    elif name == "valid_log_delete":
        assert block.block_type == BlockType.DELETE
        deletes = decode_delete_records(content)
        assert len(deletes) == 3
        assert all(d.is_natural_order for d in deletes)
    elif name == "valid_log_parquet_data":
        assert block.block_type == BlockType.PARQUET_DATA
        assert decode_data_block(block, content).num_rows == 1
    else:
        assert block.block_type == BlockType.COMMAND
        assert block.is_rollback
        assert block.target_instant_time == "20250126040826878"
        assert content == b""
