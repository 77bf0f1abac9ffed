"""Does a synthetic question say what its SQL does?

The synthetic pairs route questions and are the few-shot examples generation shows a model, so
a question that leaves out part of its query teaches the model a filter nobody asked for.
`says_what_sql_does` reads the query's sqlglot tree and lists, for each part that changes the
answer, the words a question must hold for it, drawn from the lexicon the templates write with
(`indexer.synthesis.phrasing`):

- each WHERE and HAVING condition: its column (the words the templates use for it: the
  documented phrase, else the humanized name, or its short form), its value(s), and the
  comparison (`greater than`, `before`, `between ... and`, `contains`, `starts with`, a
  negation for `!=`, `NOT IN`, `NOT LIKE`, `NOT BETWEEN`); `x = (SELECT MIN(x) ...)` needs the
  superlative, `x > (SELECT AVG(x) ...)` the average and the comparison; `x [NOT] IN (SELECT
  ...)` a table of the subquery (and a negation), and the subquery's own conditions;
- each aggregate of the SELECT list: its function's words (how many / number, average, total,
  minimum, maximum) and, but for COUNT(*), its column;
- GROUP BY: the grouped column (or the entity whose key it is) and "each" / "per" / "by" /
  "every", unless a HAVING or a superlative over the groups says how the groups are used;
- ORDER BY with LIMIT: a superlative in the query's direction (or "top N") and the sort key;
  the LIMIT's number when it is above 1; ORDER BY alone: "ordered / sorted by" and the
  direction when descending;
- DISTINCT: "distinct" / "different" / "unique".

Joins, projections and ORDER BY's tie-breaking are not checked. Words are compared as runs of
lower-cased, singularized tokens, so "singers" says "singer" and "above-average" says "average".
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from indexer.synthesis.phrasing_words import (
    AGE_COMPARE,
    AGG_WORDS,
    ASC_ORDER_WORDS,
    COMPARE,
    COUNT_COMPARE,
    COUNT_WORDS,
    DESC_ORDER_WORDS,
    DISTINCT_WORDS,
    GROUP_WORDS,
    LIKE_WORDS,
    NEGATION_WORDS,
    ORDER_WORDS,
    PLACE_WORDS,
    PREFIX_WORDS,
    RANGE_WORDS,
    SUPERLATIVE,
    TIME_COMPARE,
    TIME_SUPERLATIVE,
)
from indexer.synthesis.profiles import ColumnInfo, TableInfo, schema_table_info
from schemagraph.dialects import dialect_of
from schemagraph.humanize import plural, singular
from schemagraph.model import Database, fold

_SUFFIX = "_table_suffix"
_DATE = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})$")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[^\W_]+")

_COMPARISONS: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.NEQ: "!=",
    exp.GT: ">",
    exp.LT: "<",
    exp.GTE: ">=",
    exp.LTE: "<=",
}
_FLIPPED = {"=": "=", "!=": "!=", ">": "<", "<": ">", ">=": "<=", "<=": ">="}
_AGGREGATES: dict[type[exp.Expr], str] = {
    exp.Count: "COUNT",
    exp.Avg: "AVG",
    exp.Sum: "SUM",
    exp.Min: "MIN",
    exp.Max: "MAX",
}
_DESC = (
    *SUPERLATIVE[True],
    *TIME_SUPERLATIVE[True],
    *AGG_WORDS["MAX"],
    "most",
    "oldest",
    "top",
    *DESC_ORDER_WORDS,
)
_ASC = (
    *SUPERLATIVE[False],
    *TIME_SUPERLATIVE[False],
    *AGG_WORDS["MIN"],
    "fewest",
    "least",
    "youngest",
    *ASC_ORDER_WORDS,
)
_COUNT_DESC = ("most", "largest number", "highest number", "greatest number", "most common")
_COUNT_ASC = ("fewest", "smallest number", "lowest number", "least common")
_LABEL_VERBS = ("named", "called")

UNSAID = "question does not say what the SQL does"
"""The build's reason for dropping a pair this check fails."""


@dataclass(frozen=True)
class Faithfulness:
    """`missing`: what the question leaves out, one line per part of the query ("WHERE
    T1.age > 20: the comparison"); `parts`: the kinds of those parts (where, having,
    aggregate, group, order, limit, distinct, subquery), for counting."""

    missing: tuple[str, ...] = ()
    parts: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.missing


