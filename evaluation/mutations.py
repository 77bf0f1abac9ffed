"""Realistic wrong versions of a correct query, made on the sqlglot syntax tree (for the voting
benchmark): the mistakes language models make most.

=================== ====================================================================
kind                change
=================== ====================================================================
dropped condition   one conjunct (or disjunct) of a WHERE / HAVING removed, or the clause
wrong aggregate     MAX ↔ MIN, AVG → SUM, SUM → AVG, COUNT(col) → SUM(col)
wrong join column   one side of a JOIN ... ON a = b replaced by another column of its table
missing distinct    SELECT DISTINCT → SELECT, COUNT(DISTINCT x) → COUNT(x)
wrong order         ORDER BY direction flipped (ASC ↔ DESC)
unknown column      a selected column misspelled: the query fails to run
=================== ====================================================================

`mutations(sql, db, rng)` returns at most one mutation per kind (choices inside a kind are drawn
from `rng`), each as SQLite text; kinds that do not apply are left out.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from schemagraph import Database

KINDS = (
    "dropped condition",
    "wrong aggregate",
    "wrong join column",
    "missing distinct",
    "wrong order",
    "unknown column",
)


@dataclass(frozen=True)
class Mutation:
    kind: str
    sql: str


def mutations(sql: str, db: Database, rng: random.Random) -> list[Mutation]:
    """One mutation per applicable kind (see the module docstring)."""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except (SqlglotError, RecursionError):
        return []
    found: list[Mutation] = []
    makers: dict[str, Callable[[exp.Expr, Database, random.Random], bool]] = {
        "dropped condition": _drop_condition,
        "wrong aggregate": _wrong_aggregate,
        "wrong join column": _wrong_join_column,
        "missing distinct": _missing_distinct,
        "wrong order": _flip_order,
        "unknown column": _unknown_column,
    }
    for kind in KINDS:
        copy = tree.copy()
        if makers[kind](copy, db, rng):
            text = copy.sql(dialect="sqlite")
            if text != tree.sql(dialect="sqlite"):
                found.append(Mutation(kind, text))
    return found


def _drop_condition(tree: exp.Expr, db: Database, rng: random.Random) -> bool:
    clauses = list(tree.find_all(exp.Where)) + list(tree.find_all(exp.Having))
    if not clauses:
        return False
    clause = rng.choice(clauses)
    condition = clause.this
    if isinstance(condition, exp.And | exp.Or):
        parts = list(condition.flatten())
        victim = rng.randrange(len(parts))
        keep = [p.copy() for i, p in enumerate(parts) if i != victim]
        joined = keep[0]
        for part in keep[1:]:
            joined = (exp.and_ if isinstance(condition, exp.And) else exp.or_)(joined, part)
        clause.set("this", joined)
    else:
        clause.pop()
    return True


_SWAPS: dict[type[exp.Expr], type[exp.Expr]] = {
    exp.Max: exp.Min,
    exp.Min: exp.Max,
    exp.Avg: exp.Sum,
    exp.Sum: exp.Avg,
}


def _wrong_aggregate(tree: exp.Expr, db: Database, rng: random.Random) -> bool:
    options = [
        node
        for node in tree.find_all(exp.Max, exp.Min, exp.Avg, exp.Sum, exp.Count)
        if not isinstance(node.this, exp.Star | exp.Distinct) and node.this is not None
    ]
    if not options:
        return False
    node = rng.choice(options)
    target = exp.Sum if isinstance(node, exp.Count) else _SWAPS[type(node)]
    node.replace(target(this=node.this.copy()))
    return True


def _wrong_join_column(tree: exp.Expr, db: Database, rng: random.Random) -> bool:
    sides = []
    for join in tree.find_all(exp.Join):
        on = join.args.get("on")
        if isinstance(on, exp.EQ):
            sides += [c for c in (on.this, on.expression) if isinstance(c, exp.Column)]
    rng.shuffle(sides)
    aliases = _aliases(tree)
    for column in sides:
        table_name = aliases.get(column.table.lower()) if column.table else None
        if table_name is None or not db.has_table(table_name):
            continue
        others = [
            c.name for c in db.table(table_name).columns if c.name.lower() != column.name.lower()
        ]
        if others:
            column.set("this", exp.to_identifier(rng.choice(others)))
            return True
    return False


def _aliases(tree: exp.Expr) -> dict[str, str]:
    names: dict[str, str] = {}
    for table in tree.find_all(exp.Table):
        names[table.name.lower()] = table.name
        if table.alias:
            names[table.alias.lower()] = table.name
    return names


def _missing_distinct(tree: exp.Expr, db: Database, rng: random.Random) -> bool:
    options: list[exp.Expr] = [s for s in tree.find_all(exp.Select) if s.args.get("distinct")]
    options += [d for d in tree.find_all(exp.Distinct) if isinstance(d.parent, exp.Count)]
    if not options:
        return False
    node = rng.choice(options)
    if isinstance(node, exp.Select):
        node.set("distinct", None)
    else:
        expressions = node.expressions
        if len(expressions) != 1:
            return False
        node.replace(expressions[0].copy())
    return True


def _flip_order(tree: exp.Expr, db: Database, rng: random.Random) -> bool:
    options = list(tree.find_all(exp.Ordered))
    if not options:
        return False
    node = rng.choice(options)
    node.set("desc", not node.args.get("desc"))
    return True


def _unknown_column(tree: exp.Expr, db: Database, rng: random.Random) -> bool:
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    if select is None:
        return False
    columns = [c for e in select.expressions for c in e.find_all(exp.Column)]
    if not columns:
        return False
    column = rng.choice(columns)
    column.set("this", exp.to_identifier(column.name + "_x"))
    return True
