"""Twins and containment in a warehouse estate: tables matched modulo engine conventions and
weighed by how rare they are.

Warehouse estates copy datasets across engines and extend them: the same dataset in BigQuery and
Snowflake (`AUSTIN`, `AUSTIN_SF`), and `_PLUS` copies holding every table of the base and more
(`noaa_data` in `NOAA_DATA_PLUS`). They also attach the same public reference datasets (US
boundaries, census tables) to many databases. Plain Jaccard over `table.column` names
(`schemagraph.twins.find_twins`) misses the first (names differ by engine conventions) and sees
twins in the second: on Spider 2.0-lite's estate the census, covid, FEC and social-determinants
databases form one "twin" group at 0.917 because each carries the same 278 census tables.

Here a table is known by its key (`table_key`): its name case-folded, with a
`SCHEMA__TABLE` / `dataset__table` name's parts stripped of the leading underscore Snowflake adds
to names that start with a digit (`AUSTIN_311___311_SERVICE_REQUESTS` is
`austin_311__311_service_requests`); SQLite's own tables (`sqlite_sequence`) are left out.
Each key weighs its rarity, `log((N + 1) / df)` over the N databases of the estate (df: how many
hold the key: a table every database holds says nothing), divided by the number of keys of the
estate with its shape (the key with digit runs as `#`), so that a family of sharded or yearly
tables (`gsod1929` ... `gsod2024`, `blockgroup_2010_5yr` ... `county_2021_1yr`) weighs like a
few tables, not hundreds.

- Twins: the weighted Jaccard similarity of two databases' tables, each shared table counted by
  the Jaccard similarity of its two column sets, is at least `TWIN_THRESHOLD` (0.8, as before).
  On the pools we hold (Spider 166, Spider-DK, BIRD train 69, alone and merged) every edited
  copy still scores at least 0.846 (Spider-DK's `new_pets_1` against `pets_1`; 0.867
  unweighted) and every pair of different databases at most 0.695 (BIRD's `law_episode` and
  `simpson_episodes`; 0.766 unweighted; the next pair is at 0.21, was 0.44); Spider's `world_1`
  and BIRD's `world` now score 1.0 (0.923: `sqlite_sequence`). On Spider 2.0-lite the false
  census group is gone (its closest pair, `census_bureau_acs_1` and `fec`, is at 0.67).
- Containment: B contains A when B holds at least `CONTAINS` (0.98) of A's weight, a table of A
  being held when B has a table of the same key with at least `HELD_COLUMNS` (0.75) of its
  columns. Measured on Spider 2.0-lite: a copy's column drift leaves 80 % of a table's columns or
  more (one table of `noaa_ports` in `NOAA_PORTS_SF`: 67 %), every true containment holds all of
  the base's tables (1.0) and the highest pair that is not one holds 0.965 (`openaq` in
  `epa_historical_air_quality`: one table of its own is missing). A copy that adds no table is a
  mirror, which twins say; containment records the copies that add tables, and which.

Pairs are found without comparing every pair, by weighted prefix filtering: keys are ordered
rarest first; two databases with weighted overlap at least t·W (W: one database's weight) share a
key among that database's first keys whose remaining weight is still at least t·W.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from schemagraph.model import Catalog, Database, fold
from schemagraph.twins import TWIN_THRESHOLD, TwinGroup

CONTAINS = 0.98
HELD_COLUMNS = 0.75
_EPSILON = 1e-9
_DIGITS = re.compile(r"\d+")

Schema = Mapping[str, frozenset[str]]
"""A database's tables: table key -> its folded column names."""


def table_key(name: str) -> str:
    """`name` modulo engine conventions: case-folded, and in a `SCHEMA__TABLE` name the schema
    and the table part without leading underscores (`_1000_GENOMES__PEDIGREE` is
    `1000_genomes__pedigree`)."""
    folded = fold(name)
    if "__" not in folded.lstrip("_"):
        return folded.lstrip("_") or folded
    head, _, tail = folded.lstrip("_").partition("__")
    return f"{head}__{tail.lstrip('_') or tail}"


def is_system_table(name: str) -> bool:
    """An engine's own bookkeeping table (SQLite's `sqlite_sequence`, `sqlite_stat1`)."""
    return fold(name).startswith("sqlite_")


def database_schema(db: Database) -> dict[str, frozenset[str]]:
    """`db`'s tables by key, with their folded column names (system tables left out)."""
    return schema_of((t.qualified_name, (c.name for c in t.columns)) for t in db.tables)