def says_what_sql_does(question: str, sql: str | exp.Expr, db: Database) -> Faithfulness:
    """Whether `question` says every filter, aggregate, grouping, ordering and limit of `sql`
    (text, or its sqlglot tree) in words of the templates' lexicon; see the module docstring.
    SQL that does not parse, or is not one SELECT, fails."""
    if isinstance(sql, str):
        try:
            tree: exp.Expr | None = parse_one(sql, dialect=dialect_of(db))
        except SqlglotError:
            tree = None
    else:
        tree = sql
    if not isinstance(tree, exp.Select):
        return Faithfulness(("the query: not one SELECT the checker reads",), ("query",))
    checker = _Checker(_Words(question), db)
    checker.select(tree)
    return Faithfulness(tuple(checker.missing), tuple(checker.parts))


class _Words:
    """A question as lower-cased singular tokens, asked whether it holds a phrase."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.text = " " + " ".join(self.tokens) + " "

    def has(self, phrase: str) -> bool:
        tokens = _tokens(phrase)
        return bool(tokens) and f" {' '.join(tokens)} " in self.text

    def any(self, phrases: Iterable[str]) -> bool:
        return any(self.has(p) for p in phrases)

    def spans(self, phrase: str) -> list[tuple[int, int]]:
        """(start, end) token positions of each occurrence of `phrase`."""
        tokens = _tokens(phrase)
        n = len(tokens)
        if not n:
            return []
        return [
            (i, i + n) for i in range(len(self.tokens) - n + 1) if self.tokens[i : i + n] == tokens
        ]

    def near(self, first: Iterable[str], then: Iterable[str], gap: int) -> bool:
        """Whether a phrase of `first` is followed by one of `then` with at most `gap` tokens
        between them ("the lowest average age": "lowest" then "average", gap 0)."""
        ends = [e for p in first for _, e in self.spans(p)]
        starts = [b for p in then for b, _ in self.spans(p)]
        return any(0 <= b - e <= gap for e in ends for b in starts)


@lru_cache(maxsize=65536)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(_token(t) for t in _TOKEN.findall(text.lower()))


@lru_cache(maxsize=65536)
def _token(token: str) -> str:
    return singular(token) if token.isalpha() and len(token) > 2 else token


@dataclass(frozen=True)
class _Column:
    table: TableInfo
    info: ColumnInfo

    @property
    def names(self) -> tuple[str, ...]:
        """The words a question may name this column by: its words, their short form, and
        for a key, the entity it identifies."""
        info = self.info
        own = (
            self.table.singular
        )  # "stadium capacity": another table's column, as the templates say it
        names = [info.words, info.short, f"{own} {info.short}", f"{own} {info.words}"]
        if info.flag:
            names += [_flag_words(info.words)]
        if info.key:  # "stadium" for Stadium_ID; the table's nouns for its own key
            parts = info.words.split(" ")
            if len(parts) > 1 and parts[-1].lower() in ("id", "ids", "code", "key", "number"):
                names.append(" ".join(parts[:-1]))
            if tuple(fold(c) for c in self.table.primary_key) == (fold(info.name),):
                names += [self.table.singular, self.table.plural]
        names += [plural(n) for n in names]
        return tuple(dict.fromkeys(n for n in names if n))

    @property
    def words(self) -> list[str]:
        return self.info.words.lower().split(" ")


def _flag_words(words: str) -> str:
    parts = words.split(" ")
    return " ".join(parts[1:]) if parts[0].lower() in ("is", "has") and len(parts) > 1 else words


class _Checker:
    def __init__(self, words: _Words, db: Database) -> None:
        self.q = words
        self.db = db
        self.missing: list[str] = []
        self.parts: list[str] = []
        self.condition = _Conditions(self).condition

    # -- bookkeeping -----------------------------------------------------------------------

    def need(self, ok: bool, part: str, node: exp.Expr | str, what: str) -> None:
        if ok:
            return
        shown = node if isinstance(node, str) else node.sql(dialect="sqlite")
        self.missing.append(f"{part.upper()} {shown}: {what}")
        self.parts.append(part)

    def names(self, column: _Column | None) -> bool:
        return column is None or self.q.any(column.names)

    # -- one SELECT ------------------------------------------------------------------------

    def select(self, select: exp.Select, part: str = "") -> None:
        scope = _Scope(select, self.db)
        if select.args.get("distinct") is not None and not part:
            self.need(self.q.any(DISTINCT_WORDS), "distinct", "DISTINCT", "distinct / different")
            for item in select.expressions:
                column = scope.column(item)
                self.need(self.names(column), "distinct", item, "the column")
        if not part:
            order_by = select.args.get("order")
            keys = {o.this for o in order_by.expressions} if order_by is not None else set()
            for item in select.expressions:
                self.aggregates(item, scope, keys)
        where = select.args.get("where")
        if where is not None:
            for condition in _conjuncts(where.this):
                self.condition(condition, scope, part or "where")
        group = select.args.get("group")
        having = select.args.get("having")
        order = select.args.get("order")
        limit = select.args.get("limit")
        if group is not None and not part:
            self.group(group, scope, bool(having is not None or (order and limit)))
        if having is not None and not part:
            for condition in _conjuncts(having.this):
                self.condition(condition, scope, "having")
        if order is not None and not part:
            self.order(order, scope, _limit_of(limit))
        elif limit is not None and not part:
            count = _limit_of(limit)
            self.need(count in (None, 1) or self.q.has(str(count)), "limit", limit, "the number")

    def aggregates(self, item: exp.Expr, scope: _Scope, keys: set[exp.Expr]) -> None:
        """The SELECT list's aggregates; one that is also the sort key is said by the ordering
        ("the stadium with the most concerts" returns the count)."""
        for node in item.find_all(*_AGGREGATES):
            if node not in keys:
                self.aggregate(node, scope, "aggregate")

    def aggregate(self, node: exp.Expr, scope: _Scope, part: str) -> None:
        func = _AGGREGATES[type(node)]
        arg = node.this
        distinct = isinstance(arg, exp.Distinct)
        column = scope.column(arg.expressions[0] if distinct else arg)
        if func == "COUNT":
            self.need(self.q.any(COUNT_WORDS), part, node, "how many / number of")
            if distinct:
                self.need(self.q.any(DISTINCT_WORDS), part, node, "distinct / different")
                self.need(self.names(column), part, node, "the column")
            return
        words = _agg_words(func, column)
        self.need(self.q.any(words), part, node, f"the {func.lower()} word")
        self.need(self.names(column), part, node, "the column")
        if column is not None and self.q.any(words) and self.names(column):
            # "the average, minimum and maximum age": each word before its column
            near = self.q.near(words, column.names, 4)
            self.need(near, part, node, f"the {func.lower()} word before the column")

    # -- grouping and ordering -----------------------------------------------------------------

    def group(self, group: exp.Group, scope: _Scope, used: bool) -> None:
        for key in group.expressions:
            column = scope.column(key)
            self.need(self.names(column), "group", key, "the grouped column")
        self.need(used or self.q.any(GROUP_WORDS), "group", group, "each / per / by")

    def order(self, order: exp.Order, scope: _Scope, limit: int | None) -> None:
        for ordered in order.expressions[:1]:
            desc = bool(ordered.args.get("desc"))
            key = ordered.this
            aggregate = key if type(key) in _AGGREGATES else None
            column = None if aggregate is not None else scope.column(key)
            if limit is None:
                words = (*ORDER_WORDS, *DESC_ORDER_WORDS, *ASC_ORDER_WORDS)
                self.need(self.q.any(words), "order", ordered, "ordered / sorted by")
                if desc:
                    self.need(self.q.any(DESC_ORDER_WORDS), "order", ordered, "descending")
                else:
                    self.need(not self.q.any(DESC_ORDER_WORDS), "order", ordered, "ascending")
            else:
                direction = _DESC if desc else _ASC
                self.need(self.q.any(direction), "order", ordered, "the superlative's direction")
                self.need(
                    self.superlative(aggregate, column, scope, desc),
                    "order",
                    ordered,
                    "the superlative next to the sort key",
                )
                if limit > 1:
                    self.need(self.q.has(str(limit)), "limit", f"LIMIT {limit}", "the number")
            if aggregate is not None:
                if isinstance(aggregate, exp.Count) and not isinstance(
                    aggregate.this, exp.Distinct
                ):
                    counting = (*COUNT_WORDS, "most", "fewest", "common")
                    self.need(self.q.any(counting), "order", ordered, "the count")
                else:
                    self.aggregate(aggregate, scope, "order")
                continue
            adjective = column is not None and self.q.any(_adjectives(column, desc))
            self.need(self.names(column) or adjective, "order", ordered, "the sort key")

    def superlative(
        self, aggregate: exp.Expr | None, column: _Column | None, scope: _Scope, desc: bool
    ) -> bool:
        """ORDER BY ... LIMIT said where it applies: "the lowest average age", "the most
        concerts", "the highest capacity", "the oldest", "the top 3 ... by capacity"."""
        direction = _DESC if desc else _ASC
        if isinstance(aggregate, exp.Count) and not isinstance(aggregate.this, exp.Distinct):
            counted = _COUNT_DESC if desc else _COUNT_ASC
            top = desc and self.q.has("top") and self.q.has("by number")
            return top or self.q.any(counted) or self.q.near(direction, COUNT_WORDS, 1)
        if aggregate is not None:
            column = scope.column(aggregate.this)
            func = _AGGREGATES[type(aggregate)]
            return self.q.near(direction, _agg_words(func, column), 1)
        if column is None:
            return True
        top = desc and self.q.has("top") and self.q.near(("by",), column.names, 0)
        adjective = self.q.any(_adjectives(column, desc))
        return top or adjective or self.q.near(direction, column.names, 1)


