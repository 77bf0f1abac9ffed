"""indexer: not built yet (see its issue)."""
