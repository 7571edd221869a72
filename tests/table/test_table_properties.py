"""Issue 25 item 4: a `hoodie.properties` is taken as a table's only if it has the keys every Hudi table has and
values Hudi defines; anything else is refused naming the key and the file, never read with guessed defaults.

The expected values are written out here from Java's enums (HoodieTableType, HoodieTableVersion and its timeline
layouts, HoodieFileFormat, HoodieTimelineTimeZone, RecordMergeMode, KeyGeneratorType) and from Java's checksum rule
(CRC32 of "<database>.<table>", checked when the key is there), not taken from the implementation.
"""

from __future__ import annotations

import tempfile
import zipfile
import zlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.errors import HudiMetaError, TablePropertiesError, UnsupportedTableError
from hudi_meta.format.properties import format_properties, parse_properties
from hudi_meta.table.table import HudiTable
from tests.conftest import FIXTURES_DIR, table_id, table_zips

NAME = "trips"
DATABASE = "default"
CHECKSUM = zlib.crc32(f"{DATABASE}.{NAME}".encode())  # HoodieTableConfig.generateChecksum
VALID = {  # a table version 6 MOR table as Java 0.14 writes it (v6_trips_8i1u's keys)
    "hoodie.table.name": NAME,
    "hoodie.database.name": DATABASE,
    "hoodie.table.checksum": str(CHECKSUM),
    "hoodie.table.type": "MERGE_ON_READ",
    "hoodie.table.version": "6",
    "hoodie.timeline.layout.version": "1",
    "hoodie.table.recordkey.fields": "uuid",
    "hoodie.table.partition.fields": "city",
    "hoodie.table.precombine.field": "ts",
    "hoodie.compaction.payload.class": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
    "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
    "hoodie.datasource.write.hive_style_partitioning": "true",
    "hoodie.datasource.write.partitionpath.urlencode": "false",
    "hoodie.datasource.write.drop.partition.columns": "false",
    "hoodie.archivelog.folder": "archived",
}
BOOLEAN = ["true", "false"]
JAVA_VALUES = {
    "hoodie.table.type": ["COPY_ON_WRITE", "MERGE_ON_READ"],
    "hoodie.table.base.file.format": ["PARQUET", "HFILE", "ORC", "LANCE"],
    "hoodie.table.timeline.timezone": ["LOCAL", "UTC"],
    "hoodie.record.merge.mode": ["COMMIT_TIME_ORDERING", "EVENT_TIME_ORDERING", "CUSTOM"],
    "hoodie.table.keygenerator.type": [
        *(f"{k}{s}" for k in ("SIMPLE", "COMPLEX", "TIMESTAMP", "CUSTOM", "NON_PARTITION") for s in ("", "_AVRO")),
        *(f"{k}{s}" for k in ("GLOBAL_DELETE", "AUTO_RECORD") for s in ("", "_AVRO")),
        "HOODIE_TABLE_METADATA",
        "SPARK_SQL",
        "SPARK_SQL_UUID",
        "SPARK_SQL_MERGE_INTO",
        "STREAMER_TEST",
        "USER_PROVIDED",
    ],
    "hoodie.populate.meta.fields": BOOLEAN,
    "hoodie.datasource.write.hive_style_partitioning": BOOLEAN,
    "hoodie.datasource.write.partitionpath.urlencode": BOOLEAN,
    "hoodie.datasource.write.drop.partition.columns": BOOLEAN,
}
LAYOUT_OF_VERSION = {0: 0, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 7: 1, 8: 2, 9: 2}  # HoodieTableVersion
READ_VERSIONS = {6, 8, 9}


def open_with(text: str) -> HudiTable:
    """`HudiTable.open` of a table whose `.hoodie/hoodie.properties` holds `text` (no other file)."""
    with tempfile.TemporaryDirectory() as root:
        (Path(root) / ".hoodie").mkdir()
        (Path(root) / ".hoodie" / "hoodie.properties").write_text(text)
        return HudiTable.open(root)


def open_props(props: dict[str, str]) -> HudiTable:
    return open_with(format_properties(props))


def refused(props: dict[str, str] | str, key: str, error: type[HudiMetaError] = TablePropertiesError) -> str:
    """The one-line error `open` raises for these properties; it names the key and the file."""
    with pytest.raises(error) as raised:
        open_with(props if isinstance(props, str) else format_properties(props))
    message = str(raised.value)
    assert len(message.splitlines()) == 1, message
    assert key in message and "/.hoodie/hoodie.properties" in message, message
    return message


def casings(values: list[str]) -> st.SearchStrategy[str]:
    """Each value in any mix of upper and lower case (hudi-rs matches them ignoring case)."""
    return st.sampled_from(values).flatmap(
        lambda v: st.lists(st.booleans(), min_size=len(v), max_size=len(v)).map(
            lambda ups: "".join(c.upper() if up else c.lower() for c, up in zip(v, ups, strict=True))
        )
    )


def test_the_valid_file_opens() -> None:
    config = open_props(VALID).config
    assert (config.name, config.table_type, config.version) == (NAME, "MERGE_ON_READ", 6)


@pytest.mark.parametrize("key", ["hoodie.table.name", "hoodie.table.type", "hoodie.table.version"])
@pytest.mark.parametrize("how", ["missing", "empty"])
def test_a_required_key_missing_or_empty_is_refused(key: str, how: str) -> None:
    props = {k: v for k, v in VALID.items() if k != key}
    if how == "empty":
        props[key] = ""
    if key == "hoodie.table.name":
        del props["hoodie.table.checksum"]  # else the checksum is what fails (it covers the name)
    refused(props, key)


