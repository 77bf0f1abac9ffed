"""The clauses of a synthetic question that say a query's conditions: "whose age is above 20",
"in August 2017", "that have no pets", "with courses", each drawn from the caller's seeded
`random.Random` (`relative_clauses` for a plan's WHERE and its joined tables)."""

from __future__ import annotations

import random

from indexer.synthesis.phrasing_words import (
    AGG_WORDS,
    COMPARE,
    TRUTHY,
    column_phrase,
    compare_words,
    is_place,
    value_phrase,
)
from indexer.synthesis.profiles import ColumnInfo, TableInfo
from indexer.synthesis.query_plans import (
    Agg,
    Between,
    Compare,
    Condition,
    Either,
    InList,
    Like,
    Membership,
    Period,
    Plan,
    Ref,
    VsAggregate,
)
from schemagraph.humanize import join_words, with_article
from schemagraph.model import fold


def conditions_phrase(
    conditions: tuple[Condition, ...],
    connector: str,
    subject: TableInfo,
    rng: random.Random,
    *,
    plural_subject: bool = True,
) -> str:
    """ " whose age is above 20 and whose country is France" (with a leading space), or ""."""
    if not conditions:
        return ""
    merged = _merge_or(conditions, connector, subject, rng)
    if merged is not None:
        return " " + merged
    parts = [_condition(c, subject, rng, plural_subject) for c in conditions]
    return " " + f" {connector.lower()} ".join(parts)


def _merge_or(
    conditions: tuple[Condition, ...], connector: str, subject: TableInfo, rng: random.Random
) -> str | None:
    """`x = 'a' OR x = 'b'` reads "whose x is a or b"."""
    if connector != "OR" or not all(isinstance(c, Compare) and c.op == "=" for c in conditions):
        return None
    refs = {(fold(c.ref.table.name), fold(c.ref.column.name)) for c in conditions}  # type: ignore[union-attr]
    if len(refs) != 1:
        return None
    first = conditions[0]
    assert isinstance(first, Compare)
    values = [value_phrase(c.value, rng) for c in conditions]  # type: ignore[union-attr]
    col = column_phrase(first.ref, subject)
    if is_place(first.ref.column) and rng.random() < 0.5:
        return f"from {join_words(values, 'or')}"
    return rng.choice(
        (f"whose {col} is {join_words(values, 'or')}", f"with {col} {join_words(values, 'or')}")
    )


def _condition(cond: Condition, subject: TableInfo, rng: random.Random, many: bool) -> str:
    if isinstance(cond, Compare):
        return _compare_clause(cond, subject, rng, many)
    if isinstance(cond, Between):
        col = column_phrase(cond.ref, subject)
        low, high = value_phrase(cond.low, rng), value_phrase(cond.high, rng)
        if cond.negated:
            return rng.choice(
                (
                    f"whose {col} is not between {low} and {high}",
                    f"with {col} outside the range {low} to {high}",
                )
            )
        return rng.choice(
            (
                f"whose {col} is between {low} and {high}",
                f"with {col} between {low} and {high}",
                f"with {col} from {low} to {high}",
                f"whose {col} is in the range {low} to {high}",
            )
        )
    if isinstance(cond, Like):
        return _like_clause(cond, subject, rng)
    if isinstance(cond, InList):
        col = column_phrase(cond.ref, subject)
        values = [value_phrase(v, rng) for v in cond.values]
        if cond.negated:
            if len(values) == 2:
                return f"whose {col} is neither {values[0]} nor {values[1]}"
            return rng.choice(
                (
                    f"whose {col} is not {join_words(values, 'or')}",
                    f"with {col} other than {join_words(values)}",
                )
            )
        return rng.choice(
            (
                f"whose {col} is {join_words(values, 'or')}",
                f"whose {col} is one of {join_words(values)}",
                f"with {col} {join_words(values, 'or')}",
            )
        )
    if isinstance(cond, VsAggregate):
        return _versus_clause(cond, subject, rng)
    if isinstance(cond, Period):
        return _period_clause(cond, subject, rng)
    if isinstance(cond, Either):
        merged = _merge_or((cond.first, cond.second), "OR", subject, rng)
        if merged is not None:
            return merged
        first = _condition(cond.first, subject, rng, many)
        return f"{first} or {_condition(cond.second, subject, rng, many)}"
    return _membership_clause(cond, subject, rng, many)


