"""`check_sql`: SQL verified against the catalog without running it.

    result = check_sql(db, "SELECT h.page.pagePath FROM `p.ds.ga_sessions_*`, UNNEST(hits) AS h")
    result.ok, result.problems  # each problem names the wrong name and the nearest real ones

The SQL is parsed in the database's dialect (`schemagraph.dialects.dialect_of`) and must pass
the guard that `run_sql` uses (`schemagraph.sql.guard`: one read-only query). A BigQuery script
whose leading statements are `DECLARE`s is read as its last statement, the declared names being
variables. Nothing runs: a schema-only catalog is enough.

Every table is resolved against the database's tables: qualified as the engine names it
(`Table.engine_name`: `` `project.dataset.table` ``, `DB.SCHEMA.TABLE`, matched
case-insensitively), by any trailing part of that name, by the whole name with another first
part (public BigQuery datasets are read as `bigquery-public-data.dataset.table` while an export
names its own project; an export may rename a Snowflake database), unqualified by its id, or as a
BigQuery wildcard family (`ga_sessions_2017*`: every table whose name starts so, with the
pseudo-column `_TABLE_SUFFIX`). With a `catalog`, a fully qualified table of another database
of the same engine resolves too. The engine's own `INFORMATION_SCHEMA` views are accepted.

Every column is resolved through its scope (sqlglot's `optimizer.scope`): tables and their
aliases, CTEs and subqueries (their output names, `SELECT *` expanded, struct paths followed to
the column they select), BigQuery `UNNEST(...) AS x` of a repeated column (the alias reads the
fields below it: `UNNEST(h.product) AS p` then `p.productRevenue`), Snowflake `FLATTEN`
(`value`, `key`, `index`, `this`, `path`, `seq`; `:` paths into VARIANT are not checked),
nested RECORD fields by their path (`totals.pageviews`). A path into a repeated column read
without `UNNEST` is a problem of its own. In Snowflake a column of the catalog is matched as the
engine matches it: an unquoted name is read in upper case, a quoted one as written.

What the checker cannot attribute with certainty is accepted, never rejected: a name that one
of the scope's sources cannot enumerate could hold (an `UNNEST` of an expression, a table
function, a struct whose fields the catalog does not list, a column of a source that did not
resolve), aliases of the SELECT list wherever they are referenced, correlated names, BigQuery
script variables and engine pseudo-columns.

The catalog side (tables by engine name) is `schemagraph.sql.table_match`; each table of the
query resolved against it, `schemagraph.sql.check_tables`; what each name of a FROM clause stands
for, `schemagraph.sql.from_sources`, and each scope's names, `schemagraph.sql.check_scopes`; the
problems and their nearest names, `schemagraph.sql.problems` and (for columns)
`schemagraph.sql.check_columns`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, ScopeType, traverse_scope

from schemagraph.dialects import dialect_of
from schemagraph.model import Catalog, Database, fold
from schemagraph.sql._parse import parse_tokens, split_statements, tokenize
from schemagraph.sql.check_columns import ColumnReporter
from schemagraph.sql.check_scopes import ScopeSources, column_path, selected
from schemagraph.sql.check_tables import TableResolver
from schemagraph.sql.from_sources import (
    Source,
    State,
    Tables,
)
from schemagraph.sql.guard import Refusal
from schemagraph.sql.guard import check_sql as guard_sql
from schemagraph.sql.problems import Problem, ProblemKind, Problems
from schemagraph.sql.table_match import TableIndex, table_index

log = logging.getLogger(__name__)

__all__ = ["CheckResult", "Problem", "ProblemKind", "check_sql"]


@dataclass(frozen=True)
class CheckResult:
    """`ok`: no problem found; `tables`: the ids of the catalog tables the query reads, those
    that resolved (a wildcard family as its members' ids are written, `web__ga_sessions_2017*`;
    a table of another database as `db.table`)."""

    ok: bool
    database: str
    dialect: str
    problems: tuple[Problem, ...] = ()
    tables: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "database": self.database,
            "dialect": self.dialect,
            "problems": [p.as_dict() for p in self.problems],
            "tables": list(self.tables),
        }

    def lines(self) -> list[str]:
        """One line per problem (`kind: message`), or one line saying the query is accepted."""
        if self.ok:
            return [f"ok: the query reads {_count(len(self.tables), 'table')} of {self.database}"]
        return [f"{p.kind.value}: {p.message}" for p in self.problems]


def check_sql(db: Database, sql: str, catalog: Catalog | None = None) -> CheckResult:
    """Check `sql` against `db`'s tables and columns without running it; never raises for the
    SQL's sake. `catalog`: where fully qualified tables of other databases are looked up."""
    dialect = dialect_of(db)
    try:
        return _check(db, sql, dialect, catalog)
    except RecursionError:
        return _refused(db, dialect, "parse_error", "the SQL is nested too deeply to check")


