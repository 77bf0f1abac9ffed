"""Foreign-key path completion: make the chosen tables of one database joinable.

The chosen tables are connected greedily (a Steiner-tree approximation): each one not yet
connected to the tables kept so far is joined to them along the shortest foreign-key path, and
the tables in between are added as bridges. Tables with no path stay as they are.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from retriever.tables import TableEntry
from schemagraph.model import fold


def fk_adjacency(entries: Sequence[TableEntry]) -> dict[str, set[str]]:
    """Undirected foreign-key graph of one database's tables, by folded name."""
    graph: dict[str, set[str]] = {fold(e.table): set() for e in entries}
    for entry in entries:
        for fk in entry.foreign_keys:
            a, b = fold(entry.table), fold(fk.ref_table)
            if a != b and b in graph:
                graph[a].add(b)
                graph[b].add(a)
    return graph


def complete_tables(graph: dict[str, set[str]], chosen: Sequence[str]) -> list[tuple[str, bool]]:
    """`chosen` (folded names, best first) plus the bridge tables that join them.

    Returns (table, is_bridge) pairs: the chosen tables in order, each followed by the bridges
    its path added. Deterministic: ties between equally short paths go to the neighbour that
    sorts first.
    """
    kept: list[tuple[str, bool]] = []
    tree: set[str] = set()
    for table in dict.fromkeys(chosen):
        if table in tree:
            # already added as a bridge: it is chosen after all
            kept = [(t, b and t != table) for t, b in kept]
            continue
        path = _shortest_path(graph, tree, table) if tree else None
        kept.append((table, False))
        if path:
            for bridge in path:
                if bridge not in tree and bridge != table:
                    kept.append((bridge, True))
                    tree.add(bridge)
        tree.add(table)
    return kept


def _shortest_path(graph: dict[str, set[str]], sources: set[str], target: str) -> list[str] | None:
    """Tables strictly between `sources` and `target` on a shortest path, or None if none."""
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
            return between
        for neighbour in sorted(graph.get(node, ())):
            if neighbour not in parent:
                parent[neighbour] = node
                queue.append(neighbour)
    return None
