"""Table families: tables sharded by date or number that are one logical table.

Warehouses split a table per day, month or number (`events_20240101`, `events_20240102`, ...;
BigQuery and GA exports have hundreds per family). For routing they are one table. A family is
at least `MIN_MEMBERS` tables of one database whose names are one stem plus a suffix of the same
shape (`YYYYMMDD`, `YYYY_MM_DD`, `YYYYMM`, `YYYY_MM`, or a plain number) and whose column-name
sets are at least `SAME_COLUMNS` Jaccard-similar to the newest member's (a shard that gained a
column stays in its family). Three, because two numbered tables (`document_1`, `document_2`)
are as often two different things as a sharded one.

Column families are the same thing one level down: a wide table repeats a measure per period
or per number (`m1_revenue` ... `m52_revenue`, `udf_001` ... `udf_199`, `q1` ... `q80`). In a
table wider than `WIDE_TABLE` columns, at least `MIN_MEMBERS` columns whose names are the same
but for their numbers are one family (`column_families`): the embedded table document names
each family once, after the other columns, so that the columns that make the table what it is
are not drowned (the decision log of docs/BENCHMARKS.md).
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from dataclasses import dataclass, replace

from schemagraph.model import Catalog, Column, Database, ForeignKey, Table, fold

MIN_MEMBERS = 3
SAME_COLUMNS = 0.8
#: a table with more columns than this is wide: MiniLM reads the first 256 tokens of a
#: document, about 60 column names, and no table of Spider's or BIRD's pools that has a column
#: family is this wide
WIDE_TABLE = 30

#: suffix shapes, most specific first: (name, pattern, placeholder)
_SHAPES = (
    ("date", r"\d{8}", "YYYYMMDD"),
    ("date", r"\d{4}_\d{2}_\d{2}", "YYYY_MM_DD"),
    ("month", r"\d{6}", "YYYYMM"),
    ("month", r"\d{4}_\d{2}", "YYYY_MM"),
    ("number", r"\d+", "N"),
)
_NAME = re.compile(
    r"^(?P<stem>.*?[A-Za-z][A-Za-z0-9]*?)[_$-]?(?P<suffix>"
    + "|".join(f"(?P<s{i}>{p})" for i, (_, p, _) in enumerate(_SHAPES))
    + r")$"
)


@dataclass(frozen=True)
class TableFamily:
    """`members` sorted by suffix (so the last is the newest); `pattern` is the stem with the
    suffix's placeholder (`events_YYYYMMDD`)."""

    database: str
    stem: str
    pattern: str
    kind: str
    members: tuple[str, ...]

    @property
    def first(self) -> str:
        return self.members[0]

    @property
    def last(self) -> str:
        return self.members[-1]

    def suffix_range(self) -> tuple[str, str]:
        return (self.first[-_suffix_length(self.first) :], self.last[-_suffix_length(self.last) :])

    def as_dict(self) -> dict[str, object]:
        low, high = self.suffix_range()
        return {
            "database": self.database,
            "pattern": self.pattern,
            "kind": self.kind,
            "tables": len(self.members),
            "range": [low, high],
            "first": self.first,
            "last": self.last,
        }


@dataclass(frozen=True)
class ColumnFamilies:
    """A table's columns split: those in no family (in table order), and the families, each
    in numeric order (`m2` before `m10`), in the order of their first column in the table."""

    singles: tuple[Column, ...]
    families: tuple[tuple[Column, ...], ...]


_NUMBER = re.compile(r"\d+")


@functools.lru_cache(maxsize=1024)  # a prompt's column cuts ask again at every render
def column_families(table: Table) -> ColumnFamilies:
    """`table`'s column families (see the module docstring); none unless it is wide."""
    if len(table.columns) <= WIDE_TABLE:
        return ColumnFamilies(table.columns, ())
    groups: dict[str, list[Column]] = defaultdict(list)
    for column in table.columns:
        if _NUMBER.search(column.name):
            groups[_NUMBER.sub("#", fold(column.name))].append(column)
    families = [g for g in groups.values() if len(g) >= MIN_MEMBERS]
    members = {id(c) for g in families for c in g}
    return ColumnFamilies(
        tuple(c for c in table.columns if id(c) not in members),
        tuple(tuple(sorted(g, key=_numbers)) for g in families),
    )


def _numbers(column: Column) -> tuple[int, ...]:
    return tuple(int(n) for n in _NUMBER.findall(column.name))


def _suffix_length(name: str) -> int:
    match = _NAME.match(name)
    return len(match.group("suffix")) if match else 0


def _shape(name: str) -> tuple[str, str, str, str] | None:
    """(stem, kind, placeholder, separator) of a sharded-looking name, else None."""
    match = _NAME.match(name)
    if match is None:
        return None
    for i, (kind, _, placeholder) in enumerate(_SHAPES):
        if match.group(f"s{i}") is not None:
            stem = match.group("stem")
            separator = name[len(stem) : len(name) - len(match.group("suffix"))]
            return stem, kind, placeholder, separator
    return None


def _columns(table: Table) -> frozenset[str]:
    return frozenset(fold(c.name) for c in table.columns)


def find_families(db: Database) -> list[TableFamily]:
    """The table families of `db` (see the module docstring), by pattern."""
    groups: dict[tuple[str, str, str, str], list[Table]] = defaultdict(list)
    for table in db.tables:
        shape = _shape(table.name)
        if shape is not None:
            groups[(fold(shape[0]), *shape[1:])].append(table)
    families = []
    for (_, kind, placeholder, separator), tables in groups.items():
        if len(tables) < MIN_MEMBERS:
            continue
        tables.sort(key=lambda t: (len(t.name), t.name))
        newest = _columns(tables[-1])
        members = [
            t.name
            for t in tables
            if len(_columns(t) & newest) / max(len(_columns(t) | newest), 1) >= SAME_COLUMNS
        ]
        if len(members) >= MIN_MEMBERS:
            stem = _shape(members[-1])[0]  # type: ignore[index]
            families.append(
                TableFamily(db.id, stem, f"{stem}{separator}{placeholder}", kind, tuple(members))
            )
    return sorted(families, key=lambda f: f.pattern)


def family_index(db: Database) -> dict[str, TableFamily]:
    """Folded table name -> its family, for the tables of `db` that belong to one."""
    return {fold(name): family for family in find_families(db) for name in family.members}


def collapse_families(catalog: Catalog) -> Catalog:
    """`catalog` with each family reduced to its newest member, which stands for the family in
    the index (one table document, one set of traversals, one place in the ranking). Foreign keys
    to or from the other members are moved to the newest one; duplicates are dropped."""
    databases = []
    for db in catalog.databases:
        stand_in = {
            fold(name): family.last for family in find_families(db) for name in family.members
        }
        if not stand_in:
            databases.append(db)
            continue
        tables = []
        for table in db.tables:
            if stand_in.get(fold(table.name), table.name) != table.name:
                continue
            keys: list[ForeignKey] = []
            for fk in table.foreign_keys:
                moved = replace(fk, ref_table=stand_in.get(fold(fk.ref_table), fk.ref_table))
                if moved not in keys:
                    keys.append(moved)
            tables.append(replace(table, foreign_keys=tuple(keys)))
        databases.append(replace(db, tables=tuple(tables)))
    return Catalog(tuple(databases), problems=catalog.problems)