class _Conditions:
    """The WHERE and HAVING conditions of `checker`'s SELECTs: each one said by the question
    (a subquery's SELECT and an aggregate go back to `checker`)."""

    def __init__(self, checker: _Checker) -> None:
        self.q = checker.q
        self.db = checker.db
        self.need = checker.need
        self.names = checker.names
        self.select = checker.select
        self.aggregate = checker.aggregate

    def condition(self, node: exp.Expr, scope: _Scope, part: str) -> None:
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Or):
            self.need(self.q.any(("or", "either")), part, node, "'or'")
            for side in _disjuncts(node):
                self.condition(side, scope, part)
            return
        if isinstance(node, exp.And):
            for side in _conjuncts(node):
                self.condition(side, scope, part)
            return
        negated = isinstance(node, exp.Not)
        inner = node.this if negated else node
        if isinstance(inner, exp.In):
            self.membership(node, inner, negated, scope, part)
        elif isinstance(inner, exp.Between):
            self.between(node, inner, negated, scope, part)
        elif isinstance(inner, exp.Like):
            self.like(node, inner, negated, scope, part)
        elif type(inner) in _COMPARISONS and not negated:
            self.comparison(inner, scope, part)
        else:
            self.need(False, part, node, "a condition the checker cannot read")

    def comparison(self, node: exp.Expr, scope: _Scope, part: str) -> None:
        op = _COMPARISONS[type(node)]
        left, right = node.this, node.expression
        if not _is_operand(left) and _is_operand(right):
            left, right, op = right, left, _FLIPPED[op]
        aggregate = left if type(left) in _AGGREGATES else None
        column = None if aggregate is not None else scope.column(left)
        # HAVING COUNT(*) > 3 is said by "more than 3 singers"; other aggregates by their words
        if aggregate is not None and (
            not isinstance(aggregate, exp.Count) or isinstance(aggregate.this, exp.Distinct)
        ):
            self.aggregate(aggregate, scope, part)
        subquery = right.this if isinstance(right, exp.Subquery) else None
        if isinstance(subquery, exp.Select):
            self.versus(node, op, column, subquery, scope, part)
            return
        if column is not None and column.info.flag and op in ("=", "!="):
            self.flag(node, op, column, right, part)
            return
        value = _literal(right)
        if value is not None and value.startswith("a given ") and op in ("=", "!="):
            value = "a given"  # the templates' placeholder where a database has no data
        if value is None:
            self.need(False, part, node, "a comparison the checker cannot read")
            return
        self.need(self.q.has(value), part, node, f"the value {value!r}")
        if op == "=":
            self.need(self.names(column) or self.implied(column), part, node, "the column")
            return
        if op == "!=":
            negated = self.q.near(NEGATION_WORDS, (value,), 1)
            self.need(negated, part, node, "the negation before the value")
            self.need(self.names(column) or self.implied(column), part, node, "the column")
            return
        words = _compare_words(op, column)
        if isinstance(aggregate, exp.Count):
            words = (*words, *COUNT_COMPARE[op])
        self.need(self.q.near(words, (value,), 1), part, node, "the comparison before the value")
        aged = column is not None and "age" in column.words and self.q.any(AGE_COMPARE.get(op, ()))
        self.need(self.names(column) or aged, part, node, "the column")

    def implied(self, column: _Column | None) -> bool:
        """`= value` without the column's name: "named Joe", "from France", "in 2010", "of the
        stadium X"."""
        if column is None:
            return False
        words = column.words
        if words[-1] in ("name", "title") and self.q.any((*_LABEL_VERBS, column.table.singular)):
            return True
        if (set(PLACE_WORDS) & set(words)) or "year" in words:
            return self.q.any(("from", "in"))
        return False

    def flag(self, node: exp.Expr, op: str, column: _Column, right: exp.Expr, part: str) -> None:
        value = (_literal(right) or "").lower()
        positive = (value in ("1", "t", "true", "yes", "y")) == (op == "=")
        self.need(self.names(column), part, node, "the flag")
        if not positive:
            self.need(self.q.any(("not", "no")), part, node, "the negation")

    def versus(
        self,
        node: exp.Expr,
        op: str,
        column: _Column | None,
        subquery: exp.Select,
        scope: _Scope,
        part: str,
    ) -> None:
        """`x op (SELECT AGG(x) FROM t)`."""
        funcs = [_AGGREGATES[type(n)] for n in subquery.expressions if type(n) in _AGGREGATES]
        func = funcs[0] if funcs else ""
        names = column.names if column is not None else ()
        if func == "AVG":
            self.need(self.q.any(AGG_WORDS["AVG"]), part, node, "the average")
            if op != "=":
                words = (*_compare_words(op, column), "above" if ">" in op else "below")
                near = self.q.near(words, AGG_WORDS["AVG"], 2)
                self.need(near, part, node, "the comparison before the average")
        elif func in ("MIN", "MAX"):
            words = _agg_words(func, column)
            said = self.q.near(words, names, 1) or self.q.near(
                names, [f"is the {w}" for w in words], 0
            )
            self.need(said, part, node, "the superlative of the column")
            if op != "=":
                near = self.q.near(_compare_words(op, column), words, 2)
                self.need(near, part, node, "the comparison")
        else:
            self.need(False, part, node, "a subquery the checker cannot read")
        self.need(self.names(column), part, node, "the column")
        self.select(subquery, part="subquery")

    def membership(
        self, node: exp.Expr, inner: exp.In, negated: bool, scope: _Scope, part: str
    ) -> None:
        column = scope.column(inner.this)
        query = inner.args.get("query")
        if negated:
            self.need(self.q.any(NEGATION_WORDS), part, node, "the negation")
        if query is not None:
            subquery = query.this if isinstance(query, exp.Subquery) else query
            if not isinstance(subquery, exp.Select):
                self.need(False, "subquery", node, "a subquery the checker cannot read")
                return
            tables = _Scope(subquery, self.db).tables.values()
            nouns = [n for t in tables for n in (t.singular, t.plural)]
            self.need(self.q.any(nouns), "subquery", node, "the subquery's table")
            self.select(subquery, part="subquery")
            return
        values = [_literal(v) for v in inner.expressions]
        for value in values:
            self.need(value is not None and self.q.has(value), part, node, f"the value {value!r}")
        if negated and values and values[0] is not None:
            near = self.q.near(NEGATION_WORDS, (values[0],), 2)
            self.need(near, part, node, "the negation before the values")
        self.need(self.names(column) or self.implied(column), part, node, "the column")

    def between(
        self, node: exp.Expr, inner: exp.Between, negated: bool, scope: _Scope, part: str
    ) -> None:
        column = scope.column(inner.this)
        span = _span_words(inner)
        if span is not None and not negated and (column is None or column.info.temporal):
            # a year or a month of dates, or of a family's shards: "in August 2017"
            for word in span:
                self.need(self.q.has(word), part, node, f"the span's {word!r}")
            suffix = isinstance(inner.this, exp.Column) and fold(inner.this.name) == _SUFFIX
            self.need(suffix or self.names(column), part, node, "the column")
            return
        for bound in (inner.args.get("low"), inner.args.get("high")):
            value = _literal(bound) if bound is not None else None
            self.need(value is not None and self.q.has(value), part, node, f"the bound {value!r}")
        low, high = (_literal(inner.args.get(k)) for k in ("low", "high"))
        bounds = (f"{low} and {high}", f"{low} to {high}")
        self.need(self.q.any(bounds), part, node, "the bounds together")
        written = self.q.near((*RANGE_WORDS, "from"), bounds, 1)
        self.need(written, part, node, "between / the range")
        if negated:
            self.need(self.q.any((*NEGATION_WORDS, "outside")), part, node, "the negation")
        self.need(self.names(column), part, node, "the column")

    def like(
        self, node: exp.Expr, inner: exp.Like, negated: bool, scope: _Scope, part: str
    ) -> None:
        negated = negated or bool(inner.args.get("negate"))
        column = scope.column(inner.this)
        pattern = _literal(inner.expression) or ""
        text = pattern.strip("%")
        self.need(bool(text) and self.q.has(text), part, node, f"the text {text!r}")
        prefix = not pattern.startswith("%")
        words = PREFIX_WORDS if prefix else LIKE_WORDS
        said = self.q.near(words, (text,), 1) or self.q.near((text,), ("in their",), 0)
        self.need(said, part, node, "starts with" if prefix else "contains")
        if negated:
            self.need(self.q.any(NEGATION_WORDS), part, node, "the negation")
        self.need(self.names(column), part, node, "the column")


