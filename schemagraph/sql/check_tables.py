"""The tables of a query checked by `schemagraph.sql.check`: each `exp.Table` resolved once
against the database's tables (as the engine names them, by a trailing part of that name, with
another first part, by its id, or as a BigQuery wildcard family) or, fully qualified, against
another database of the catalog on the same engine; a table that is not there is a problem that
names the nearest ones, qualified as the SQL qualifies its tables."""

from __future__ import annotations

import difflib

from sqlglot import exp

from schemagraph.dialects import dialect_of, family_sql, name_parts, table_sql
from schemagraph.model import Catalog, Database, fold
from schemagraph.sql.from_sources import Opaque, Source, Tables
from schemagraph.sql.problems import CUTOFF, SUGGESTIONS, ProblemKind, Problems, nearest
from schemagraph.sql.table_match import TableIndex, catalog_holders, match_tables, table_index


class TableResolver:
    """Resolves the tables of one query against `db` (`index`: its tables by engine name) and,
    with `catalog`, the other databases of its engine; reports to `problems`. `read`: the
    tables resolved, folded id -> id (or family pattern) as the result lists them."""

    def __init__(
        self,
        db: Database,
        dialect: str,
        index: TableIndex,
        catalog: Catalog | None,
        problems: Problems,
    ) -> None:
        self.db = db
        self.dialect = dialect
        self.index = index
        self.catalog = catalog
        self.problems = problems
        self.read: dict[str, str] = {}
        self._tables: dict[int, Source] = {}  # id(exp.Table) -> its source

    def resolved(self, node: exp.Table) -> bool:
        return id(node) in self._tables

    def stand_for(self, node: exp.Table, source: Source) -> None:
        """`node` is not a catalog table but `source` (BigQuery's `FROM t, t.hits AS h`)."""
        self._tables[id(node)] = source

    def table_ids(self) -> tuple[str, ...]:
        return tuple(sorted(self.read.values(), key=fold))

    @staticmethod
    def is_catalog_table(node: exp.Table, ctes: set[str]) -> bool:
        if not isinstance(node.this, exp.Identifier):
            return False  # a table function, or a name sqlglot could not read as one
        if not node.name:
            return False
        return bool(node.args.get("db")) or fold(node.name) not in ctes

    def table(self, node: exp.Table) -> Source:
        held = self._tables.get(id(node))
        if held is None:
            held = self._resolve_table(node)
            self._tables[id(node)] = held
        return held

    def _resolve_table(self, node: exp.Table) -> Source:
        parts = tuple(p.name for p in node.parts)
        written = ".".join(parts)
        label = node.alias_or_name
        wildcard = self.dialect == "bigquery" and parts[-1].endswith("*")
        found = match_tables(self.index, parts, self.dialect, wildcard)
        index = self.index
        if not found and self.catalog is not None and len(parts) > 2:
            index, found = self._elsewhere(parts, wildcard)
        if not found and any(fold(p) == "information_schema" for p in parts):
            return Opaque(label)  # the engine's own views, which no export lists
        if not found:
            near = self._near_tables(parts, wildcard)
            message = f"no table `{written}` in {self.db.id}"
            self.problems.add(ProblemKind.UNKNOWN_TABLE, written, nearest(message, near), near)
            return Opaque(label)
        tables = tuple(index.entries[i][0] for i in found)
        first = tables[0]
        read = first.name
        if wildcard:  # the family as its ids are written: `dataset__ga_sessions_2017*`
            read = first.name[: len(first.name) - len(name_parts(first)[-1])] + parts[-1]
        if index is not self.index:
            read = f"{index.db.id}.{read}"
        self.read[fold(read)] = read
        return Tables(index, tables, label, parts[-1], wildcard, self.dialect)

    def _elsewhere(self, parts: tuple[str, ...], wildcard: bool) -> tuple[TableIndex, list[int]]:
        """A fully qualified table of another database of the catalog, same engine."""
        assert self.catalog is not None
        holders = catalog_holders(self.catalog)
        last = fold(parts[-1])
        if wildcard:
            names = [n for n in holders if n.startswith(last[:-1])]
        else:
            names = [last] if last in holders else []
        for db in dict.fromkeys(db for name in names for db in holders[name]):
            if db is self.db or dialect_of(db) != self.dialect:
                continue
            index = table_index(db)
            found = match_tables(index, parts, self.dialect, wildcard, strict=True)
            if found:
                return index, found
        return self.index, []

    def _near_tables(self, parts: tuple[str, ...], wildcard: bool) -> tuple[str, ...]:
        """The nearest tables (or families), qualified as the SQL qualifies its tables when
        that names them, else as the engine names them."""
        last = fold(parts[-1])
        out = []
        if wildcard:
            stems = difflib.get_close_matches(last[:-1], self.index.stems(), SUGGESTIONS, CUTOFF)
            for stem in stems:
                member = next(t for t, p in self.index.entries if p[-1].startswith(stem))
                written = name_parts(member)[-1][: len(stem)] + "*"
                out.append(self._as_written(parts, written, family_sql(self.db, member, stem)))
            return tuple(out)
        near = difflib.get_close_matches(last, list(self.index.by_last), SUGGESTIONS, CUTOFF)
        for name in near:
            table = self.index.entries[self.index.by_last[name][0]][0]
            out.append(self._as_written(parts, name_parts(table)[-1], table_sql(self.db, table)))
        return tuple(out)

    def _as_written(self, parts: tuple[str, ...], last: str, rendered: str) -> str:
        candidate = (*parts[:-1], last)
        if match_tables(self.index, candidate, self.dialect, last.endswith("*")):
            return f"`{'.'.join(candidate)}`"
        return rendered if rendered.startswith("`") else f"`{rendered}`"
