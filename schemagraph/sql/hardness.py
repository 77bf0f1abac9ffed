"""Spider hardness (easy / medium / hard / extra) of a SQL query.

The official rules (Spider `evaluation.py`, `eval_hardness`) count three things on the *top-level*
query, as parsed by Spider's `process_sql.py`:

- component 1: one each for WHERE, GROUP BY, ORDER BY and LIMIT being present, one per table
  unit in FROM beyond the first (joins, including a subquery in FROM), one per OR connective and
  one per LIKE condition in the ON, WHERE and HAVING conditions;
- component 2: one per subquery used as a value in an ON, WHERE or HAVING condition, plus one if
  the query is the left side of UNION / INTERSECT / EXCEPT (only the top level is counted; a
  subquery in FROM or SELECT does not count);
- others: one if there is more than one "aggregation", one for more than one SELECT item, one for
  more than one WHERE condition, one for more than one GROUP BY item.

"Aggregation" keeps two quirks of the official `count_agg`, which tests element `[0]` of each
unit: a WHERE condition counts when it is negated (`NOT IN`, `NOT LIKE`, `NOT BETWEEN`, because
`[0]` of a condition is its `not` flag), and every AND/OR connective of HAVING counts (the
official condition list interleaves the strings "and"/"or", whose `[0]` is truthy), while the
aggregate inside a HAVING condition does not. SELECT items count when the item itself is an
aggregate; ORDER BY items count per aggregated operand.

This module computes the same counts from the sqlglot syntax tree, so it needs no schema. It
reproduces the official labels of all 1034 Spider dev questions (see tests/sql). For a query in a
set operation, the official parser attaches a trailing ORDER BY / LIMIT to the right-hand query;
only the left-hand query's own clauses are counted, as there.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError

from schemagraph.sql._parse import first_line, parse_statements
from schemagraph.sql.errors import SqlParseError

AGGREGATES: tuple[type[exp.Expr], ...] = (exp.Max, exp.Min, exp.Count, exp.Sum, exp.Avg)
ARITHMETIC: tuple[type[exp.Expr], ...] = (exp.Add, exp.Sub, exp.Mul, exp.Div)


class Hardness(enum.StrEnum):
    """Spider's four difficulty levels, in increasing order."""

    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"
    EXTRA = "extra"


@dataclass(frozen=True)
class HardnessCounts:
    """The three counts the official classifier looks at."""

    component1: int
    component2: int
    others: int


@dataclass(frozen=True)
class _Condition:
    """A flattened condition: its units (leaves) and its AND/OR connectives, in order."""

    units: tuple[exp.Expr, ...]
    connectives: tuple[str, ...]


def spider_hardness(sql: str, *, dialect: str = "sqlite") -> Hardness:
    """The Spider hardness of `sql`; raises `SqlParseError` if sqlglot cannot parse it."""
    return classify_hardness(hardness_counts(sql, dialect=dialect))


def hardness_counts(sql: str, *, dialect: str = "sqlite") -> HardnessCounts:
    """Component 1, component 2 and others of `sql`, counted as Spider's evaluation does."""
    return counts_of_tree(_parse_query(sql, dialect))


def classify_hardness(counts: HardnessCounts) -> Hardness:
    """Spider's thresholds (`Evaluator.eval_hardness`), applied to precomputed counts."""
    c1, c2, others = counts.component1, counts.component2, counts.others
    if c1 <= 1 and others == 0 and c2 == 0:
        return Hardness.EASY
    if (others <= 2 and c1 <= 1 and c2 == 0) or (c1 <= 2 and others < 2 and c2 == 0):
        return Hardness.MEDIUM
    if (
        (others > 2 and c1 <= 2 and c2 == 0)
        or (2 < c1 <= 3 and others <= 2 and c2 == 0)
        or (c1 <= 1 and others == 0 and c2 <= 1)
    ):
        return Hardness.HARD
    return Hardness.EXTRA


def counts_of_tree(tree: exp.Expr) -> HardnessCounts:
    """The counts for an already parsed query (a Select, a set operation or a parenthesized one)."""
    tree = _unwrap(tree)
    set_operations = 0
    while isinstance(tree, exp.SetOperation):
        set_operations = 1
        tree = _unwrap(tree.this)
    if not isinstance(tree, exp.Select):
        raise SqlParseError(f"not a SELECT query: {tree.sql()[:80]!r}")
    return _count_select(tree, set_operations)


def _parse_query(sql: str, dialect: str) -> exp.Expr:
    try:
        statements = parse_statements(sql, dialect)
    except (SqlglotError, RecursionError) as exc:
        raise SqlParseError(f"cannot parse SQL: {first_line(exc)}") from exc
    if len(statements) != 1:
        raise SqlParseError(f"expected one statement, found {len(statements)}: {sql[:80]!r}")
    return statements[0]


def _count_select(select: exp.Select, set_operations: int) -> HardnessCounts:
    on = _join_conditions(select)
    where = _flatten(_clause_condition(select, "where"))
    having = _flatten(_clause_condition(select, "having"))
    group_items = _items(select, "group")
    order_items = [o.this if isinstance(o, exp.Ordered) else o for o in _items(select, "order")]
    conditions = (on, where, having)

    component1 = sum(
        (
            bool(where.units),
            bool(group_items),
            bool(order_items),
            select.args.get("limit") is not None,
            max(_table_units(select) - 1, 0),
            sum(c.connectives.count("or") for c in conditions),
            sum(1 for c in conditions for unit in c.units if _is_like(unit)),
        )
    )
    component2 = set_operations + sum(_subquery_values(u) for c in conditions for u in c.units)

    aggregations = (
        sum(1 for item in select.expressions if _is_aggregate(_unalias(item)))
        + sum(1 for unit in where.units if _is_negated(unit))
        + sum(1 for item in group_items if _is_aggregate(item))
        + sum(_aggregated_operands(item) for item in order_items)
        + sum(1 for unit in having.units if _is_negated(unit))
        + len(having.connectives)
    )
    others = sum(
        (
            aggregations > 1,
            len(select.expressions) > 1,
            len(where.units) > 1,
            len(group_items) > 1,
        )
    )
    return HardnessCounts(component1=component1, component2=component2, others=others)


