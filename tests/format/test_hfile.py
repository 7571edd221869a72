"""The HFile reader and writer (hudi_meta/format/hfile.py): write -> read round trips, and every HFile the Java
fixtures' metadata tables hold (base files and the HFiles inside HFILE_DATA log blocks).

Independent checks: CRC-32C against its published check value; Java's HBase-written (table version 8) HFiles are
rewritten from their own cells, file info and meta blocks, and must come out byte for byte; record-index entries
must name the record keys the data files hold; column-stats keys and values decode in the fixture's own schema.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudi_meta.errors import CorruptFileError
from hudi_meta.format.avro_container import load_schema
from hudi_meta.format.block_content import decode_data_block, decode_hfile_records, hfile_records
from hudi_meta.format.hfile import (
    AVG_KEY_LEN,
    AVG_VALUE_LEN,
    CREATE_TIME_TS,
    KEY_VALUE_VERSION,
    LAST_KEY,
    MAX_MEMSTORE_TS_KEY,
    ChecksumType,
    Codec,
    HFileReader,
    crc32c,
    full_key,
    hadoop_vint,
    read_hadoop_vint,
    read_varint,
    varint,
    write_hfile,
)
from hudi_meta.format.log_block import BlockType, LogBlock
from hudi_meta.format.log_reader import scan_blocks
from hudi_meta.table.table import HudiTable
from tests.conftest import FIXTURES_DIR, table_id

MDT_ZIPS = sorted(
    z for z in FIXTURES_DIR.rglob("*.zip") if any("/.hoodie/metadata/" in n for n in zipfile.ZipFile(z).namelist())
)
META_FIELDS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
WRITER_KEYS = {LAST_KEY, AVG_KEY_LEN, AVG_VALUE_LEN, CREATE_TIME_TS, KEY_VALUE_VERSION, MAX_MEMSTORE_TS_KEY}


def mdt_hfiles(archive: Path) -> Iterator[tuple[str, bytes, str | None]]:
    """(name, HFile bytes, SCHEMA header or None) of every base HFile and HFILE_DATA block of the zip's
    metadata table."""
    with zipfile.ZipFile(archive) as zf:
        for name in sorted(zf.namelist()):
            if "/.hoodie/metadata/" not in name or name.startswith("__MACOSX") or "/.hoodie/metadata/.hoodie" in name:
                continue
            if name.endswith(".hfile"):
                yield name, zf.read(name), None
            elif ".log." in name.rsplit("/", 1)[-1]:
                data = zf.read(name)
                for block in scan_blocks(io.BytesIO(data), len(data), name=name):
                    if block.block_type == BlockType.HFILE_DATA:
                        content = data[block.content_offset : block.content_offset + block.content_length]
                        yield f"{name}@{block.offset}", content, block.schema


# ---- small codecs -----------------------------------------------------------------------------------


def test_crc32c_check_value() -> None:
    """The CRC-32C check value of "123456789" (RFC 3720 / the CRC catalogue)."""
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0


@given(st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1))
def test_hadoop_vint_round_trip(n: int) -> None:
    encoded = hadoop_vint(n)
    assert read_hadoop_vint(encoded + b"\xff", 0) == (n, len(encoded))
    assert len(encoded) == (1 if -112 <= n <= 127 else 1 + (max(n, ~n).bit_length() + 7) // 8)


@given(st.integers(min_value=0, max_value=(1 << 64) - 1))
def test_protobuf_varint_round_trip(n: int) -> None:
    encoded = varint(n)
    assert read_varint(encoded, 0) == (n, len(encoded))


def test_full_key_layout() -> None:
    """row length, row, family length 0, timestamp Long.MAX_VALUE, type Put (4): 12 bytes around the row."""
    assert full_key(b"ab") == b"\x00\x02ab\x00" + struct.pack(">q", (1 << 63) - 1) + b"\x04"


# ---- write -> read ----------------------------------------------------------------------------------

keys_st = st.lists(st.binary(max_size=24), max_size=60, unique=True).map(sorted)
text_keys_st = st.lists(st.text(max_size=12), max_size=40, unique=True).map(lambda ks: sorted(ks, key=str.encode))


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    keys=keys_st,
    data=st.data(),
    block_size=st.sampled_from([1, 40, 200, 1 << 20]),
    codec=st.sampled_from([Codec.GZ, Codec.NONE]),
    checksum=st.sampled_from(list(ChecksumType)),
)
def test_write_read_round_trip(
    keys: list[bytes], data: st.DataObject, block_size: int, codec: Codec, checksum: ChecksumType
) -> None:
    values = data.draw(st.lists(st.binary(max_size=50), min_size=len(keys), max_size=len(keys)))
    user_keys = st.binary(min_size=1, max_size=8).map(lambda b: b"u." + b)
    info = data.draw(st.dictionaries(user_keys, st.binary(max_size=20)))
    metas = data.draw(st.dictionaries(st.text(min_size=1, max_size=10), st.binary(max_size=300), max_size=3))
    cells = list(zip(keys, values, strict=True))
    hfile = HFileReader(
        write_hfile(cells, file_info=info, meta_blocks=metas, block_size=block_size, codec=codec, checksum=checksum)
    )
    assert list(hfile.items()) == cells
    assert hfile.entry_count == len(cells)
    assert hfile.trailer.codec == codec
    assert (hfile.trailer.major_version, hfile.trailer.minor_version) == (3, 3)
    for k, v in cells:
        assert hfile.get(k) == v
    present = set(keys)
    for probe in data.draw(st.lists(st.binary(max_size=24), max_size=10)):
        assert hfile.get(probe) == (None if probe not in present else dict(cells)[probe])
        assert list(hfile.scan_prefix(probe)) == [(k, v) for k, v in cells if k.startswith(probe)]
    for name, payload in metas.items():
        assert hfile.meta_block(name) == payload
    assert hfile.meta_block("absent") is None
    for k, v in info.items():
        assert hfile.file_info[k] == v
    assert hfile.last_key == (keys[-1] if keys else None)
    if block_size == 1:  # every cell closes its block: one index entry per key
        assert [e.row for e in hfile.data_index] == keys


@given(keys=text_keys_st)
def test_text_keys_and_prefix_lookups(keys: list[str]) -> None:
    """Keys are UTF-8 rows ordered by their bytes, as Java's writers order them; str lookups encode the same way."""
    cells = [(k, k.encode()[::-1]) for k in keys]
    hfile = HFileReader(write_hfile(cells, block_size=64))
    assert [k.decode() for k, _ in hfile.items()] == keys
    for k in keys:
        assert hfile.get(k) == k.encode()[::-1]
        prefix = k[:2]
        assert [x.decode() for x, _ in hfile.scan_prefix(prefix)] == [x for x in keys if x.startswith(prefix)]


