"""The template synthesizer: the offline default, which writes questions without a model.

For a traversal it profiles the tables (`indexer.synthesis.profiles`), fills in query plans
(`indexer.synthesis.query_plans.Plan`) of varied shapes — projections of meaningful columns, counts,
aggregates, GROUP BY with HAVING, superlatives and top-k with ORDER BY and LIMIT, DISTINCT, and
WHERE conditions with values sampled from the database (=, <, >, BETWEEN, LIKE, IN, NOT, OR,
nested subqueries such as `x > (SELECT AVG(x) ...)` and `id NOT IN (SELECT ...)`) — joined
along the traversal's foreign keys, renders each plan to SQL with sqlglot and to a question with
`indexer.synthesis.phrasing`.

It honours `Feedback.operators`: asked for GROUP BY, HAVING, LIKE, BETWEEN, SUBQUERY, LIMIT...
it builds a query that contains them (those the traversal allows), which is how the offline
ICRL loop raises the reward. Everything is drawn from `random.Random` seeded with
`derive_seed(request.seed, traversal id, ...)`: the same request gives the same pairs.
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from indexer.synthesis.faithful import says_what_sql_does
from indexer.synthesis.pairs import QAPair, SynthesisRequest
from indexer.synthesis.phrasing import render_question
from indexer.synthesis.profiles import ColumnInfo, Link, TableInfo, TraversalInfo, profile_traversal
from indexer.synthesis.query_plans import (
    Agg,
    AggFunc,
    Between,
    Compare,
    CompareOp,
    Condition,
    Connector,
    Either,
    Having,
    InList,
    Intent,
    Like,
    Lit,
    Membership,
    Order,
    Period,
    Plan,
    Ref,
    VsAggregate,
    join_tree,
)
from indexer.synthesis.warehouse_plans import (
    CONDITION_COUNTS,
    CONDITION_WEIGHTS,
    period,
    shard_period,
    span_refs,
)
from indexer.synthesis.warehouse_roles import is_warehouse, threshold
from indexer.synthesis.warehouse_sql import render_sql, render_tree, shard_suffix
from schemagraph.model import Database, fold
from schemagraph.seeds import derive_seed
from schemagraph.traversals import Traversal

log = logging.getLogger("indexer.templates")  # the name log configurations know

T = TypeVar("T")

TEMPLATE_OPERATORS: frozenset[str] = frozenset(
    {
        "JOIN",
        "LEFT JOIN",
        "WHERE",
        "AND",
        "OR",
        "NOT",
        "IN",
        "BETWEEN",
        "LIKE",
        "DISTINCT",
        "GROUP BY",
        "HAVING",
        "ORDER BY",
        "LIMIT",
        "ASC",
        "DESC",
        "COUNT",
        "AVG",
        "SUM",
        "MIN",
        "MAX",
        "SUBQUERY",
    }
)
"""Operators the template synthesizer can put in a query when feedback asks for them."""

_INTENT_WEIGHTS: dict[Intent, int] = {
    "list": 3,
    "count": 2,
    "aggregate": 2,
    "group": 3,
    "superlative": 2,
    "top": 1,
}
_CONDITION_OPERATORS = (
    ("LIKE", "like"),
    ("BETWEEN", "between"),
    ("IN", "in"),
    ("SUBQUERY", "versus"),
    ("OR", "either"),
)
"""The kind of WHERE condition that brings each conditional operator."""
_CONDITION_WEIGHTS = {
    "either": 1,
    "eq": 5,
    "num": 3,
    "like": 1,
    "between": 1,
    "in": 1,
    "versus": 1,
    "neq": 1,
    "flag": 1,
}
_MEASURE_FUNCS: tuple[AggFunc, ...] = ("AVG", "SUM", "MIN", "MAX")
_OWN_ID = re.compile(r"(?:^|_)ids?$|[a-z]Ids?$|ID$", re.IGNORECASE)
"""A warehouse key named as an id (`geo_id`, `fullVisitorId`): grouped by, one group a row."""
_REPHRASINGS = 3


@dataclass(frozen=True)
class TemplateSynthesizer:
    """Writes (question, SQL) pairs from templates; see the module docstring.

    `max_attempts`: plans tried per wanted pair before giving up on finding one that is new
    (not the SQL of a previous pair) — small traversals have only so many distinct questions.
    """

    name: str = "template"
    max_attempts: int = 12

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")

    def synthesize(self, request: SynthesisRequest) -> list[QAPair]:
        traversal = request.traversal
        if not _has_columns(request):
            return []
        info = profile_traversal(request.db, traversal, request.sample, _link_seed(traversal))
        required = _operators(request)
        rng = random.Random(derive_seed(request.seed, "template", traversal.id, sorted(required)))
        seen = {_normalize(p.sql) for p in request.previous}
        builder = _Builder(info, rng, required, is_warehouse(request.db))
        intents = builder.intent_cycle()
        pairs: list[QAPair] = []
        for index in range(request.count * self.max_attempts):
            if len(pairs) == request.count:
                break
            plan = builder.build(intents[index % len(intents)] if intents else None)
            if plan is None:
                continue
            plan = _with_shards(plan, request.db, rng)
            sql = render_sql(plan, request.db)
            if _normalize(sql) in seen:
                continue
            seen.add(_normalize(sql))
            pairs.append(QAPair(_said_question(plan, rng, request.db), sql))
        if len(pairs) < request.count:
            log.debug(
                "template: %d of %d pairs for %s %s",
                len(pairs),
                request.count,
                traversal.db_id,
                traversal.tables,
            )
        return pairs


def _said_question(plan: Plan, rng: random.Random, db: Database) -> str:
    """The plan's question, rephrased (drawn again, up to `_REPHRASINGS` times) while it does
    not say what the plan's SQL does; the last draw when none does (the build drops it)."""
    tree = render_tree(plan, db)
    question = render_question(plan, rng)
    for _ in range(_REPHRASINGS):
        if says_what_sql_does(question, tree, db).ok:
            break
        question = render_question(plan, rng)
    return question


