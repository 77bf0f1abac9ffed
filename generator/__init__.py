"""generator: not built yet (see its issue)."""