class _Scope:
    """The tables one SELECT names (alias → table), to resolve its columns; in a warehouse's
    SQL, tables by the engine's name or a family's wildcard, and BigQuery's `UNNEST(path) AS
    alias` (alias → the table and the path it reads)."""

    def __init__(self, select: exp.Select, db: Database) -> None:
        self.tables: dict[str, TableInfo] = {}
        self.unnests: dict[str, tuple[TableInfo, str]] = {}
        self.db = db
        sources = [select.args.get("from_"), *(select.args.get("joins") or [])]
        for source in sources:
            table = source.this if source is not None else None
            if isinstance(table, exp.Unnest):
                self.unnest(table)
            if not isinstance(table, exp.Table):
                continue
            name = _table_id(db, table.name)
            if name is None:
                continue
            info = schema_table_info(db, name)
            self.tables[fold(table.alias_or_name)] = info
            self.tables.setdefault(fold(name), info)

    def unnest(self, node: exp.Unnest) -> None:
        alias = node.args.get("alias")
        names = [*(alias.args.get("columns") or []), alias.this] if alias is not None else []
        name = next((n.name for n in names if n is not None and n.name), "")
        found = self.path(node.expressions[0] if node.expressions else None)
        if name and found is not None:
            self.unnests[fold(name)] = found

    def path(self, node: exp.Expr | None) -> tuple[TableInfo, str] | None:
        """The table and the column path `node` reads (`T1.totals.pageviews`, `product.x`)."""
        while isinstance(node, exp.Cast):
            node = node.this
        parts = _parts(node)
        if not parts:
            return None
        head, rest = fold(parts[0]), ".".join(parts[1:])
        if rest and head in self.unnests:
            table, path = self.unnests[head]
            return table, f"{path}.{rest}"
        if rest and head in self.tables:
            return self.tables[head], rest
        whole = ".".join(parts)
        for table in dict.fromkeys(self.tables.values()):
            if any(fold(c.name) == fold(whole) for c in table.columns):
                return table, whole
        return None

    def column(self, node: exp.Expr | None) -> _Column | None:
        found = self.path(node)
        if found is None:
            return None
        table, path = found
        for info in table.columns:
            if fold(info.name) == fold(path):
                return _Column(table, info)
        return None


