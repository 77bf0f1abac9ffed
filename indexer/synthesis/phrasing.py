"""Questions people would ask, rendered from a `Plan`.

Retrieval matches real questions against these, so they use the words people use: humanized
table and column names ("the names and ages of singers"), sampled values verbatim ("from
France"), and many phrasings of each shape: questions and imperatives ("What are", "Show",
"List", "Find", "How many", "Which"), synonyms for aggregates (average/mean, total, number of,
maximum/highest/largest) and comparisons (greater than/more than/above/over, older than, after).
Every choice is drawn from the `random.Random` the caller seeds, so a seed gives one question.
"""

from __future__ import annotations

import random
from dataclasses import replace

from indexer.synthesis.humanize import join_words, plural, possessive, singular, with_article
from indexer.synthesis.profiles import ColumnInfo, TableInfo
from indexer.synthesis.query_plans import (
    Agg,
    Between,
    Compare,
    Condition,
    Either,
    InList,
    Like,
    Lit,
    Membership,
    Period,
    Plan,
    Ref,
    VsAggregate,
)
from schemagraph.model import fold

COMPARE = {
    ">": ("greater than", "more than", "above", "over", "larger than", "higher than"),
    "<": ("less than", "below", "under", "smaller than", "lower than"),
    ">=": ("at least", "no less than", "greater than or equal to"),
    "<=": ("at most", "no more than", "less than or equal to"),
    "=": ("equal to",),
    "!=": ("other than", "different from"),
}
TIME_COMPARE = {
    ">": ("after", "later than"),
    "<": ("before", "earlier than"),
    ">=": ("on or after", "no earlier than"),
    "<=": ("on or before", "no later than"),
}
AGE_COMPARE = {">": ("older than",), "<": ("younger than",)}
COUNT_COMPARE = {
    ">": ("more than",),
    ">=": ("at least",),
    "<": ("fewer than", "less than"),
    "<=": ("at most", "no more than"),
    "=": ("exactly",),
    "!=": ("other than",),
}
AGG_WORDS = {
    "AVG": ("average", "average", "mean"),
    "SUM": ("total", "total", "combined"),
    "MIN": ("minimum", "lowest", "smallest"),
    "MAX": ("maximum", "highest", "largest"),
}
SUPERLATIVE = {True: ("highest", "largest", "greatest", "biggest"), False: ("lowest", "smallest")}
TIME_SUPERLATIVE = {True: ("latest", "most recent"), False: ("earliest",)}
PLACE_WORDS = {"country", "city", "location", "state", "nationality", "hometown", "town"}
PLACE_WORDS |= {"region", "continent", "county", "district", "citizenship"}
_TRUTHY = {"1", "t", "true", "yes", "y"}
_LINK_WORDS = {"in", "of", "has", "have", "to", "for", "and", "by", "with", "on", "at", "from"}

# The words questions say a query's parts with; `faithful` checks pairs against them.
COUNT_WORDS = ("how many", "number", "count")
DISTINCT_WORDS = ("distinct", "different", "unique")
GROUP_WORDS = ("each", "per", "every")
ORDER_WORDS = ("order", "ordered", "sort", "sorted", "descending", "ascending", "alphabetically")
DESC_ORDER_WORDS = ("descending", "reverse", "from highest", "from the highest")
ASC_ORDER_WORDS = ("ascending", "alphabetical", "alphabetically", "from lowest")
LIKE_WORDS = ("contains", "containing", "includes", "in their")
PREFIX_WORDS = ("starts with", "start with", "beginning with", "begins with", "begin with")
RANGE_WORDS = ("between", "range")
NEGATION_WORDS = ("not", "no", "neither", "without", "other than", "different from", "except")


def render_question(plan: Plan, rng: random.Random) -> str:
    """A natural-language question whose answer is the plan's query."""
    renderers = {
        "list": _list,
        "count": _count,
        "aggregate": _aggregate,
        "group": _group,
        "superlative": _superlative,
        "top": _top,
    }
    if plan.intent == "group":
        plan = replace(plan, subject=_counted(plan))
    text = renderers[plan.intent](plan, rng)
    return _finish(text)


