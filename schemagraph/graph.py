"""The schema graph (DESIGN.md): one root, a type-1 edge to each database, a type-2 edge from each
database to each of its tables, a type-3 edge between two tables of one database where one has a
foreign key to the other.

Node ids: `ROOT`, the database id, and `db_id.table`. Node attribute `kind` is "root",
"database" or "table"; edge attribute `kind` is "database", "table" or "foreign_key". Foreign-key
edges carry `foreign_keys`, the list of `ForeignKey`s between the two tables (either direction);
a table node whose foreign keys reference the table itself carries them as `self_references`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import networkx as nx

from schemagraph.errors import CatalogError
from schemagraph.model import Catalog, fold

ROOT = "<root>"


def table_node(db_id: str, table: str) -> str:
    return f"{db_id}.{table}"


@dataclass(frozen=True)
class GraphStats:
    """`foreign_keys`: every foreign key of the catalog; `foreign_key_edges`: the pairs of
    tables they join, one edge per pair: keys between a pair already joined (`parallel_keys`)
    share its edge and a table's key to itself (`self_references`) makes none."""

    databases: int
    tables: int
    foreign_key_edges: int
    nodes: int
    edges: int
    foreign_keys: int = 0
    parallel_keys: int = 0
    self_references: int = 0

    def foreign_key_note(self) -> str:
        """Why the foreign keys and their edges differ in number, "" when they do not:
        "45 foreign keys: 2 join a pair of tables already joined"."""
        if self.foreign_keys == self.foreign_key_edges:
            return ""
        reasons = []
        if self.parallel_keys:
            verb = "joins" if self.parallel_keys == 1 else "join"
            reasons.append(f"{self.parallel_keys} {verb} a pair of tables already joined")
        if self.self_references:
            verb = "references its" if self.self_references == 1 else "reference their"
            reasons.append(f"{self.self_references} {verb} own table")
        return f"{self.foreign_keys} foreign keys: {'; '.join(reasons)}"

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def build_graph(catalog: Catalog) -> nx.Graph:
    """The schema graph of `catalog`. Raises CatalogError if two nodes would share an id (a
    database named like another database's `db.table` node)."""
    graph = nx.Graph()
    graph.add_node(ROOT, kind="root")
    owners: dict[str, str] = {ROOT: "the root"}

    def add(node: str, owner: str, **attrs: object) -> None:
        if node in owners:
            raise CatalogError(
                f"node id {node!r} is ambiguous: both {owners[node]} and {owner}; "
                "rename the database"
            )
        owners[node] = owner
        graph.add_node(node, **attrs)

    for db in catalog:
        add(db.id, f"database {db.id!r}", kind="database", db_id=db.id)
        graph.add_edge(ROOT, db.id, kind="database")
        names = {fold(t.name): t.name for t in db.tables}
        for table in db.tables:
            node = table_node(db.id, table.name)
            add(
                node,
                f"table {table.name!r} of {db.id!r}",
                kind="table",
                db_id=db.id,
                table=table.name,
            )
            graph.add_edge(db.id, node, kind="table")
        for fk in db.foreign_keys:
            a = table_node(db.id, names[fold(fk.table)])
            b = table_node(db.id, names[fold(fk.ref_table)])
            if a == b:  # a self-reference joins a table to itself: no edge between tables
                graph.nodes[a].setdefault("self_references", []).append(fk)
                continue
            if graph.has_edge(a, b):
                graph.edges[a, b]["foreign_keys"].append(fk)
            else:
                graph.add_edge(a, b, kind="foreign_key", foreign_keys=[fk])
    return graph


def graph_stats(graph: nx.Graph) -> GraphStats:
    nodes = Counter(kind for _, kind in graph.nodes(data="kind"))
    edges = Counter(kind for _, _, kind in graph.edges(data="kind"))
    keys = sum(len(fks) for _, _, fks in graph.edges(data="foreign_keys") if fks)
    self_references = sum(len(fks) for _, fks in graph.nodes(data="self_references") if fks)
    return GraphStats(
        databases=nodes["database"],
        tables=nodes["table"],
        foreign_key_edges=edges["foreign_key"],
        nodes=graph.number_of_nodes(),
        edges=graph.number_of_edges(),
        foreign_keys=keys + self_references,
        parallel_keys=keys - edges["foreign_key"],
        self_references=self_references,
    )


def table_neighbors(graph: nx.Graph, node: str) -> list[str]:
    """Tables joined to the table `node` by a foreign key, sorted for determinism."""
    return sorted(n for n, attrs in graph.adj[node].items() if attrs["kind"] == "foreign_key")