def _parts(node: exp.Expr | None) -> list[str]:
    """The names of a column reference, outermost first (`T1`, `totals`, `pageviews`)."""
    if isinstance(node, exp.Column):
        return [p.name for p in node.parts]
    if isinstance(node, exp.Dot):
        inner = _parts(node.this)
        return [*inner, node.expression.name] if inner else []
    return []


def _table_id(db: Database, name: str) -> str | None:
    """The id of the table SQL names `name`: its id, its engine name's last part, or for a
    wildcard (`ga_sessions_*`) a table of the family."""
    if db.has_table(name):
        return name
    key = fold(name)
    stem = key[:-1] if key.endswith("*") else None
    for table in db.tables:
        last = fold(table.engine_name[-1]) if table.engine_name else fold(table.name)
        if last == key or (stem is not None and last.startswith(stem)):
            return table.name
    return None


def _span_words(node: exp.Between) -> tuple[str, ...] | None:
    """The words that say a BETWEEN over a whole year or month of dates ('2017-01-01' to
    '2017-12-31', or `_TABLE_SUFFIX` '20170801' to '20170831'): the year, and the month's name;
    None for another range."""
    low, high = _literal(node.args.get("low")), _literal(node.args.get("high"))
    start, end = _date(low), _date(high)
    if start is None or end is None or start[0] != end[0]:
        return None
    year, first, last = start[0], start[1], end[1]
    if start[2] != 1 or end[2] != calendar.monthrange(year, last)[1]:
        return None
    if (first, last) == (1, 12):
        return (str(year),)
    if first == last:
        return (calendar.month_name[first], str(year))
    return None