def _counted(plan: Plan) -> TableInfo:
    """The subject of a grouped count named by what it counts: a table that only links two
    others (`singer_in_concert` counted per singer) by its words other than the group's
    ("concerts": "the singers with at least 3 concerts", not "... 3 singers in concert")."""
    subject, group = plan.subject, plan.group
    if not subject.bridge or group is None or fold(group.table.name) == fold(subject.name):
        return subject
    own = {w.lower() for n in (group.table.singular, group.table.plural) for w in n.split(" ")}
    rest = [w for w in subject.singular.split(" ") if w.lower() not in own | _LINK_WORDS]
    if not rest:
        return subject
    noun = " ".join(rest)
    return replace(subject, singular=singular(noun), plural=plural(noun))


def _finish(text: str) -> str:
    text = " ".join(text.split()).replace(" ,", ",").replace(" ?", "?").replace(" .", ".")
    return text[:1].upper() + text[1:]


# --- names of things -----------------------------------------------------------------------


def column_phrase(ref: Ref, subject: TableInfo, *, many: bool = False) -> str:
    """How to name a column in a question about `subject`: its short name for the subject's own
    columns ("age"), with the table's noun for other tables' ("stadium capacity")."""
    col = ref.column
    if fold(ref.table.name) == fold(subject.name):
        words = col.short
    elif col.words != col.short or _shares_word(ref.table.singular, col.words):
        words = col.words
    else:
        words = f"{ref.table.singular} {col.short}"
    return plural(words) if many else words


def _shares_word(first: str, second: str) -> bool:
    words = {w.lower() for w in first.split(" ") if len(w) > 2}
    return bool(words & {w.lower() for w in second.split(" ")})


def _columns(refs: list[Ref], subject: TableInfo, *, many: bool = False) -> str:
    return join_words([column_phrase(r, subject, many=many) for r in refs])


def value_phrase(lit: Lit, rng: random.Random) -> str:
    """A literal as a question mentions it: text verbatim (quoted now and then), numbers plain."""
    if isinstance(lit.value, str):
        text = lit.value.strip()
        quoted = rng.random() < (0.5 if " " in text or not text.isalpha() else 0.25)
        return f"'{text}'" if quoted else text
    return number_phrase(lit.value)


