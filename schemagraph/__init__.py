"""Schemas of many databases as one catalog and one NetworkX schema graph.

catalog = load_catalog(["spider:data/spider", "ddl:warehouse/"])
graph = build_graph(catalog)
for traversal in enumerate_traversals(graph, TraversalConfig(cutoff=3, seed=7)):
    db = catalog.database(traversal.db_id)
    print(create_table_text(db, traversal.tables, sample_database(db)))
"""

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from schemagraph.counted import counted
    from schemagraph.errors import CatalogError, SchemaGraphError, SourceError, TraversalError
    from schemagraph.fingerprint import database_fingerprint, table_fingerprint
    from schemagraph.graph import ROOT, GraphStats, build_graph, graph_stats, table_node
    from schemagraph.model import Catalog, Column, Database, ForeignKey, Table
    from schemagraph.sampled import DatabaseSample, TableSample
    from schemagraph.samples import sample_database
    from schemagraph.serialize import compact_text, create_table_text
    from schemagraph.sources import (
        load_catalog,
        load_ddl,
        load_infoschema,
        load_live,
        load_source,
        load_spider,
        load_sqlite,
    )
    from schemagraph.traversals import Traversal, TraversalConfig, enumerate_traversals

__getattr__, __dir__, _ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "counted": ["counted"],
        "errors": ["CatalogError", "SchemaGraphError", "SourceError", "TraversalError"],
        "fingerprint": ["database_fingerprint", "table_fingerprint"],
        "graph": ["ROOT", "GraphStats", "build_graph", "graph_stats", "table_node"],
        "model": ["Catalog", "Column", "Database", "ForeignKey", "Table"],
        "sampled": ["DatabaseSample", "TableSample"],
        "samples": ["sample_database"],
        "serialize": ["compact_text", "create_table_text"],
        "sources": [
            "load_catalog",
            "load_ddl",
            "load_infoschema",
            "load_live",
            "load_source",
            "load_spider",
            "load_sqlite",
        ],
        "traversals": ["Traversal", "TraversalConfig", "enumerate_traversals"],
    },
)

__all__ = [
    "ROOT",
    "Catalog",
    "CatalogError",
    "Column",
    "Database",
    "DatabaseSample",
    "ForeignKey",
    "GraphStats",
    "SchemaGraphError",
    "SourceError",
    "Table",
    "TableSample",
    "Traversal",
    "TraversalConfig",
    "TraversalError",
    "build_graph",
    "compact_text",
    "counted",
    "create_table_text",
    "database_fingerprint",
    "enumerate_traversals",
    "graph_stats",
    "load_catalog",
    "load_ddl",
    "load_infoschema",
    "load_live",
    "load_source",
    "load_spider",
    "load_sqlite",
    "sample_database",
    "table_fingerprint",
    "table_node",
]
