"""A small query plan the template synthesizer fills in, and its SQL built with sqlglot.

A `Plan` holds what a question asks for (an intent, the subject table, projected columns or
aggregates, conditions, grouping, ordering) in terms of profiled tables and columns, so that the
same value renders both the SQL (`plan_sql`, here, through sqlglot expressions) and the question
(`indexer.synthesis.phrasing`). Joins follow the traversal's foreign keys with aliases T1, T2, ...
(Spider style); single-table queries use bare column names. Identifiers are quoted only when they
must be (not plain, or an SQLite keyword such as `order` or `match`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlglot import exp
from sqlglot.dialects.sqlite import SQLite

from indexer.synthesis.profiles import ColumnInfo, Link, TableInfo, TraversalInfo
from schemagraph.model import fold

Intent = Literal["list", "count", "aggregate", "group", "superlative", "top"]
CompareOp = Literal["=", "!=", ">", "<", ">=", "<="]
AggFunc = Literal["COUNT", "AVG", "SUM", "MIN", "MAX"]
Connector = Literal["AND", "OR"]

# fmt: off
_SQLITE_KEYWORDS = frozenset({
    "ABORT", "ACTION", "ADD", "AFTER", "ALL", "ALTER", "ALWAYS", "ANALYZE", "AND", "AS", "ASC",
    "ATTACH", "AUTOINCREMENT", "BEFORE", "BEGIN", "BETWEEN", "BY", "CASCADE", "CASE", "CAST",
    "CHECK", "COLLATE", "COLUMN", "COMMIT", "CONFLICT", "CONSTRAINT", "CREATE", "CROSS", "CURRENT",
    "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "DATABASE", "DEFAULT", "DEFERRABLE",
    "DEFERRED", "DELETE", "DESC", "DETACH", "DISTINCT", "DO", "DROP", "EACH", "ELSE", "END",
    "ESCAPE", "EXCEPT", "EXCLUDE", "EXCLUSIVE", "EXISTS", "EXPLAIN", "FAIL", "FILTER", "FIRST",
    "FOLLOWING", "FOR", "FOREIGN", "FROM", "FULL", "GENERATED", "GLOB", "GROUP", "GROUPS",
    "HAVING", "IF", "IGNORE", "IMMEDIATE", "IN", "INDEX", "INDEXED", "INITIALLY", "INNER",
    "INSERT", "INSTEAD", "INTERSECT", "INTO", "IS", "ISNULL", "JOIN", "KEY", "LAST", "LEFT",
    "LIKE", "LIMIT", "MATCH", "MATERIALIZED", "NATURAL", "NO", "NOT", "NOTHING", "NOTNULL", "NULL",
    "NULLS", "OF", "OFFSET", "ON", "OR", "ORDER", "OTHERS", "OUTER", "OVER", "PARTITION", "PLAN",
    "PRAGMA", "PRECEDING", "PRIMARY", "QUERY", "RAISE", "RANGE", "RECURSIVE", "REFERENCES",
    "REGEXP", "REINDEX", "RELEASE", "RENAME", "REPLACE", "RESTRICT", "RETURNING", "RIGHT",
    "ROLLBACK", "ROW", "ROWS", "SAVEPOINT", "SELECT", "SET", "TABLE", "TEMP", "TEMPORARY", "THEN",
    "TIES", "TO", "TRANSACTION", "TRIGGER", "UNBOUNDED", "UNION", "UNIQUE", "UPDATE", "USING",
    "VACUUM", "VALUES", "VIEW", "VIRTUAL", "WHEN", "WHERE", "WINDOW", "WITH", "WITHOUT",
})
# fmt: on
"""SQLite's keywords: identifiers spelled like one are quoted."""


@dataclass(frozen=True)
class Ref:
    """A column of a table of the traversal."""

    table: TableInfo
    column: ColumnInfo


@dataclass(frozen=True)
class Lit:
    """A literal: a sampled value, or a `placeholder` ('a given name') when there is no data."""

    value: str | float
    placeholder: bool = False


@dataclass(frozen=True)
class Agg:
    """A select item: a plain column (`func` None), or an aggregate of a column; COUNT without
    a column is COUNT(*)."""

    func: AggFunc | None
    ref: Ref | None = None
    distinct: bool = False


@dataclass(frozen=True)
class Compare:
    ref: Ref
    op: CompareOp
    value: Lit


@dataclass(frozen=True)
class Between:
    ref: Ref
    low: Lit
    high: Lit
    negated: bool = False


