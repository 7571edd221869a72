"""The Spark side of hudi-meta (imported as `hudi_meta.spark`): MOR writer, DataFrame readers, ingest.

Work is split by file group: the driver plans (targets, slices) with the core, tasks write or read one
file group each with the core's task-level functions.
"""
