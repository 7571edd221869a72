"""The write side: the write client, write targets, markers, heartbeats, the table lock, write conflicts, the
rollback of failed writes, and archival."""
