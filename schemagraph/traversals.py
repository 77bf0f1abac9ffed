"""Traversals of the schema graph: root → one database → a connected set of its tables.

Two kinds (DESIGN.md, "serialization of graph with cutoff" plus random walks):

- "enumerated": every single table, then connected table sets of 2..cutoff tables grown along
  foreign-key edges. Sets of one size beyond the per-database budget are sampled with the
  database's seed, so a database with hundreds of tables cannot explode the count.
- "walk": seeded random walks of `cutoff` tables along foreign keys (stopping early at a dead
  end), kept when their set was not already enumerated.

Every traversal's tables are ordered so that each prefix is connected: table i joins one of the
tables before it. The seed of a database is derived from the base seed and its id only, so
adding or changing one database never changes another's traversals, and the same seed gives the
same traversals on any machine. Work per database is bounded by the budget: linear in the catalog.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import networkx as nx

from schemagraph.errors import TraversalError
from schemagraph.graph import ROOT, table_neighbors
from schemagraph.model import fold
from schemagraph.seeds import derive_seed


@dataclass(frozen=True)
class TraversalConfig:
    """`cutoff`: most tables in one traversal, and the length of random walks;
    `max_per_database`: most multi-table enumerated traversals per database (single tables are
    always all included); `walks`: random walks tried per database; `seed`: base seed."""

    cutoff: int = 3
    max_per_database: int = 30
    walks: int = 4
    seed: int = 0

    def __post_init__(self) -> None:
        if self.cutoff < 1:
            raise TraversalError(f"cutoff must be >= 1, got {self.cutoff}")
        if self.max_per_database < 0:
            raise TraversalError(f"max_per_database must be >= 0, got {self.max_per_database}")
        if self.walks < 0:
            raise TraversalError(f"walks must be >= 0, got {self.walks}")


@dataclass(frozen=True)
class Traversal:
    db_id: str
    tables: tuple[str, ...]
    kind: str  # "enumerated" | "walk"

    @property
    def id(self) -> str:
        """Stable id of the (database, table set); order and case do not matter."""
        key = "\x1f".join([fold(self.db_id), *sorted(fold(t) for t in self.tables)])
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]

    @property
    def path(self) -> tuple[str, ...]:
        """The path from the root: root, database node, table nodes."""
        return (ROOT, self.db_id, *(f"{self.db_id}.{t}" for t in self.tables))


def enumerate_traversals(
    graph: nx.Graph, config: TraversalConfig | None = None, databases: Iterable[str] | None = None
) -> list[Traversal]:
    """Traversals of every database in `graph` (or of `databases`), in database order."""
    config = config or TraversalConfig()
    if databases is None:
        db_ids = [n for n in graph.adj[ROOT]]
    else:
        db_ids = list(databases)
        for db_id in db_ids:
            if graph.nodes.get(db_id, {}).get("kind") != "database":
                raise TraversalError(f"unknown database {db_id!r}")
    return [t for db_id in db_ids for t in database_traversals(graph, db_id, config)]


def database_traversals(
    graph: nx.Graph, db_id: str, config: TraversalConfig
) -> Iterator[Traversal]:
    nodes = sorted(n for n, a in graph.adj[db_id].items() if a["kind"] == "table")
    name = {n: graph.nodes[n]["table"] for n in nodes}
    neighbors = {n: table_neighbors(graph, n) for n in nodes}
    rng = random.Random(derive_seed(config.seed, "traversals", db_id))
    seen: set[frozenset[str]] = set()

    def emit(path: tuple[str, ...], kind: str) -> Traversal:
        seen.add(frozenset(path))
        return Traversal(db_id, tuple(name[n] for n in path), kind)

    for node in nodes:
        yield emit((node,), "enumerated")
    level: list[tuple[str, ...]] = [(n,) for n in nodes]
    sizes = config.cutoff - 1
    remaining = config.max_per_database
    for size in range(2, config.cutoff + 1):
        budget = remaining // (sizes - (size - 2))
        level = _grow(level, neighbors, budget, rng)
        remaining -= len(level)
        for path in level:
            yield emit(path, "enumerated")
        if not level:
            break
    if config.walks:
        starts = [n for n in nodes if neighbors[n]]
        for _ in range(config.walks if starts else 0):
            path = _walk(rng.choice(starts), neighbors, config.cutoff, rng)
            if len(path) > 1 and frozenset(path) not in seen:
                yield emit(path, "walk")


def walks_tried(
    graph: nx.Graph, config: TraversalConfig, databases: Iterable[str] | None = None
) -> int:
    """The random walks `enumerate_traversals` tries: `config.walks` per database that has a
    foreign key between two tables. A walk is kept only when its set of tables was not
    enumerated already, so on small databases most, or all, are not."""
    db_ids = list(graph.adj[ROOT]) if databases is None else list(databases)
    joined = sum(
        1
        for db_id in db_ids
        if any(
            graph.adj[db_id][n]["kind"] == "table" and table_neighbors(graph, n)
            for n in graph.adj[db_id]
        )
    )
    return config.walks * joined


def _grow(
    level: list[tuple[str, ...]],
    neighbors: dict[str, list[str]],
    budget: int,
    rng: random.Random,
) -> list[tuple[str, ...]]:
    """Connected sets one table larger than those of `level`, at most `budget`, sampled with
    `rng` when there are more; work is bounded by a few times the budget."""
    if budget <= 0:
        return []
    order = list(level)
    rng.shuffle(order)
    found: dict[frozenset[str], tuple[str, ...]] = {}
    for path in order:
        for node in path:
            for nxt in neighbors[node]:
                if nxt not in path:
                    found.setdefault(frozenset((*path, nxt)), (*path, nxt))
        if len(found) >= 4 * budget:
            break
    grown = sorted(found.values(), key=lambda p: sorted(p))
    if len(grown) > budget:
        grown = sorted(rng.sample(grown, budget), key=lambda p: sorted(p))
    return grown


def _walk(
    start: str, neighbors: dict[str, list[str]], length: int, rng: random.Random
) -> tuple[str, ...]:
    path: list[str] = [start]
    while len(path) < length:
        options = [n for n in neighbors[path[-1]] if n not in path]
        if not options:
            break
        path.append(rng.choice(options))
    return tuple(path)
