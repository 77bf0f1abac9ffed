"""The tables and groups of the template synthesizer's plans: the subject a question is about,
the columns it shows, the joins or the `IN (SELECT ...)` that reach the traversal's other
tables, and GROUP BY with its aggregates and HAVING (`GroupBuilder`, on the conditions of
`indexer.synthesis.template_conditions`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from indexer.synthesis.profiles import Link, TableInfo, TraversalInfo
from indexer.synthesis.query_plans import (
    Agg,
    AggFunc,
    Compare,
    CompareOp,
    Condition,
    Having,
    Intent,
    Membership,
    Order,
    Plan,
    Ref,
    join_tree,
)
from indexer.synthesis.template_conditions import ConditionBuilder, pick
from schemagraph.model import fold

MEASURE_FUNCS: tuple[AggFunc, ...] = ("AVG", "SUM", "MIN", "MAX")
_OWN_ID = re.compile(r"(?:^|_)ids?$|[a-z]Ids?$|ID$", re.IGNORECASE)
"""A warehouse key named as an id (`geo_id`, `fullVisitorId`): grouped by, one group a row."""


class GroupBuilder(ConditionBuilder):
    """Subjects, projections, joins and groups of one traversal's plans."""

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
        picked = pick(self.rng, entities)
        assert picked is not None
        return picked

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

    def _base(
        self, intent: Intent
    ) -> tuple[TableInfo, tuple[TableInfo, ...], tuple, Membership | None]:
        """Subject, tables and links of the main query, and a membership condition when the
        other tables are reached through a subquery instead of joins."""
        if self._membership_mode(intent):
            subject = pick(self.rng, self._membership_subjects())
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

    def _direction(self) -> bool | None:
        if "DESC" in self.required:
            return True
        if "ASC" in self.required:
            return False
        roll = self.rng.random()
        return True if roll < 0.55 else (False if roll < 0.7 else None)

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
        picked = pick(self.rng, options)
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
        wanted = [f for f in MEASURE_FUNCS if f in self.required]
        if self.warehouse:  # one aggregate a group: "Also show the lowest ..." makes run-ons
            wanted = wanted[:1]
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
