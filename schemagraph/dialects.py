"""The engine a database lives in, and its tables and nested fields as that engine names them.

A database's `dialect` is a sqlglot dialect name (`bigquery`, `snowflake`, `databricks`,
`postgres`, `duckdb`, `sqlite`...); "" means the source did not say, which is read as SQLite,
the engine of Spider-style files. Table ids such as `dataset__table` stay inside schemarag:
`table_sql` is the name a person, a prompt or an agent reads and writes (`` `project.dataset.
table` `` in BigQuery, `DB.SCHEMA.TABLE` in Snowflake).

Nested fields are columns named by their path (`hits.product.productRevenue`) right after their
RECORD column. A field is reached through every repeated (`ARRAY`) column on its path:
`repeated_route` lists them, outermost first (`hits`, `hits.product`), which BigQuery SQL
unnests (`UNNEST(hits) AS hits, UNNEST(hits.product) AS product`).
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from schemagraph.model import Column, Database, Table, fold

SQLITE = "sqlite"

#: how each dialect is named to a person
ENGINE_NAMES = {
    "bigquery": "BigQuery",
    "snowflake": "Snowflake",
    "databricks": "Databricks",
    "postgres": "PostgreSQL",
    "duckdb": "DuckDB",
    "sqlite": "SQLite",
    "mysql": "MySQL",
    "trino": "Trino",
    "redshift": "Redshift",
    "tsql": "SQL Server",
    "oracle": "Oracle",
}

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")
_UPPER_PLAIN = re.compile(r"^[A-Z_][A-Z0-9_$]*$")


def dialect_of(db: Database) -> str:
    """The sqlglot dialect of `db`'s SQL (SQLite when the source did not say)."""
    return db.dialect or SQLITE


def sql_dialect(db: Database) -> str:
    """The dialect SQL for `db` is written in: its engine's for a schema-only database (an
    export, DDL), which nothing here runs; SQLite's for a database schemarag runs queries on (a
    SQLite file, or a live server, where SQLite's SQL is translated to the server's as it
    runs: `schemagraph.sql.live_engine`)."""
    return SQLITE if runnable(db) else dialect_of(db)


def runnable(db: Database) -> bool:
    """Whether queries can run on `db` here: it has a SQLite file or a server URL."""
    return db.path is not None or db.url is not None


def engine_label(dialect: str) -> str:
    """`BigQuery` for `bigquery`; an unknown dialect as written."""
    return ENGINE_NAMES.get(dialect or SQLITE, dialect)


def known_dialect(name: str) -> bool:
    try:
        sqlglot.Dialect.get_or_raise(name)
    except ValueError:
        return False
    return True


def name_parts(table: Table) -> tuple[str, ...]:
    """The parts of `table`'s name as its engine qualifies it."""
    return table.engine_name or (table.name,)


def quote_part(part: str, dialect: str) -> str:
    """One identifier as `dialect` writes it, quoted only when it must be (Snowflake folds
    unquoted names to upper case, so a name with lower-case letters is quoted there)."""
    if dialect == "snowflake":
        return part if _UPPER_PLAIN.match(part) else '"' + part.replace('"', '""') + '"'
    if _PLAIN.match(part) and not _reserved(part, dialect):
        return part
    return exp.to_identifier(part, quoted=True).sql(dialect=dialect)


def table_sql(db: Database, table: Table | str) -> str:
    """The reference to `table` that `db`'s engine accepts in a FROM clause."""
    if isinstance(table, str):
        table = db.table(table)
    dialect = dialect_of(db)
    parts = name_parts(table)
    if dialect == "bigquery" and len(parts) > 1:
        return "`" + ".".join(parts) + "`"
    return ".".join(quote_part(p, dialect) for p in parts)


def family_sql(db: Database, table: Table, suffix: str) -> str:
    """The wildcard reference to the sharded family of `table` whose members differ by their
    `suffix` (`` `project.dataset.ga_sessions_*` `` for `ga_sessions_20170801` and `20170801`),
    in BigQuery; "" in engines without wildcard tables."""
    parts = name_parts(table)
    if dialect_of(db) != "bigquery" or not suffix or not parts[-1].endswith(suffix):
        return ""
    return "`" + ".".join((*parts[:-1], parts[-1][: -len(suffix)] + "*")) + "`"


def is_repeated(column: Column) -> bool:
    """Whether `column` holds an array (BigQuery `ARRAY<...>`, a REPEATED field)."""
    return column.type.upper().startswith("ARRAY")


def is_nested(column: Column) -> bool:
    """Whether `column` is a field inside a RECORD column (`totals.pageviews`)."""
    return "." in column.name


def parent_paths(name: str) -> list[str]:
    """`a`, `a.b` for `a.b.c`: the columns a nested field lies in, outermost first."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def repeated_route(table: Table, column: str) -> tuple[str, ...]:
    """The repeated columns on the path to `column` (its own path excluded), outermost first:
    what must be unnested to read it row by row."""
    route = []
    for path in parent_paths(column):
        if table.has_column(path) and is_repeated(table.column(path)):
            route.append(table.column(path).name)
    return tuple(route)


def unnest_clause(table: Table, column: str, alias_of_table: str = "") -> tuple[str, str]:
    """BigQuery's way to `column`: the `UNNEST(...) AS ...` joins to add after the table, and
    the expression that then reads the field (`product.productRevenue`). No joins for a field
    of non-repeated RECORDs (`totals.pageviews` is read as it is)."""
    route = repeated_route(table, column)
    joins: list[str] = []
    bound = ""  # the path the last alias stands for
    alias = ""
    for path in route:
        inner = path[len(bound) + 1 :] if bound else path
        source = (
            f"{alias}.{inner}"
            if alias
            else (f"{alias_of_table}.{path}" if alias_of_table else path)
        )
        alias = _alias(path, joins)
        joins.append(f"UNNEST({source}) AS {alias}")
        bound = path
    if not route:
        return "", (f"{alias_of_table}.{column}" if alias_of_table else column)
    return ", ".join(joins), f"{alias}.{column[len(bound) + 1 :]}"


def _alias(path: str, taken: list[str]) -> str:
    base = path.rsplit(".", 1)[-1]
    names = {j.rsplit(" AS ", 1)[-1] for j in taken}
    alias, n = base, 2
    while alias in names:
        alias, n = f"{base}{n}", n + 1
    return alias


def _reserved(name: str, dialect: str) -> bool:
    try:
        tokenizer = sqlglot.Dialect.get_or_raise(dialect).tokenizer_class
    except ValueError:
        return False
    return fold(name).upper() in tokenizer.KEYWORDS