def _with_shards(plan: Plan, db: Database, rng: random.Random) -> Plan:
    """A one-table plan over a shard of a BigQuery date family reads the family's shards of a
    month or a year (`warehouse_plans.shard_period`); other plans as they are."""
    if len(plan.tables) != 1:
        return plan
    shard = shard_suffix(db, plan.tables[0].name)
    if shard is None:
        return plan
    return replace(plan, where=(*plan.where, shard_period(shard[1], rng)))


def feasible_operators(request: SynthesisRequest) -> frozenset[str]:
    """The operators the template synthesizer can put in a query over this traversal (no
    AVG without a numeric measure, no LIKE without sampled text, no JOIN on one table...)."""
    traversal = request.traversal
    if not _has_columns(request):
        return frozenset()
    info = profile_traversal(request.db, traversal, request.sample, _link_seed(traversal))
    warehouse = is_warehouse(request.db)
    return _Builder(info, random.Random(0), frozenset(), warehouse).feasible_operators()


def _has_columns(request: SynthesisRequest) -> bool:
    """Whether every table of the traversal has a column to ask about: a table read without
    any (SQLite's `sqlite_sequence(name,seq)` where the loader kept no typeless column) gets no
    pairs, where it used to fail the whole traversal."""
    empty = [t for t in request.traversal.tables if not request.db.table(t).columns]
    if empty:
        log.debug("template: no columns in %s %s", request.db.id, empty)
    return not empty


def _link_seed(traversal: Traversal) -> int:
    """Which foreign key joins two tables linked by several is fixed per traversal, so that
    every attempt of a chain (and the feedback about it) sees the same join."""
    return derive_seed(0, "links", traversal.id)


def _operators(request: SynthesisRequest) -> frozenset[str]:
    if request.feedback is None:
        return frozenset()
    wanted = {" ".join(op.upper().split()) for op in request.feedback.operators}
    aliases = {"NESTED": "SUBQUERY", "NOT IN": "NOT", "INNER JOIN": "JOIN", "ORDER": "ORDER BY"}
    wanted = {aliases.get(op, op) for op in wanted}
    if "NOT IN" in {" ".join(op.upper().split()) for op in request.feedback.operators}:
        wanted.add("IN")
    return frozenset(wanted & TEMPLATE_OPERATORS)


def _normalize(sql: str) -> str:
    return " ".join(sql.split()).casefold()


def _pick(rng: random.Random, options: Sequence[T]) -> T | None:
    return options[rng.randrange(len(options))] if options else None


def _weighted(rng: random.Random, weights: dict[str, int]) -> str | None:
    keys = [k for k, w in weights.items() if w > 0]
    if not keys:
        return None
    return rng.choices(keys, weights=[weights[k] for k in keys])[0]