@dataclass(frozen=True)
class Like:
    """`ref LIKE '%text%'` (or 'text%' when `prefix`)."""

    ref: Ref
    text: str
    prefix: bool = False
    negated: bool = False


@dataclass(frozen=True)
class InList:
    ref: Ref
    values: tuple[Lit, ...]
    negated: bool = False


@dataclass(frozen=True)
class VsAggregate:
    """`ref op (SELECT func(ref) FROM its table)`: above the average, equal to the maximum."""

    ref: Ref
    op: CompareOp
    func: AggFunc


@dataclass(frozen=True)
class Membership:
    """`outer [NOT] IN (SELECT inner FROM tables... WHERE conditions)`: rows of the subject that
    have (or have no) related rows in `tables`, optionally only related rows meeting
    `conditions`. `entity` is the table the question names ("students that have a pet")."""

    outer: Ref
    inner: Ref
    tables: tuple[TableInfo, ...]
    links: tuple[Link, ...]
    entity: TableInfo
    conditions: tuple[Condition, ...] = ()
    negated: bool = False


@dataclass(frozen=True)
class Period:
    """Rows of a time span: `ref`'s date from `start` to `end` ('YYYY-MM-DD', both inclusive),
    or, `ref` None, the shards of a BigQuery table family from `start` to `end` (`_TABLE_SUFFIX`,
    'YYYYMMDD'). `label` is how a question says the span ("2017", "August 2017")."""

    ref: Ref | None
    start: str
    end: str
    label: str


@dataclass(frozen=True)
class Either:
    """`(first OR second)`: rows meeting either of two simple conditions."""

    first: Compare
    second: Compare


Condition = Compare | Between | Like | InList | VsAggregate | Membership | Either | Period


@dataclass(frozen=True)
class Having:
    agg: Agg
    op: CompareOp
    value: float


@dataclass(frozen=True)
class Order:
    """Sort key; `desc` True for DESC, False for an explicit ASC, None for the default."""

    agg: Agg
    desc: bool | None


@dataclass(frozen=True)
class Plan:
    """One query. `tables[0]` is in FROM, each later table joined by the link at the same index
    in `links` (so `len(links) == len(tables) - 1`); `left_join` makes those LEFT JOINs."""

    intent: Intent
    subject: TableInfo
    tables: tuple[TableInfo, ...]
    links: tuple[Link, ...]
    items: tuple[Agg, ...]
    distinct: bool = False
    where: tuple[Condition, ...] = ()
    connector: Connector = "AND"
    group: Ref | None = None
    having: Having | None = None
    order: Order | None = None
    limit: int | None = None
    left_join: bool = False
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if len(self.links) != len(self.tables) - 1:
            raise ValueError("a plan needs one link per joined table")
        if not self.items:
            raise ValueError("a plan needs at least one select item")


def join_tree(
    info: TraversalInfo, start: str, exclude: tuple[str, ...] = ()
) -> tuple[tuple[TableInfo, ...], tuple[Link, ...]]:
    """The traversal's tables reachable from `start` without passing through `exclude`, in
    breadth-first order, each with the link that joins it to an earlier one."""
    banned = {fold(n) for n in exclude}
    order: list[TableInfo] = [info.table(start)]
    links: list[Link] = []
    seen = {fold(start)}
    queue = deque([start])
    while queue:
        current = queue.popleft()
        for link in info.links_of(current):
            other = link.other(current)
            if fold(other) in seen or fold(other) in banned:
                continue
            seen.add(fold(other))
            order.append(info.table(other))
            links.append(link)
            queue.append(other)
    return tuple(order), tuple(links)


def identifier(name: str) -> exp.Identifier:
    """An identifier quoted only when SQLite needs it."""
    plain = name.replace("_", "a").isalnum() and not name[:1].isdigit() and name.isascii()
    return exp.Identifier(this=name, quoted=not plain or name.upper() in _SQLITE_KEYWORDS)


