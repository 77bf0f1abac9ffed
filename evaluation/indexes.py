"""The knowledge bases the recall benchmark runs on: the offline (template) build of a pool,
cached by the pool's fingerprint (`pool_key`), and a copy of it with users' examples added.

    folder = cache / pool_key(dataset.catalog)
    ensure_index(dataset.catalog, folder, embedder)
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from providers import Embedder
from schemagraph import Catalog, database_fingerprint
from schemagraph.model import fold


def pool_key(catalog: Catalog) -> str:
    """A short name for a pool of databases, for cache folders."""
    prints = sorted(f"{fold(db.id)}:{database_fingerprint(db)}" for db in catalog)
    return hashlib.sha256("\n".join(prints).encode()).hexdigest()[:12]


def ensure_index(
    catalog: Catalog,
    store: Path,
    embedder: Embedder,
    *,
    chains: int = 3,
    iterations: int = 2,
    progress: Callable[[str, int, int], None] | None = None,
) -> None:
    """Build the offline (template) knowledge base of `catalog` at `store`, or bring it up to
    date (nothing to do when it already is)."""
    from indexer import (
        BuildConfig,
        BuildServices,
        build_index,
        make_chain_runner,
        make_feedback,
        make_synthesizer,
    )
    from store import StoreLocation

    synthesizer = make_synthesizer("template", None)
    config = BuildConfig(chains=chains, iterations=iterations)
    services = BuildServices(
        synthesize=make_chain_runner(
            synthesizer, make_feedback("rule", None), chains=chains, iterations=iterations
        ),
        synthesizer_name=synthesizer.name,
        embedder=embedder,
        progress=progress,
    )
    build_index(catalog, StoreLocation.parse(store), services, config)


def ensure_examples_index(
    catalog: Catalog, base: Path, store: Path, embedder: Embedder, examples: Path
) -> dict[str, Any]:
    """The knowledge base at `base` (built by `ensure_index`) plus the users' examples of the
    file `examples`, at `store`: made once (a copy of `base` to which the examples are added),
    then brought up to date like any build (which keeps the examples). What was added, for the
    report."""
    import shutil

    from indexer import add_examples, read_examples
    from store import StoreLocation

    found = read_examples(examples)
    location = StoreLocation.parse(store)
    if location.current() is None:
        shutil.rmtree(store, ignore_errors=True)
        shutil.copytree(base, store, ignore=shutil.ignore_patterns("build.lock"))
    else:
        ensure_index(catalog, store, embedder)
    report = add_examples(catalog, location, embedder, found.examples, rejected=found.rejected)
    reasons: dict[str, int] = {}
    for rejected in report.rejected:
        kind = rejected.reason.split(":")[0].split(" '")[0].split(" as line")[0]
        reasons[kind] = reasons.get(kind, 0) + 1
    return {
        "file": str(examples),
        "rows": len(found.examples) + len(found.rejected),
        "in_index": report.in_build,
        "rejected": len(report.rejected),
        "rejected_by_reason": dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
    }