def _check(db: Database, sql: str, dialect: str, catalog: Catalog | None) -> CheckResult:
    text, variables = _script_query(sql, dialect)
    verdict = guard_sql(text, dialect=dialect)
    if isinstance(verdict, Refusal):
        return _refused(db, dialect, verdict.rule.value, verdict.message)
    resolver = _Resolver(db, dialect, table_index(db), catalog, variables)
    try:
        resolver.run(verdict.tree)
    except (SqlglotError, KeyError, ValueError, TypeError, AttributeError) as exc:
        # a query shape sqlglot's scope cannot follow: its tables are checked, its columns not
        log.warning("check: cannot follow the scopes of a query on %s: %r", db.id, exc)
        resolver.tables_only(verdict.tree)
    problems = resolver.problems.all()
    return CheckResult(not problems, db.id, dialect, problems, resolver.tables.table_ids())


def _refused(db: Database, dialect: str, rule: str, message: str) -> CheckResult:
    problem = Problem(ProblemKind.REFUSED, f"{message} ({rule})", rule)
    return CheckResult(False, db.id, dialect, (problem,))


def _script_query(sql: str, dialect: str) -> tuple[str, frozenset[str]]:
    """A BigQuery script of `DECLARE`s then one query: the query and the declared (folded)
    names. Anything else comes back as it is, for the guard to judge."""
    if dialect != "bigquery" or "declare" not in sql.lower():
        return sql, frozenset()
    try:
        tokens = tokenize(sql, dialect)
    except (SqlglotError, RecursionError):
        return sql, frozenset()
    statements = split_statements(tokens)
    if len(statements) < 2 or any(s[0].text.upper() != "DECLARE" for s in statements[:-1]):
        return sql, frozenset()
    names: set[str] = set()
    for statement in statements[:-1]:
        try:
            trees = parse_tokens(statement, sql, dialect)
        except SqlglotError:
            return sql, frozenset()
        for tree in trees:
            for item in tree.find_all(exp.DeclareItem):
                targets = item.this if isinstance(item.this, list) else [item.this]
                names.update(fold(t.name) for t in targets if isinstance(t, exp.Expr))
    return sql[statements[-1][0].start :], frozenset(names)


# --- the resolver ---------------------------------------------------------------------------


