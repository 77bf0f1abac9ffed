"""Validation of synthesized SQL before it enters the knowledge base.

A pair is kept only when its SQL parses as one read-only query, references only tables and columns
of its database, and, when the database has data, runs without error through the SQL toolkit's
safe executor (on a live server, through its live engine: one engine, and a few kept connections,
per database). The record's tables are the tables the SQL uses, named as the catalog writes them.

A database of another engine known from its schema alone (a BigQuery or Snowflake export: no
SQLite file, no server URL) is checked in its own dialect by `schemagraph.sql.check.check_sql`
(tables as the engine names them, wildcard families, `UNNEST` aliases, nested fields), and
nothing runs.

Column references are checked by sqlglot's `qualify` against the catalog, except in a query that
runs on an SQLite file and quotes no name: there SQLite's own prepare step rejects every unknown
column, and `qualify` (with the copy of the tree it changes) was a fifth of an offline build's
synthesis. SQLite reads a double-quoted name that is no column as a string, so a query that
quotes a name is always qualified.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from schemagraph import Database
from schemagraph.dialects import dialect_of
from schemagraph.model import fold
from schemagraph.sql.check import check_sql as check_in_catalog
from schemagraph.sql.execute import Limits, run_unguarded
from schemagraph.sql.guard import Refusal, check_sql
from schemagraph.sql.live_engine import run_on_server, runs_queries

DIALECT = "sqlite"


@dataclass(frozen=True)
class Validation:
    """`tree`: the SQL's syntax tree when it parsed as one read-only query (to read, not to
    change), so a caller scoring the same SQL need not parse it again."""

    ok: bool
    reason: str = ""
    tables: tuple[str, ...] = ()
    tree: exp.Query | None = field(default=None, compare=False, repr=False)


@lru_cache(maxsize=4096)
def _schema(db: Database) -> MappingSchema:
    return MappingSchema(
        {t.name: {c.name: "TEXT" for c in t.columns} for t in db.tables if t.columns},
        dialect=DIALECT,
    )


def validate_sql(
    db: Database, sql: str, *, execute_sql: bool = True, timeout_s: float = 2.0
) -> Validation:
    """Check `sql` against `db`; `execute_sql=False` skips running it."""
    if dialect_of(db) != DIALECT and db.path is None and db.url is None:
        return _checked_in_dialect(db, sql)
    verdict = check_sql(sql, dialect=DIALECT)
    if isinstance(verdict, Refusal):
        return Validation(False, f"refused: {verdict.message}")
    tree = verdict.tree
    ctes = {fold(c.alias) for c in tree.find_all(exp.CTE)}
    used: dict[str, str] = {}
    for table in tree.find_all(exp.Table):
        if fold(table.name) in ctes:
            continue
        if not db.has_table(table.name):
            return Validation(False, f"unknown table {table.name!r}", tree=tree)
        name = db.table(table.name).name
        used.setdefault(fold(name), name)
    if not used:
        return Validation(False, "uses no table of the database", tree=tree)
    on_file = execute_sql and db.path is not None
    if not on_file or any(i.quoted for i in tree.find_all(exp.Identifier)):
        try:
            qualify(tree.copy(), schema=_schema(db), dialect=DIALECT, validate_qualify_columns=True)
        except SqlglotError as exc:
            reason = f"bad column reference: {str(exc).splitlines()[0]}"
            return Validation(False, reason, tree=tree)
    live = db.url is not None and runs_queries(db.url)  # other servers: not run, as DDL
    if on_file or (execute_sql and live):
        limits = Limits(timeout_s=timeout_s, max_rows=1)
        if db.path is not None:
            # The guard already passed above; the engine still enforces read-only, the
            # authorizer and the limits, so parsing the SQL a second time would add nothing.
            outcome = run_unguarded(db.path, sql, limits)
        else:  # a live server: translated to its SQL, guarded in its dialect, read-only
            outcome = run_on_server(db, sql, limits)
        if not outcome.ok:
            message = getattr(outcome, "message", "")
            kind = "bad column reference" if "no such column" in message else "fails to run"
            return Validation(False, f"{kind}: {message}", tree=tree)
    order = [t.name for t in db.tables if fold(t.name) in used]
    return Validation(True, tables=tuple(order), tree=tree)


def _checked_in_dialect(db: Database, sql: str) -> Validation:
    """A schema-only warehouse's SQL, parsed and guarded in its dialect and checked against the
    catalog by `schemagraph.sql.check` (tables as the engine names them, columns through their
    scopes, UNNEST aliases, nested paths); the tables it reads are those of `db` its names
    resolve to (a wildcard family: the tables it names)."""
    verdict = check_sql(sql, dialect=dialect_of(db))
    if isinstance(verdict, Refusal):
        return Validation(False, f"refused: {verdict.message}")
    tree = verdict.tree
    result = check_in_catalog(db, sql)
    if not result.ok:
        problem = result.problems[0]
        kind = problem.kind.value.replace("_", " ")
        if kind == "unknown column":
            kind = "bad column reference"
        return Validation(False, f"{kind}: {problem.message}", tree=tree)
    ctes = {fold(c.alias) for c in tree.find_all(exp.CTE)}
    read: set[str] = set()
    for node in tree.find_all(exp.Table):
        if not node.name or (fold(node.name) in ctes and not node.args.get("db")):
            continue
        found = _engine_tables(db, node.name)
        if not found:
            return Validation(False, f"unknown table {node.name!r}", tree=tree)
        read.update(found)
    order = [t.name for t in db.tables if fold(t.name) in read]
    if not order:
        return Validation(False, "uses no table of the database", tree=tree)
    return Validation(True, tables=tuple(order), tree=tree)


def _engine_tables(db: Database, name: str) -> set[str]:
    key = fold(name)
    stem = key[:-1] if key.endswith("*") else None
    found = set()
    for table in db.tables:
        last = fold(table.engine_name[-1]) if table.engine_name else fold(table.name)
        if key in (last, fold(table.name)) or (stem is not None and last.startswith(stem)):
            found.add(fold(table.name))
    return found