def _compare_clause(cond: Compare, subject: TableInfo, rng: random.Random, many: bool) -> str:
    col = cond.ref.column
    name = column_phrase(cond.ref, subject)
    if cond.value.placeholder:
        given = f"a given {name}"
        return f"whose {name} is not {given}" if cond.op == "!=" else f"with {given}"
    value = value_phrase(cond.value, rng)
    other_table = fold(cond.ref.table.name) != fold(subject.name)
    if col.flag and cond.op in ("=", "!="):
        return _flag_clause(col, cond, many)
    if cond.op == "=":
        options = [f"whose {name} is {value}", f"with {name} {value}"]
        naming = col.label and col in cond.ref.table.labels
        if naming and not other_table:
            options += [f"named {value}", f"called {value}"]
        if naming and other_table:
            options += [f"of the {cond.ref.table.singular} {value}"]
        if is_place(col):
            options += [f"from {value}", f"in {value}"]
        if col.ordinal and "year" in col.words.lower():
            options += [f"in {value}", f"from the year {value}"]
        return rng.choice(options)
    if cond.op == "!=":
        options = [f"whose {name} is not {value}", f"with {name} other than {value}"]
        if is_place(col):
            options.append(f"not from {value}")
        return rng.choice(options)
    words = compare_words(col, cond.op, rng)
    if words in ("older than", "younger than"):
        return rng.choice(
            (f"{words} {value}", f"who are {words} {value}" if many else f"{words} {value}")
        )
    return rng.choice(
        (
            f"whose {name} is {words} {value}",
            f"with {name} {words} {value}",
            f"with {with_article(name)} {words} {value}",
        )
    )


def _period_clause(cond: Period, subject: TableInfo, rng: random.Random) -> str:
    """ "in August 2017" for a family's shards; "with order date in 2017" for a column."""
    if cond.ref is None:
        return f"in {cond.label}"
    col = column_phrase(cond.ref, subject)
    return rng.choice(
        (
            f"with {col} in {cond.label}",
            f"whose {col} is in {cond.label}",
            f"with {col} during {cond.label}",
        )
    )


def _flag_clause(col: ColumnInfo, cond: Compare, many: bool) -> str:
    words = col.words.split(" ")
    verb = words[0].lower() if words[0].lower() in ("is", "has") else "is"
    rest = " ".join(words[1:] if words[0].lower() in ("is", "has") else words)
    truthy = str(cond.value.value).strip().lower() in TRUTHY or cond.value.value == 1
    positive = truthy == (cond.op == "=")
    if verb == "has":
        return f"that {'have' if many else 'has'} {'' if positive else 'no '}{rest}"
    be = "are" if many else "is"
    return f"that {be} {'' if positive else 'not '}{rest}"


def _like_clause(cond: Like, subject: TableInfo, rng: random.Random) -> str:
    col = column_phrase(cond.ref, subject)
    text = cond.text.strip()
    quoted = f"'{text}'" if rng.random() < 0.6 else text
    if cond.negated:
        verb = "does not start with" if cond.prefix else "does not contain"
        return rng.choice((f"whose {col} {verb} {quoted}", f"with {col} that {verb} {quoted}"))
    if cond.prefix:
        return rng.choice(
            (
                f"whose {col} starts with {quoted}",
                f"with {with_article(col)} beginning with {quoted}",
                f"whose {col} begins with {quoted}",
            )
        )
    return rng.choice(
        (
            f"whose {col} contains {quoted}",
            f"with {quoted} in their {col}",
            f"whose {col} includes {quoted}",
            f"with {with_article(col)} containing {quoted}",
        )
    )