class _Builder:
    """Fills in plans for one traversal; `required` operators go into every plan it can."""

    def __init__(
        self,
        info: TraversalInfo,
        rng: random.Random,
        required: frozenset[str],
        warehouse: bool = False,
    ):
        """`warehouse`: a database of another engine than SQLite, whose plans take no
        placeholder values and stay short (`indexer.synthesis.warehouse_plans`)."""
        self.info = info
        self.rng = rng
        self.required = required
        self.multi = len(info.tables) > 1
        self.warehouse = warehouse
        self.condition_weights = CONDITION_WEIGHTS if warehouse else _CONDITION_WEIGHTS

    # -- what this traversal allows --------------------------------------------------------

    def feasible_operators(self) -> frozenset[str]:
        """The operators plans over this traversal can contain."""
        tables = list(self.info.tables)
        has = lambda test: bool(self._refs(tables, test))  # noqa: E731
        groups = self._group_options()
        comparable = has(lambda c: c.comparable)
        numeric = has(lambda c: c.comparable and c.numeric)
        like = has(lambda c: c.text and not c.key and bool(c.values))
        in_list = has(lambda c: (c.categorical or c.label) and len(c.values) >= 2)
        between = numeric or has(lambda c: c.temporal and len(c.values) >= 2)
        filters = self._refs(tables, lambda c: c.categorical or c.label or c.comparable or c.flag)
        found = {"ORDER BY", "ASC", "DESC", "COUNT"}
        found |= {"WHERE"} if filters else set()
        found |= {"AND", "OR"} if len(filters) >= 2 else set()
        found |= {"JOIN"} if self.multi else set()
        found |= (
            {"LEFT JOIN"}
            if any(o[0] == "entity" and self._left_join_ok(o) for o in groups)
            else set()
        )
        found |= {"GROUP BY", "HAVING"} if groups else set()
        found |= {"LIMIT"} if groups or comparable else set()
        found |= {"AVG", "SUM"} if has(lambda c: c.measure) else set()
        found |= {"MIN", "MAX"} if numeric else set()
        found |= {"LIKE"} if like else set()
        found |= {"BETWEEN"} if between else set()
        membership = bool(self._membership_subjects())
        found |= {"IN"} if in_list or membership else set()
        found |= {"NOT"} if like or in_list or between or membership else set()
        found |= {"SUBQUERY"} if numeric or membership else set()
        found |= {"DISTINCT"} if has(lambda c: c.categorical and not c.label) else set()
        return frozenset(found)

    # -- choosing the shape ------------------------------------------------------------------

    def intent_cycle(self) -> list[Intent]:
        """Feasible intents in a seeded order, so that several pairs get different shapes."""
        options = [i for i in self._intent_options() if self._feasible(i)]
        if not options:
            options = [i for i in _INTENT_WEIGHTS if self._feasible(i)]
        weights = [_INTENT_WEIGHTS[i] for i in options]
        ordered: list[Intent] = []
        pool = list(zip(options, weights, strict=True))
        while pool:
            choice = self.rng.choices(range(len(pool)), weights=[w for _, w in pool])[0]
            ordered.append(pool.pop(choice)[0])
        return ordered

    def _intent_options(self) -> list[Intent]:
        req = self.required
        if req & {"GROUP BY", "HAVING", "LEFT JOIN"}:
            return ["group"]
        if "LIMIT" in req:
            return ["superlative", "top", "group"]
        if req & {"AVG", "SUM", "MIN", "MAX"}:
            return ["aggregate", "group"]
        if "COUNT" in req:
            return ["count", "group"]
        if req & {"ORDER BY", "DESC", "ASC"}:
            return ["list", "superlative", "top", "group"]
        if "DISTINCT" in req:
            return ["list", "count"]
        return list(_INTENT_WEIGHTS)

    def _feasible(self, intent: Intent) -> bool:
        tables = self.info.tables
        if intent == "aggregate":
            return any(c.measure or (c.comparable and c.numeric) for t in tables for c in t.columns)
        if intent in ("superlative", "top"):
            return any(c.comparable for t in tables for c in t.columns)
        if intent == "group":
            return bool(self._group_options())
        return True

    def build(self, intent: Intent | None) -> Plan | None:
        intent = intent or "list"
        builders: dict[str, Callable[[], Plan | None]] = {
            "list": self._list,
            "count": self._count,
            "aggregate": self._aggregate,
            "group": self._group,
            "superlative": lambda: self._ordered("superlative"),
            "top": lambda: self._ordered("top"),
        }
        return builders[intent]()

    # -- tables ------------------------------------------------------------------------------

    def _membership_mode(self, intent: Intent) -> bool:
        """Instead of joining, ask about the subject's related rows with IN / NOT IN."""
        if not self.multi or intent not in ("list", "count", "aggregate"):
            return False
        if self.required & {"JOIN", "LEFT JOIN"} or not self._membership_subjects():
            return False
        if self.required & {"SUBQUERY"} and not self.required & {"IN", "NOT"}:
            return self.rng.random() < 0.5
        if self.required & {"SUBQUERY", "IN", "NOT"}:
            return self.rng.random() < 0.6
        return self.rng.random() < 0.2

    def _membership_subjects(self) -> list[TableInfo]:
        info = self.info
        found = []
        for table in info.entities:
            links = info.links_of(table.name)
            if table.bridge or len(links) != 1 or len(links[0].child_columns) != 1:
                continue
            found.append(table)
        return found

    def _join_plan_tables(self, subject: TableInfo) -> tuple[tuple[TableInfo, ...], tuple]:
        return join_tree(self.info, subject.name)

    def _others(self, subject: TableInfo) -> list[TableInfo]:
        return [t for t in self.info.tables if fold(t.name) != fold(subject.name)]

    def _subject(self) -> TableInfo:
        entities = list(self.info.entities)
        picked = _pick(self.rng, entities)
        assert picked is not None
        return picked

    # -- columns -----------------------------------------------------------------------------

    def _projection(self, table: TableInfo, limit: int = 2) -> list[Ref]:
        labels = list(table.labels)
        rest = [c for c in table.describable if c not in labels]
        cols = labels[:]
        if not cols:
            cols = rest[:1] or [table.columns[0]]
            rest = rest[1:]
        extra = self.rng.random()
        if rest and (extra < 0.45 or len(cols) == 0):
            cols.append(rest[self.rng.randrange(len(rest))])
        if rest and extra < 0.1 and len(cols) < limit + 1:
            other = rest[self.rng.randrange(len(rest))]
            if other not in cols:
                cols.append(other)
        return [Ref(table, c) for c in cols[: max(limit, len(labels))]]

    def _refs(self, tables: Sequence[TableInfo], test: Callable[[ColumnInfo], bool]) -> list[Ref]:
        return [Ref(t, c) for t in tables for c in t.columns if test(c)]

    # -- conditions ----------------------------------------------------------------------------

    def _condition_count(self, intent: Intent) -> int:
        counts = {
            "list": (0, 1, 1, 1, 2),
            "count": (0, 1, 1, 2),
            "aggregate": (0, 1, 1),
            "group": (0, 0, 1),
            "superlative": (0, 0, 1),
            "top": (0, 0, 1),
        }[intent]
        if self.warehouse:
            counts = CONDITION_COUNTS[intent]
        return counts[self.rng.randrange(len(counts))]

    def _conditions(
        self,
        intent: Intent,
        tables: Sequence[TableInfo],
        subject: TableInfo,
        *,
        needs_other: bool,
        avoid: Sequence[Ref] = (),
    ) -> tuple[tuple[Condition, ...], Connector]:
        """WHERE conditions: the required conditional operators first, then random ones. They
        are joined by AND; OR comes as one `Either` condition, so a query can have both."""
        kinds = self._condition_kinds(intent)
        if needs_other and not kinds:
            kinds = ["eq"]
        conditions: list[Condition] = []
        used: list[Ref] = list(avoid)
        for position, kind in enumerate(kinds):
            prefer_other = needs_other and position == 0
            condition = None
            for option in _fallbacks(kind):
                condition = self._condition(option, tables, subject, used, prefer_other)
                if condition is not None:
                    break
            if condition is not None:
                conditions.append(condition)
                used.extend(_condition_refs(condition))
        return tuple(conditions), "AND"

    def _condition_kinds(self, intent: Intent) -> list[str]:
        req = self.required
        kinds = [k for op, k in _CONDITION_OPERATORS if op in req]
        if "NOT" in req:
            negatable = [i for i, k in enumerate(kinds) if k in ("like", "in", "between")]
            if negatable:
                kinds[negatable[0]] = "not_" + kinds[negatable[0]]
            else:
                kinds.append("negated")
        weights = self.condition_weights
        if "AND" in req:
            while len(kinds) < 2:
                kinds.append(_weighted(self.rng, weights) or "eq")
        if "WHERE" in req and not kinds:
            kinds.append(_weighted(self.rng, weights) or "eq")
        if not kinds and not req & {"LIKE", "BETWEEN", "IN", "SUBQUERY", "NOT", "OR"}:
            kinds = [
                _weighted(self.rng, weights) or "eq" for _ in range(self._condition_count(intent))
            ]
        return kinds

    def _either(self, tables: list[TableInfo], used: list[Ref]) -> Condition | None:
        """`(x = 'a' OR x = 'b')` on a column with two sampled values, else two conditions on
        different columns."""
        first = self._eq(tables, used)
        if not isinstance(first, Compare):
            return None
        values = [v for v in first.ref.column.values if v != first.value.value]
        same = values and not first.value.placeholder and first.op == "="
        if same and self.rng.random() < 0.7:
            second: Condition | None = Compare(first.ref, "=", Lit(self._pick_value(values)))
        else:
            second = self._eq(tables, [*used, first.ref]) or self._num(tables, [*used, first.ref])
        if not isinstance(second, Compare):
            return None
        return Either(first, second)

    def _negated(self, tables: list[TableInfo], used: list[Ref]) -> Condition | None:
        options = [self._like, self._in_list, self._between]
        self.rng.shuffle(options)
        for make in options:
            found = make(tables, used, negated=True)
            if found is not None:
                return found
        return None

    def _pick_value(self, values: Sequence[str]) -> str:
        return values[self.rng.randrange(len(values))]

    def _candidate_tables(
        self, tables: Sequence[TableInfo], subject: TableInfo, prefer_other: bool
    ) -> list[TableInfo]:
        others = [t for t in tables if fold(t.name) != fold(subject.name) and not t.bridge]
        if prefer_other and others:
            return others
        if self.multi and others and self.rng.random() < 0.5:
            return others
        return list(tables)

    def _condition(
        self,
        kind: str,
        tables: Sequence[TableInfo],
        subject: TableInfo,
        used: list[Ref],
        prefer_other: bool,
    ) -> Condition | None:
        pool = self._candidate_tables(tables, subject, prefer_other)
        makers: dict[str, Callable[[list[TableInfo], list[Ref]], Condition | None]] = {
            "eq": self._eq,
            "neq": self._neq,
            "num": self._num,
            "like": self._like,
            "not_like": lambda p, u: self._like(p, u, negated=True),
            "between": self._between,
            "not_between": lambda p, u: self._between(p, u, negated=True),
            "in": self._in_list,
            "not_in": lambda p, u: self._in_list(p, u, negated=True),
            "versus": self._versus,
            "flag": self._flag,
            "either": self._either,
            "negated": self._negated,
            "period": self._period,
        }
        condition = makers[kind](pool, used)
        if condition is None and pool != list(tables):
            condition = makers[kind](list(tables), used)
        return condition

    def _fresh(self, refs: list[Ref], used: list[Ref]) -> Ref | None:
        """A column not yet used by another condition (two conditions on one column joined by
        AND would mostly contradict each other)."""
        return _pick(self.rng, [r for r in refs if r not in used])

    def _eq(self, tables: list[TableInfo], used: list[Ref]) -> Condition | None:
        sampled = self._refs(tables, lambda c: (c.categorical or c.label) and bool(c.values))
        ref = self._fresh(sampled, used)
        if ref is not None:
            return Compare(ref, "=", Lit(self._value(ref.column)))
        numeric = self._refs(tables, lambda c: c.categorical and bool(c.numbers))
        ref = self._fresh(numeric, used)
        if ref is not None:
            return Compare(ref, "=", Lit(self._number(ref.column)))
        if self.warehouse:  # no value to name: a time span, else a comparison, else nothing
            return self._period(tables, used) or self._num(tables, used)
        blind = self._refs(tables, lambda c: (c.categorical or c.label) and not c.numeric)
        ref = self._fresh(blind, used)
        if ref is not None:
            return Compare(ref, "=", Lit(f"a given {ref.column.short}", placeholder=True))
        return self._num(tables, used)

    def _period(self, tables: list[TableInfo], used: list[Ref]) -> Condition | None:
        """A year or a month of a date or timestamp column (warehouses only)."""
        if not self.warehouse:
            return None
        ref = self._fresh(span_refs(self._refs(tables, lambda c: c.temporal)), used)
        return period(ref, self.rng) if ref is not None else None

    def _neq(self, tables: list[TableInfo], used: list[Ref]) -> Condition | None:
        refs = self._refs(tables, lambda c: c.categorical and bool(c.values))
        ref = self._fresh(refs, used)
        return Compare(ref, "!=", Lit(self._value(ref.column))) if ref else None

    def _num(self, tables: list[TableInfo], used: list[Ref]) -> Condition | None:
        refs = self._refs(tables, lambda c: c.comparable and c.numeric)
        ref = self._fresh(refs, used)
        if ref is not None:
            op: CompareOp = self.rng.choice((">", ">", "<", ">=", "<="))
            return Compare(ref, op, Lit(self._number(ref.column)))
        dated = self._refs(tables, lambda c: c.temporal and bool(c.values))
        ref = self._fresh(dated, used)
        if ref is not None:
            op = self.rng.choice((">", "<"))
            return Compare(ref, op, Lit(self._value(ref.column)))
        return None

    def _like(
        self, tables: list[TableInfo], used: list[Ref], negated: bool = False
    ) -> Condition | None:
        refs = self._refs(tables, lambda c: c.text and not c.key and bool(c.values))
        ref = self._fresh(refs, used)
        if ref is None:
            return None
        value = self._value(ref.column).strip()
        words = [w.strip(".,;:()'\"") for w in value.split()]
        words = [w for w in words if len(w) >= 3 and w.isalpha()]
        if words and self.rng.random() < 0.7:
            return Like(ref, words[self.rng.randrange(len(words))], negated=negated)
        prefix = value[: max(1, min(len(value), self.rng.choice((1, 2, 3))))]
        if not any(c.isalnum() for c in prefix):  # "starts with '('" says nothing
            return Like(ref, words[0], negated=negated) if words else None
        return Like(ref, prefix, prefix=True, negated=negated)

    def _between(
        self, tables: list[TableInfo], used: list[Ref], negated: bool = False
    ) -> Condition | None:
        refs = self._refs(tables, lambda c: c.comparable)
        ref = self._fresh(refs, used)
        if ref is None:
            return None
        col = ref.column
        if col.numeric:
            numbers = sorted(set(col.numbers))
            if len(numbers) >= 2:
                low, high = sorted(self.rng.sample(numbers, 2))
            else:
                low, high = _default_range(col)
            return Between(ref, Lit(low), Lit(high), negated=negated)
        values = sorted({v for v in col.values})
        if len(values) < 2:
            return None
        low_text, high_text = sorted(self.rng.sample(values, 2))
        return Between(ref, Lit(low_text), Lit(high_text), negated=negated)

    def _in_list(
        self, tables: list[TableInfo], used: list[Ref], negated: bool = False
    ) -> Condition | None:
        ref = self._fresh(self._refs(tables, lambda c: c.categorical and len(c.values) >= 2), used)
        if ref is None:  # a list of names: "whose name is Tom or Ann"
            ref = self._fresh(self._refs(tables, lambda c: c.label and len(c.values) >= 2), used)
        if ref is None:
            return None
        values = list(ref.column.values)
        size = min(len(values), self.rng.choice((2, 2, 3)))
        picked = self.rng.sample(values, size)
        return InList(ref, tuple(Lit(v) for v in picked), negated=negated)

    def _versus(self, tables: list[TableInfo], used: list[Ref]) -> Condition | None:
        refs = self._refs(tables, lambda c: c.comparable and c.numeric)
        ref = self._fresh(refs, used)
        if ref is None:
            return None
        if ref.column.measure and self.rng.random() < 0.7:
            op: CompareOp = self.rng.choice((">", ">", "<"))
            return VsAggregate(ref, op, "AVG")
        func: AggFunc = self.rng.choice(("MAX", "MIN"))
        return VsAggregate(ref, "=", func)

    def _flag(self, tables: list[TableInfo], used: list[Ref]) -> Condition | None:
        refs = self._refs(tables, lambda c: c.flag and bool(c.values or c.numbers))
        ref = self._fresh(refs, used)
        if ref is None:
            return self._eq(tables, used)
        col = ref.column
        value: str | float = self._value(col) if col.values else self._number(col)
        return Compare(ref, "=", Lit(value))

    def _value(self, col: ColumnInfo) -> str:
        return col.values[self.rng.randrange(len(col.values))]

    def _number(self, col: ColumnInfo) -> float:
        if col.numbers:
            return col.numbers[self.rng.randrange(len(col.numbers))]
        if self.warehouse:
            return threshold(col.words, self.rng)
        return _default_range(col)[0]

    # -- plans by intent ---------------------------------------------------------------------

    def _base(
        self, intent: Intent
    ) -> tuple[TableInfo, tuple[TableInfo, ...], tuple, Membership | None]:
        """Subject, tables and links of the main query, and a membership condition when the
        other tables are reached through a subquery instead of joins."""
        if self._membership_mode(intent):
            subject = _pick(self.rng, self._membership_subjects())
            assert subject is not None
            return subject, (subject,), (), self._membership(subject)
        subject = self._subject()
        tables, links = self._join_plan_tables(subject)
        return subject, tables, links, None

    def _membership(self, subject: TableInfo) -> Membership:
        link = self.info.links_of(subject.name)[0]
        neighbor = link.other(subject.name)
        tables, links = join_tree(self.info, neighbor, exclude=(subject.name,))
        entities = [t for t in tables if not t.bridge]
        entity = entities[0] if entities else tables[0]
        outer = Ref(subject, subject.column(link.columns_of(subject.name)[0]))
        inner_table = self.info.table(neighbor)
        inner = Ref(inner_table, inner_table.column(link.columns_of(neighbor)[0]))
        negated = "NOT" in self.required or (not self.required and self.rng.random() < 0.45)
        conditions: tuple[Condition, ...] = ()
        if self.rng.random() < 0.5 or len(tables) > 1:
            found = self._eq(entities or list(tables), [])
            if isinstance(found, Compare):
                conditions = (found,)
                entity = found.ref.table if not found.ref.table.bridge else entity
        return Membership(outer, inner, tables, links, entity, conditions, negated)

    def _with_membership(
        self, conditions: tuple[Condition, ...], membership: Membership | None
    ) -> tuple[Condition, ...]:
        if membership is None:
            return conditions
        return (membership, *conditions[:1])

    def _list(self) -> Plan | None:
        subject, tables, links, membership = self._base("list")
        items = self._projection(subject)
        others = [t for t in tables if fold(t.name) != fold(subject.name) and not t.bridge]
        joined_column = bool(others) and self.rng.random() < 0.5
        if joined_column:
            other = others[self.rng.randrange(len(others))]
            items = items[:1] + self._projection(other, limit=1)
        where, connector = self._conditions(
            "list",
            tables,
            subject,
            needs_other=bool(others) and not joined_column,
            avoid=items,
        )
        where = self._with_membership(where, membership)
        distinct = "DISTINCT" in self.required or (
            len(items) == 1 and items[0].column.categorical and self.rng.random() < 0.5
        )
        if distinct and not items[0].column.categorical:
            cats = self._refs([subject], lambda c: c.categorical)
            items = [cats[self.rng.randrange(len(cats))]] if cats else items
        order = None
        wants_order = self.required & {"ORDER BY", "DESC", "ASC"}
        if wants_order or self.rng.random() < 0.25:
            key = items[0] if distinct else self._sort_key(tables, subject, items)
            if key is not None:
                order = Order(Agg(None, key), self._direction())
        return Plan(
            "list",
            subject,
            tables,
            links,
            tuple(Agg(None, r) for r in items),
            distinct=distinct,
            where=where,
            connector=connector,
            order=order,
        )

    def _sort_key(
        self, tables: Sequence[TableInfo], subject: TableInfo, items: list[Ref]
    ) -> Ref | None:
        comparable = [r for r in self._refs([subject], lambda c: c.comparable) if r not in items]
        comparable = comparable or self._refs(tables, lambda c: c.comparable)
        if comparable:
            return comparable[self.rng.randrange(len(comparable))]
        return items[0] if items else None

    def _direction(self) -> bool | None:
        if "DESC" in self.required:
            return True
        if "ASC" in self.required:
            return False
        roll = self.rng.random()
        return True if roll < 0.55 else (False if roll < 0.7 else None)

    def _count(self) -> Plan | None:
        subject, tables, links, membership = self._base("count")
        item = Agg("COUNT")
        if "DISTINCT" in self.required or self.rng.random() < 0.15:
            cats = self._refs([subject], lambda c: c.categorical and not c.label)
            if cats:
                item = Agg("COUNT", cats[self.rng.randrange(len(cats))], distinct=True)
        needs_other = self.multi and membership is None
        avoid = [item.ref] if item.ref is not None else []
        where, connector = self._conditions(
            "count", tables, subject, needs_other=needs_other, avoid=avoid
        )
        where = self._with_membership(where, membership)
        return Plan("count", subject, tables, links, (item,), where=where, connector=connector)

    def _aggregate(self) -> Plan | None:
        subject, tables, links, membership = self._base("aggregate")
        pool = [subject, *self._others(subject)] if membership is None else [subject]
        measures = self._refs(pool, lambda c: c.measure)
        numeric = self._refs(pool, lambda c: c.comparable and c.numeric)
        if not numeric:
            return None
        funcs = self._aggregate_funcs(bool(measures))
        ref_for_avg = _pick(self.rng, measures) if measures else None
        ref_any = _pick(self.rng, numeric)
        assert ref_any is not None
        same = self.rng.random() < 0.4
        items: list[Agg] = []
        for func in funcs:
            ref = (
                ref_for_avg
                if func in ("AVG", "SUM")
                else (ref_for_avg if same and ref_for_avg else ref_any)
            )
            if ref is None:
                continue
            items.append(Agg(func, ref))
        if not items:
            return None
        first = items[0].ref
        on_subject = first is not None and fold(first.table.name) == fold(subject.name)
        needs_other = self.multi and membership is None and on_subject
        where, connector = self._conditions("aggregate", tables, subject, needs_other=needs_other)
        where = self._with_membership(where, membership)
        return Plan(
            "aggregate", subject, tables, links, tuple(items), where=where, connector=connector
        )

    def _aggregate_funcs(self, has_measure: bool) -> list[AggFunc]:
        wanted = [f for f in _MEASURE_FUNCS if f in self.required]
        if not has_measure:
            wanted = [f for f in wanted if f in ("MIN", "MAX")]
        if wanted:
            return wanted
        if self.warehouse:  # one aggregate: "the total revenue", not four of them
            options: tuple[AggFunc, ...] = ("AVG", "SUM", "MAX", "MIN") if has_measure else ("MAX",)
            return [self.rng.choice(options)]
        roll = self.rng.random()
        if has_measure and roll < 0.2:
            return ["AVG", "MIN", "MAX"]
        if roll < 0.35:
            return ["MIN", "MAX"] if self.rng.random() < 0.5 else ["MAX"]
        if has_measure:
            return [self.rng.choice(("AVG", "AVG", "SUM", "MAX", "MIN"))]
        return [self.rng.choice(("MAX", "MIN"))]

    def _group_options(self) -> list[tuple[str, Ref, TableInfo]]:
        """(kind, group column, counted subject): by a category, or by a related entity."""
        options: list[tuple[str, Ref, TableInfo]] = []
        for table in self.info.entities:
            options.extend(
                ("category", Ref(table, col), table)
                for col in table.columns
                if col.categorical and not col.label
            )
        if not self.multi:
            table = self.info.tables[0]
            for col in table.columns:
                if col.key and table.primary_key != (col.name,) and not col.flag:
                    if self.warehouse and _OWN_ID.search(col.name):
                        continue  # a warehouse table's own id, declared or not: a group a row
                    options.append(("category", Ref(table, col), table))
            return options
        for table in self.info.entities:
            key = table.single_key
            if key is None or not table.labels:
                continue
            counted = [s for s in self.info.tables if self._one_to_many(table, s)]
            preferred = [s for s in counted if not s.bridge] or counted
            options.extend(("entity", Ref(table, table.column(key)), s) for s in preferred)
        return options

    def _one_to_many(self, group: TableInfo, subject: TableInfo) -> bool:
        """Whether a `group` row can relate to many `subject` rows: the first step from `group`
        towards `subject` goes from a referenced table to a table referencing it."""
        if fold(group.name) == fold(subject.name):
            return False
        path = _path(self.info, group.name, subject.name)
        return bool(path) and fold(path[0].parent) == fold(group.name)

    def _group(self) -> Plan | None:
        options = self._group_options()
        if "LEFT JOIN" in self.required:
            options = [o for o in options if o[0] == "entity" and self._left_join_ok(o)] or options
        picked = _pick(self.rng, options)
        if picked is None:
            return None
        kind, group, subject = picked
        left = "LEFT JOIN" in self.required and kind == "entity" and self._left_join_ok(picked)
        if left:
            tables, links = self._left_join_tables(group.table, subject)
        else:
            tables, links = join_tree(self.info, group.table.name)
        aggs = self._group_aggregates(subject, tables, left)
        agg = aggs[0]
        shown = list(group.table.labels) if kind == "entity" else [group.column]
        items = (*(Agg(None, Ref(group.table, c)) for c in shown), *aggs)
        having = None
        if "HAVING" in self.required or self.rng.random() < 0.3:
            having = self._having(agg)
        order = None
        limit = None
        ordered = self.required & {"ORDER BY", "LIMIT", "DESC", "ASC"} or self.rng.random() < 0.35
        if ordered and having is not None and self.warehouse and "HAVING" not in self.required:
            having = None  # "Among the X with ..., which X has the most ...": one or the other
        if ordered:
            direction = self._direction()
            if direction is None and "ASC" not in self.required:
                direction = True
            order = Order(having.agg if having else agg, direction)
            if "LIMIT" in self.required or (not self.required and self.rng.random() < 0.7):
                limit = 1 if self.rng.random() < 0.8 else 3
            elif "ORDER BY" not in self.required and "LIMIT" not in self.required:
                limit = 1
        where, connector = self._conditions(
            "group", tables, subject, needs_other=False, avoid=[group]
        )
        return Plan(
            "group",
            subject,
            tables,
            links,
            items,
            where=where,
            connector=connector,
            group=group,
            having=having,
            order=order,
            limit=limit,
            left_join=left,
        )

    def _left_join_ok(self, option: tuple[str, Ref, TableInfo]) -> bool:
        _, group, subject = option
        return any(
            fold(link.parent) == fold(group.table.name) and fold(link.child) == fold(subject.name)
            for link in self.info.links
        )

    def _left_join_tables(
        self, parent: TableInfo, child: TableInfo
    ) -> tuple[tuple[TableInfo, ...], tuple]:
        link = next(
            link
            for link in self.info.links
            if fold(link.parent) == fold(parent.name) and fold(link.child) == fold(child.name)
        )
        return (parent, child), (link,)

    def _group_aggregates(
        self, subject: TableInfo, tables: Sequence[TableInfo], left: bool
    ) -> list[Agg]:
        """COUNT(*) per group, or the requested (or a random) aggregate of a measure."""
        wanted = [f for f in _MEASURE_FUNCS if f in self.required]
        measures = self._refs([subject], lambda c: c.measure) or self._refs(
            [t for t in tables if t != subject], lambda c: c.measure
        )
        if left:
            key = subject.single_key or subject.columns[0].name
            return [Agg("COUNT", Ref(subject, subject.column(key)))]
        if measures and (wanted or self.rng.random() < 0.3):
            choices: tuple[AggFunc, ...] = ("AVG", "AVG", "SUM", "MAX", "MIN")
            ref = measures[self.rng.randrange(len(measures))]
            return [Agg(func, ref) for func in wanted or [self.rng.choice(choices)]]
        return [Agg("COUNT")]

    def _having(self, agg: Agg) -> Having:
        op: CompareOp = self.rng.choice((">", ">=", ">", "<"))
        if agg.func == "COUNT":
            value = float(self.rng.choice((1, 2, 2, 3, 5)))
            if op == "<":
                value = max(value, 2.0)
            return Having(agg, op, value)
        assert agg.ref is not None
        return Having(agg, op, self._number(agg.ref.column))

    def _ordered(self, intent: Intent) -> Plan | None:
        subject, tables, links, _ = self._base(intent)
        keys = self._refs([subject], lambda c: c.comparable)
        if not keys:
            keys = self._refs(tables, lambda c: c.comparable)
        key = _pick(self.rng, keys)
        if key is None:
            return None
        items = [r for r in self._projection(subject) if r != key] or [
            Ref(subject, subject.columns[0])
        ]
        desc = self._direction()
        limit = 1 if intent == "superlative" else self.rng.choice((3, 3, 5, 2))
        where, connector = self._conditions(
            intent, tables, subject, needs_other=self.multi, avoid=[key]
        )
        return Plan(
            intent,
            subject,
            tables,
            links,
            tuple(Agg(None, r) for r in items),
            where=where,
            connector=connector,
            order=Order(Agg(None, key), desc),
            limit=limit,
        )


