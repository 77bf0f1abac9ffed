"""Twin databases: identical or near-identical schemas in one estate.

Estates hold copies: tenant databases (`shop_eu`, `shop_us`), staging and production, versions,
the same public dataset loaded twice (Spider's `sakila_1` is BIRD's `movie_3`). A question about
one is about all of them as far as names go, so routing must know they are twins and say what
tells them apart.

A database's schema is the set of its `table.column` names (folded). Two databases are twins when
the Jaccard similarity of those sets is at least `TWIN_THRESHOLD`; twin groups are the connected
components of that relation. 0.8, because on the pools we hold (Spider 166, Spider-DK, BIRD train
69) every edited copy scores at least 0.87 (Spider-DK's `new_pets_1` against `pets_1`) and every
pair of different databases at most 0.77 (BIRD's `law_episode` and `simpson_episodes`, two
domains on one schema template; the next pair is at 0.44). A group is `identical` when its
members have the same names; then only values or documentation can tell them apart.

This is the plain measure, over names as written. Builds, retrieval and the benchmark use
`schemagraph.containment`, which matches table names modulo engine conventions, weighs each
table by how rare it is in the estate (so that public reference tables carried by many databases
make no twins) and also finds extended copies (one database holding every table of another).

Pairs are found without comparing every pair: exact copies are collapsed by their name set, and
the others are joined by prefix filtering (each set's rarest names are indexed; two sets with
Jaccard >= t must share one of the first |A| - ceil(t·|A|) + 1 of them), so an estate of
thousands of databases with common names (`id`, `name`) costs close to linear time.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from schemagraph.model import Catalog, Database, fold

TWIN_THRESHOLD = 0.8


@dataclass(frozen=True)
class TwinGroup:
    """Databases with (nearly) the same schema. `only`: per member, the `table.column` names
    (and whole tables, as `table`) that no other member has; `similarity`: the lowest Jaccard
    similarity between two members that the group was joined by."""

    members: tuple[str, ...]
    identical: bool
    similarity: float
    only: Mapping[str, tuple[str, ...]]

    def as_dict(self) -> dict[str, object]:
        return {
            "members": list(self.members),
            "identical": self.identical,
            "similarity": round(self.similarity, 3),
            "only": {member: list(names) for member, names in self.only.items() if names},
        }


Name = tuple[str, str]
"""A folded (table, column) pair."""


def schema_names(db: Database) -> frozenset[Name]:
    """The folded (table, column) names of `db`."""
    return frozenset((fold(t.name), fold(c.name)) for t in db.tables for c in t.columns)


def jaccard(a: frozenset[Name], b: frozenset[Name]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def find_twins(
    catalog: Catalog | Iterable[Database], threshold: float = TWIN_THRESHOLD
) -> list[TwinGroup]:
    """The twin groups of `catalog` (groups of two or more), largest first, then by name."""
    return find_twins_by_names({db.id: schema_names(db) for db in catalog if db.tables}, threshold)


def find_twins_by_names(
    names: Mapping[str, frozenset[Name]], threshold: float = TWIN_THRESHOLD
) -> list[TwinGroup]:
    """`find_twins` over each database's (table, column) names (`schema_names`)."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    copies: dict[frozenset[Name], list[str]] = defaultdict(list)
    for db_id, items in names.items():
        copies[items].append(db_id)
    shapes = list(copies)
    parent = list(range(len(shapes)))
    weakest = [1.0] * len(shapes)

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j, similarity in _similar_pairs(shapes, threshold):
        a, b = root(i), root(j)
        low = min(weakest[a], weakest[b], similarity)
        if a != b:
            parent[b] = a
        weakest[a] = low
    components: dict[int, list[int]] = defaultdict(list)
    for i in range(len(shapes)):
        components[root(i)].append(i)
    groups = []
    for top, members in components.items():
        ids = sorted(db_id for i in members for db_id in copies[shapes[i]])
        if len(ids) < 2:
            continue
        groups.append(_group(ids, names, weakest[top] if len(members) > 1 else 1.0))
    return sorted(groups, key=lambda g: (-len(g.members), g.members))


def twin_map(groups: Iterable[TwinGroup]) -> dict[str, frozenset[str]]:
    """Each twin's folded id -> the folded ids of its group (itself included)."""
    out: dict[str, frozenset[str]] = {}
    for group in groups:
        members = frozenset(fold(m) for m in group.members)
        for member in members:
            out[member] = members
    return out


def _similar_pairs(
    shapes: list[frozenset[Name]], threshold: float
) -> Iterable[tuple[int, int, float]]:
    """Pairs of `shapes` (indexes) with Jaccard >= threshold, by prefix filtering."""
    frequency = Counter(name for shape in shapes for name in shape)
    index: dict[Name, list[int]] = defaultdict(list)
    for i, shape in enumerate(shapes):
        ordered = sorted(shape, key=lambda name: (frequency[name], name))
        prefix = len(ordered) - math.ceil(threshold * len(ordered)) + 1
        candidates: set[int] = set()
        for name in ordered[:prefix]:
            candidates.update(index[name])
            index[name].append(i)
        for j in sorted(candidates):
            other = shapes[j]
            if min(len(shape), len(other)) < threshold * max(len(shape), len(other)):
                continue
            similarity = jaccard(shape, other)
            if similarity >= threshold:
                yield j, i, similarity


def _group(ids: list[str], names: Mapping[str, frozenset[Name]], similarity: float) -> TwinGroup:
    only: dict[str, tuple[str, ...]] = {}
    for member in ids:
        others: set[Name] = set().union(*(names[o] for o in ids if o != member))
        other_tables = {table for table, _ in others}
        whole = {table for table, _ in names[member]} - other_tables
        columns = {f"{t}.{c}" for t, c in names[member] - others if t not in whole}
        only[member] = tuple(sorted(whole | columns))
    identical = len({names[m] for m in ids}) == 1
    return TwinGroup(tuple(ids), identical, similarity, only)
