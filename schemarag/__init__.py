"""schemarag: find the right database and tables for a question across thousands of databases.

The public Python API, re-exported from the packages that implement it:

    import schemarag
    catalog = schemarag.load_catalog(["spider:data/spider"])
    graph = schemarag.build_graph(catalog)
    traversals = schemarag.enumerate_traversals(graph, schemarag.TraversalConfig(seed=0))

The names load on first use, so that `import schemarag.cli` stays light.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from schemagraph import (
        Catalog,
        Database,
        Traversal,
        TraversalConfig,
        build_graph,
        compact_text,
        create_table_text,
        enumerate_traversals,
        load_catalog,
        sample_database,
    )

__version__ = "0.1.0"

__all__ = [
    "Catalog",
    "Database",
    "Traversal",
    "TraversalConfig",
    "__version__",
    "build_graph",
    "compact_text",
    "create_table_text",
    "enumerate_traversals",
    "load_catalog",
    "sample_database",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'schemarag' has no attribute {name!r}")
    value = getattr(importlib.import_module("schemagraph"), name)
    globals()[name] = value
    return value