def schema_of(tables: Iterable[tuple[str, Iterable[str]]]) -> dict[str, frozenset[str]]:
    """A schema from (table name, column names) pairs; tables of one key are merged. A
    table is known by its top-level columns: the fields nested in a RECORD (`totals.hits`,
    after `totals`) are left out, as an engine that stores the record as one semi-structured
    column (Snowflake's VARIANT) shows none of them."""
    out: dict[str, set[str]] = {}
    for name, columns in tables:
        if not is_system_table(name):
            folded = [fold(c) for c in columns]
            top = set(folded)
            out.setdefault(table_key(name), set()).update(
                c for c in folded if "." not in c or c.split(".", 1)[0] not in top
            )
    return {key: frozenset(columns) for key, columns in out.items()}


def rarity_weights(schemas: Mapping[str, Schema]) -> dict[str, float]:
    """Each table key's weight in `schemas`: log((N + 1) / df), divided by how many keys of the
    estate share its shape (see the module docstring)."""
    df = Counter(key for schema in schemas.values() for key in schema)
    shapes = Counter(_DIGITS.sub("#", key) for key in df)
    n = len(schemas)
    return {key: math.log((n + 1) / df[key]) / shapes[_DIGITS.sub("#", key)] for key in df}


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def held(columns: frozenset[str], other: frozenset[str] | None) -> bool:
    """Whether a table of `columns` is held by a table of `other` columns (None: no such
    table): the other has at least HELD_COLUMNS of them."""
    if other is None:
        return False
    return not columns or len(columns & other) >= HELD_COLUMNS * len(columns) - _EPSILON


def similarity(a: Schema, b: Schema, weights: Mapping[str, float]) -> float:
    """Weighted Jaccard similarity of two schemas, a shared table counting by the Jaccard
    similarity of its columns."""
    union = sum(weights[k] for k in a.keys() | b.keys())
    if union <= 0:
        return 1.0 if a.keys() == b.keys() else 0.0
    shared = sum(weights[k] * _jaccard(a[k], b[k]) for k in a.keys() & b.keys())
    return shared / union


def containment(a: Schema, b: Schema, weights: Mapping[str, float]) -> float:
    """The share of `a`'s weight that `b` holds (1.0 for an empty `a`)."""
    total = sum(weights[k] for k in a)
    if total <= 0:
        return 1.0 if all(held(cols, b.get(k)) for k, cols in a.items()) else 0.0
    return sum(weights[k] for k, cols in a.items() if held(cols, b.get(k))) / total


@dataclass(frozen=True)
class ContainmentGroup:
    """`base`'s tables are all held by each of `copies`, which hold more: `adds`, per copy, its
    tables (as it names them) of keys that `base` lacks."""

    base: str
    copies: tuple[str, ...]
    adds: Mapping[str, tuple[str, ...]]

    def as_dict(self) -> dict[str, object]:
        return {
            "base": self.base,
            "copies": list(self.copies),
            "adds": {copy: list(self.adds[copy]) for copy in self.copies},
        }


@dataclass(frozen=True)
class EstateRelations:
    """The twin groups and the containment groups of an estate."""

    twins: list[TwinGroup]
    containment: list[ContainmentGroup]
    #: folded database id -> the folded ids of the databases it is related to: its twins, the
    #: databases it contains or that contain it, and those that contain what it contains
    related: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def twin_map(self) -> dict[str, frozenset[str]]:
        """Each twin's folded id -> the folded ids of its group (itself included)."""
        out: dict[str, frozenset[str]] = {}
        for group in self.twins:
            members = frozenset(fold(m) for m in group.members)
            for member in members:
                out[member] = members
        return out


def catalog_schemas(catalog: Catalog | Iterable[Database]) -> dict[str, dict[str, frozenset[str]]]:
    """Each database's schema (`database_schema`), by id; databases without tables left out."""
    return {db.id: database_schema(db) for db in catalog if db.tables}


def find_relations(
    catalog: Catalog | Iterable[Database],
    twin_threshold: float = TWIN_THRESHOLD,
    contains: float = CONTAINS,
) -> EstateRelations:
    """The twin and containment groups of `catalog` (see the module docstring)."""
    databases = [db for db in catalog if db.tables]
    names = {db.id: {table_key(t.qualified_name): t.name for t in db.tables} for db in databases}
    return relations_of(catalog_schemas(databases), twin_threshold, contains, names)


