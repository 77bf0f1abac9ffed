"""The template synthesizer: the offline default, which writes questions without a model.

For a traversal it profiles the tables (`indexer.synthesis.profiles`), fills in query plans
(`indexer.synthesis.query_plans.Plan`) of varied shapes — projections of meaningful columns, counts,
aggregates, GROUP BY with HAVING, superlatives and top-k with ORDER BY and LIMIT, DISTINCT, and
WHERE conditions with values sampled from the database (=, <, >, BETWEEN, LIKE, IN, NOT, OR,
nested subqueries such as `x > (SELECT AVG(x) ...)` and `id NOT IN (SELECT ...)`) — joined
along the traversal's foreign keys, renders each plan to SQL with sqlglot (in the database's own
dialect on a warehouse: `indexer.synthesis.warehouse_sql`) and to a question with
`indexer.synthesis.phrasing`. A plan's WHERE conditions come from
`indexer.synthesis.template_conditions`, its subject, joins and groups from
`indexer.synthesis.template_groups`; the shape of each intent from `_Builder` here.

It honours `Feedback.operators`: asked for GROUP BY, HAVING, LIKE, BETWEEN, SUBQUERY, LIMIT...
it builds a query that contains them (those the traversal allows), which is how the offline
ICRL loop raises the reward. Everything is drawn from `random.Random` seeded with
`derive_seed(request.seed, traversal id, ...)`: the same request gives the same pairs.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from indexer.synthesis.faithful import says_what_sql_does
from indexer.synthesis.pairs import QAPair, SynthesisRequest
from indexer.synthesis.phrasing import render_question
from indexer.synthesis.profiles import TableInfo, profile_traversal
from indexer.synthesis.query_plans import (
    Agg,
    AggFunc,
    Intent,
    Order,
    Plan,
    Ref,
)
from indexer.synthesis.template_conditions import pick
from indexer.synthesis.template_groups import MEASURE_FUNCS, GroupBuilder
from indexer.synthesis.warehouse_plans import shard_period
from indexer.synthesis.warehouse_roles import is_warehouse
from indexer.synthesis.warehouse_sql import render_sql, render_tree, shard_suffix
from schemagraph.model import Database, fold
from schemagraph.seeds import derive_seed
from schemagraph.traversals import Traversal

log = logging.getLogger("indexer.templates")  # the name log configurations know

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


class _Builder(GroupBuilder):
    """Fills in plans for one traversal, one intent at a time; `required` operators go into
    every plan it can."""

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

    # -- columns -----------------------------------------------------------------------------

    # -- conditions ----------------------------------------------------------------------------

    # -- plans by intent ---------------------------------------------------------------------

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
        ref_for_avg = pick(self.rng, measures) if measures else None
        ref_any = pick(self.rng, numeric)
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
        wanted = [f for f in MEASURE_FUNCS if f in self.required]
        if not has_measure:
            wanted = [f for f in wanted if f in ("MIN", "MAX")]
        if wanted:
            return wanted[:1] if self.warehouse else wanted
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

    def _ordered(self, intent: Intent) -> Plan | None:
        subject, tables, links, _ = self._base(intent)
        keys = self._refs([subject], lambda c: c.comparable)
        if not keys:
            keys = self._refs(tables, lambda c: c.comparable)
        key = pick(self.rng, keys)
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
