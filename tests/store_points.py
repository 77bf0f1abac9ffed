"""The points a build wrote, read back from its embedded Qdrant for tests to check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient


def build_points(build: Path, collection: str = "questions", *, vectors: bool = False) -> list[Any]:
    """Every point of the build's `schemarag_<collection>` (with their vectors if `vectors`)."""
    client = QdrantClient(path=str(build / "qdrant"))
    try:
        found, offset = [], None
        while True:
            batch, offset = client.scroll(
                f"schemarag_{collection}", limit=500, offset=offset, with_vectors=vectors
            )
            found.extend(batch)
            if offset is None:
                return found
    finally:
        client.close()
