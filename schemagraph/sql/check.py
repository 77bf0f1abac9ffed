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
for, `schemagraph.sql.from_sources`; the problems and their nearest names,
`schemagraph.sql.problems`.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, ScopeType, traverse_scope

from schemagraph.dialects import (
    dialect_of,
    quote_part,
    repeated_route,
)
from schemagraph.model import Catalog, Database, fold
from schemagraph.sql._parse import parse_tokens, split_statements, tokenize
from schemagraph.sql.check_tables import TableResolver
from schemagraph.sql.from_sources import (
    MISSING,
    Derived,
    Element,
    Flatten,
    Hit,
    Opaque,
    Origin,
    Source,
    State,
    Tables,
    WithNames,
)
from schemagraph.sql.guard import Refusal
from schemagraph.sql.guard import check_sql as guard_sql
from schemagraph.sql.problems import CUTOFF, SUGGESTIONS, Problem, ProblemKind, Problems, nearest
from schemagraph.sql.table_match import TableIndex, table_index

log = logging.getLogger(__name__)

__all__ = ["CheckResult", "Problem", "ProblemKind", "check_sql"]

#: BigQuery functions whose arrays hold scalars: their UNNEST alias is the only column
_SCALAR_ARRAYS: tuple[type[exp.Expr], ...] = (
    exp.GenerateDateArray,
    exp.GenerateSeries,
    exp.GenerateTimestampArray,
    exp.Split,
    exp.RegexpSplit,
    exp.RegexpExtractAll,
    exp.JSONExtractArray,
    exp.StringToArray,
)


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
        self._sources: dict[int, dict[str, Source]] = {}  # id(scope) -> alias -> source
        self._derived: dict[int, Derived] = {}  # id(scope) -> its output
        self._busy: set[int] = set()
        self._scope_of: dict[int, Scope] = {}  # id(scope.expression) -> scope
        self._ctes: dict[str, Scope] = {}
        self._seen: set[int] = set()

    # -- entry points

    def run(self, tree: exp.Expr) -> None:
        scopes = traverse_scope(tree)
        for scope in scopes:
            self._scope_of[id(scope.expression)] = scope
            if scope.scope_type is ScopeType.CTE and isinstance(scope.expression.parent, exp.CTE):
                self._ctes[fold(scope.expression.parent.alias)] = scope
        for scope in scopes:
            if scope.scope_type is not ScopeType.UDTF:
                self._sources_of(scope)
        for scope in scopes:
            if scope.scope_type is ScopeType.UDTF:
                continue
            for column in scope.columns:
                if id(column) not in self._seen:
                    self._seen.add(id(column))
                    self._check_column(scope, column, self._sources_of(scope))
        self.tables_only(tree)  # tables no scope reached (DML-free shapes sqlglot skips)

    def tables_only(self, tree: exp.Expr) -> None:
        ctes = {fold(c.alias) for c in tree.find_all(exp.CTE)}
        for node in tree.find_all(exp.Table):
            if self.tables.resolved(node) or not TableResolver.is_catalog_table(node, ctes):
                continue
            self.tables.table(node)

    # -- tables

    # -- sources of a scope

    def _sources_of(self, scope: Scope) -> dict[str, Source]:
        held = self._sources.get(id(scope))
        if held is not None:
            return held
        sources: dict[str, Source] = {}
        self._sources[id(scope)] = sources  # filled in place: later items see earlier ones
        expression = scope.expression
        if not isinstance(expression, exp.Select):
            return sources
        items: list[exp.Expr] = []
        from_ = expression.args.get("from_")
        if from_ is not None:
            items.append(from_.this)
        items.extend(join.this for join in expression.args.get("joins") or [])
        items.extend(expression.args.get("laterals") or [])
        for item in items:
            self._add_source(scope, sources, item)
        return sources

    def _add_source(self, scope: Scope, sources: dict[str, Source], item: exp.Expr) -> None:
        if isinstance(item, exp.Final):
            item = item.this
        if isinstance(item, exp.Table):
            self._add_table(sources, item)
            for join in item.args.get("joins") or []:  # (a JOIN b) parenthesized
                self._add_source(scope, sources, join.this)
            return
        alias = _alias_of(item)
        if isinstance(item, exp.Subquery | exp.Values) or (
            isinstance(item, exp.Lateral) and isinstance(item.this, exp.Subquery)
        ):
            inner = item.this.unnest() if isinstance(item, exp.Lateral) else item.unnest()
            child = self._scope_of.get(id(inner))
            derived = self._derived_of(child, alias) if child is not None else None
            names = _alias_columns(item)
            source: Source = (
                derived if derived is not None else Opaque(alias, names, closed=bool(names))
            )
            sources[fold(alias)] = source
            for join in item.args.get("joins") or []:
                self._add_source(scope, sources, join.this)
            return
        if isinstance(item, exp.Unnest):
            sources[fold(alias)] = self._unnest(scope, sources, item, alias)
            return
        if isinstance(item, exp.Lateral | exp.TableFromRows) and isinstance(item.this, exp.Explode):
            self._udtf_columns(scope, sources, item.this)
            sources[fold(alias)] = Flatten(alias)
            return
        self._udtf_columns(scope, sources, item)
        names = _alias_columns(item)
        sources[fold(alias)] = Opaque(alias, names, closed=bool(names))

    def _add_table(self, sources: dict[str, Source], node: exp.Table) -> None:
        alias = node.alias_or_name
        if not isinstance(node.this, exp.Identifier):  # a table function: TABLE(GENERATOR(...))
            names = _alias_columns(node)
            sources[fold(alias)] = Opaque(alias, names, closed=bool(names))
            return
        qualifier = node.args.get("db")
        if (
            self.dialect == "bigquery"
            and isinstance(qualifier, exp.Identifier)
            and not node.args.get("catalog")
            and fold(qualifier.name) in sources
        ):  # `FROM t, t.hits AS h`: BigQuery's implicit UNNEST of a column
            element = sources[fold(qualifier.name)].element((node.name,))
            if element is not None:
                element.alias = alias
            sources[fold(alias)] = element if element is not None else Opaque(alias, [alias])
            self.tables.stand_for(node, sources[fold(alias)])
            return
        cte = None if qualifier else self._ctes.get(fold(node.name))
        if cte is not None:
            derived = self._derived_of(cte, alias)
            sources[fold(alias)] = derived if derived is not None else Opaque(alias)
            return
        sources[fold(alias)] = self.tables.table(node)

    def _unnest(
        self, scope: Scope, sources: dict[str, Source], node: exp.Unnest, alias: str
    ) -> Source:
        self._udtf_columns(scope, sources, node)
        offset = node.args.get("offset")
        extra = [offset.name] if isinstance(offset, exp.Expr) and offset.name else []
        args = node.expressions
        if len(args) == 1 and isinstance(args[0], exp.Column) and not args[0].is_star:
            element = self._element(scope, sources, args[0])
            if element is not None:
                element.alias = alias
                if extra:
                    return WithNames(element, extra)
                return element
        if len(args) == 1 and (
            isinstance(args[0], _SCALAR_ARRAYS)
            or (
                isinstance(args[0], exp.Array)
                and all(isinstance(e, exp.Literal) for e in args[0].expressions)
            )
        ):
            return Opaque(alias, [alias, *extra], closed=True)
        return Opaque(alias, [alias, *extra])

    def _element(
        self, scope: Scope, sources: dict[str, Source], column: exp.Column
    ) -> Source | None:
        origin = self._origin(scope, sources, _path(column))
        if origin is None:
            return None
        source, path = origin
        return source.element(path)

    def _udtf_columns(self, scope: Scope, sources: dict[str, Source], node: exp.Expr) -> None:
        """Check the columns an UNNEST or FLATTEN reads, against the sources before it."""
        for column in node.find_all(exp.Column):
            if id(column) in self._seen or _in_subquery(column, node):
                continue
            self._seen.add(id(column))
            self._check_column(scope, column, sources)

    # -- derived tables and CTEs

    def _derived_of(self, scope: Scope, alias: str) -> Derived | None:
        key = id(scope)
        held = self._derived.get(key)
        if held is not None:
            return Derived(alias, held.columns)
        if key in self._busy:  # a recursive CTE reading itself
            return None
        self._busy.add(key)
        try:
            columns = self._outputs(scope)
        finally:
            self._busy.discard(key)
        names = _alias_columns(scope.expression.parent) if scope.expression.parent else []
        if names and columns is not None:
            values = list(columns.values())
            columns = {
                fold(n): (n, values[i][1] if i < len(values) else None) for i, n in enumerate(names)
            }
        elif names:
            columns = {fold(n): (n, None) for n in names}
        derived = Derived(alias, columns)
        self._derived[key] = derived
        return Derived(alias, columns)

    def _outputs(self, scope: Scope) -> dict[str, tuple[str, Origin | None]] | None:
        expression = scope.expression
        if isinstance(expression, exp.SetOperation):
            left = expression.left.unnest() if expression.left else None
            while isinstance(left, exp.SetOperation):
                left = left.left.unnest()
            child = self._scope_of.get(id(left)) if left is not None else None
            if child is None:
                return None
            derived = self._derived_of(child, "")
            return derived.columns if derived is not None else None
        if not isinstance(expression, exp.Select):
            return None
        if expression.args.get("kind"):  # SELECT AS STRUCT / AS VALUE
            return None
        sources = self._sources_of(scope)
        columns: dict[str, tuple[str, Origin | None]] = {}
        for projection in expression.expressions:
            if isinstance(projection, exp.Star):
                for source in _selected(sources):
                    expanded = source.star()
                    if expanded is None:
                        return None
                    columns.update(expanded)
                continue
            if isinstance(projection, exp.Column) and projection.is_star:
                named = sources.get(fold(projection.table))
                expanded = named.star() if named is not None else None
                if expanded is None:
                    return None
                columns.update(expanded)
                continue
            name = projection.alias_or_name
            if not name:
                continue
            inner = projection.this if isinstance(projection, exp.Alias) else projection
            origin = (
                self._origin(scope, sources, _path(inner))
                if isinstance(inner, exp.Column)
                else None
            )
            columns[fold(name)] = (name, origin)
        return columns

    # -- columns

    def _origin(
        self, scope: Scope, sources: dict[str, Source], path: tuple[str, ...]
    ) -> Origin | None:
        """The source and path a column reads, when one source certainly holds it."""
        level: Scope | None = scope
        current: dict[str, Source] | None = sources
        while level is not None and current is not None:
            if len(path) > 1 and fold(path[0]) in current:
                return current[fold(path[0])], path[1:]
            holders = [s for s in _selected(current) if s.find_bare(path).state is State.FOUND]
            if len(holders) == 1:
                return holders[0], path
            if holders:
                return None
            level, current = self._outer(level)
        return None

    def _outer(self, scope: Scope) -> tuple[Scope | None, dict[str, Source] | None]:
        """The scope a correlated name of `scope` is read from: a subquery's, an UNNEST's or
        a LATERAL derived table's enclosing one."""
        correlated = scope.scope_type in (ScopeType.SUBQUERY, ScopeType.UDTF) or (
            scope.scope_type is ScopeType.DERIVED_TABLE and scope.can_be_correlated
        )
        if not correlated or scope.parent is None:
            return None, None
        parent: Scope | None = scope.parent
        while parent is not None and parent.scope_type is ScopeType.UDTF:
            parent = parent.parent
        if parent is None:
            return None, None
        return parent, self._sources_of(parent)

    def _check_column(self, scope: Scope, column: exp.Column, sources: dict[str, Source]) -> None:
        if column.is_star or _lambda_variable(column):
            return
        path = _path(column)
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
                    others = [s for s in _selected(current) if s is not source]
                    self._missing(written, path[1:], [source], path[0], others)
                else:
                    self._report(hit, column, written, source)
                return
            hits = [(s, s.find_bare(path)) for s in _selected(current)]
            tried.extend(_selected(current))
            found = next(((s, h) for s, h in hits if h.state is State.FOUND), None)
            if found is not None:
                self._report(found[1], column, written, found[0])
                return
            wrong = next(((s, h) for s, h in hits if h.state is State.NOT_UNNESTED), None)
            if wrong is not None:
                self._report(wrong[1], column, written, wrong[0])
                return
            unsure = unsure or any(h.state is State.UNSURE for _, h in hits)
            if len(path) == 1 and (
                fold(path[0]) in _select_aliases(level) or fold(path[0]) in current
            ):
                return
            if isinstance(level.expression, exp.SetOperation):  # ORDER BY of a UNION
                outputs = self._outputs(level)
                if outputs is None or fold(path[0]) in outputs:
                    return
            if len(path) > 2 and self._qualified_by_table(current, path, column, written):
                return
            level, current = self._outer(level)
        if unsure or fold(path[0]) in self.variables or _unattributable(column):
            return
        self._missing(written, path, tried, "", [])

    def _qualified_by_table(
        self, sources: dict[str, Source], path: tuple[str, ...], column: exp.Column, written: str
    ) -> bool:
        """`dataset.table.column` or `SCHEMA.TABLE.COLUMN`: a column named with its table."""
        for cut in range(len(path) - 1, 0, -1):
            source = sources.get(fold(path[cut - 1]))
            if isinstance(source, Tables):
                hit = source.find(path[cut:])
                if hit.state is State.MISSING:
                    self._missing(written, path[cut:], [source], path[cut - 1], [])
                else:
                    self._report(hit, column, written, source)
                return True
        return False

    def _report(self, hit: Hit, column: exp.Column, written: str, source: Source) -> None:
        """A problem for a name that resolved badly: a path into a repeated column, or (in
        Snowflake) a column matched only when case is ignored."""
        if hit.state is State.NOT_UNNESTED and hit.column is not None and hit.table is not None:
            route = repeated_route(hit.table, hit.column.name)
            if isinstance(source, Element):
                route = tuple(r for r in route if len(r) > len(source.path))
            self.problems.add(
                ProblemKind.NOT_UNNESTED,
                written,
                f"`{written}` reads into the repeated (ARRAY) column `{hit.repeated}` of "
                f"{source.describe()}: reach it as {_routed_name(hit.column.name, route)}",
                (_routed_name(hit.column.name, route),),
            )
            return
        if hit.state is not State.FOUND or hit.column is None or self.dialect != "snowflake":
            return
        identifier = column.this
        if "." in hit.column.name or not isinstance(identifier, exp.Identifier):
            return
        read = identifier.name if identifier.quoted else identifier.name.upper()
        if read == hit.column.name:
            return
        quoted = '"' + hit.column.name.replace('"', '""') + '"'
        how = "as written, quoted" if identifier.quoted else "in upper case, unquoted"
        self.problems.add(
            ProblemKind.UNKNOWN_COLUMN,
            written,
            f"no column `{read}` in {source.describe()}: Snowflake reads `{identifier.name}` "
            f"{how}; the column is `{quoted}`",
            (f"`{quoted}`",),
        )

    def _missing(
        self,
        written: str,
        path: tuple[str, ...],
        sources: list[Source],
        qualifier: str,
        others: list[Source],
    ) -> None:
        """An unknown column: `path` read through `qualifier` (or unqualified) in `sources`;
        `others`: the scope's other sources, where it may be."""
        suggestions = self._near_columns(path, sources, qualifier, others)
        message = f"no column `{'.'.join(path)}` in {_where(sources)}"
        self.problems.add(
            ProblemKind.UNKNOWN_COLUMN, written, nearest(message, suggestions), tuple(suggestions)
        )

    def _near_columns(
        self,
        path: tuple[str, ...],
        sources: list[Source],
        qualifier: str,
        others: list[Source],
    ) -> list[str]:
        """The nearest real names, as the SQL would write them: the same name in another source
        of the scope, the same field at another path (with the UNNESTs it needs), names alike."""
        wanted = fold(".".join(path))
        last = fold(path[-1])
        prefix = f"{qualifier}." if qualifier else ""
        out: list[str] = []
        for other in others:
            hit = other.find(path) if other.alias else MISSING
            if hit.state is State.FOUND:
                name = ".".join(path) if hit.column is None else self._spelt(hit.column.name)
                out.append(f"`{other.alias}.{name}`")
        for source in sources:
            names = source.names()
            for name in names:
                if fold(name) != wanted and fold(name.rsplit(".", 1)[-1]) == last:
                    out.append(_routed(source, name, prefix, self._spelt))
            folded = {fold(n): n for n in names}
            for near in difflib.get_close_matches(wanted, list(folded), SUGGESTIONS, CUTOFF):
                out.append(_routed(source, folded[near], prefix, self._spelt))
        return list(dict.fromkeys(out))[:SUGGESTIONS]

    def _spelt(self, name: str) -> str:
        """A column name as the SQL must write it: quoted in Snowflake unless upper case."""
        if self.dialect != "snowflake" or "." in name:
            return name
        return quote_part(name, self.dialect)