def test_an_empty_file_and_a_foreign_one_are_refused() -> None:
    """The issue's case: an empty file was taken as a COPY_ON_WRITE table (its logs not read)."""
    refused("", "hoodie.table.name")
    refused("# some other tool's settings\nserver.port=8080\nname=trips\n", "hoodie.table.name")
    refused('{"hoodie.table.name": "trips"}\n', "hoodie.table.name")


@given(st.sampled_from(sorted(JAVA_VALUES)).flatmap(lambda k: st.tuples(st.just(k), casings(JAVA_VALUES[k]))))
def test_every_java_value_opens_in_any_case(choice: tuple[str, str]) -> None:
    key, value = choice
    assert open_props({**VALID, key: value}).config.props[key] == value


@given(st.sampled_from(sorted(JAVA_VALUES)), st.text(max_size=30))
def test_a_value_java_does_not_define_is_refused(key: str, value: str) -> None:
    if value.upper() in {v.upper() for v in JAVA_VALUES[key]} or (key == "hoodie.record.merge.mode" and value == ""):
        open_props({**VALID, key: value})  # RecordMergeMode.getValue reads "" as unset
        return
    refused({**VALID, key: value}, key)


@given(st.integers(-3, 40))
def test_table_versions(version: int) -> None:
    """0-9 are Hudi's (HoodieTableVersion), 6, 8 and 9 are read (with their own timeline layout)."""
    props = {**VALID, "hoodie.table.version": str(version)}
    if version in READ_VERSIONS:
        props["hoodie.timeline.layout.version"] = str(LAYOUT_OF_VERSION[version])
        assert open_props(props).config.version == version
    elif version in LAYOUT_OF_VERSION:
        assert "6, 8 and 9" in refused(props, "hoodie.table.version", UnsupportedTableError)
    else:
        refused(props, "hoodie.table.version")


def java_parse_int(text: str) -> int | None:
    """Integer.parseInt as Java writers' output meets it: an optional sign, then one or more ASCII digits."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    return int(text) if digits and all(c in "0123456789" for c in digits) else None


@given(
    st.one_of(
        st.text(max_size=6),
        st.tuples(st.sampled_from(["", "+", "-", "0", " ", "_"]), st.integers(0, 12)).map(lambda t: f"{t[0]}{t[1]}"),
        st.integers(0, 12).map(lambda n: f"{n} "),
    )
)
def test_a_table_version_java_cannot_parse_is_refused(text: str) -> None:
    props = {k: v for k, v in VALID.items() if k != "hoodie.timeline.layout.version"}
    props["hoodie.table.version"] = text
    version = java_parse_int(text)
    if version in READ_VERSIONS:
        assert open_props(props).config.version == version
    elif version in LAYOUT_OF_VERSION:
        refused(props, "hoodie.table.version", UnsupportedTableError)
    else:
        refused(props, "hoodie.table.version")


@given(st.sampled_from(sorted(READ_VERSIONS)), st.integers(-2, 5))
def test_the_timeline_layout_is_the_one_of_the_table_version(version: int, layout: int) -> None:
    """A wrong layout lists the timeline from the wrong folder: a table with commits read as empty (exit 0)."""
    props = {**VALID, "hoodie.table.version": str(version), "hoodie.timeline.layout.version": str(layout)}
    if layout == LAYOUT_OF_VERSION[version]:
        assert open_props(props).config.timeline_layout == layout
    else:
        refused(props, "hoodie.timeline.layout.version")
    del props["hoodie.timeline.layout.version"]
    assert open_props(props).config.timeline_layout == LAYOUT_OF_VERSION[version]


@given(st.integers(0, 2**32) | st.just(CHECKSUM), st.sampled_from(["", "+", "0", "00"]))
def test_a_checksum_that_is_not_the_table_names_is_refused(checksum: int, prefix: str) -> None:
    """Java compares Long.parseLong(checksum) with the CRC: a sign or leading zeros do not matter."""
    props = {**VALID, "hoodie.table.checksum": f"{prefix}{checksum}"}
    if checksum == CHECKSUM:
        open_props(props)
    else:
        refused(props, "hoodie.table.checksum")


def test_a_file_without_a_checksum_opens_but_a_checksum_without_a_name_is_refused() -> None:
    """Tables written before Hudi 0.11 have no checksum; a checksum needs the name it covers."""
    open_props({k: v for k, v in VALID.items() if k != "hoodie.table.checksum"})
    refused({k: v for k, v in VALID.items() if k != "hoodie.table.name"}, "hoodie.table.name")
    refused({**VALID, "hoodie.table.checksum": "twelve"}, "hoodie.table.checksum")


@given(st.text(max_size=8))
def test_a_bucket_count_must_be_a_positive_whole_number(text: str) -> None:
    props = {**VALID, "hoodie.bucket.index.num.buckets": text}
    if text.isascii() and text.isdigit() and int(text) > 0:
        assert open_props(props).config.num_buckets == int(text)
    else:
        refused(props, "hoodie.bucket.index.num.buckets")


@pytest.mark.parametrize("archive", table_zips(), ids=table_id)
def test_every_java_written_properties_file_passes(archive: Path) -> None:
    """The rules refuse nothing Java writes: each fixture's hoodie.properties, and its metadata table's (HFILE base
    files, CUSTOM merging, the HOODIE_TABLE_METADATA key generator)."""
    with zipfile.ZipFile(archive) as zf:
        names = [n for n in zf.namelist() if n.endswith(".hoodie/hoodie.properties") and "__MACOSX" not in n]
        assert names, f"no hoodie.properties in {archive.relative_to(FIXTURES_DIR)}"
        for name in names:
            props = parse_properties(zf.read(name).decode())
            assert open_props(props).config.name == props["hoodie.table.name"], name