def _versus_clause(cond: VsAggregate, subject: TableInfo, rng: random.Random) -> str:
    col = column_phrase(cond.ref, subject)
    if cond.func == "AVG":
        mean = rng.choice(("average", "mean"))
        if cond.op in (">", ">="):
            options = (
                f"whose {col} is above the {mean}",
                f"with {col} greater than the {mean} {col}",
                f"with above-average {col}",
                f"whose {col} is higher than the {mean} {col} of all {cond.ref.table.plural}",
            )
        else:
            options = (
                f"whose {col} is below the {mean}",
                f"with {col} less than the {mean} {col}",
                f"with below-average {col}",
                f"whose {col} is lower than the {mean} {col} of all {cond.ref.table.plural}",
            )
        return rng.choice(options)
    extreme = AGG_WORDS[cond.func][1]  # highest / lowest
    if cond.op == "=":
        return rng.choice((f"with the {extreme} {col}", f"whose {col} is the {extreme}"))
    words = rng.choice(COMPARE[cond.op])
    return f"whose {col} is {words} the {extreme} {col}"


def _membership_clause(cond: Membership, subject: TableInfo, rng: random.Random, many: bool) -> str:
    other = cond.entity
    have = "have" if many else "has"
    if cond.conditions:
        inner = conditions_phrase(cond.conditions, "AND", other, rng, plural_subject=False).strip()
        if cond.negated:
            return rng.choice(
                (
                    f"that do not have {with_article(other.singular)} {inner}"
                    if many
                    else f"that does not have {with_article(other.singular)} {inner}",
                    f"without any {other.singular} {inner}",
                )
            )
        return rng.choice(
            (
                f"that {have} {with_article(other.singular)} {inner}",
                f"with {with_article(other.singular)} {inner}",
                f"that {have} at least one {other.singular} {inner}",
            )
        )
    if cond.negated:
        return rng.choice(
            (
                f"that {have} no {other.plural}",
                f"without any {other.plural}",
                f"that do not have any {other.singular}"
                if many
                else f"that does not have any {other.singular}",
            )
        )
    return rng.choice(
        (
            f"that {have} at least one {other.singular}",
            f"that {have} some {other.plural}",
            f"with any {other.plural}",
        )
    )


def plain_refs(items: tuple[Agg, ...]) -> list[Ref]:
    return [i.ref for i in items if i.func is None and i.ref is not None]


def relative_clauses(plan: Plan, rng: random.Random, *, many: bool = True) -> str:
    """The subject's relative clauses: joined tables the question would otherwise not mention
    ("student enrolments that have courses"), then the WHERE conditions, then the shards of a
    table family read ("in August 2017")."""
    shards = [c for c in plan.where if isinstance(c, Period) and c.ref is None]
    where = tuple(c for c in plan.where if c not in shards)
    conditions = conditions_phrase(where, plan.connector, plan.subject, rng, plural_subject=many)
    conditions += "".join(f" in {c.label}" for c in shards)
    silent = _unmentioned(plan)
    if not silent:
        return conditions
    have = "have" if many else "has"
    names = join_words([t.plural for t in silent])
    mention = rng.choice((f" that {have} {names}", f" with {names}", f" that {have} any {names}"))
    return mention + (f" and{conditions}" if conditions else "")


def _unmentioned(plan: Plan) -> list[TableInfo]:
    """Joined leaf tables no column of the question comes from: the join itself is the
    condition (rows of the subject that have related rows), so the question should say so."""
    if len(plan.tables) < 2 or plan.left_join:
        return []
    used = {fold(plan.subject.name)} | {fold(r.table.name) for r in _plan_refs(plan)}
    degree: dict[str, int] = {}
    for link in plan.links:
        for name in (link.child, link.parent):
            degree[fold(name)] = degree.get(fold(name), 0) + 1
    return [t for t in plan.tables if fold(t.name) not in used and degree.get(fold(t.name)) == 1]


def _plan_refs(plan: Plan) -> list[Ref]:
    refs = [i.ref for i in plan.items if i.ref is not None]
    for cond in plan.where:
        if isinstance(cond, Period):
            refs.extend([cond.ref] if cond.ref is not None else [])
        elif isinstance(cond, Membership):
            refs.append(cond.outer)
        elif isinstance(cond, Either):
            refs.extend((cond.first.ref, cond.second.ref))
        else:
            refs.append(cond.ref)
    if plan.group is not None:
        refs.append(plan.group)
    for agg in (plan.order.agg if plan.order else None, plan.having.agg if plan.having else None):
        if agg is not None and agg.ref is not None:
            refs.append(agg.ref)
    return refs
