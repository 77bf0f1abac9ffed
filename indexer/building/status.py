"""What a store serves, from the served build's manifest, without opening Qdrant."""

from __future__ import annotations

from typing import Any

from indexer.examples.stored import FILE, ExampleStore
from store.location import StoreLocation, running_build
from store.manifest import Manifest, read_manifest


def index_status(location: StoreLocation) -> dict[str, Any]:
    """What the store serves, from the served build's manifest (no Qdrant client is opened, so
    this works while a server holds the embedded folder)."""
    where = location.where
    status: dict[str, Any] = {
        "store": where,
        "build_id": None,
        "pending": location.pending(),
        "running": running_build(location),
    }
    kept = 0
    if (location.root / FILE).exists():
        with ExampleStore(location.root / FILE) as examples:
            kept = examples.count()
    status["user_examples_kept"] = kept
    current = location.current()
    if current is None:
        return status
    manifest = read_manifest(location, current)
    status.update(
        build_id=current,
        **manifest_summary(manifest),
        collections=manifest.collections,
        sources=[r["spec"] for r in manifest.sources if isinstance(r, dict)],
        builds=location.builds(),
    )
    return status


def manifest_summary(manifest: Manifest | None) -> dict[str, Any]:
    """What a build holds, from its manifest: counts, models and creation time (None for
    each without one: a retriever made without a store)."""
    if manifest is None:
        return dict.fromkeys(manifest_summary(Manifest.from_json({})))
    report = manifest.report
    return {
        "created_at": manifest.created_at,
        "databases": report.get("databases"),
        "tables": report.get("tables"),
        "traversals": report.get("traversals"),
        "questions": report.get("questions"),
        "user_examples": len(manifest.examples),
        "embedder": manifest.embedder,
        "dim": manifest.dim,
        "synthesizer": manifest.synthesizer,
        "twins": [group.to_json() for group in manifest.twins],
        "containment": [group.to_json() for group in manifest.containment],
        "families": [family.to_json() for family in manifest.families],
    }
