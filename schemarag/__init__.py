"""schemarag: find the right database and tables for a question across thousands of databases.

The public Python API, re-exported from the packages that implement it:

    import schemarag
    catalog = schemarag.load_catalog(["spider:data/spider"])
    graph = schemarag.build_graph(catalog)
    traversals = schemarag.enumerate_traversals(graph, schemarag.TraversalConfig(seed=0))
"""

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
