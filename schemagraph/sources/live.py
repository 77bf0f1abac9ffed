"""Live database servers, read through a SQLAlchemy URL: one schemarag database per schema.

How a server maps to databases (the usual enterprise layout: one server database, many schemas):

- PostgreSQL, DuckDB, SQLite, Snowflake, BigQuery, SQL Server: each schema of the database the
  URL names becomes one schemarag database with the id `<database>.<schema>`
  (`warehouse.sales`; a SQLite or DuckDB file's database is its file stem: `shop.main`). The id
  depends on those two names only, not on which other schemas exist or are chosen, so it is the
  same on every run.
- MySQL and MariaDB, where a schema *is* a database: the id is the schema's name.

`schemas` and `exclude` are glob patterns (`sales_*`), matched case-insensitively; system schemas
(`information_schema`, `pg_*`, MySQL's `mysql`/`sys`/`performance_schema`) are never read.
Schemas without tables are skipped. Tables only: views are not read (sampling a view may run an
unbounded query).

Tables, columns, types, primary and foreign keys and comments come from SQLAlchemy's inspector
(`get_multi_*`, one query per kind and schema). duckdb-engine's inspector cannot reflect columns
or keys (SQLAlchemy 2.1 with DuckDB 2; Mause/duckdb_engine#594), so DuckDB files are read from
DuckDB's own catalog functions (`duckdb_tables()`, `duckdb_columns()`, `duckdb_constraints()`).
Type strings are the dialect's own rendering of the reflected type (`VARCHAR(40)`,
`NUMERIC(10, 2)`, `TIMESTAMP WITH TIME ZONE`); columns keep the server's order and tables are
sorted by name, so the fingerprints of an unchanged schema are the same on every run.

A foreign key to a table in another schema (another schemarag database) is left out and listed in
`Catalog.problems`, as are tables whose names differ only in case from another's.

Each database records its engine's sqlglot dialect (`postgresql` is `postgres`, `mssql` is
`tsql`), and each table, outside SQLite, its engine name (schema, table).

Snowflake, BigQuery and other dialects work through their SQLAlchemy packages; only PostgreSQL,
DuckDB and SQLite are tested here.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from schemagraph.connect import (
    connection,
    create_engine,
    database_name,
    masked,
    parse_url,
    query_error,
    read_only,
)
from schemagraph.dialects import known_dialect
from schemagraph.errors import SourceError
from schemagraph.model import Catalog, Column, Database, ForeignKey, Table, fold, validate_database

if TYPE_CHECKING:
    from sqlalchemy.engine import URL, Connection

log = logging.getLogger(__name__)

#: The deadline of each introspection query (PostgreSQL), or of each schema's (DuckDB, SQLite).
INTROSPECTION_TIMEOUT_S = 120.0
SYSTEM_SCHEMAS: Mapping[str, tuple[str, ...]] = {
    "postgresql": ("information_schema", "pg_*"),
    "mysql": ("information_schema", "mysql", "performance_schema", "sys"),
    "mariadb": ("information_schema", "mysql", "performance_schema", "sys"),
    "duckdb": ("information_schema", "pg_catalog"),
    "mssql": ("information_schema", "sys", "guest", "db_*"),
}
#: SQLAlchemy backend names whose sqlglot dialect is named otherwise
SQLGLOT_DIALECTS: Mapping[str, str] = {
    "postgresql": "postgres",
    "mssql": "tsql",
    "mariadb": "mysql",
    "awsathena": "athena",
}
#: Dialects where a schema is a database of its own: the id is the schema's name.
SCHEMA_IS_DATABASE = ("mysql", "mariadb")


@dataclass(frozen=True)
class SchemaSelection:
    """Which schemas of a server to read: those matching one of `include` (every schema when
    empty) and none of `exclude`; glob patterns, case-insensitive."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name, patterns in (("schemas", self.include), ("exclude", self.exclude)):
            if any(not p.strip() for p in patterns):
                raise SourceError(f"--{name}: an empty pattern; give a schema name or glob")

    def chooses(self, schema: str) -> bool:
        key = fold(schema)
        if any(fnmatchcase(key, fold(p)) for p in self.exclude):
            return False
        return not self.include or any(fnmatchcase(key, fold(p)) for p in self.include)

    def __str__(self) -> str:
        parts = [f"--schemas {' '.join(self.include)}"] if self.include else []
        parts += [f"--exclude {' '.join(self.exclude)}"] if self.exclude else []
        return " ".join(parts) or "no pattern"


@dataclass(frozen=True)
class _Key:
    columns: tuple[str, ...]
    ref_schema: str | None  # None: the same schema
    ref_table: str
    ref_columns: tuple[str, ...]


@dataclass(frozen=True)
class _RawTable:
    name: str
    columns: tuple[Column, ...]
    keys: tuple[_Key, ...]
    description: str