def _unwrap(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Subquery | exp.Paren) and isinstance(node.this, exp.Expr):
        node = node.this
    return node


def _unalias(node: exp.Expr) -> exp.Expr:
    return node.this if isinstance(node, exp.Alias) else node


def _items(select: exp.Select, clause: str) -> list[exp.Expr]:
    node = select.args.get(clause)
    return list(node.expressions) if node is not None else []


def _clause_condition(select: exp.Select, clause: str) -> exp.Expr | None:
    node = select.args.get(clause)
    return node.this if node is not None else None


def _table_units(select: exp.Select) -> int:
    return (1 if select.args.get("from_") is not None else 0) + len(select.args.get("joins") or [])


def _join_conditions(select: exp.Select) -> _Condition:
    """The ON conditions of every join, concatenated as the official parser does (with AND)."""
    units: list[exp.Expr] = []
    connectives: list[str] = []
    for join in select.args.get("joins") or []:
        condition = _flatten(join.args.get("on"))
        if not condition.units:
            continue
        if units:
            connectives.append("and")
        units.extend(condition.units)
        connectives.extend(condition.connectives)
    return _Condition(tuple(units), tuple(connectives))


def _flatten(node: exp.Expr | None) -> _Condition:
    """Leaves and connectives of an AND/OR tree, left to right (parentheses looked through)."""
    units: list[exp.Expr] = []
    connectives: list[str] = []

    def visit(current: exp.Expr) -> None:
        current = current.this if isinstance(current, exp.Paren) else current
        if isinstance(current, exp.And | exp.Or):
            visit(current.this)
            connectives.append("and" if isinstance(current, exp.And) else "or")
            visit(current.expression)
        else:
            units.append(current)

    if node is not None:
        visit(node)
    return _swallow_after_column_values(units, connectives)


def _swallow_after_column_values(units: list[exp.Expr], connectives: list[str]) -> _Condition:
    """Drop what the official parser skips: OR-joined units after a column-valued comparison.

    `process_sql.parse_value` reads a column value by scanning forward to the next `,`, `)`,
    `and` or clause keyword, so in `a = T2.b OR c = 1` everything from `OR` up to the next AND
    disappears from the parsed condition (Spider dev's `sql` fields show it, e.g. in flight_2).
    """
    kept_units: list[exp.Expr] = []
    kept_connectives: list[str] = []
    index = 0
    while index < len(units):
        unit = units[index]
        if kept_units:
            kept_connectives.append(connectives[index - 1])
        kept_units.append(unit)
        index += 1
        if _has_column_value(unit):
            while index < len(units) and connectives[index - 1] == "or":
                index += 1
    return _Condition(tuple(kept_units), tuple(kept_connectives))


def _has_column_value(unit: exp.Expr) -> bool:
    """Whether the unit's last value is read by the official parser as a column (scanning)."""
    unit = _strip_not(unit)
    value = unit.args.get("high") if isinstance(unit, exp.Between) else unit.args.get("expression")
    if not isinstance(value, exp.Expr) or isinstance(unit, exp.In):
        return False
    value = value.this if isinstance(value, exp.Neg) else value
    if isinstance(value, exp.Literal | exp.Subquery | exp.Query | exp.Null | exp.Paren):
        return False
    return not _is_quoted_string(value)


def _is_quoted_string(value: exp.Expr) -> bool:
    """A bare double-quoted name: sqlglot reads it as a column, Spider as a string value."""
    return (
        isinstance(value, exp.Column)
        and not value.table
        and isinstance(value.this, exp.Identifier)
        and bool(value.this.args.get("quoted"))
    )


def _strip_not(unit: exp.Expr) -> exp.Expr:
    return unit.this if isinstance(unit, exp.Not) else unit


def _is_negated(unit: exp.Expr) -> bool:
    return isinstance(unit, exp.Not) or bool(unit.args.get("negate"))


def _is_like(unit: exp.Expr) -> bool:
    return isinstance(_strip_not(unit), exp.Like | exp.ILike)


def _is_aggregate(node: exp.Expr) -> bool:
    return isinstance(_unwrap(node), AGGREGATES)


def _aggregated_operands(node: exp.Expr) -> int:
    """An ORDER BY value is one operand, or two joined by + - * /; count the aggregated ones."""
    node = _unwrap(node)
    if isinstance(node, ARITHMETIC):
        return int(_is_aggregate(node.this)) + int(_is_aggregate(node.expression))
    return int(_is_aggregate(node))


def _subquery_values(unit: exp.Expr) -> int:
    """Subqueries used as values in a condition unit, not counting deeper nesting."""
    count = 0
    stack: list[Any] = [unit]
    while stack:
        node = stack.pop()
        if isinstance(node, exp.Subquery | exp.Query) and node is not unit:
            count += 1
            continue
        if isinstance(node, exp.Expr):
            stack.extend(_children(node))
    return count


def _children(node: exp.Expr) -> list[exp.Expr]:
    children: list[exp.Expr] = []
    for value in node.args.values():
        if isinstance(value, exp.Expr):
            children.append(value)
        elif isinstance(value, list):
            children.extend(v for v in value if isinstance(v, exp.Expr))
    return children