def _path(info: TraversalInfo, start: str, goal: str) -> list[Link]:
    """The links from table `start` to table `goal` in the traversal's join tree."""
    paths: dict[str, list[Link]] = {fold(start): []}
    frontier = [start]
    while frontier:
        current = frontier.pop()
        for link in info.links_of(current):
            other = link.other(current)
            if fold(other) not in paths:
                paths[fold(other)] = [*paths[fold(current)], link]
                frontier.append(other)
    return paths.get(fold(goal), [])


def _condition_refs(condition: Condition) -> list[Ref]:
    if isinstance(condition, Membership):
        return [condition.outer]
    if isinstance(condition, Period):
        return [condition.ref] if condition.ref is not None else []
    if isinstance(condition, Either):
        return [condition.first.ref, condition.second.ref]
    return [condition.ref]


def _fallbacks(kind: str) -> list[str]:
    """What to try when a kind of condition is impossible here: another negation for a
    negation, else an equality or a comparison."""
    if kind.startswith("not_") or kind == "negated":
        return [kind, "negated", "eq"]
    return [kind] if kind in ("eq", "num") else [kind, "eq"]


def _default_range(col: ColumnInfo) -> tuple[float, float]:
    """A plausible range for a numeric column without sampled numbers (no data)."""
    words = col.words.lower().split(" ")
    if "year" in words:
        return 2000.0, 2010.0
    if "age" in words:
        return 20.0, 30.0
    return 10.0, 100.0