def _date(text: str | None) -> tuple[int, int, int] | None:
    match = _DATE.match(text or "")
    if match is None:
        return None
    year, month, day = (int(g) for g in match.groups())
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return year, month, day


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    while isinstance(node, exp.Paren) and isinstance(node.this, exp.And):
        node = node.this
    if isinstance(node, exp.And):
        return [*_conjuncts(node.this), *_conjuncts(node.expression)]
    return [node]


def _disjuncts(node: exp.Expr) -> list[exp.Expr]:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Or):
        return [*_disjuncts(node.this), *_disjuncts(node.expression)]
    return [node]


def _is_operand(node: exp.Expr) -> bool:
    return isinstance(node, exp.Column) or type(node) in _AGGREGATES


def _literal(node: exp.Expr | None) -> str | None:
    """A literal's text as a question would write it (numbers without a trailing .0)."""
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        inner = _literal(node.this)
        return None if inner is None else f"-{inner}"
    if not isinstance(node, exp.Literal):
        return None
    if node.is_string:
        return str(node.this)
    text = str(node.this)
    try:
        value = float(text)
    except ValueError:
        return text
    return str(int(value)) if value.is_integer() else text


def _limit_of(limit: exp.Expr | None) -> int | None:
    if limit is None:
        return None
    value = _literal(limit.expression)
    return int(value) if value is not None and value.isdigit() else None


def _temporal(column: _Column | None) -> bool:
    return column is not None and (column.info.temporal or "year" in column.words)


def _compare_words(op: str, column: _Column | None) -> tuple[str, ...]:
    words = COMPARE.get(op, ())
    if _temporal(column):
        words = (*words, *TIME_COMPARE.get(op, ()))
    if column is not None and "age" in column.words:
        words = (*words, *AGE_COMPARE.get(op, ()))
    return words


def _agg_words(func: str, column: _Column | None) -> tuple[str, ...]:
    words: tuple[str, ...] = AGG_WORDS[func]
    if func in ("MIN", "MAX"):
        desc = func == "MAX"
        words = (*words, *SUPERLATIVE[desc])
        if _temporal(column):
            words = (*words, *TIME_SUPERLATIVE[desc])
        if column is not None and "age" in column.words:
            words = (*words, "oldest" if desc else "youngest")
    return words


def _adjectives(column: _Column, desc: bool) -> tuple[str, ...]:
    """One-word superlatives that name their sort key: "oldest" (age), "most recent" (dates)."""
    if column.words[-1] == "age":
        return ("oldest",) if desc else ("youngest",)
    if _temporal(column):
        return TIME_SUPERLATIVE[desc]
    return ()