def load_live(url: str, *, schemas: Sequence[str] = (), exclude: Sequence[str] = ()) -> Catalog:
    """The schemas of the server database `url` names, one schemarag database each.

    `schemas`/`exclude`: glob patterns choosing schemas. Connection and permission problems are
    one-line SourceErrors naming the URL with its password masked."""
    selection = SchemaSelection(tuple(schemas), tuple(exclude))
    parsed = parse_url(url)
    shown = masked(url)
    backend = parsed.get_backend_name()
    if backend not in (*SCHEMA_IS_DATABASE, "duckdb", "sqlite") and not database_name(parsed):
        raise SourceError(
            f"{shown}: name the database in the URL (e.g. "
            f"{parsed.drivername}://USER@HOST/DATABASE); database ids are DATABASE.SCHEMA"
        )
    engine = create_engine(parsed)
    log.info("reading %s (%s)", shown, selection)
    try:
        with connection(engine, shown) as conn:
            reader = _DuckDBReader(conn) if conn.dialect.name == "duckdb" else _InspectorReader()
            with read_only(conn, INTROSPECTION_TIMEOUT_S):
                dbname = _database_of(conn, parsed)
                available = _guard(parsed, "listing schemas", lambda: reader.schemas(conn))
            chosen = _choose(available, backend, selection, shown)
            problems: list[str] = []
            databases = []
            for schema in chosen:
                with read_only(conn, INTROSPECTION_TIMEOUT_S):
                    raw = _guard(
                        parsed,
                        f"reading schema {schema!r}",
                        lambda s=schema: reader.tables(conn, s),
                    )
                if not raw:
                    log.info("%s: schema %s has no tables; skipped", shown, schema)
                    continue
                db_id = schema if backend in SCHEMA_IS_DATABASE else f"{dbname}.{schema}"
                origin = f"{shown} (schema {schema})"
                databases.append(_database(db_id, schema, raw, origin, url, parsed, problems))
    finally:
        engine.dispose()
    if not databases:
        raise SourceError(
            f"{shown}: the chosen schemas ({', '.join(chosen)}) have no tables the URL's user can "
            "see; choose others with --schemas, or GRANT USAGE and SELECT to that user"
        )
    log.info("%s: %d databases from %d schemas", shown, len(databases), len(chosen))
    return Catalog(tuple(databases), problems=tuple(problems))


def _guard(url: URL, doing: str, read: Any) -> Any:
    from sqlalchemy.exc import DBAPIError

    try:
        return read()
    except DBAPIError as exc:
        raise query_error(url, exc, doing) from None


def _database_of(conn: Connection, url: URL) -> str:
    if conn.dialect.name == "duckdb":  # the attached file's catalog name (its stem)
        return str(conn.exec_driver_sql("SELECT current_database()").scalar_one())
    return database_name(url) or ""


def _choose(
    available: Iterable[str], backend: str, selection: SchemaSelection, shown: str
) -> list[str]:
    system = SYSTEM_SCHEMAS.get(backend, ("information_schema",))
    user = sorted(
        {s for s in available if not any(fnmatchcase(fold(s), p) for p in system)},
        key=lambda s: (fold(s), s),
    )
    chosen = [s for s in user if selection.chooses(s)]
    if not chosen:
        listed = ", ".join(user[:20]) + (f" and {len(user) - 20} more" if len(user) > 20 else "")
        raise SourceError(
            f"{shown}: no schema matches {selection}; the server has {listed or 'none'}"
        )
    return chosen


def _database(
    db_id: str,
    schema: str,
    raw: list[_RawTable],
    origin: str,
    url: str,
    parsed: URL,
    problems: list[str],
) -> Database:
    kept: dict[str, _RawTable] = {}
    for table in sorted(raw, key=lambda t: (fold(t.name), t.name)):
        if fold(table.name) in kept:
            problems.append(
                f"{origin}: tables {kept[fold(table.name)].name!r} and {table.name!r} differ "
                f"only in case; {table.name!r} left out"
            )
            continue
        kept[fold(table.name)] = table
    backend = parsed.get_backend_name()
    dialect = sqlglot_dialect(backend)
    tables = []
    for table in kept.values():
        fks = []
        for key in table.keys:
            where = f"{origin}: foreign key {table.name}({', '.join(key.columns)})"
            target = kept.get(fold(key.ref_table))
            if key.ref_schema not in (None, schema):
                problems.append(
                    f"{where} references {key.ref_schema}.{key.ref_table}, another schema; left out"
                )
            elif target is None or target.name != key.ref_table:
                problems.append(f"{where} references missing table {key.ref_table!r}; left out")
            else:
                fks.append(ForeignKey(table.name, key.columns, key.ref_table, key.ref_columns))
        engine_name = (schema, table.name) if backend != "sqlite" and schema else ()
        tables.append(Table(table.name, table.columns, tuple(fks), table.description, engine_name))
    path = None
    if backend == "sqlite" and parsed.database:
        from pathlib import Path

        path = Path(parsed.database)
    db = Database(
        db_id, tuple(tables), origin=origin, path=path, url=url, schema=schema, dialect=dialect
    )
    validate_database(db)
    return db


