"""The schema data model: a catalog of databases, their tables, columns and foreign keys.

All objects are frozen dataclasses. Names are kept exactly as written in the source and matched
case-insensitively (`Table.column("NAME")`, `Database.table("Singer")`), which is how SQL engines
treat identifiers in practice.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from schemagraph.counted import counted
from schemagraph.errors import CatalogError


def fold(name: str) -> str:
    """The case-insensitive key of a name."""
    return name.casefold()


@dataclass(frozen=True)
class Column:
    """`description`: what the column means, from documentation (a database comment, a data
    dictionary, dbt docs), or "" when nobody wrote one."""

    name: str
    type: str = ""
    primary_key: bool = False
    description: str = ""


@dataclass(frozen=True)
class ForeignKey:
    """`table.columns` references `ref_table.ref_columns` (same database)."""

    table: str
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """`description`: what the table holds, from documentation, or "".

    `engine_name`: the parts of the name as the engine qualifies it (BigQuery's project,
    dataset and table; Snowflake's database, schema and table), or () when `name` is what the
    engine calls it. `name` is schemarag's id of the table (`dataset__table` where a database
    spans several schemas); what a person, a prompt or an agent reads is the engine's name
    (`schemagraph.dialects.table_sql`)."""

    name: str
    columns: tuple[Column, ...]
    foreign_keys: tuple[ForeignKey, ...] = ()
    description: str = ""
    engine_name: tuple[str, ...] = ()

    @property
    def primary_key(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if c.primary_key)

    @property
    def qualified_name(self) -> str:
        """The name with its dataset or schema, as words read it: `dataset__table` for a
        warehouse table of a three-part engine name (`stackoverflow__badges` for the BigQuery
        table `badges` of dataset `stackoverflow`, whose id an export of one dataset leaves
        bare), else `name`. The dataset is often what tells two databases' tables apart."""
        if len(self.engine_name) == 3:
            return f"{self.engine_name[1]}__{self.engine_name[2]}"
        return self.name

    def column(self, name: str) -> Column:
        key = fold(name)
        for col in self.columns:
            if fold(col.name) == key:
                return col
        raise KeyError(f"table {self.name!r} has no column {name!r}")

    def has_column(self, name: str) -> bool:
        key = fold(name)
        return any(fold(c.name) == key for c in self.columns)


@dataclass(frozen=True)
class Database:
    """One database. `origin` says where it was read from (for error messages, never holding a
    password); `path` is the SQLite file holding its data, when there is one; `url` is the
    SQLAlchemy URL of a live server holding it (with its credentials: never print it) and
    `schema` the server schema it maps to, for live sources. `dialect` is the sqlglot name of
    the engine that holds it (bigquery, snowflake, databricks, postgres, duckdb, sqlite...), or
    "" when the source does not say, which is read as SQLite (`schemagraph.dialects`)."""

    id: str
    tables: tuple[Table, ...]
    origin: str = ""
    path: Path | None = None
    url: str | None = field(default=None, repr=False)
    schema: str | None = None
    dialect: str = ""

    def table(self, name: str) -> Table:
        key = fold(name)
        for tab in self.tables:
            if fold(tab.name) == key:
                return tab
        raise KeyError(f"database {self.id!r} has no table {name!r}")

    def has_table(self, name: str) -> bool:
        key = fold(name)
        return any(fold(t.name) == key for t in self.tables)

    @property
    def foreign_keys(self) -> Iterator[ForeignKey]:
        for tab in self.tables:
            yield from tab.foreign_keys


@dataclass(frozen=True)
class Catalog:
    """Databases by id. Ids are unique case-insensitively; use `merge` to combine sources.

    `problems` lists what the sources reported and skipped (a DDL table that did not parse, a
    foreign key SQLite accepted but that points nowhere), one line each naming file and problem.
    """

    databases: tuple[Database, ...] = ()
    problems: tuple[str, ...] = ()
    _index: Mapping[str, Database] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index: dict[str, Database] = {}
        for db in self.databases:
            key = fold(db.id)
            if key in index:
                first = index[key]
                raise CatalogError(
                    f"database id {db.id!r} appears twice: in {first.origin or '?'} and in "
                    f"{db.origin or '?'}; rename one of them or load only one source"
                )
            index[key] = db
        object.__setattr__(self, "_index", index)

    def __len__(self) -> int:
        return len(self.databases)

    def __iter__(self) -> Iterator[Database]:
        return iter(self.databases)

    def __contains__(self, db_id: object) -> bool:
        return isinstance(db_id, str) and fold(db_id) in self._index

    def database(self, db_id: str) -> Database:
        try:
            return self._index[fold(db_id)]
        except KeyError:
            raise CatalogError(
                f"unknown database {db_id!r}; the catalog has {counted(len(self), 'database')} "
                "(list them with `schemarag catalog show`)"
            ) from None

    @property
    def table_count(self) -> int:
        return sum(len(db.tables) for db in self.databases)

    @staticmethod
    def merge(*catalogs: Catalog) -> Catalog:
        """One catalog from several; a database id present in two is a CatalogError."""
        return Catalog(
            tuple(db for cat in catalogs for db in cat.databases),
            tuple(p for cat in catalogs for p in cat.problems),
        )


def validate_database(db: Database) -> None:
    """Raise CatalogError for duplicate names or a foreign key to a missing table or column."""
    seen: set[str] = set()
    for tab in db.tables:
        if fold(tab.name) in seen:
            raise CatalogError(f"{db.origin or db.id}: table {tab.name!r} is defined twice")
        seen.add(fold(tab.name))
        cols: set[str] = set()
        for col in tab.columns:
            if fold(col.name) in cols:
                raise CatalogError(
                    f"{db.origin or db.id}: column {tab.name}.{col.name} is defined twice"
                )
            cols.add(fold(col.name))
    for fk in db.foreign_keys:
        where = f"{db.origin or db.id}: foreign key {fk.table}({', '.join(fk.columns)})"
        if len(fk.columns) != len(fk.ref_columns) or not fk.columns:
            raise CatalogError(f"{where} has a different number of columns on each side")
        if not db.has_table(fk.ref_table):
            raise CatalogError(f"{where} references missing table {fk.ref_table!r}")
        src, ref = db.table(fk.table), db.table(fk.ref_table)
        for name in fk.columns:
            if not src.has_column(name):
                raise CatalogError(f"{where}: table {fk.table!r} has no column {name!r}")
        for name in fk.ref_columns:
            if not ref.has_column(name):
                raise CatalogError(f"{where} references missing column {fk.ref_table}.{name}")
