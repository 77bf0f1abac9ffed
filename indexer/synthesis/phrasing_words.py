"""The words synthetic questions are written with: the lexicon of comparisons, aggregates,
superlatives and orderings (which `indexer.synthesis.faithful` checks questions against), and how
a question names a column and a value.

Retrieval matches real questions against these, so they use the words people use: humanized
table and column names ("the names and ages of singers"), sampled values verbatim ("from
France"), synonyms for aggregates (average/mean, total, number of, maximum/highest/largest) and
comparisons (greater than/more than/above/over, older than, after).
"""

from __future__ import annotations

import random

from indexer.synthesis.profiles import ColumnInfo, TableInfo
from indexer.synthesis.query_plans import Lit, Ref
from schemagraph.humanize import join_words, plural
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
TRUTHY = {"1", "t", "true", "yes", "y"}
LINK_WORDS = {"in", "of", "has", "have", "to", "for", "and", "by", "with", "on", "at", "from"}

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


def column_phrase(ref: Ref, subject: TableInfo, *, many: bool = False) -> str:
    """How to name a column in a question about `subject`: its short name for the subject's own
    columns ("age"), with the table's noun for other tables' ("stadium capacity")."""
    col = ref.column
    if fold(ref.table.name) == fold(subject.name):
        words = col.short
    elif col.words != col.short or shares_word(ref.table.singular, col.words):
        words = col.words
    else:
        words = f"{ref.table.singular} {col.short}"
    return plural(words) if many else words


def shares_word(first: str, second: str) -> bool:
    words = {w.lower() for w in first.split(" ") if len(w) > 2}
    return bool(words & {w.lower() for w in second.split(" ")})


def columns_phrase(refs: list[Ref], subject: TableInfo, *, many: bool = False) -> str:
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


def compare_words(col: ColumnInfo, op: str, rng: random.Random) -> str:
    words = col.words.lower().split(" ")
    if op in AGE_COMPARE and "age" in words and rng.random() < 0.6:
        return rng.choice(AGE_COMPARE[op])
    if op in TIME_COMPARE and (col.temporal or (col.ordinal and "year" in words)):
        return rng.choice(TIME_COMPARE[op])
    return rng.choice(COMPARE[op])


def sup_word(col: ColumnInfo, desc: bool, rng: random.Random) -> str:
    """ "highest" / "lowest", or "latest" / "earliest" for dates and years."""
    if col.temporal or "year" in col.words.lower().split(" "):
        return rng.choice(TIME_SUPERLATIVE[desc])
    return rng.choice(SUPERLATIVE[desc])


def agg_word(func: str, rng: random.Random) -> str:
    return rng.choice(AGG_WORDS[func])


def is_place(col: ColumnInfo) -> bool:
    return bool(PLACE_WORDS & set(col.words.lower().split(" ")))
