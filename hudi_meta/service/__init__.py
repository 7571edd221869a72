"""The long-running service (design.md section 10): configuration, leases and step records in the store, and
the loop that keeps each table indexed, compacted, cleaned and synced."""