class Scope:
    """How one SELECT names its tables: aliases T1.. when it joins, bare names otherwise, as
    SQLite writes them. A warehouse's scope (`indexer.synthesis.warehouse_sql`) overrides how
    tables and columns are written and adds the joins that reach nested fields."""

    def __init__(self, tables: tuple[TableInfo, ...]) -> None:
        self.aliased = len(tables) > 1
        self.alias = {fold(t.name): f"T{i + 1}" for i, t in enumerate(tables)}

    def inner(self, tables: tuple[TableInfo, ...]) -> Scope:
        """The scope of a subquery over `tables`."""
        return Scope(tables)

    def column(self, ref: Ref) -> exp.Expr:
        table = identifier(self.alias[fold(ref.table.name)]) if self.aliased else None
        return exp.Column(this=identifier(ref.column.name), table=table)

    def join_column(self, alias: str, column: str) -> exp.Expr:
        """A join key: `column` of the table aliased `alias`."""
        return exp.Column(
            this=identifier(column), table=identifier(alias) if self.aliased else None
        )

    def table(self, table: TableInfo) -> exp.Table:
        node = exp.Table(this=identifier(table.name))
        if self.aliased:
            node.set("alias", exp.TableAlias(this=identifier(self.alias[fold(table.name)])))
        return node

    def extra_joins(self) -> list[exp.Join]:
        """Joins the columns used so far need besides the plan's (BigQuery's UNNESTs)."""
        return []

    def period(self, condition: Period) -> exp.Expr:
        raise ValueError("a time span is a warehouse condition")


def literal(lit: Lit) -> exp.Expr:
    if isinstance(lit.value, str):
        return exp.Literal.string(lit.value)
    value = lit.value
    text = str(int(value)) if float(value).is_integer() else repr(value)
    node = exp.Literal.number(text.lstrip("-"))
    return exp.Neg(this=node) if value < 0 else node


def plan_tree(plan: Plan, scope: Scope | None = None) -> exp.Select:
    """The plan as a sqlglot SELECT (in SQLite's names unless `scope` says otherwise)."""
    scope = Scope(plan.tables) if scope is None else scope
    select = exp.Select(expressions=[_item(scope, item) for item in plan.items])
    if plan.distinct:
        select.set("distinct", exp.Distinct())
    select.set("from_", exp.From(this=scope.table(plan.tables[0])))
    joins = [
        _join(scope, t, link, plan.left_join)
        for t, link in zip(plan.tables[1:], plan.links, strict=True)
    ]
    if plan.where:
        select.set("where", exp.Where(this=_conditions(scope, plan.where, plan.connector)))
    if plan.group is not None:
        select.set("group", exp.Group(expressions=[scope.column(plan.group)]))
    if plan.having is not None:
        having = plan.having
        condition = _compare(having.op, _item(scope, having.agg), _number(having.value))
        select.set("having", exp.Having(this=condition))
    if plan.order is not None:
        ordered = exp.Ordered(this=_item(scope, plan.order.agg), nulls_first=not plan.order.desc)
        if plan.order.desc is not None:
            ordered.set("desc", plan.order.desc)
        select.set("order", exp.Order(expressions=[ordered]))
    if plan.limit is not None:
        select.set("limit", exp.Limit(expression=exp.Literal.number(plan.limit)))
    joins += scope.extra_joins()
    if joins:
        select.set("joins", joins)
    return select


def plan_sql(plan: Plan) -> str:
    """The plan's SQL text (SQLite dialect, `x NOT IN (...)` rather than `NOT x IN (...)`)."""
    generator = SQLite.Generator(dialect="sqlite")
    return generator.generate(_negations_written(plan_tree(plan), generator))


def _negations_written(tree: exp.Expr, generator: Any) -> exp.Expr:
    """`tree` with each `NOT x IN (...)` / `NOT x BETWEEN a AND b` replaced by its text written
    the way people write it (`x NOT IN (...)`), innermost first, so nested ones are kept.
    (sqlglot's compiled build, sqlglotc, forbids subclassing its generator to do this.)"""
    for node in reversed(list(tree.find_all(exp.Not, bfs=False))):
        inner, sql = node.this, generator.sql
        if isinstance(inner, exp.In):
            query = inner.args.get("query")
            values = sql(query) if query else f"({generator.expressions(inner, flat=True)})"
            node.replace(exp.var(f"{sql(inner, 'this')} NOT IN {values}"))
        elif isinstance(inner, exp.Between):
            low, high = sql(inner, "low"), sql(inner, "high")
            node.replace(exp.var(f"{sql(inner, 'this')} NOT BETWEEN {low} AND {high}"))
    return tree


def _item(scope: Scope, item: Agg) -> exp.Expr:
    if item.func is None:
        if item.ref is None:
            raise ValueError("a plain select item needs a column")
        return scope.column(item.ref)
    arg: exp.Expr = exp.Star() if item.ref is None else scope.column(item.ref)
    if item.distinct:
        arg = exp.Distinct(expressions=[arg])
    functions: dict[str, type[exp.Expr]] = {
        "COUNT": exp.Count,
        "AVG": exp.Avg,
        "SUM": exp.Sum,
        "MIN": exp.Min,
        "MAX": exp.Max,
    }
    return functions[item.func](this=arg)