def _routed(source: Source, name: str, prefix: str, spelt: Callable[[str], str]) -> str:
    """`name` of `source` as a suggestion: with the UNNESTs a nested field needs."""
    route: tuple[str, ...] = ()
    if isinstance(source, Tables) and "." in name:
        route = repeated_route(source.tables[0], name)
    elif isinstance(source, Element):
        full = f"{source.path}.{name}"
        route = tuple(
            r for r in repeated_route(source.base.tables[0], full) if len(r) > len(source.path)
        )
        if route:
            name = full
    if route:
        return _routed_name(name, route)
    return f"`{prefix}{spelt(name) if isinstance(source, Tables) else name}`"


def _routed_name(name: str, route: tuple[str, ...]) -> str:
    if not route:
        return f"`{name}`"
    return f"`{name}` through " + " then ".join(f"`UNNEST({r})`" for r in route)


def _alias_of(node: exp.Expr) -> str:
    alias = node.args.get("alias")
    if isinstance(alias, exp.TableAlias):
        if alias.name:
            return alias.name
        columns = alias.columns
        if isinstance(node, exp.Unnest) and columns:
            return columns[0].name  # BigQuery: UNNEST(x) AS y
    return node.alias_or_name if hasattr(node, "alias_or_name") else ""


def _alias_columns(node: exp.Expr | None) -> list[str]:
    """The column names an alias lists (`AS t(a, b)`); none for BigQuery's `UNNEST ... AS y`."""
    if node is None or isinstance(node, exp.Unnest):
        return []
    alias = node.args.get("alias")
    if isinstance(alias, exp.TableAlias) and not (
        isinstance(node, exp.Lateral) and isinstance(node.this, exp.Explode)
    ):
        return [c.name for c in alias.columns if c.name]
    return []


def _path(column: exp.Column) -> tuple[str, ...]:
    return tuple(p.name for p in column.parts)


def _selected(sources: Mapping[str, Source]) -> list[Source]:
    return list(sources.values())


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


def _in_subquery(column: exp.Column, root: exp.Expr) -> bool:
    node = column.parent
    while node is not None and node is not root:
        if isinstance(node, exp.Query):
            return True
        node = node.parent
    return False


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


def _where(sources: list[Source]) -> str:
    labels = list(dict.fromkeys(s.describe() for s in sources if s.alias))
    if not labels:
        return "the query's tables"
    if len(labels) == 1:
        return labels[0]
    return "any of " + ", ".join(labels)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