def relations_of(
    schemas: Mapping[str, Schema],
    twin_threshold: float = TWIN_THRESHOLD,
    contains: float = CONTAINS,
    names: Mapping[str, Mapping[str, str]] | None = None,
) -> EstateRelations:
    """`find_relations` over schemas by database id; `names`: per database, table key -> the
    name it gives that table (for `adds`; the key when absent; twins' `only` names keys)."""
    if not 0.0 < twin_threshold <= 1.0 or not 0.0 < contains <= 1.0:
        raise ValueError("thresholds must be in (0, 1]")
    schemas = {db: s for db, s in schemas.items() if s}
    weights = rarity_weights(schemas)
    order = {key: i for i, key in enumerate(sorted(weights, key=lambda k: (-weights[k], k)))}
    ordered = {db: sorted(s, key=order.__getitem__) for db, s in schemas.items()}
    totals = {db: sum(weights[k] for k in s) for db, s in schemas.items()}
    ids = sorted(schemas)
    parent = {db: db for db in ids}
    weakest: dict[str, float] = {}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b, sim in _twin_pairs(ids, ordered, totals, weights, schemas, twin_threshold):
        ra, rb = root(a), root(b)
        low = min(weakest.get(ra, 1.0), weakest.get(rb, 1.0), sim)
        if ra != rb:
            parent[rb] = ra
        weakest[ra] = low
    components: dict[str, list[str]] = defaultdict(list)
    for db in ids:
        components[root(db)].append(db)
    twins = []
    for top, members in components.items():
        if len(members) > 1:
            twins.append(_twin_group(sorted(members), schemas, weakest.get(top, 1.0)))
    twins.sort(key=lambda g: (-len(g.members), g.members))

    inside: dict[str, list[str]] = defaultdict(list)  # base -> databases that contain it
    for a, b in _contained_pairs(ids, ordered, totals, weights, schemas, contains):
        inside[a].append(b)
    groups = []
    related: dict[str, set[str]] = defaultdict(set)
    for base, holders in sorted(inside.items()):
        family = {fold(base), *(fold(b) for b in holders)}
        for member in family:
            related[member] |= family - {member}
        adds = {
            b: tuple(sorted(_name(names, b, k) for k in schemas[b].keys() - schemas[base].keys()))
            for b in sorted(holders)
        }
        # a copy that holds base's tables and adds none is a mirror (twins say it)
        copies = tuple(b for b, tables in adds.items() if tables)
        if copies:
            groups.append(ContainmentGroup(base, copies, {b: adds[b] for b in copies}))
    for group in twins:
        folded = {fold(m) for m in group.members}
        for member in folded:
            related[member] |= folded - {member}
    return EstateRelations(twins, groups, {db: frozenset(r) for db, r in related.items()})


def _name(names: Mapping[str, Mapping[str, str]] | None, db: str, key: str) -> str:
    return names.get(db, {}).get(key, key) if names is not None else key


def _prefix(keys: list[str], weights: Mapping[str, float], needed: float) -> Iterator[str]:
    """The first of `keys` (rarest first) whose remaining weight, themselves included, is still
    at least `needed`: a set overlapping `keys` by `needed` shares one of them."""
    remaining = sum(weights[k] for k in keys)
    for key in keys:
        if remaining < needed - _EPSILON:
            return
        yield key
        remaining -= weights[key]


def _twin_pairs(
    ids: list[str],
    ordered: Mapping[str, list[str]],
    totals: Mapping[str, float],
    weights: Mapping[str, float],
    schemas: Mapping[str, Schema],
    threshold: float,
) -> Iterator[tuple[str, str, float]]:
    index: dict[str, list[str]] = defaultdict(list)
    for db in ids:
        candidates: set[str] = set()
        for key in _prefix(ordered[db], weights, threshold * totals[db]):
            candidates.update(index[key])
            index[key].append(db)
        for other in sorted(candidates):
            low, high = sorted((totals[db], totals[other]))
            if low < threshold * high - _EPSILON:
                continue
            sim = similarity(schemas[other], schemas[db], weights)
            if sim >= threshold - _EPSILON:
                yield other, db, sim


def _contained_pairs(
    ids: list[str],
    ordered: Mapping[str, list[str]],
    totals: Mapping[str, float],
    weights: Mapping[str, float],
    schemas: Mapping[str, Schema],
    contains: float,
) -> Iterator[tuple[str, str]]:
    """(a, b) for every b that contains a."""
    holders: dict[str, list[str]] = defaultdict(list)
    for db in ids:
        for key in ordered[db]:
            holders[key].append(db)
    for a in ids:
        candidates: set[str] = set()
        for key in _prefix(ordered[a], weights, contains * totals[a]):
            candidates.update(holders[key])
        candidates.discard(a)
        for b in sorted(candidates):
            if containment(schemas[a], schemas[b], weights) >= contains - _EPSILON:
                yield a, b


def _twin_group(ids: list[str], schemas: Mapping[str, Schema], sim: float) -> TwinGroup:
    """The group of `ids`; `only` names tables and columns by key (folded)."""
    only: dict[str, tuple[str, ...]] = {}
    for member in ids:
        others = [schemas[o] for o in ids if o != member]
        other_keys = set().union(*(s.keys() for s in others))
        whole = set(schemas[member].keys() - other_keys)
        columns = {
            f"{k}.{c}"
            for k, cols in schemas[member].items()
            if k in other_keys
            for c in cols - set().union(*(s.get(k, frozenset()) for s in others))
        }
        only[member] = tuple(sorted(whole | columns))
    identical = len({frozenset(schemas[m].items()) for m in ids}) == 1
    return TwinGroup(tuple(ids), identical, sim if len(ids) > 1 else 1.0, only)
