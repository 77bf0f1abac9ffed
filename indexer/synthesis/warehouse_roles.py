"""What a warehouse column is good for in a question, where the schema is all there is.

A warehouse export (BigQuery, Snowflake, ...) has real types, descriptions and nested fields
but no sampled values, and its tables are wide. The roles `indexer.synthesis.profiles` reads
from names and samples are then corrected here, for databases of any dialect but SQLite (the
Spider-style pairs do not move; `is_warehouse`):

- a column of a type no template can use is left out: the RECORD / STRUCT / ARRAY containers
  (their fields are columns of their own), VARIANT, OBJECT, GEOGRAPHY, BYTES, JSON;
- a point in time is never a measure, whatever its type (`created_at INT64`, `visitStartTime`);
  it is filtered by a date range only where its type is a date or a timestamp (`periodic`);
- a number is a category only where its last word says so (`store_type`), never a count or a
  measure of census-like tables (`male_45_64_grade_9_12`, `different_house_year_ago_same_city`);
- a column's values are those its description quotes (`"organic", "cpc"` of a traffic medium),
  the only real values a schema-only catalog has;
- thresholds come from the column's words (a rate is compared with 0.5, a population with
  10,000), not always 10.
"""

from __future__ import annotations

import calendar
import random
import re

from schemagraph.dialects import dialect_of
from schemagraph.documentation import quoted_values
from schemagraph.humanize import humanize
from schemagraph.model import Column, Database, Table, fold

_UNUSABLE_TYPE = re.compile(
    r"^(STRUCT|RECORD|ARRAY|VARIANT|OBJECT|GEOGRAPHY|GEOMETRY|BYTES|BINARY|VARBINARY|JSON|MAP)\b",
    re.IGNORECASE,
)
_DATE_TYPE = re.compile(r"^(DATE|DATETIME|TIMESTAMP)", re.IGNORECASE)
_BOOL_TYPE = re.compile(r"^BOOL", re.IGNORECASE)
_INTEGER_TYPE = re.compile(r"^(INT|INTEGER|BIGINT|SMALLINT|TINYINT|INT64|NUMBER\(\d+,\s*0\))$")
POINT_IN_TIME = frozenset({"at", "time", "timestamp", "datetime", "date", "dt", "ts", "day"})
"""Last words of a name that is a point in time (`created_at`, `visitStartTime`)."""

_MAX_VALUE_CHARS = 30
_SHARD_NAME = re.compile(r"^(?P<stem>.*[A-Za-z].*?)_?(?:19|20)\d{4}(?:\d{2})?$")
_PERIOD_WORDS = frozenset({"day", "week", "month", "year", "quarter", "date"})
_LEVELS = frozenset({"list", "element", "item", "items", "array", "value", "values"})
"""Levels of a nested path that name no field (`geneEssentiality.list.element.x`)."""
_DATED = re.compile(
    r"(?<![\d.])(?P<year>(?:19|20)\d{2})(?P<month>0[1-9]|1[0-2])(?P<day>0[1-9]|[12]\d|3[01])?(?![\d.])"
)

#: (words of a column, thresholds to draw from), first match wins
_THRESHOLDS: tuple[tuple[frozenset[str], tuple[float, ...]], ...] = (
    (frozenset({"rate", "ratio", "share", "fraction", "proportion"}), (0.1, 0.25, 0.5)),
    (frozenset({"percent", "percentage", "pct"}), (5, 25, 50)),
    (frozenset({"pval", "p", "probability", "score", "q"}), (0.05, 0.5, 0.9)),
    (frozenset({"latitude", "lat"}), (30, 40, 45)),
    (frozenset({"longitude", "lon", "lng"}), (-100, -90, 0)),
    (frozenset({"age"}), (18, 30, 65)),
    (frozenset({"year"}), (2010, 2015, 2020)),
    (frozenset({"population", "households", "units", "people", "persons"}), (1000, 10000, 50000)),
    (
        frozenset({"revenue", "price", "cost", "amount", "sales", "income", "value", "usd"}),
        (50, 100, 1000),
    ),
    (frozenset({"seconds", "duration", "minutes", "mins"}), (30, 60, 300)),
    (frozenset({"count", "number", "total", "visits", "hits", "pageviews", "views"}), (2, 5, 100)),
)
_DEFAULT_THRESHOLDS = (1, 5, 20, 100)
_LAST_ONLY = frozenset({"year", "age", "p", "q"})
"""Words that make a threshold only as a name's last word (`birth_year`, not `year_ago_city`)."""