class _InspectorReader:
    """Reflection through SQLAlchemy's inspector, several tables per query."""

    def schemas(self, conn: Connection) -> list[str]:
        import sqlalchemy

        return list(sqlalchemy.inspect(conn).get_schema_names())

    def tables(self, conn: Connection, schema: str) -> list[_RawTable]:
        import sqlalchemy

        inspector: Any = sqlalchemy.inspect(conn)
        columns = inspector.get_multi_columns(schema=schema)
        if not columns:
            return []
        pks = inspector.get_multi_pk_constraint(schema=schema)
        fks = inspector.get_multi_foreign_keys(schema=schema)
        try:
            comments = inspector.get_multi_table_comment(schema=schema)
        except NotImplementedError:  # SQLite has no comments
            comments = {}
        tables = []
        for key, cols in columns.items():
            primary = set((pks.get(key) or {}).get("constrained_columns") or ())
            tables.append(
                _RawTable(
                    name=key[1],
                    columns=tuple(
                        Column(
                            c["name"],
                            _type_text(c["type"], conn.dialect),
                            c["name"] in primary,
                            _text(c.get("comment")),
                        )
                        for c in cols
                    ),
                    keys=tuple(
                        _Key(
                            tuple(fk["constrained_columns"]),
                            fk.get("referred_schema"),
                            fk["referred_table"],
                            tuple(fk["referred_columns"]),
                        )
                        for fk in fks.get(key, ())
                    ),
                    description=_text((comments.get(key) or {}).get("text")),
                )
            )
        return tables


class _DuckDBReader:
    """Reflection of a DuckDB file from its catalog functions, read once for every schema."""

    def __init__(self, conn: Connection) -> None:
        self._loaded: dict[str, list[_RawTable]] | None = None

    def schemas(self, conn: Connection) -> list[str]:
        result = conn.exec_driver_sql(
            "SELECT schema_name FROM duckdb_schemas() WHERE database_name = current_database()"
        )
        return [str(r[0]) for r in result]

    def tables(self, conn: Connection, schema: str) -> list[_RawTable]:
        if self._loaded is None:
            self._loaded = self._load(conn)
        return self._loaded.get(schema, [])

    @staticmethod
    def _load(conn: Connection) -> dict[str, list[_RawTable]]:
        here = "database_name = current_database()"
        comments = {
            (r[0], r[1]): _text(r[2])
            for r in conn.exec_driver_sql(
                "SELECT schema_name, table_name, comment FROM duckdb_tables() "
                f"WHERE {here} AND NOT temporary"
            )
        }
        columns: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
        for s, t, name, type_, comment in conn.exec_driver_sql(
            "SELECT schema_name, table_name, column_name, data_type, comment FROM duckdb_columns() "
            f"WHERE {here} ORDER BY schema_name, table_name, column_index"
        ):
            if (s, t) in comments:  # not a view's
                columns.setdefault((s, t), []).append((name, type_ or "", _text(comment)))
        primary: dict[tuple[str, str], set[str]] = {}
        keys: dict[tuple[str, str], list[_Key]] = {}
        for s, t, kind, cols, ref_table, ref_cols in conn.exec_driver_sql(
            "SELECT schema_name, table_name, constraint_type, constraint_column_names, "
            "referenced_table, referenced_column_names FROM duckdb_constraints() "
            f"WHERE {here} AND constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY') "
            "ORDER BY schema_name, table_name, constraint_index"
        ):
            if kind == "PRIMARY KEY":
                primary.setdefault((s, t), set()).update(cols)
            else:
                key = _Key(tuple(cols), None, ref_table, tuple(ref_cols))
                keys.setdefault((s, t), []).append(key)
        loaded: dict[str, list[_RawTable]] = {}
        for (s, t), cols in columns.items():
            pk = primary.get((s, t), set())
            loaded.setdefault(s, []).append(
                _RawTable(
                    name=t,
                    columns=tuple(Column(n, ty, n in pk, c) for n, ty, c in cols),
                    keys=tuple(keys.get((s, t), ())),
                    description=comments[(s, t)],
                )
            )
        return loaded


def sqlglot_dialect(backend: str) -> str:
    """The sqlglot dialect of a SQLAlchemy backend (`postgresql` is `postgres`); the backend's
    own name when sqlglot has no other, "" when sqlglot does not know it."""
    name = SQLGLOT_DIALECTS.get(backend, backend)
    return name if known_dialect(name) else ""


def _type_text(type_: Any, dialect: Any) -> str:
    """The dialect's rendering of a reflected type; "" for a type SQLAlchemy does not know."""
    from sqlalchemy.types import NullType

    if isinstance(type_, NullType):
        return ""
    try:
        return str(type_.compile(dialect=dialect))
    except Exception:  # a type the dialect cannot render back
        return str(type_)


def _text(value: object) -> str:
    return " ".join(str(value).split()) if value else ""
