"""What each scope of a query reads, for `check` (`schemagraph.sql.check`): its tables, CTEs,
derived tables, UNNEST and FLATTEN sources by alias, and what a derived table or CTE outputs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, ScopeType

from schemagraph.model import fold
from schemagraph.sql.check_tables import TableResolver
from schemagraph.sql.from_sources import (
    Derived,
    Flatten,
    Opaque,
    Origin,
    Source,
    State,
    WithNames,
)

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


class ScopeSources:
    """The sources of each scope of one query, found once (`of`). `check_column` checks the
    columns an UNNEST or FLATTEN reads, as its source is made; `seen`: the columns checked."""

    def __init__(
        self,
        scopes: Sequence[Scope],
        dialect: str,
        tables: TableResolver,
        check_column: Callable[[Scope, exp.Column, dict[str, Source]], None],
    ) -> None:
        self.dialect = dialect
        self.tables = tables
        self._check_column = check_column
        self.seen: set[int] = set()
        self._sources: dict[int, dict[str, Source]] = {}  # id(scope) -> alias -> source
        self._derived: dict[int, Derived] = {}  # id(scope) -> its output
        self._busy: set[int] = set()
        self._scope_of: dict[int, Scope] = {}  # id(scope.expression) -> scope
        self._ctes: dict[str, Scope] = {}
        for scope in scopes:
            self._scope_of[id(scope.expression)] = scope
            if scope.scope_type is ScopeType.CTE and isinstance(scope.expression.parent, exp.CTE):
                self._ctes[fold(scope.expression.parent.alias)] = scope

    def of(self, scope: Scope) -> dict[str, Source]:
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
        origin = self._origin(scope, sources, column_path(column))
        if origin is None:
            return None
        source, path = origin
        return source.element(path)

    def _udtf_columns(self, scope: Scope, sources: dict[str, Source], node: exp.Expr) -> None:
        """Check the columns an UNNEST or FLATTEN reads, against the sources before it."""
        for column in node.find_all(exp.Column):
            if id(column) in self.seen or _in_subquery(column, node):
                continue
            self.seen.add(id(column))
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
            columns = self.outputs(scope)
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

    def outputs(self, scope: Scope) -> dict[str, tuple[str, Origin | None]] | None:
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
        sources = self.of(scope)
        columns: dict[str, tuple[str, Origin | None]] = {}
        for projection in expression.expressions:
            if isinstance(projection, exp.Star):
                for source in selected(sources):
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
                self._origin(scope, sources, column_path(inner))
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
            holders = [s for s in selected(current) if s.find_bare(path).state is State.FOUND]
            if len(holders) == 1:
                return holders[0], path
            if holders:
                return None
            level, current = self.outer(level)
        return None

    def outer(self, scope: Scope) -> tuple[Scope | None, dict[str, Source] | None]:
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
        return parent, self.of(parent)


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


def column_path(column: exp.Column) -> tuple[str, ...]:
    return tuple(p.name for p in column.parts)


def selected(sources: Mapping[str, Source]) -> list[Source]:
    return list(sources.values())


def _in_subquery(column: exp.Column, root: exp.Expr) -> bool:
    node = column.parent
    while node is not None and node is not root:
        if isinstance(node, exp.Query):
            return True
        node = node.parent
    return False