class _Resolver:
    #: what each scope of the query reads (set by `run`)
    sources: ScopeSources

    def __init__(
        self,
        db: Database,
        dialect: str,
        index: TableIndex,
        catalog: Catalog | None,
        variables: frozenset[str],
    ) -> None:
        self.dialect = dialect
        self.variables = variables
        self.problems = Problems()
        self.tables = TableResolver(db, dialect, index, catalog, self.problems)
        self.columns = ColumnReporter(dialect, self.problems)

    # -- entry points

    def run(self, tree: exp.Expr) -> None:
        scopes = traverse_scope(tree)
        self.sources = sources = ScopeSources(scopes, self.dialect, self.tables, self._check_column)
        for scope in scopes:
            if scope.scope_type is not ScopeType.UDTF:
                sources.of(scope)
        for scope in scopes:
            if scope.scope_type is ScopeType.UDTF:
                continue
            for column in scope.columns:
                if id(column) not in sources.seen:
                    sources.seen.add(id(column))
                    self._check_column(scope, column, sources.of(scope))
        self.tables_only(tree)  # tables no scope reached (DML-free shapes sqlglot skips)

    def tables_only(self, tree: exp.Expr) -> None:
        ctes = {fold(c.alias) for c in tree.find_all(exp.CTE)}
        for node in tree.find_all(exp.Table):
            if self.tables.resolved(node) or not TableResolver.is_catalog_table(node, ctes):
                continue
            self.tables.table(node)

    def _check_column(self, scope: Scope, column: exp.Column, sources: dict[str, Source]) -> None:
        if column.is_star or _lambda_variable(column):
            return
        path = column_path(column)
        if not path or not all(path):
            return
        written = ".".join(path)
        unsure = False
        level: Scope | None = scope
        current: dict[str, Source] | None = sources
        tried: list[Source] = []
        while level is not None and current is not None:
            if len(path) > 1 and fold(path[0]) in current:
                source = current[fold(path[0])]
                hit = source.find(path[1:])
                if hit.state is State.MISSING:
                    others = [s for s in selected(current) if s is not source]
                    self.columns.missing(written, path[1:], [source], path[0], others)
                else:
                    self.columns.report(hit, column, written, source)
                return
            hits = [(s, s.find_bare(path)) for s in selected(current)]
            tried.extend(selected(current))
            found = next(((s, h) for s, h in hits if h.state is State.FOUND), None)
            if found is not None:
                self.columns.report(found[1], column, written, found[0])
                return
            wrong = next(((s, h) for s, h in hits if h.state is State.NOT_UNNESTED), None)
            if wrong is not None:
                self.columns.report(wrong[1], column, written, wrong[0])
                return
            unsure = unsure or any(h.state is State.UNSURE for _, h in hits)
            if len(path) == 1 and (
                fold(path[0]) in _select_aliases(level) or fold(path[0]) in current
            ):
                return
            if isinstance(level.expression, exp.SetOperation):  # ORDER BY of a UNION
                outputs = self.sources.outputs(level)
                if outputs is None or fold(path[0]) in outputs:
                    return
            if len(path) > 2 and self._qualified_by_table(current, path, column, written):
                return
            level, current = self.sources.outer(level)
        if unsure or fold(path[0]) in self.variables or _unattributable(column):
            return
        self.columns.missing(written, path, tried, "", [])

    def _qualified_by_table(
        self, sources: dict[str, Source], path: tuple[str, ...], column: exp.Column, written: str
    ) -> bool:
        """`dataset.table.column` or `SCHEMA.TABLE.COLUMN`: a column named with its table."""
        for cut in range(len(path) - 1, 0, -1):
            source = sources.get(fold(path[cut - 1]))
            if isinstance(source, Tables):
                hit = source.find(path[cut:])
                if hit.state is State.MISSING:
                    self.columns.missing(written, path[cut:], [source], path[cut - 1], [])
                else:
                    self.columns.report(hit, column, written, source)
                return True
        return False


def _select_aliases(scope: Scope) -> set[str]:
    expression = scope.expression
    selects = [expression]
    if isinstance(expression, exp.SetOperation):
        selects = list(expression.find_all(exp.Select))
    return {
        fold(p.alias)
        for select in selects
        if isinstance(select, exp.Select)
        for p in select.expressions
        if isinstance(p, exp.Alias) and p.alias
    }


def _lambda_variable(column: exp.Column) -> bool:
    node = column.parent
    while node is not None:
        if isinstance(node, exp.Lambda):
            names = {fold(e.name) for e in node.expressions}
            if fold(column.parts[0].name) in names:
                return True
        node = node.parent
    return False


def _unattributable(column: exp.Column) -> bool:
    """A name sqlglot reads as a column that is none: a PIVOT's, a named window's."""
    node = column.parent
    while node is not None:
        if isinstance(node, exp.Pivot):
            return True
        if isinstance(node, exp.Query):
            return bool(node.args.get("pivots")) or any(
                bool(t.args.get("pivots")) for t in node.find_all(exp.Table)
            )
        node = node.parent
    return False


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