def is_warehouse(db: Database) -> bool:
    """Whether synthesis treats `db` as a warehouse: an engine other than SQLite, known from its
    schema alone (an export or DDL: no SQLite file, no server URL). SQLite's Spider-style pairs
    stay as they were, and a live server's too: its SQL is written in SQLite's and translated
    when it runs (`schemagraph.sql.live_engine`)."""
    return dialect_of(db) != "sqlite" and db.path is None and db.url is None


def unsharded(name: str) -> str:
    """A shard's name without its date (`ga_sessions_20170801` -> `ga_sessions`): the noun of
    what its rows are; "September 2024 entries" where the rest only names a period
    (`MONTH___202409`)."""
    match = _SHARD_NAME.match(name)
    if match is None:
        return name
    if fold(match["stem"].strip("_")) in _PERIOD_WORDS:
        return dated_words(name[len(match["stem"]) :].strip("_")) + " entries"
    return match["stem"].rstrip("_")


def field_words(name: str) -> str:
    """The words of a column: a nested field by its own name, with its record's where that name
    alone is one word (`hits.product.productRevenue` -> "product revenue", `totals.visits` ->
    "totals visits", `trafficSource.source` -> "traffic source"), without the `list` / `element`
    levels of repeated fields; dates in names as dates (`assignee_id_20200331` -> "assignee ID
    March 31, 2020")."""
    parts = [p for p in name.split(".") if fold(p) not in _LEVELS] or [name]
    words = humanize(parts[-1])
    if len(parts) > 1 and " " not in words:
        parent = humanize(parts[-2])
        ends = parent.lower().split(" ")[-1] == words.lower()
        words = parent if ends else f"{parent} {words}"
    return dated_words(words)


def dated_words(words: str) -> str:
    """`202409` -> "September 2024", `20200331` -> "March 31, 2020" in `words`."""

    def date(match: re.Match[str]) -> str:
        year, month, day = match["year"], int(match["month"]), match["day"]
        name = calendar.month_name[month]
        return f"{name} {int(day)}, {year}" if day else f"{name} {year}"

    return _DATED.sub(date, words)


def once(words: str) -> str:
    """`words` without a word repeated next to itself ("census places places ohio" -> "census
    places ohio": a dataset's last word is often its tables' first)."""
    out: list[str] = []
    for word in words.split(" "):
        if not out or fold(out[-1]) != fold(word):
            out.append(word)
    return " ".join(out)


def plain_words(words: str) -> bool:
    """Whether `words` read as words, not as a schema name (`level_4__width`)."""
    return "_" not in words and "." not in words


def usable(column: Column) -> bool:
    """Whether a template can read `column` (not a container, VARIANT, geography, bytes...)."""
    return not _UNUSABLE_TYPE.match(column.type.strip())


def usable_columns(table: Table) -> tuple[Column, ...]:
    return tuple(c for c in table.columns if usable(c))


def point_in_time(words: list[str]) -> bool:
    """`created at`, `visit start time`, `event timestamp`: a moment, never a measure."""
    return bool(words) and words[-1] in POINT_IN_TIME


def periodic(type_: str) -> bool:
    """Whether a column of `type_` can be filtered by a date range (`>= '2017-01-01'`)."""
    return bool(_DATE_TYPE.match(type_.strip()))


def boolean(type_: str) -> bool:
    return bool(_BOOL_TYPE.match(type_.strip()))


def numeric_category(words: list[str], type_: str, category_words: frozenset[str]) -> bool:
    """A number is a category only when it is an integer named as one at its end (`store_type`,
    `division`), not a count or a measure that happens to hold a category's word."""
    return bool(_INTEGER_TYPE.match(type_.strip().upper())) and words[-1] in category_words


def described_values(table: Table, column: Column) -> tuple[str, ...]:
    """The short values `column`'s description quotes (`"organic", "cpc"`), not names of the
    table's columns, for a text column only."""
    names = {fold(c.name) for c in table.columns}
    found = []
    for value in quoted_values(column.description):
        text = value.strip()
        if (
            0 < len(text) <= _MAX_VALUE_CHARS
            and fold(text) not in names
            and "\n" not in text
            and any(ch.isalnum() for ch in text)
        ):
            found.append(text)
    return tuple(found)


def threshold(words: str, rng: random.Random) -> float:
    """A round number to compare a column named `words` with, drawn with `rng`."""
    parts = words.lower().split(" ")
    for keys, options in _THRESHOLDS:  # the last word first: "house year ago city" is no year
        if parts[-1] in keys:
            return float(rng.choice(options))
    for keys, options in _THRESHOLDS:
        if set(parts) & keys - _LAST_ONLY:
            return float(rng.choice(options))
    return float(rng.choice(_DEFAULT_THRESHOLDS))
