"""WHERE conditions for the template synthesizer's plans: the kinds feedback asks for, then
random ones, each on a column not yet used, with values sampled from the database (or, on a
warehouse, a time span, a described value or a threshold from the column's words).

`ConditionBuilder` holds a traversal's profile, the seeded `random.Random` and the operators
feedback requires; `indexer.synthesis.template_groups` and `indexer.synthesis.templates` build
the rest of a plan on it. Every choice draws from the one `rng`, in a fixed order, so a seed
gives one plan.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

from indexer.synthesis.profiles import ColumnInfo, TableInfo, TraversalInfo
from indexer.synthesis.query_plans import (
    AggFunc,
    Between,
    Compare,
    CompareOp,
    Condition,
    Connector,
    Either,
    InList,
    Intent,
    Like,
    Lit,
    Membership,
    Period,
    Ref,
    VsAggregate,
)
from indexer.synthesis.warehouse_plans import (
    CONDITION_COUNTS,
    CONDITION_WEIGHTS,
    period,
    span_refs,
)
from indexer.synthesis.warehouse_roles import threshold
from schemagraph.model import fold

T = TypeVar("T")

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


def pick(rng: random.Random, options: Sequence[T]) -> T | None:
    return options[rng.randrange(len(options))] if options else None


def weighted(rng: random.Random, weights: dict[str, int]) -> str | None:
    keys = [k for k, w in weights.items() if w > 0]
    if not keys:
        return None
    return rng.choices(keys, weights=[weights[k] for k in keys])[0]


class ConditionBuilder:
    """The WHERE conditions of one traversal's plans; `required` operators first."""

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

    def _refs(self, tables: Sequence[TableInfo], test: Callable[[ColumnInfo], bool]) -> list[Ref]:
        return [Ref(t, c) for t in tables for c in t.columns if test(c)]

    def _fresh(self, refs: list[Ref], used: list[Ref]) -> Ref | None:
        """A column not yet used by another condition (two conditions on one column joined by
        AND would mostly contradict each other)."""
        return pick(self.rng, [r for r in refs if r not in used])

    def _pick_value(self, values: Sequence[str]) -> str:
        return values[self.rng.randrange(len(values))]

    def _value(self, col: ColumnInfo) -> str:
        return col.values[self.rng.randrange(len(col.values))]

    def _span_of(self, col: ColumnInfo) -> tuple[float, float]:
        """A range for a warehouse column without sampled numbers: two thresholds of its
        words (a rate from 0.1 to 0.5, a population from 1,000 to 50,000), not 10 to 100."""
        drawn = sorted({threshold(col.words, self.rng) for _ in range(3)} | {0.0})
        if len(drawn) < 2:  # every draw was 0 (a longitude): a span from it
            return (0.0, 1.0)
        low, high = drawn[-2:]
        return (low, high)

    def _number(self, col: ColumnInfo) -> float:
        if col.numbers:
            return col.numbers[self.rng.randrange(len(col.numbers))]
        if self.warehouse:
            return threshold(col.words, self.rng)
        return default_range(col)[0]

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
                used.extend(condition_refs(condition))
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
                kinds.append(weighted(self.rng, weights) or "eq")
        if "WHERE" in req and not kinds:
            kinds.append(weighted(self.rng, weights) or "eq")
        if not kinds and not req & {"LIKE", "BETWEEN", "IN", "SUBQUERY", "NOT", "OR"}:
            kinds = [
                weighted(self.rng, weights) or "eq" for _ in range(self._condition_count(intent))
            ]
        return kinds

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
                low, high = self._span_of(col) if self.warehouse else default_range(col)
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


def condition_refs(condition: Condition) -> list[Ref]:
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


def default_range(col: ColumnInfo) -> tuple[float, float]:
    """A plausible range for a numeric column without sampled numbers (no data)."""
    words = col.words.lower().split(" ")
    if "year" in words:
        return 2000.0, 2010.0
    if "age" in words:
        return 20.0, 30.0
    return 10.0, 100.0
