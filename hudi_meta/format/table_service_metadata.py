"""Typed compaction, clean and rollback plans and results, read from and written to Hudi timeline files.

Each top-level class is one Avro schema in `schemas/` and one kind of instant file: CompactionPlan
(`.compaction.requested`), CleanerPlan (`.clean.requested`), CleanMetadata (`.clean`), RollbackPlan
(`.rollback.requested`) and RollbackMetadata (`.rollback`). Readers accept what Hudi wrote over time
(v6 and v8/v9 tables): absent optional fields take their defaults, and version-1 compaction plans are
migrated to version 2 (bare file names), as Java's `CompactionV2MigrationHandler` does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, Self, TypeVar

from hudi_meta.errors import CorruptFileError
from hudi_meta.format.avro_container import read_container, write_container, write_encoded_container
from hudi_meta.format.plan_codec import encode_compaction_plan
from hudi_meta.gc_pause import paused_gc

Record = Mapping[str, Any]
LATEST_COMPACTION_PLAN_VERSION = 2
V = TypeVar("V")


class _AvroRecord(Protocol):
    def to_avro(self) -> dict[str, Any]: ...

    @classmethod
    def from_avro(cls, rec: Record) -> Self: ...


R = TypeVar("R", bound=_AvroRecord)


def file_name(path: str) -> str:
    """The last component of a path or URI, like Hadoop's `Path.getName()`."""
    return path.rsplit("/", 1)[-1]


def _strs(values: Iterable[str] | None) -> tuple[str, ...]:
    return tuple(values or ())


def _map(values: Mapping[str, V] | None) -> dict[str, V]:
    return dict(values or {})


def _version(rec: Record) -> int:
    version = rec.get("version")
    return 1 if version is None else int(version)  # the Avro default of every `version` field


def _load_opt(cls: type[R], rec: Record | None) -> R | None:
    return None if rec is None else cls.from_avro(rec)


def _load_all(cls: type[R], recs: Iterable[Record] | None) -> tuple[R, ...]:
    return tuple(cls.from_avro(rec) for rec in recs or ())


def _load_map(cls: type[R], recs: Mapping[str, Record] | None) -> dict[str, R]:
    return {key: cls.from_avro(rec) for key, rec in (recs or {}).items()}


def _dump_map(values: Mapping[str, _AvroRecord]) -> dict[str, dict[str, Any]]:
    return {key: value.to_avro() for key, value in values.items()}


