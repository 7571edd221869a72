"""One metadata-table operation in a process of its own, for the kill tests (tests/metadata/test_crash.py):
`python -m tests.metadata.crash_child init|write|compact|rollback PATH [INSTANT]`; HUDI_META_MDT_CRASH_AT names the step
at which it kills itself."""

from __future__ import annotations

import sys

from hudi_meta.metadata.compaction import compact_if_necessary
from hudi_meta.metadata.init import create_metadata_table
from hudi_meta.table.table import HudiTable
from hudi_meta.write.failed_writes import rollback_failed_write
from hudi_meta.write.lock import table_lock
from hudi_meta.write.writer import WriteClient
from tests.compaction.core import region_rows
from tests.metadata.helpers import commit_hook, rollback_hook


def write(path: str, seq: int) -> None:
    """A log file into region=eu's file group and a new file group in region=us, with the MDT kept in step."""
    table = HudiTable.open(path)
    eu = next(fg.file_id for fg in table.file_groups() if fg.partition == "region=eu")
    w = WriteClient(table, metadata_writer=commit_hook(path))
    w.begin()
    w.append_log("region=eu", eu, region_rows("eu", (f"e{seq}", 100 + seq, 1.0)))
    w.write_base_file("region=us", region_rows("us", (f"u{seq}", 100 + seq, 2.0)))
    w.commit()


def main(argv: list[str]) -> None:
    op, path = argv[1], argv[2]
    if op == "init":
        create_metadata_table(HudiTable.open(path))
    elif op == "write":
        write(path, int(argv[3]))
    elif op == "compact":
        table = HudiTable.open(path)
        with table_lock(table.storage, table.meta_path, table.config.props, "compact the metadata table"):
            compact_if_necessary(table, max_delta_commits=1)
    elif op == "rollback":
        table = HudiTable.open(path)
        rollback_failed_write(table, argv[3], dry_run=False, force=True, metadata_writer=rollback_hook(path))
    else:
        raise SystemExit(f"unknown operation {op}")


if __name__ == "__main__":
    main(sys.argv)
