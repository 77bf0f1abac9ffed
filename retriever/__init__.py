"""retriever: not built yet (see its issue)."""