def _join(scope: Scope, table: TableInfo, link: Link, left: bool) -> exp.Join:
    pairs = list(zip(link.child_columns, link.parent_columns, strict=True))
    child, parent = _ref_table(scope, link.child), _ref_table(scope, link.parent)
    if fold(link.child) == fold(table.name):  # the earlier table's side first: T1.x = T2.y
        pairs = [(p, c) for c, p in pairs]
        child, parent = parent, child
    conditions = [
        exp.EQ(this=scope.join_column(child, c), expression=scope.join_column(parent, p))
        for c, p in pairs
    ]
    on: exp.Expr = conditions[0]
    for condition in conditions[1:]:
        on = exp.And(this=on, expression=condition)
    join = exp.Join(this=scope.table(table), on=on)
    if left:
        join.set("side", "LEFT")
    return join


def _ref_table(scope: Scope, name: str) -> str:
    return scope.alias[fold(name)]


def _number(value: float) -> exp.Expr:
    return literal(Lit(value))


def _compare(op: str, left: exp.Expr, right: exp.Expr) -> exp.Expr:
    classes: dict[str, type[exp.Expr]] = {
        "=": exp.EQ,
        "!=": exp.NEQ,
        ">": exp.GT,
        "<": exp.LT,
        ">=": exp.GTE,
        "<=": exp.LTE,
    }
    return classes[op](this=left, expression=right)


def _conditions(scope: Scope, conditions: tuple[Condition, ...], connector: str) -> exp.Expr:
    nodes = [_condition(scope, c) for c in conditions]
    if len(nodes) > 1:
        nodes = [exp.Paren(this=n) if isinstance(n, exp.Or) else n for n in nodes]
    combined = nodes[0]
    joiner = exp.Or if connector == "OR" else exp.And
    for node in nodes[1:]:
        combined = joiner(this=combined, expression=node)
    return combined


def _condition(scope: Scope, condition: Condition) -> exp.Expr:
    node: exp.Expr
    if isinstance(condition, Compare):
        return _compare(condition.op, scope.column(condition.ref), literal(condition.value))
    if isinstance(condition, Between):
        node = exp.Between(
            this=scope.column(condition.ref),
            low=literal(condition.low),
            high=literal(condition.high),
        )
        return exp.Not(this=node) if condition.negated else node
    if isinstance(condition, Like):
        pattern = f"{condition.text}%" if condition.prefix else f"%{condition.text}%"
        node = exp.Like(this=scope.column(condition.ref), expression=exp.Literal.string(pattern))
        if condition.negated:
            node.set("negate", True)
        return node
    if isinstance(condition, InList):
        node = exp.In(
            this=scope.column(condition.ref), expressions=[literal(v) for v in condition.values]
        )
        return exp.Not(this=node) if condition.negated else node
    if isinstance(condition, VsAggregate):
        subquery = _scalar_subquery(scope, condition)
        return _compare(condition.op, scope.column(condition.ref), subquery)
    if isinstance(condition, Either):
        return exp.Or(
            this=_condition(scope, condition.first), expression=_condition(scope, condition.second)
        )
    if isinstance(condition, Period):
        return scope.period(condition)
    return _membership(scope, condition)


def _scalar_subquery(scope: Scope, condition: VsAggregate) -> exp.Expr:
    inner = scope.inner((condition.ref.table,))
    select = exp.Select(expressions=[_item(inner, Agg(condition.func, condition.ref))])
    select.set("from_", exp.From(this=inner.table(condition.ref.table)))
    if inner.extra_joins():
        select.set("joins", inner.extra_joins())
    return exp.Subquery(this=select)


def _membership(scope: Scope, condition: Membership) -> exp.Expr:
    inner = scope.inner(condition.tables)
    select = exp.Select(expressions=[inner.column(condition.inner)])
    select.set("from_", exp.From(this=inner.table(condition.tables[0])))
    joins = [
        _join(inner, t, link, False)
        for t, link in zip(condition.tables[1:], condition.links, strict=True)
    ]
    if condition.conditions:
        select.set("where", exp.Where(this=_conditions(inner, condition.conditions, "AND")))
    joins += inner.extra_joins()
    if joins:
        select.set("joins", joins)
    node = exp.In(this=scope.column(condition.outer), query=exp.Subquery(this=select))
    return exp.Not(this=node) if condition.negated else node
