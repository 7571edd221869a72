"""The long-running service (docs/service-and-ui.md section 1): configuration, leases and step records in the store, and
the loop that keeps each table indexed, compacted, cleaned and synced."""
