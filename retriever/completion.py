"""Foreign-key path completion: make the chosen tables of one database joinable.

The chosen tables are connected greedily (a Steiner-tree approximation): each one not yet
connected to the tables kept so far is joined to them along the shortest foreign-key path, and
the tables in between are added as bridges. Tables with no path stay as they are.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence

from retriever.tables import TableEntry
from schemagraph.model import fold


def fk_adjacency(entries: Sequence[TableEntry]) -> dict[str, set[str]]:
    """Undirected foreign-key graph of one database's tables, by folded name."""
    return adjacency(
        (e.table for e in entries),
        ((e.table, fk.ref_table) for e in entries for fk in e.foreign_keys),
    )


def adjacency(tables: Iterable[str], keys: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    """Undirected graph of `tables` (folded names) with an edge per foreign key (table,
    referenced table) between two of them; self-references make no edge."""
    graph: dict[str, set[str]] = {fold(t): set() for t in tables}
    for table, ref_table in keys:
        a, b = fold(table), fold(ref_table)
        if a != b and a in graph and b in graph:
            graph[a].add(b)
            graph[b].add(a)
    return graph


def complete_tables(graph: dict[str, set[str]], chosen: Sequence[str]) -> list[tuple[str, bool]]:
    """`chosen` (folded names, best first) plus the bridge tables that join them.

    Returns (table, is_bridge) pairs: the chosen tables in order, each followed by the bridges
    its path added. Deterministic: ties between equally short paths go to the neighbour that
    sorts first.
    """
    return [(table, joins is not None) for table, joins in join_paths(graph, chosen)]


def join_paths(
    graph: dict[str, set[str]], chosen: Sequence[str]
) -> list[tuple[str, tuple[str, str] | None]]:
    """`complete_tables` saying what each bridge joins: (table, None) for a chosen table,
    (table, (a, b)) for a bridge on the path from `a` (a table already kept) to the chosen `b`."""
    kept: list[tuple[str, tuple[str, str] | None]] = []
    tree: set[str] = set()
    for table in dict.fromkeys(chosen):
        if table in tree:
            # already added as a bridge: it is chosen after all
            kept = [(t, None if t == table else joins) for t, joins in kept]
            continue
        found = _shortest_path(graph, tree, table) if tree else None
        kept.append((table, None))
        if found:
            source, path = found
            for bridge in path:
                if bridge not in tree and bridge != table:
                    kept.append((bridge, (source, table)))
                    tree.add(bridge)
        tree.add(table)
    return kept


def _shortest_path(
    graph: dict[str, set[str]], sources: set[str], target: str
) -> tuple[str, list[str]] | None:
    """The table of `sources` nearest to `target` and the tables strictly between them on a
    shortest path, or None if no path."""
    if target not in graph:
        return None
    parent: dict[str, str | None] = {target: None}
    queue = deque([target])
    while queue:
        node = queue.popleft()
        if node in sources:
            between: list[str] = []
            step = parent[node]
            while step is not None and step != target:
                between.append(step)
                step = parent[step]
            return node, between
        for neighbour in sorted(graph.get(node, ())):
            if neighbour not in parent:
                parent[neighbour] = node
                queue.append(neighbour)
    return None
