"""Clean: what to delete, planned as Hudi's cleaner plans it (`plan`, pure), and the clean that does it (`run`)."""
