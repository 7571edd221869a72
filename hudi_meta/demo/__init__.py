"""The demo and test scaffolding: the quickstart, an event stream, synthetic tables and local Hive servers."""
