"""Helpers shared by the CLI command modules."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from schemagraph import Catalog, TraversalConfig, load_catalog


def add_sources(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help="KIND:PATH with KIND spider, sqlite or ddl (ddl[DIALECT]:PATH names a dialect)",
    )


def load(sources: list[str]) -> Catalog:
    """The catalog of `sources`; what the sources skipped is reported on stderr."""
    catalog = load_catalog(sources)
    for problem in catalog.problems:
        print(f"schemarag: warning: {problem}", file=sys.stderr)
    if catalog.problems:
        print(
            f"schemarag: {len(catalog.problems)} item(s) skipped while loading; see above",
            file=sys.stderr,
        )
    return catalog


def add_traversal_options(parser: argparse.ArgumentParser) -> None:
    defaults = TraversalConfig()
    parser.add_argument(
        "--cutoff", type=int, default=defaults.cutoff, help="most tables per traversal"
    )
    parser.add_argument(
        "--max-per-database",
        type=int,
        default=defaults.max_per_database,
        help="most multi-table traversals per database",
    )
    parser.add_argument(
        "--walks", type=int, default=defaults.walks, help="random walks per database"
    )
    parser.add_argument("--seed", type=int, default=defaults.seed)


def traversal_config(args: argparse.Namespace) -> TraversalConfig:
    return TraversalConfig(
        cutoff=args.cutoff,
        max_per_database=args.max_per_database,
        walks=args.walks,
        seed=args.seed,
    )


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))