def test_writer_refuses_unsorted_and_duplicate_keys() -> None:
    with pytest.raises(ValueError, match="strictly ascending"):
        write_hfile([(b"b", b""), (b"a", b"")])
    with pytest.raises(ValueError, match="strictly ascending"):
        write_hfile([(b"a", b"1"), (b"a", b"2")])


def test_empty_file_has_no_data_block() -> None:
    """An HFile of no cells is valid: no data block, an empty root index, first data block offset -1."""
    hfile = HFileReader(write_hfile([]))
    assert list(hfile.items()) == [] and hfile.get(b"a") is None and hfile.last_key is None
    assert (hfile.trailer.first_data_block_offset, hfile.trailer.data_index_count) == (-1, 0)


@given(position=st.integers(min_value=0, max_value=10**6))
def test_damage_is_a_corrupt_file_error(position: int) -> None:
    """A flipped byte is caught by a checksum, a decoder or a structure check (CRC32C covers every block), or
    lands where nothing is read (trailer padding, totals, comparator); a truncated file is refused. Never another
    exception type, never silently different cells."""
    cells = [(f"key-{i:04d}".encode(), bytes([i % 256]) * 40) for i in range(200)]
    data = bytearray(write_hfile(cells, block_size=2000))
    i = position % len(data)
    data[i] ^= 0x01
    try:
        read = list(HFileReader(bytes(data)).items())
    except CorruptFileError:
        return
    assert read == cells
    with pytest.raises(CorruptFileError):
        HFileReader(bytes(data[:-1]))


# ---- Java-written fixtures ----------------------------------------------------------------------------


@pytest.mark.parametrize("archive", MDT_ZIPS, ids=table_id)
def test_every_fixture_hfile_reads(archive: Path) -> None:
    """Every base HFile and HFILE_DATA block: checksums verified, entry count as the trailer says, keys strictly
    ascending and found by point and prefix lookups, the file info schema equal to the block's SCHEMA header, and
    every value an Avro datum of that schema (decoded through block_content, also into Arrow for blocks)."""
    seen = 0
    for name, data, header_schema in mdt_hfiles(archive):
        hfile = HFileReader(data, name)
        keys = list(hfile.row_keys())
        assert len(keys) == hfile.entry_count, name
        assert keys == sorted(set(keys)), name
        for k in keys:
            assert hfile.get(k) is not None and next(hfile.scan_prefix(k))[0] == k
        assert hfile.schema is not None
        if header_schema is not None:
            assert hfile.schema == header_schema, name
            records = decode_hfile_records(data, header_schema)
            assert [r.key for r in records] == [k.decode() for k in keys]
        else:
            records = hfile_records(hfile, hfile.schema)
            if keys:
                assert hfile.bloom_filter is not None  # Java base files carry their keys' bloom filter
                assert hfile.file_info[b"minRecordKey"] == keys[0] and hfile.file_info[b"maxRecordKey"] == keys[-1]
        assert all(r.record["key"] == r.key for r in records)
        seen += 1
    assert seen