def number_phrase(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _compare_words(col: ColumnInfo, op: str, rng: random.Random) -> str:
    words = col.words.lower().split(" ")
    if op in AGE_COMPARE and "age" in words and rng.random() < 0.6:
        return rng.choice(AGE_COMPARE[op])
    if op in TIME_COMPARE and (col.temporal or (col.ordinal and "year" in words)):
        return rng.choice(TIME_COMPARE[op])
    return rng.choice(COMPARE[op])


def _sup_word(col: ColumnInfo, desc: bool, rng: random.Random) -> str:
    """ "highest" / "lowest", or "latest" / "earliest" for dates and years."""
    if col.temporal or "year" in col.words.lower().split(" "):
        return rng.choice(TIME_SUPERLATIVE[desc])
    return rng.choice(SUPERLATIVE[desc])


def _agg_word(func: str, rng: random.Random) -> str:
    return rng.choice(AGG_WORDS[func])


# --- conditions as relative clauses ---------------------------------------------------------


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
    if _is_place(first.ref.column) and rng.random() < 0.5:
        return f"from {join_words(values, 'or')}"
    return rng.choice(
        (f"whose {col} is {join_words(values, 'or')}", f"with {col} {join_words(values, 'or')}")
    )


def _is_place(col: ColumnInfo) -> bool:
    return bool(PLACE_WORDS & set(col.words.lower().split(" ")))


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
        if _is_place(col):
            options += [f"from {value}", f"in {value}"]
        if col.ordinal and "year" in col.words.lower():
            options += [f"in {value}", f"from the year {value}"]
        return rng.choice(options)
    if cond.op == "!=":
        options = [f"whose {name} is not {value}", f"with {name} other than {value}"]
        if _is_place(col):
            options.append(f"not from {value}")
        return rng.choice(options)
    words = _compare_words(col, cond.op, rng)
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
    truthy = str(cond.value.value).strip().lower() in _TRUTHY or cond.value.value == 1
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


# --- whole questions by intent ---------------------------------------------------------------


def _plain_refs(items: tuple[Agg, ...]) -> list[Ref]:
    return [i.ref for i in items if i.func is None and i.ref is not None]


def _rel(plan: Plan, rng: random.Random, *, many: bool = True) -> str:
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


def _order_phrase(plan: Plan, rng: random.Random) -> str:
    if plan.order is None:
        return ""
    agg = plan.order.agg
    desc = bool(plan.order.desc)
    if agg.func is not None:
        what = _agg_phrase(agg, plan.subject, rng)
        if desc:
            return rng.choice(
                (
                    f", sorted by the {what} in descending order",
                    f", ordered by the {what} from highest to lowest",
                )
            )
        return rng.choice(
            (f", ordered by the {what}", f", sorted by the {what} in ascending order")
        )
    assert agg.ref is not None
    col = column_phrase(agg.ref, plan.subject)
    if agg.ref.column.text:
        if desc:
            return rng.choice(
                (
                    f" in reverse alphabetical order of {col}",
                    f" ordered by {col} in descending order",
                )
            )
        return rng.choice(
            (
                f" in alphabetical order of {col}",
                f" sorted alphabetically by {col}",
                f" ordered by {col}",
            )
        )
    if desc:
        return rng.choice(
            (
                f" in descending order of {col}",
                f" ordered by {col} in descending order",
                f" sorted by {col} from highest to lowest",
                f", from the highest {col} to the lowest",
            )
        )
    return rng.choice(
        (
            f" ordered by {col}",
            f" sorted by {col} in ascending order",
            f" in ascending order of {col}",
            f" ordered by {col} from lowest to highest",
        )
    )


def _list(plan: Plan, rng: random.Random) -> str:
    refs = _plain_refs(plan.items)
    cols = _columns(refs, plan.subject)
    cols_many = _columns(refs, plan.subject, many=True)
    ents, ent = plan.subject.plural, plan.subject.singular
    order = _order_phrase(plan, rng)
    if plan.distinct:
        rel = _rel(plan, rng)
        kind = rng.choice(("distinct", "different", "unique"))
        return rng.choice(
            (
                f"What are the {kind} {cols_many} of {ents}{rel}{order}?",
                f"List the {kind} {cols_many} of all {ents}{rel}{order}.",
                f"Show all {kind} {cols_many} of {ents}{rel}{order}.",
                f"Find the {kind} {cols_many} among {ents}{rel}{order}.",
            )
        )
    if _names_one_row(plan):
        rel = _rel(plan, rng, many=False)
        return rng.choice(
            (
                f"What is the {cols} of the {ent}{rel}?",
                f"Find the {cols} of the {ent}{rel}.",
                f"Show the {cols} of the {ent}{rel}.",
                f"Tell me the {cols} of the {ent}{rel}.",
            )
        )
    rel = _rel(plan, rng)
    heads = [
        f"What are the {cols_many} of {ents}{rel}{order}?",
        f"What are the {cols_many} of all the {ents}{rel}{order}?",
        f"Show the {cols} of all {ents}{rel}{order}.",
        f"List the {cols} of {ents}{rel}{order}.",
        f"Find the {cols} of the {ents}{rel}{order}.",
        f"Give me the {cols} of every {ent}{_rel(plan, rng, many=False)}{order}.",
        f"Return the {cols} of {ents}{rel}{order}.",
        f"Show me the {cols} of each {ent}{_rel(plan, rng, many=False)}{order}.",
    ]
    if not rel and len(refs) == 1 and fold(refs[0].table.name) == fold(plan.subject.name):
        heads.append(f"List all {ent} {cols_many}{order}.")
    return rng.choice(heads)


def _names_one_row(plan: Plan) -> bool:
    """A filter on the label column singles out one row: "the singer named Joe Sharp"."""
    return (
        plan.order is None
        and len(plan.where) == 1
        and isinstance(plan.where[0], Compare)
        and plan.where[0].op == "="
        and plan.where[0].ref.column == (plan.subject.label or None)
        and fold(plan.where[0].ref.table.name) == fold(plan.subject.name)
    )


def _count(plan: Plan, rng: random.Random) -> str:
    item = plan.items[0]
    ents = plan.subject.plural
    rel = _rel(plan, rng)
    if item.distinct and item.ref is not None:
        what = column_phrase(item.ref, plan.subject, many=True)
        kind = rng.choice(("different", "distinct", "unique"))
        return rng.choice(
            (
                f"How many {kind} {what} do {ents}{rel} have?",
                f"How many {kind} {what} are there among {ents}{rel}?",
                f"Count the number of {kind} {what} of {ents}{rel}.",
                f"Find the number of {kind} {what} of {ents}{rel}.",
                f"What is the number of {kind} {what} of {ents}{rel}?",
            )
        )
    if not rel:
        return rng.choice(
            (
                f"How many {ents} are there?",
                f"Count the number of {ents}.",
                f"What is the total number of {ents}?",
                f"Find the number of {ents}.",
                f"How many {ents} do we have?",
                f"Return the number of {ents}.",
                f"What is the count of {ents}?",
            )
        )
    return rng.choice(
        (
            f"How many {ents}{rel} are there?",
            f"Count the number of {ents}{rel}.",
            f"What is the number of {ents}{rel}?",
            f"Find the total number of {ents}{rel}.",
            f"How many {ents} are there{rel}?",
            f"Return the count of {ents}{rel}.",
        )
    )


def _agg_phrase(agg: Agg, subject: TableInfo, rng: random.Random) -> str:
    if agg.func == "COUNT":
        if agg.distinct and agg.ref is not None:
            return f"number of different {column_phrase(agg.ref, subject, many=True)}"
        return f"number of {subject.plural}"
    assert agg.func is not None and agg.ref is not None
    return f"{_agg_word(agg.func, rng)} {column_phrase(agg.ref, subject)}"


def _aggs_phrase(aggs: list[Agg], subject: TableInfo, rng: random.Random) -> str:
    refs = {(fold(a.ref.table.name), fold(a.ref.column.name)) for a in aggs if a.ref is not None}
    if len(aggs) > 1 and len(refs) == 1 and all(a.func not in (None, "COUNT") for a in aggs):
        words = [AGG_WORDS[str(a.func)][0] for a in aggs]
        ref = aggs[0].ref
        assert ref is not None
        return f"{join_words(words)} {column_phrase(ref, subject)}"
    return join_words([_agg_phrase(a, subject, rng) for a in aggs])


def _aggregate(plan: Plan, rng: random.Random) -> str:
    aggs = [i for i in plan.items if i.func is not None]
    what = _aggs_phrase(aggs, plan.subject, rng)
    ents = plan.subject.plural
    rel = _rel(plan, rng)
    be = "are" if len(aggs) > 1 else "is"
    return rng.choice(
        (
            f"What {be} the {what} of {ents}{rel}?",
            f"What {be} the {what} of all {ents}{rel}?",
            f"Find the {what} of all {ents}{rel}.",
            f"Show the {what} of {ents}{rel}.",
            f"What {be} the {what} among {ents}{rel}?",
            f"Compute the {what} of {ents}{rel}.",
            f"Give the {what} for {ents}{rel}.",
        )
    )


def _group_names(plan: Plan) -> tuple[str, str, bool]:
    """(singular, plural, is an entity) of what the query groups by: "stadium" when grouping by
    another table's key, else the column ("country")."""
    assert plan.group is not None
    ref = plan.group
    if ref.column.key and fold(ref.table.name) != fold(plan.subject.name):
        return ref.table.singular, ref.table.plural, True
    name = column_phrase(ref, plan.subject)
    return name, plural(name), False


def _group(plan: Plan, rng: random.Random) -> str:
    g, gs, is_entity = _group_names(plan)
    ents = plan.subject.plural
    rel = _rel(plan, rng)
    aggs = [i for i in plan.items if i.func is not None]
    shown = [r for r in _plain_refs(plan.items) if plan.group is None or r != plan.group]
    labels = _columns(shown, plan.subject) if shown else ""
    if plan.limit is not None and plan.order is not None:
        return _group_extreme(plan, rng, g, gs, is_entity, labels, rel)
    if plan.having is not None:
        text = _group_having(plan, rng, g, gs, labels, rel)
        body, mark = text[:-1], text[-1]
        if aggs:
            what = _aggs_phrase(aggs, plan.subject, rng)
            body += rng.choice((f", and give the {what}", f" along with the {what}"))
        return body + _order_phrase(plan, rng) + mark
    what = _aggs_phrase(aggs, plan.subject, rng) if aggs else f"number of {ents}"
    order = _order_phrase(plan, rng)
    counting = aggs and aggs[0].func == "COUNT" and not aggs[0].distinct
    if is_entity and labels and not _shares_word(labels, g):
        heads = [
            f"Show the {labels} and the {what} for each {g}{order}.",
            f"For each {g}, show the {labels} and the {what}{rel}{order}.",
            f"List each {possessive(g)} {labels} along with the {what}{rel}{order}.",
            f"What is the {what}{rel} for each {g}? Show the {labels} too{order}.",
        ]
        if counting:
            heads.append(
                f"How many {ents}{rel} does each {g} have? List the {labels} and the count{order}."
            )
        return rng.choice(heads)
    heads = [
        f"Show each {g} and the {what}{rel}{order}.",
        f"For each {g}, what is the {what}{rel}{order}?",
        f"Find the {what}{rel} in each {g}{order}.",
        f"What is the {what}{rel} for each {g}{order}?",
        f"List the {what}{rel} per {g}{order}.",
    ]
    if counting:
        heads += [
            f"How many {ents}{rel} are there for each {g}{order}?",
            f"How many {ents}{rel} are there in each {g}{order}?",
            f"Count the {ents}{rel} per {g}{order}.",
        ]
    return rng.choice(heads)


def _having_phrase(plan: Plan, rng: random.Random) -> str:
    assert plan.having is not None
    having = plan.having
    value = number_phrase(having.value)
    if having.agg.func == "COUNT" and not having.agg.distinct:
        ents = plan.subject.plural if having.value != 1 else plan.subject.singular
        return f"{rng.choice(COUNT_COMPARE[having.op])} {value} {ents}"
    what = _agg_phrase(having.agg, plan.subject, rng)
    return f"{with_article(what)} {rng.choice(COMPARE[having.op])} {value}"


def _group_having(plan: Plan, rng: random.Random, g: str, gs: str, labels: str, rel: str) -> str:
    hv = _having_phrase(plan, rng)
    rel_tail = f" among {plan.subject.plural}{rel}" if rel else ""
    heads = [
        f"Which {gs} have {hv}{rel_tail}?",
        f"List the {gs} that have {hv}{rel_tail}.",
        f"Find the {gs} with {hv}{rel_tail}.",
        f"Show the {gs} having {hv}{rel_tail}.",
    ]
    if labels:
        heads += [
            f"What are the {labels} of {gs} with {hv}{rel_tail}?",
            f"Show the {labels} of the {gs} that have {hv}{rel_tail}.",
        ]
    return rng.choice(heads)


def _group_extreme(
    plan: Plan,
    rng: random.Random,
    g: str,
    gs: str,
    is_entity: bool,
    labels: str,
    rel: str,
) -> str:
    assert plan.order is not None and plan.limit is not None
    desc = bool(plan.order.desc)
    agg = plan.order.agg
    ents = plan.subject.plural
    rel_tail = f" among {ents}{rel}" if rel else ""
    show = f" Show its {labels}." if labels and is_entity else ""
    lead = f"Among the {gs} with {_having_phrase(plan, rng)}, " if plan.having else ""
    head = _extreme_head(plan, rng, g, gs, is_entity, rel, rel_tail, show, desc, agg)
    others = [i for i in plan.items if i.func is not None and i != agg]
    if others:
        what = _aggs_phrase(others, plan.subject, rng)
        head += rng.choice((f" Give the {what} too.", f" Also show the {what}."))
    return lead + head[:1].lower() + head[1:] if lead else head


def _extreme_head(
    plan: Plan,
    rng: random.Random,
    g: str,
    gs: str,
    is_entity: bool,
    rel: str,
    rel_tail: str,
    show: str,
    desc: bool,
    agg: Agg,
) -> str:
    assert plan.limit is not None
    ents = plan.subject.plural
    if agg.func == "COUNT" and not agg.distinct:
        most = "most" if desc else "fewest"
        size = "largest" if desc else "smallest"
        heads = [
            f"Which {g} has the {most} {ents}{rel}?{show}",
            f"Find the {g} with the {size} number of {ents}{rel}.{show}",
            f"What is the {g} that has the {most} {ents}{rel}?{show}",
        ]
        if not is_entity:
            common = "most common" if desc else "least common"
            heads.append(f"What is the {common} {g}{rel_tail}?")
            heads.append(f"Which {g} is the {common}{rel_tail}?")
        if plan.limit > 1:
            heads = [f"Which {plan.limit} {gs} have the {most} {ents}{rel}?"]
            if desc:
                heads.append(f"List the top {plan.limit} {gs} by number of {ents}{rel}.")
        return rng.choice(heads)
    what = _agg_phrase(agg, plan.subject, rng)
    sup = rng.choice(SUPERLATIVE[desc])
    if plan.limit > 1:
        return rng.choice(
            (
                f"Which {plan.limit} {gs} have the {sup} {what}{rel_tail}?",
                f"List the {plan.limit} {gs} with the {sup} {what}{rel_tail}.",
            )
        )
    return rng.choice(
        (
            f"Which {g} has the {sup} {what}{rel_tail}?{show}",
            f"Find the {g} with the {sup} {what}{rel_tail}.{show}",
            f"What is the {g} whose {ents} have the {sup} {what}{rel_tail}?{show}",
        )
    )


def _adjective(col: ColumnInfo, desc: bool) -> str | None:
    """ "oldest", "most recent": one word for sorting by age, dates or years."""
    words = col.words.lower().split(" ")
    if words[-1] == "age":
        return "oldest" if desc else "youngest"
    if col.temporal or "year" in words:
        return "most recent" if desc else "earliest"
    return None


def _superlative(plan: Plan, rng: random.Random) -> str:
    assert plan.order is not None and plan.order.agg.ref is not None
    refs = _plain_refs(plan.items)
    cols = _columns(refs, plan.subject)
    key = plan.order.agg.ref
    desc = bool(plan.order.desc)
    by = column_phrase(key, plan.subject)
    sup = _sup_word(key.column, desc, rng)
    ent = plan.subject.singular
    rel = _rel(plan, rng, many=False)
    heads = [
        f"What is the {cols} of the {ent}{rel} with the {sup} {by}?",
        f"Which {ent}{rel} has the {sup} {by}? Give its {cols}.",
        f"Return the {cols} of the {ent}{rel} that has the {sup} {by}.",
        f"Find the {cols} of the {ent} with the {sup} {by}{_comma_rel(rel)}.",
    ]
    adjective = (
        _adjective(key.column, desc) if fold(key.table.name) == fold(plan.subject.name) else None
    )
    if adjective:
        heads += [
            f"What is the {cols} of the {adjective} {ent}{rel}?",
            f"Show the {cols} of the {adjective} {ent}{rel}.",
        ]
    return rng.choice(heads)


def _comma_rel(rel: str) -> str:
    return f", among those{rel}" if rel else ""


def _top(plan: Plan, rng: random.Random) -> str:
    assert plan.order is not None and plan.order.agg.ref is not None and plan.limit is not None
    refs = _plain_refs(plan.items)
    cols = _columns(refs, plan.subject)
    cols_many = _columns(refs, plan.subject, many=True)
    key = plan.order.agg.ref
    desc = bool(plan.order.desc)
    by = column_phrase(key, plan.subject)
    sup = _sup_word(key.column, desc, rng)
    ents = plan.subject.plural
    k = plan.limit
    rel = _rel(plan, rng)
    heads = [
        f"List the {cols} of the {k} {ents}{rel} with the {sup} {by}.",
        f"What are the {cols_many} of the top {k} {ents}{rel} by {by}?"
        if desc
        else f"What are the {cols_many} of the {k} {ents}{rel} with the {sup} {by}?",
        f"Show the {cols} of the {k} {ents} with the {sup} {by}{_comma_rel(rel)}.",
        f"Find the {k} {ents}{rel} with the {sup} {by} and show their {cols}.",
    ]
    adjective = (
        _adjective(key.column, desc) if fold(key.table.name) == fold(plan.subject.name) else None
    )
    if adjective:
        heads.append(f"Show the {cols} of the {k} {adjective} {ents}{rel}.")
    return rng.choice(heads)
