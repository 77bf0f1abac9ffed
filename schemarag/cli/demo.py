"""`schemarag demo`: the main job on the embedded default, over the bundled sample schemas."""

from __future__ import annotations

import argparse

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


def register(sub: argparse._SubParsersAction) -> None:
    demo = sub.add_parser("demo", help="run the main job on the bundled sample databases")
    demo.add_argument("--traversals", type=int, default=3, help="traversals to print (default 3)")
    demo.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    print(f"== Loading the bundled sample schemas ({SAMPLE_SOURCE})")
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
        print(f"\n== Traversal {' -> '.join(traversal.path)}")
        print(create_table_text(db, traversal.tables, sample_database(db, seed=config.seed)))
    return 0
