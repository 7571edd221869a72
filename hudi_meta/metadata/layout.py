"""Where the metadata table (MDT) keeps things and what Java calls them: its path and properties, MDT partitions
and their file ids, the instant a partition is initialized at, and which file group a record key goes to.

Every name here is what a Java reader looks for; docs/metadata-table.md section 6 gives each rule with its source.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence

from hudi_meta.format import config_keys as keys
from hudi_meta.metadata.keys import file_group_index
from hudi_meta.table.metadata_table import FILES_PARTITION, METADATA_DIR
from hudi_meta.table.table import META_DIR, HudiTable

INIT_WRITE_TOKEN = "0-0-0"  # HoodieLogFormat.DEFAULT_WRITE_TOKEN: the empty log file every file group starts with
SOLO_COMMIT_TIMESTAMP = "00000000000000"  # HoodieTableMetadata.SOLO_COMMIT_TIMESTAMP (14 digits)
V6_INIT_SUFFIX = 10  # HoodieTableMetadataUtil.createIndexInitTimestamp: initTime + "%03d" % (10 + offset)
V6_ROLLBACK_SUFFIX = "006"  # OperationSuffix.ROLLBACK: a v6 MDT rollback runs at the data-table rollback time + 006
METADATA_PAYLOAD = "org.apache.hudi.metadata.HoodieMetadataPayload"
PAYLOAD_MERGE_STRATEGY = "00000000-0000-0000-0000-000000000000"  # HoodieRecordMerger.PAYLOAD_BASED_MERGE_STRATEGY_UUID

# MDT partition -> the prefix of its file ids (MetadataPartitionType.getFileIdPrefix)
FILE_ID_PREFIXES = {
    FILES_PARTITION: "files-",
    "column_stats": "col-stats-",
    "bloom_filters": "bloom-filters-",
    "record_index": "record-index-",
    "partition_stats": "partition-stats-",
}


def mdt_path(table: HudiTable) -> str:
    """`<base>/.hoodie/metadata` (HoodieTableMetaClient.METADATA_TABLE_FOLDER_PATH)."""
    return posixpath.join(table.base_path, META_DIR, METADATA_DIR)


def file_id_prefix(partition: str) -> str:
    """The file id prefix of MDT partition `partition`; secondary and expression indexes use their partition name
    with `_` as `-` (HoodieTableMetadataUtil.getFileIDForFileGroup)."""
    if partition in FILE_ID_PREFIXES:
        return FILE_ID_PREFIXES[partition]
    if partition.startswith(("secondary_index_", "expr_index_")):
        return partition.replace("_", "-") + "-"
    raise ValueError(f"{partition!r} is not a metadata-table partition")


def file_group_id(partition: str, index: int) -> str:
    """`files-0000-0`: prefix, the group's index in four digits, then `-0` (getFileIDForFileGroup)."""
    return f"{file_id_prefix(partition)}{index:04d}-0"


FileGroupOf = Callable[[str, str, int], int]  # (MDT partition, key, group count) -> group index


def default_file_group_of(partition: str, key: str, count: int) -> int:
    """`abs(hash(key)) % count` (`keys.file_group_index`); a secondary index's keys map by the index version
    (`keys.secondary_file_group_index`), which the caller passes as its own `file_group_of`."""
    if partition.startswith("secondary_index_"):
        raise ValueError(f"{partition}: secondary-index keys map to file groups by index version: pass file_group_of")
    return file_group_index(key, count)


def v6_init_instant(completed: Sequence[str], offset: int = 0) -> str:
    """The instant a v6 MDT partition is initialized at: the latest completed data-table instant (or
    SOLO_COMMIT_TIMESTAMP) plus `010`, `011`... (HoodieTableMetadataUtil.createIndexInitTimestamp)."""
    base = max(completed, default=SOLO_COMMIT_TIMESTAMP)
    return f"{base}{V6_INIT_SUFFIX + offset:03d}"


def one_x_init_instant(offset: int = 0) -> str:
    """The instant a 1.x MDT partition is initialized at: SOLO_COMMIT_TIMESTAMP plus `offset` ms, as a 17-digit
    time (`00000000000000000`, `...001`; HoodieBackedTableMetadataWriter.generateUniqueInstantTime)."""
    return f"{SOLO_COMMIT_TIMESTAMP}{offset:03d}"


def mdt_properties(table: HudiTable) -> dict[str, str]:
    """The MDT's hoodie.properties for data table `table` (HoodieBackedTableMetadataWriter.initializeMetaClient,
    as the Java-written fixtures show it for versions 8 and 9); the checksum is added by the caller."""
    version = table.config.version
    props = {
        keys.TABLE_NAME.name: f"{table.config.name}_metadata",
        keys.TABLE_TYPE.name: "MERGE_ON_READ",
        keys.TABLE_VERSION.name: str(version),
        keys.BASE_FILE_FORMAT.name: "HFILE",
        keys.RECORD_KEY_FIELDS.name: "key",
        keys.POPULATE_META_FIELDS.name: "false",
        keys.PAYLOAD_CLASS.name: METADATA_PAYLOAD,
    }
    if version == 6:
        props[keys.TIMELINE_LAYOUT.name] = "1"
        props[keys.ARCHIVELOG_FOLDER.name] = "archived"
        props[keys.KEY_GENERATOR_CLASS.name] = "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator"
        return props
    props.update(
        {
            keys.TABLE_INITIAL_VERSION.name: str(version),
            keys.TIMELINE_LAYOUT.name: "2",
            keys.TIMELINE_PATH.name: "timeline",
            keys.TIMELINE_HISTORY_PATH.name: "history",
            keys.ARCHIVELOG_FOLDER.name: "history",
            keys.KEY_GENERATOR_TYPE.name: "HOODIE_TABLE_METADATA",
            keys.MERGE_MODE.name: "CUSTOM",
            keys.MERGE_STRATEGY_ID.name: PAYLOAD_MERGE_STRATEGY,
            keys.DROP_PARTITION_COLUMNS.name: "false",
        }
    )
    return props


def partition_metadata_text(instant: str) -> str:
    """`.hoodie_partition_metadata` of an MDT partition (depth 1, the partition's init instant)."""
    return f"#partition metadata\ncommitTime={instant}\npartitionDepth=1\n"
