"""Planning: pure functions from index data to plans (what to compact). No file system, Spark, database
or network in here: inputs and outputs are plain records, so planning is tested without any of those."""
