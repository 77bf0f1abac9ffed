"""`schemarag demo`: the main job on the embedded default, over the bundled sample schemas.

Loads the sample (eight Spider databases), prints the graph and a few traversals, builds the
knowledge base offline (template synthesis, ICRL with rule feedback, local embedder, embedded
Qdrant) and prints the build report; a second run is incremental and finishes at once.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from indexer import (
    BuildConfig,
    BuildServices,
    StoreLocation,
    build_index,
    make_chain_runner,
    make_feedback,
    make_synthesizer,
)
from providers import CachedEmbedder, ProviderCache
from schemagraph import (
    TraversalConfig,
    build_graph,
    create_table_text,
    enumerate_traversals,
    graph_stats,
    sample_database,
)
from schemarag.cli.common import load
from schemarag.samples import SAMPLE_SOURCE
from schemarag.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    demo = sub.add_parser("demo", help="run the main job on the bundled sample databases")
    demo.add_argument("--traversals", type=int, default=2, help="traversals to print (default 2)")
    demo.add_argument(
        "--store", type=Path, default=Path(".schemarag/demo-store"), help="where to build"
    )
    demo.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    print(f"== 1. Loading the bundled sample schemas ({SAMPLE_SOURCE})")
    catalog = load([SAMPLE_SOURCE])
    graph = build_graph(catalog)
    stats = graph_stats(graph)
    print(
        f"{stats.databases} databases, {stats.tables} tables, "
        f"{stats.foreign_key_edges} foreign-key edges"
    )
    config = TraversalConfig(seed=0)
    traversals = enumerate_traversals(graph, config)
    print(f"{len(traversals)} traversals (cutoff {config.cutoff}, seed {config.seed})")
    joins = [t for t in traversals if len(t.tables) == config.cutoff][: args.traversals]
    for traversal in joins:
        db = catalog.database(traversal.db_id)
        print(f"\n-- traversal {' -> '.join(traversal.path)}")
        print(create_table_text(db, traversal.tables, sample_database(db, seed=config.seed)))

    print(f"\n== 2. Building the knowledge base at {args.store} (offline: templates + ICRL)")
    location = StoreLocation.parse(args.store)
    build = BuildConfig(traversal=config)
    runner = make_chain_runner(
        make_synthesizer("template", None),
        make_feedback("rule", None),
        chains=build.chains,
        iterations=build.iterations,
    )
    with ProviderCache(settings.cache_path) as cache:
        embedder = CachedEmbedder(settings.embedder(), cache)
        report = build_index(catalog, location, BuildServices(runner, "template", embedder), build)
    for line in report.lines():
        print(line)
    return 0