class _ContainerFile:
    """Mixin: a record stored on its own as an Avro container file named by `SCHEMA`."""

    SCHEMA: ClassVar[str]

    def to_avro(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        raise NotImplementedError

    @paused_gc()
    def to_bytes(self) -> bytes:
        """Serialise as an Avro container file, the content of the instant file."""
        return write_container(self.to_avro(), self.SCHEMA)

    @classmethod
    @paused_gc()
    def from_bytes(cls, data: bytes) -> Self:
        """Parse an instant file's content; raises CorruptFileError if it is empty or undecodable."""
        rec = read_container(data, cls.SCHEMA)
        if rec is None:
            raise CorruptFileError(f"empty file where a {cls.SCHEMA} was expected")
        try:
            return cls.from_avro(rec)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CorruptFileError(f"malformed {cls.SCHEMA} record: {exc!r}") from exc


# ---------------------------------------------------------------- compaction


@dataclass(frozen=True)
class SymlinkOperation:
    """A leftover log file made visible in the new slice: link name `symlink` pointing at file `target`."""

    symlink: str
    target: str

    def to_avro(self) -> dict[str, Any]:
        return {"symlink": self.symlink, "target": self.target}

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        return cls(rec.get("symlink") or "", rec.get("target") or "")


@dataclass(frozen=True, kw_only=True)
class CompactionOperation:
    """One file slice to compact (HoodieCompactionOperation); file fields are bare file names."""

    base_instant_time: str
    file_id: str
    partition_path: str
    data_file_path: str | None = None
    delta_file_paths: tuple[str, ...] = ()
    metrics: dict[str, float] = field(default_factory=dict)
    bootstrap_file_path: str | None = None
    symlink_operations: tuple[SymlinkOperation, ...] = ()

    def to_avro(self) -> dict[str, Any]:
        return {
            "baseInstantTime": self.base_instant_time,
            "deltaFilePaths": list(self.delta_file_paths),
            "dataFilePath": self.data_file_path,
            "fileId": self.file_id,
            "partitionPath": self.partition_path,
            "metrics": dict(self.metrics),
            "bootstrapFilePath": self.bootstrap_file_path,
            "symlinkOperations": [op.to_avro() for op in self.symlink_operations] or None,
        }

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        return cls(
            base_instant_time=rec.get("baseInstantTime") or "",
            file_id=rec.get("fileId") or "",
            partition_path=rec.get("partitionPath") or "",
            data_file_path=rec.get("dataFilePath"),
            delta_file_paths=_strs(rec.get("deltaFilePaths")),
            metrics=_map(rec.get("metrics")),
            bootstrap_file_path=rec.get("bootstrapFilePath", rec.get("externalDataFilePath")),
            symlink_operations=_load_all(SymlinkOperation, rec.get("symlinkOperations")),
        )

    def with_file_names(self) -> CompactionOperation:
        """This operation with its data and delta file paths cut to bare names (plan v1 -> v2)."""
        data = self.data_file_path
        return dataclasses.replace(
            self,
            data_file_path=None if data is None else file_name(data),
            delta_file_paths=tuple(map(file_name, self.delta_file_paths)),
        )


@dataclass(frozen=True, kw_only=True)
class CompactionStrategyInfo:
    """The strategy recorded in a plan (HoodieCompactionStrategy)."""

    compactor_class_name: str | None = None
    strategy_params: dict[str, str] = field(default_factory=dict)
    version: int = 1

    def to_avro(self) -> dict[str, Any]:
        return {
            "compactorClassName": self.compactor_class_name,
            "strategyParams": dict(self.strategy_params),
            "version": self.version,
        }

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        return cls(
            compactor_class_name=rec.get("compactorClassName"),
            strategy_params=_map(rec.get("strategyParams")),
            version=_version(rec),
        )


@dataclass(frozen=True, kw_only=True)
class CompactionPlan(_ContainerFile):
    """A compaction (or log-compaction) plan, the content of `<t>.compaction.requested`."""

    SCHEMA: ClassVar[str] = "HoodieCompactionPlan"
    operations: tuple[CompactionOperation, ...] = ()
    extra_metadata: dict[str, str] = field(default_factory=dict)
    version: int = LATEST_COMPACTION_PLAN_VERSION
    strategy: CompactionStrategyInfo | None = None
    preserve_hoodie_metadata: bool = False
    missing_schedule_partitions: tuple[str, ...] = ()

    def to_avro(self) -> dict[str, Any]:
        return {
            "operations": [op.to_avro() for op in self.operations],
            "extraMetadata": dict(self.extra_metadata),
            "version": self.version,
            "strategy": None if self.strategy is None else self.strategy.to_avro(),
            "preserveHoodieMetadata": self.preserve_hoodie_metadata,
            "missingSchedulePartitions": list(self.missing_schedule_partitions),
        }

    @paused_gc()
    def to_bytes(self) -> bytes:
        """As every container file, with the datum written by the plan's own encoder (a large plan's cost)."""
        return write_encoded_container(encode_compaction_plan(self), self.SCHEMA)

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        version = _version(rec)
        operations = _load_all(CompactionOperation, rec.get("operations"))
        if version < LATEST_COMPACTION_PLAN_VERSION:
            operations = tuple(op.with_file_names() for op in operations)
            version = LATEST_COMPACTION_PLAN_VERSION
        return cls(
            operations=operations,
            extra_metadata=_map(rec.get("extraMetadata")),
            version=version,
            strategy=_load_opt(CompactionStrategyInfo, rec.get("strategy")),
            preserve_hoodie_metadata=bool(rec.get("preserveHoodieMetadata")),
            missing_schedule_partitions=_strs(rec.get("missingSchedulePartitions")),
        )


# ---------------------------------------------------------------- clean


@dataclass(frozen=True)
class ActionInstant:
    """An instant as the cleaner records it (HoodieActionInstant)."""

    timestamp: str
    action: str
    state: str

    def to_avro(self) -> dict[str, Any]:
        return {"timestamp": self.timestamp, "action": self.action, "state": self.state}

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        return cls(rec["timestamp"], rec["action"], rec["state"])


@dataclass(frozen=True)
class CleanFileInfo:
    """A file the cleaner plans to delete (HoodieCleanFileInfo)."""

    file_path: str
    is_bootstrap_base_file: bool = False

    def to_avro(self) -> dict[str, Any]:
        return {"filePath": self.file_path, "isBootstrapBaseFile": self.is_bootstrap_base_file}

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        return cls(rec.get("filePath") or "", bool(rec.get("isBootstrapBaseFile")))


@dataclass(frozen=True, kw_only=True)
class CleanerPlan(_ContainerFile):
    """A clean plan, the content of `<t>.clean.requested` (plan version 1 only fills the deprecated map)."""

    SCHEMA: ClassVar[str] = "HoodieCleanerPlan"
    earliest_instant_to_retain: ActionInstant | None = None
    last_completed_commit_timestamp: str = ""
    policy: str
    files_to_be_deleted_per_partition: dict[str, tuple[str, ...]] = field(default_factory=dict)
    version: int = 2
    file_paths_to_be_deleted_per_partition: dict[str, tuple[CleanFileInfo, ...]] = field(default_factory=dict)
    partitions_to_be_deleted: tuple[str, ...] = ()
    extra_metadata: dict[str, str] = field(default_factory=dict)

    def to_avro(self) -> dict[str, Any]:
        instant = self.earliest_instant_to_retain
        return {
            "earliestInstantToRetain": None if instant is None else instant.to_avro(),
            "lastCompletedCommitTimestamp": self.last_completed_commit_timestamp,
            "policy": self.policy,
            "filesToBeDeletedPerPartition": {
                p: list(files) for p, files in self.files_to_be_deleted_per_partition.items()
            },
            "version": self.version,
            "filePathsToBeDeletedPerPartition": {
                p: [info.to_avro() for info in infos]
                for p, infos in self.file_paths_to_be_deleted_per_partition.items()
            },
            "partitionsToBeDeleted": list(self.partitions_to_be_deleted),
            "extraMetadata": dict(self.extra_metadata),
        }

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        file_paths = _map(rec.get("filePathsToBeDeletedPerPartition"))
        return cls(
            earliest_instant_to_retain=_load_opt(ActionInstant, rec.get("earliestInstantToRetain")),
            last_completed_commit_timestamp=rec.get("lastCompletedCommitTimestamp") or "",
            policy=rec["policy"],
            files_to_be_deleted_per_partition={
                p: _strs(f) for p, f in _map(rec.get("filesToBeDeletedPerPartition")).items()
            },
            version=_version(rec),
            file_paths_to_be_deleted_per_partition={
                p: _load_all(CleanFileInfo, infos) for p, infos in file_paths.items()
            },
            partitions_to_be_deleted=_strs(rec.get("partitionsToBeDeleted")),
            extra_metadata=_map(rec.get("extraMetadata")),
        )


@dataclass(frozen=True, kw_only=True)
class CleanPartitionMetadata:
    """What a clean did in one partition (HoodieCleanPartitionMetadata)."""

    partition_path: str
    policy: str
    delete_path_patterns: tuple[str, ...] = ()
    success_delete_files: tuple[str, ...] = ()
    failed_delete_files: tuple[str, ...] = ()
    is_partition_deleted: bool = False

    def to_avro(self) -> dict[str, Any]:
        return {
            "partitionPath": self.partition_path,
            "policy": self.policy,
            "deletePathPatterns": list(self.delete_path_patterns),
            "successDeleteFiles": list(self.success_delete_files),
            "failedDeleteFiles": list(self.failed_delete_files),
            "isPartitionDeleted": self.is_partition_deleted,
        }

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        return cls(
            partition_path=rec["partitionPath"],
            policy=rec["policy"],
            delete_path_patterns=_strs(rec.get("deletePathPatterns")),
            success_delete_files=_strs(rec.get("successDeleteFiles")),
            failed_delete_files=_strs(rec.get("failedDeleteFiles")),
            is_partition_deleted=bool(rec.get("isPartitionDeleted")),
        )


@dataclass(frozen=True, kw_only=True)
class CleanMetadata(_ContainerFile):
    """A completed clean, the content of `<t>.clean` / `<t>_<c>.clean`."""

    SCHEMA: ClassVar[str] = "HoodieCleanMetadata"
    start_clean_time: str
    time_taken_in_millis: int
    total_files_deleted: int
    earliest_commit_to_retain: str
    last_completed_commit_timestamp: str = ""
    partition_metadata: dict[str, CleanPartitionMetadata] = field(default_factory=dict)
    version: int = 2
    bootstrap_partition_metadata: dict[str, CleanPartitionMetadata] = field(default_factory=dict)
    extra_metadata: dict[str, str] = field(default_factory=dict)

    def to_avro(self) -> dict[str, Any]:
        return {
            "startCleanTime": self.start_clean_time,
            "timeTakenInMillis": self.time_taken_in_millis,
            "totalFilesDeleted": self.total_files_deleted,
            "earliestCommitToRetain": self.earliest_commit_to_retain,
            "lastCompletedCommitTimestamp": self.last_completed_commit_timestamp,
            "partitionMetadata": _dump_map(self.partition_metadata),
            "version": self.version,
            "bootstrapPartitionMetadata": _dump_map(self.bootstrap_partition_metadata),
            "extraMetadata": dict(self.extra_metadata),
        }

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        return cls(
            start_clean_time=rec["startCleanTime"],
            time_taken_in_millis=rec["timeTakenInMillis"],
            total_files_deleted=rec["totalFilesDeleted"],
            earliest_commit_to_retain=rec["earliestCommitToRetain"],
            last_completed_commit_timestamp=rec.get("lastCompletedCommitTimestamp") or "",
            partition_metadata=_load_map(CleanPartitionMetadata, rec.get("partitionMetadata")),
            version=_version(rec),
            bootstrap_partition_metadata=_load_map(CleanPartitionMetadata, rec.get("bootstrapPartitionMetadata")),
            extra_metadata=_map(rec.get("extraMetadata")),
        )


# ---------------------------------------------------------------- rollback


@dataclass(frozen=True)
class InstantInfo:
    """A rolled-back instant (HoodieInstantInfo)."""

    commit_time: str
    action: str

    def to_avro(self) -> dict[str, Any]:
        return {"commitTime": self.commit_time, "action": self.action}

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        return cls(rec["commitTime"], rec["action"])


@dataclass(frozen=True, kw_only=True)
class RollbackRequest:
    """Files to delete, or log files to get a rollback block, in one file group (HoodieRollbackRequest)."""

    partition_path: str
    file_id: str | None = None
    latest_base_instant: str | None = None
    files_to_be_deleted: tuple[str, ...] = ()
    log_blocks_to_be_deleted: dict[str, int] = field(default_factory=dict)

    def to_avro(self) -> dict[str, Any]:
        return {
            "partitionPath": self.partition_path,
            "fileId": self.file_id,
            "latestBaseInstant": self.latest_base_instant,
            "filesToBeDeleted": list(self.files_to_be_deleted),
            "logBlocksToBeDeleted": dict(self.log_blocks_to_be_deleted),
        }

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        return cls(
            partition_path=rec["partitionPath"],
            file_id=rec.get("fileId"),
            latest_base_instant=rec.get("latestBaseInstant"),
            files_to_be_deleted=_strs(rec.get("filesToBeDeleted")),
            log_blocks_to_be_deleted=_map(rec.get("logBlocksToBeDeleted")),
        )


@dataclass(frozen=True, kw_only=True)
class RollbackPlan(_ContainerFile):
    """A rollback plan, the content of `<t>.rollback.requested`."""

    SCHEMA: ClassVar[str] = "HoodieRollbackPlan"
    instant_to_rollback: InstantInfo | None = None
    rollback_requests: tuple[RollbackRequest, ...] = ()
    version: int = 1

    def to_avro(self) -> dict[str, Any]:
        instant = self.instant_to_rollback
        return {
            "instantToRollback": None if instant is None else instant.to_avro(),
            "RollbackRequests": [req.to_avro() for req in self.rollback_requests],
            "version": self.version,
        }

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        return cls(
            instant_to_rollback=_load_opt(InstantInfo, rec.get("instantToRollback")),
            rollback_requests=_load_all(RollbackRequest, rec.get("RollbackRequests")),
            version=_version(rec),
        )


@dataclass(frozen=True, kw_only=True)
class RollbackPartitionMetadata:
    """What a rollback did in one partition (HoodieRollbackPartitionMetadata); maps are file -> size."""

    partition_path: str
    success_delete_files: tuple[str, ...] = ()
    failed_delete_files: tuple[str, ...] = ()
    rollback_log_files: dict[str, int] = field(default_factory=dict)
    log_files_from_failed_commit: dict[str, int] = field(default_factory=dict)

    def to_avro(self) -> dict[str, Any]:
        return {
            "partitionPath": self.partition_path,
            "successDeleteFiles": list(self.success_delete_files),
            "failedDeleteFiles": list(self.failed_delete_files),
            "rollbackLogFiles": dict(self.rollback_log_files),
            "logFilesFromFailedCommit": dict(self.log_files_from_failed_commit),
        }

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        return cls(
            partition_path=rec["partitionPath"],
            success_delete_files=_strs(rec.get("successDeleteFiles")),
            failed_delete_files=_strs(rec.get("failedDeleteFiles")),
            rollback_log_files=_map(rec.get("rollbackLogFiles")),
            log_files_from_failed_commit=_map(rec.get("logFilesFromFailedCommit")),
        )


@dataclass(frozen=True, kw_only=True)
class RollbackMetadata(_ContainerFile):
    """A completed rollback, the content of `<t>.rollback` / `<t>_<c>.rollback`."""

    SCHEMA: ClassVar[str] = "HoodieRollbackMetadata"
    start_rollback_time: str
    time_taken_in_millis: int
    total_files_deleted: int
    commits_rollback: tuple[str, ...] = ()
    partition_metadata: dict[str, RollbackPartitionMetadata] = field(default_factory=dict)
    version: int = 1
    instants_rollback: tuple[InstantInfo, ...] = ()

    @classmethod
    def of_one(
        cls, rollback_time: str, taken_ms: int, target: InstantInfo, per_partition: dict[str, RollbackPartitionMetadata]
    ) -> Self:
        """The metadata of a rollback of one instant, its totals counted from the partitions."""
        return cls(
            start_rollback_time=rollback_time,
            time_taken_in_millis=taken_ms,
            total_files_deleted=sum(len(p.success_delete_files) for p in per_partition.values()),
            commits_rollback=(target.commit_time,),
            partition_metadata=per_partition,
            instants_rollback=(target,),
        )

    def to_avro(self) -> dict[str, Any]:
        return {
            "startRollbackTime": self.start_rollback_time,
            "timeTakenInMillis": self.time_taken_in_millis,
            "totalFilesDeleted": self.total_files_deleted,
            "commitsRollback": list(self.commits_rollback),
            "partitionMetadata": _dump_map(self.partition_metadata),
            "version": self.version,
            "instantsRollback": [instant.to_avro() for instant in self.instants_rollback],
        }

    @classmethod
    def from_avro(cls, rec: Record) -> Self:
        return cls(
            start_rollback_time=rec["startRollbackTime"],
            time_taken_in_millis=rec["timeTakenInMillis"],
            total_files_deleted=rec["totalFilesDeleted"],
            commits_rollback=_strs(rec.get("commitsRollback")),
            partition_metadata=_load_map(RollbackPartitionMetadata, rec.get("partitionMetadata")),
            version=_version(rec),
            instants_rollback=_load_all(InstantInfo, rec.get("instantsRollback")),
        )
