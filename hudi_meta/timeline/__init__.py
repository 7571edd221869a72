"""The timeline: instants, the active timeline and its writer, and what archival may move (pure)."""
