"""hudi-meta: metadata service and event-time partial compaction for Apache Hudi MOR tables.

The core package is engine-neutral: it never imports pyspark or flask. Layers flow one way:
storage -> format -> table -> index -> planning -> execution -> commit -> sync.
"""

__version__ = "0.1.0"
