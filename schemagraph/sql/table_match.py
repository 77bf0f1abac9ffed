"""The catalog side of `check_sql`: a database's tables by the parts of their engine names.

`match_tables` finds the tables a name written in SQL stands for: the trailing parts of a
table's engine name (`Table.engine_name`, matched case-insensitively), the whole name with another
first part (public BigQuery datasets are read as `bigquery-public-data.dataset.table` while an
export names its own project; an export may rename a Snowflake database), an unqualified table
id, or a BigQuery wildcard family (`ga_sessions_2017*`). `table_index` and `catalog_holders`
are built once per database and per catalog (cached by identity), so that a family of hundreds
of tables, or a table of another database, is found without a scan per query.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from schemagraph.dialects import name_parts, parent_paths
from schemagraph.model import Catalog, Column, Database, Table, fold

#: a table's (or a family's) columns by folded path, with the table holding each; and the
#: folded paths that have fields below them
Merged = tuple[dict[str, tuple[Column, Table]], frozenset[str]]
#: tables and families whose merged columns an index keeps
MAX_MERGED = 256


@dataclass
class TableIndex:
    """One database's tables, by the folded parts of their engine names (built once per
    database and kept: a family of hundreds of tables is scanned once, not per query)."""

    db: Database
    entries: list[tuple[Table, tuple[str, ...]]]
    by_last: dict[str, list[int]]
    by_id: dict[str, int]
    _columns: dict[str, dict[str, Column]] = field(default_factory=dict)
    _parents: dict[str, frozenset[str]] = field(default_factory=dict)
    _stems: list[str] | None = None
    _merged: dict[tuple[str, ...], Merged] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def of(cls, db: Database) -> TableIndex:
        entries = [(t, tuple(fold(p) for p in name_parts(t))) for t in db.tables]
        by_last: dict[str, list[int]] = {}
        for i, (_, parts) in enumerate(entries):
            by_last.setdefault(parts[-1], []).append(i)
        by_id = {fold(t.name): i for i, (t, _) in enumerate(entries)}
        return cls(db, entries, by_last, by_id)

    def columns(self, table: Table) -> dict[str, Column]:
        key = fold(table.name)
        found = self._columns.get(key)
        if found is None:
            found = {fold(c.name): c for c in table.columns}
            with self.lock:
                self._columns[key] = found
        return found

    def parents(self, table: Table) -> frozenset[str]:
        """The folded paths that have fields listed below them."""
        key = fold(table.name)
        found = self._parents.get(key)
        if found is None:
            found = frozenset(fold(p) for c in table.columns for p in parent_paths(c.name))
            with self.lock:
                self._parents[key] = found
        return found

    def merged(self, tables: tuple[Table, ...]) -> Merged:
        """The columns of `tables` (a table, or a wildcard family) by folded path, each with
        the first table that has it, and every path with fields below it: one lookup per name
        however many members a family has."""
        key = tuple(fold(t.name) for t in tables)
        found = self._merged.get(key)
        if found is None:
            columns: dict[str, tuple[Column, Table]] = {}
            parents: set[str] = set()
            for table in tables:
                for column in table.columns:
                    columns.setdefault(fold(column.name), (column, table))
                parents |= self.parents(table)
            found = (columns, frozenset(parents))
            with self.lock:
                if len(self._merged) >= MAX_MERGED:
                    self._merged.clear()
                self._merged[key] = found
        return found

    def stems(self) -> list[str]:
        """The folded name stems of the database's sharded families (`ga_sessions_`)."""
        if self._stems is None:
            stems = {_stem(parts[-1]) for _, parts in self.entries}
            self._stems = sorted(s for s in stems if s)
        return self._stems


_INDEXES: OrderedDict[int, tuple[Database, TableIndex]] = OrderedDict()
_INDEXES_LOCK = threading.Lock()
MAX_INDEXES = 256


def table_index(db: Database) -> TableIndex:
    """The index of `db`, cached by identity (a catalog's databases live as long as it)."""
    with _INDEXES_LOCK:
        held = _INDEXES.get(id(db))
        if held is not None and held[0] is db:
            _INDEXES.move_to_end(id(db))
            return held[1]
    index = TableIndex.of(db)
    with _INDEXES_LOCK:
        _INDEXES[id(db)] = (db, index)
        while len(_INDEXES) > MAX_INDEXES:
            _INDEXES.popitem(last=False)
    return index


_HOLDERS: OrderedDict[int, tuple[Catalog, dict[str, list[Database]]]] = OrderedDict()
MAX_HOLDERS = 4


def catalog_holders(catalog: Catalog) -> dict[str, list[Database]]:
    """The databases of `catalog` by the (folded) last part of each table's engine name, cached
    by identity: a table of another database is found without scanning every database."""
    with _INDEXES_LOCK:
        held = _HOLDERS.get(id(catalog))
        if held is not None and held[0] is catalog:
            return held[1]
    holders: dict[str, list[Database]] = {}
    for db in catalog:
        for table in db.tables:
            found = holders.setdefault(fold(name_parts(table)[-1]), [])
            if not found or found[-1] is not db:
                found.append(db)
    with _INDEXES_LOCK:
        _HOLDERS[id(catalog)] = (catalog, holders)
        while len(_HOLDERS) > MAX_HOLDERS:
            _HOLDERS.popitem(last=False)
    return holders


def _stem(name: str) -> str:
    """`ga_sessions_` for `ga_sessions_20170801`; "" for a name that ends in no digits."""
    stripped = name.rstrip("0123456789")
    return stripped if stripped != name and stripped else ""


def match_tables(
    index: TableIndex, parts: tuple[str, ...], dialect: str, wildcard: bool, strict: bool = False
) -> list[int]:
    """The entries of `index` that `parts` (a table's name as written) names: the trailing
    parts of its engine name; the whole name with another first part (a BigQuery project other
    than the export's, such as `bigquery-public-data`; a Snowflake database the export renamed);
    an unqualified table id. `strict` (a table of another database): the whole engine name, the
    project alone free in BigQuery."""
    folded = tuple(fold(p) for p in parts)
    qualifier, last = folded[:-1], folded[-1]
    if wildcard:
        prefix = last[:-1]
        candidates = [i for i, (_, p) in enumerate(index.entries) if p[-1].startswith(prefix)]
    else:
        candidates = list(index.by_last.get(last, ()))
        if not qualifier and last in index.by_id and index.by_id[last] not in candidates:
            candidates.append(index.by_id[last])
    found = []
    for i in candidates:
        theirs = index.entries[i][1][:-1]
        if _qualifies(qualifier, theirs, dialect, strict):
            found.append(i)
    return found


def _qualifies(
    qualifier: tuple[str, ...], theirs: tuple[str, ...], dialect: str, strict: bool
) -> bool:
    if qualifier == theirs:
        return True
    other_first = len(qualifier) == len(theirs) >= 2 and qualifier[1:] == theirs[1:]
    if strict:
        return dialect == "bigquery" and other_first
    if not qualifier or other_first:
        return True
    if len(qualifier) < len(theirs) and theirs[-len(qualifier) :] == qualifier:
        return True
    return dialect == "sqlite" and qualifier in (("main",), ("temp",))