@pytest.mark.parametrize("archive", MDT_ZIPS, ids=table_id)
def test_hbase_written_hfiles_are_rewritten_byte_for_byte(archive: Path) -> None:
    """HFiles that HBase's writer wrote (Hudi 1.0, minor version 3): the writer, given the same cells, file info
    and meta blocks, writes the same bytes (block framing, GZ streams, CRC32C checksums, index, file info
    order, trailer). Hudi 1.1's native files (minor version 0) are read only: their layout differs on purpose."""
    rewritten = 0
    for name, data, _ in mdt_hfiles(archive):
        hfile = HFileReader(data, name)
        if hfile.trailer.minor_version != 3:
            continue
        info = {k: v for k, v in hfile.file_info.items() if k not in WRITER_KEYS}
        metas = {n: hfile.meta_block(n) or b"" for n in hfile.meta_index}
        (created,) = struct.unpack(">q", hfile.file_info[CREATE_TIME_TS])
        assert write_hfile(list(hfile.items()), file_info=info, meta_blocks=metas, create_time_ms=created) == data
        rewritten += 1
    if "v8_" in archive.name:
        assert rewritten > 0


def test_arrow_decoding_of_hfile_blocks() -> None:
    """decode_data_block reads HFILE_DATA blocks into Arrow (the `key` column from the cell rows)."""
    archive = FIXTURES_DIR / "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"
    for name, data, schema in mdt_hfiles(archive):
        if schema is None:
            continue
        block = LogBlock(0, 0, BlockType.HFILE_DATA, {2: schema})
        table = decode_data_block(block, data)
        assert table.column("key").to_pylist() == [k.decode() for k in HFileReader(data).row_keys()], name


def _record_index_on_parquet(archive: Path) -> bool:
    """The zip's table has Parquet base files (pyarrow reads no Lance) and record-index base HFiles."""
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
        props = next(n for n in names if n.endswith("/.hoodie/hoodie.properties") and "/metadata/" not in n)
        lance = "HOODIE.TABLE.BASE.FILE.FORMAT=LANCE" in zf.read(props).decode("utf-8").upper().replace(" ", "")
    return not lance and any("/metadata/record_index/" in n and n.endswith(".hfile") for n in names)


RECORD_INDEX_ZIPS = [z for z in MDT_ZIPS if _record_index_on_parquet(z)]


@pytest.mark.parametrize("archive", RECORD_INDEX_ZIPS, ids=table_id)
def test_record_index_names_the_keys_of_the_data_files(archive: Path, fixture_table) -> None:  # type: ignore[no-untyped-def]
    """Every record-index key the base HFiles hold is a record key of a data base file of the table, in the data
    partition the entry names (read with pyarrow, independent of hudi-meta's readers). The tables: those with
    Parquet base files and record-index base HFiles."""
    base = fixture_table(archive)
    assert HudiTable.open(str(base)).config.base_file_format == "PARQUET"
    index_keys: dict[str, str] = {}
    for name, data, schema in mdt_hfiles(archive):
        if "/record_index/" not in name or schema is not None:
            continue
        hfile = HFileReader(data, name)
        assert hfile.schema is not None
        for r in hfile_records(hfile, hfile.schema):
            assert r.record["type"] == 5
            index_keys[r.key] = r.record["recordIndexMetadata"]["partitionName"]
    assert index_keys
    data_keys: dict[str, set[str]] = {}
    for f in base.rglob("*.parquet"):
        if ".hoodie" in f.parts:
            continue
        partition = str(f.parent.relative_to(base)) if f.parent != base else ""
        for k in pq.read_table(f, columns=["_hoodie_record_key"]).column(0).to_pylist():
            data_keys.setdefault(k, set()).add(partition)
    for key, partition in index_keys.items():
        assert partition in data_keys.get(key, set()), key


def without_docs(schema: object) -> object:
    """A schema's JSON without `doc` and Java's `avro.java.string` annotations."""
    if isinstance(schema, dict):
        kept = {k: without_docs(v) for k, v in schema.items() if k not in ("doc", "avro.java.string")}
        return kept["type"] if list(kept) == ["type"] else kept  # {"type": "string"} is "string"
    if isinstance(schema, list):
        return [without_docs(v) for v in schema]
    return schema


def test_shipped_metadata_schema_is_what_java_writes() -> None:
    """HoodieMetadata.avsc with Hudi's five meta fields in front (HoodieAvroUtils.addMetadataFields) is the
    writer schema of the version 9 fixtures' metadata records."""
    shipped = load_schema("HoodieMetadata")
    meta = [{"name": n, "type": ["null", "string"], "default": None} for n in META_FIELDS]
    expected = without_docs({**shipped, "fields": meta + shipped["fields"]})
    archive = FIXTURES_DIR / "sample_table/mor/avro/v9_txns_simple_meta.zip"
    name, data, _ = next(f for f in mdt_hfiles(archive) if f[0].endswith(".hfile"))
    schema = HFileReader(data, name).schema
    assert schema is not None
    assert without_docs(json.loads(schema)) == expected
