"""Questions people would ask, rendered from a `Plan`.

Retrieval matches real questions against these, so they use the words people use: humanized
table and column names ("the names and ages of singers"), sampled values verbatim ("from
France"), and many phrasings of each shape: questions and imperatives ("What are", "Show",
"List", "Find", "How many", "Which"), synonyms for aggregates (average/mean, total, number of,
maximum/highest/largest) and comparisons (greater than/more than/above/over, older than, after).
Every choice is drawn from the `random.Random` the caller seeds, so a seed gives one question.

The words (lexicon, column and value phrases) are `indexer.synthesis.phrasing_words`, the
clauses that say conditions `indexer.synthesis.phrasing_conditions`; this module writes the
whole question of each intent.
"""

from __future__ import annotations

import random
from dataclasses import replace

from indexer.synthesis.phrasing_conditions import plain_refs, relative_clauses
from indexer.synthesis.phrasing_words import (
    AGG_WORDS,
    COMPARE,
    COUNT_COMPARE,
    LINK_WORDS,
    SUPERLATIVE,
    agg_word,
    column_phrase,
    columns_phrase,
    number_phrase,
    shares_word,
    sup_word,
)
from indexer.synthesis.profiles import ColumnInfo, TableInfo
from indexer.synthesis.query_plans import Agg, Compare, Plan
from schemagraph.humanize import join_words, plural, possessive, singular, with_article
from schemagraph.model import fold


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
    rest = [w for w in subject.singular.split(" ") if w.lower() not in own | LINK_WORDS]
    if not rest:
        return subject
    noun = " ".join(rest)
    return replace(subject, singular=singular(noun), plural=plural(noun))


def _finish(text: str) -> str:
    text = " ".join(text.split()).replace(" ,", ",").replace(" ?", "?").replace(" .", ".")
    return text[:1].upper() + text[1:]


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
    refs = plain_refs(plan.items)
    cols = columns_phrase(refs, plan.subject)
    cols_many = columns_phrase(refs, plan.subject, many=True)
    ents, ent = plan.subject.plural, plan.subject.singular
    order = _order_phrase(plan, rng)
    if plan.distinct:
        rel = relative_clauses(plan, rng)
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
        rel = relative_clauses(plan, rng, many=False)
        return rng.choice(
            (
                f"What is the {cols} of the {ent}{rel}?",
                f"Find the {cols} of the {ent}{rel}.",
                f"Show the {cols} of the {ent}{rel}.",
                f"Tell me the {cols} of the {ent}{rel}.",
            )
        )
    rel = relative_clauses(plan, rng)
    heads = [
        f"What are the {cols_many} of {ents}{rel}{order}?",
        f"What are the {cols_many} of all the {ents}{rel}{order}?",
        f"Show the {cols} of all {ents}{rel}{order}.",
        f"List the {cols} of {ents}{rel}{order}.",
        f"Find the {cols} of the {ents}{rel}{order}.",
        f"Give me the {cols} of every {ent}{relative_clauses(plan, rng, many=False)}{order}.",
        f"Return the {cols} of {ents}{rel}{order}.",
        f"Show me the {cols} of each {ent}{relative_clauses(plan, rng, many=False)}{order}.",
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
    rel = relative_clauses(plan, rng)
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
    return f"{agg_word(agg.func, rng)} {column_phrase(agg.ref, subject)}"


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
    rel = relative_clauses(plan, rng)
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
    rel = relative_clauses(plan, rng)
    aggs = [i for i in plan.items if i.func is not None]
    shown = [r for r in plain_refs(plan.items) if plan.group is None or r != plan.group]
    labels = columns_phrase(shown, plan.subject) if shown else ""
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
    if is_entity and labels and not shares_word(labels, g):
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
    refs = plain_refs(plan.items)
    cols = columns_phrase(refs, plan.subject)
    key = plan.order.agg.ref
    desc = bool(plan.order.desc)
    by = column_phrase(key, plan.subject)
    sup = sup_word(key.column, desc, rng)
    ent = plan.subject.singular
    rel = relative_clauses(plan, rng, many=False)
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
    refs = plain_refs(plan.items)
    cols = columns_phrase(refs, plan.subject)
    cols_many = columns_phrase(refs, plan.subject, many=True)
    key = plan.order.agg.ref
    desc = bool(plan.order.desc)
    by = column_phrase(key, plan.subject)
    sup = sup_word(key.column, desc, rng)
    ents = plan.subject.plural
    k = plan.limit
    rel = relative_clauses(plan, rng)
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
