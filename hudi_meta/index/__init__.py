"""The metadata store: models, engine/session handling and the incremental indexer."""
