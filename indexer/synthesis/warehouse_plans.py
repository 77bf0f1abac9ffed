"""The parts of a plan only a warehouse gets: time spans where SQLite-style plans would put a
placeholder value, the shards of a table family, and plain shapes that read as English.

A schema-only warehouse has no sampled values, so a filter on a category would name a value
nobody gave ("with a given state fips code"). A filter is written only where there is a real
value (one the column's description quotes, `warehouse_roles.described_values`); otherwise a
date or timestamp column gives a time span (a year, a month), which needs no value, and failing
that there is no filter. A table of a BigQuery date family is read through its wildcard over
the month (or year) of its newest shard, the span its name says exists.
"""

from __future__ import annotations

import calendar
import random
from collections.abc import Sequence

from indexer.synthesis.query_plans import Period, Ref
from indexer.synthesis.warehouse_roles import periodic

YEARS = tuple(range(2015, 2023))
"""Years a span is drawn from: the estate's public datasets mostly cover them."""

#: how many WHERE conditions each intent draws on a warehouse table (one at most: a wide
#: table's column names are long, and two of them make a run-on)
CONDITION_COUNTS = {
    "list": (0, 1, 1),
    "count": (0, 1, 1),
    "aggregate": (0, 1),
    "group": (0, 0, 1),
    "superlative": (0, 1),
    "top": (0, 1),
}
CONDITION_WEIGHTS = {
    "either": 0,
    "eq": 4,
    "num": 3,
    "period": 4,
    "like": 0,
    "between": 1,
    "in": 1,
    "versus": 1,
    "neq": 0,
    "flag": 0,
}


def span_refs(refs: Sequence[Ref]) -> list[Ref]:
    """The columns a time span can filter: dates and timestamps by type."""
    return [r for r in refs if r.column.temporal and periodic(r.column.type)]


def period(ref: Ref | None, rng: random.Random, year: int | None = None) -> Period:
    """A year or a month of `year` (drawn from `YEARS` when None) on `ref`'s dates."""
    year = year if year is not None else rng.choice(YEARS)
    if rng.random() < 0.5:
        return _span(ref, year, None)
    return _span(ref, year, rng.randrange(1, 13))


def shard_period(suffix: str, rng: random.Random) -> Period:
    """The shards of a family: the month (or the year) of its newest shard, `YYYYMMDD`."""
    year, month = int(suffix[:4]), int(suffix[4:6])
    return _span(None, year, month if rng.random() < 0.7 else None)


def _span(ref: Ref | None, year: int, month: int | None) -> Period:
    first, last = (1, 12) if month is None else (month, month)
    end_day = calendar.monthrange(year, last)[1]
    label = str(year) if month is None else f"{calendar.month_name[month]} {year}"
    if ref is None:  # `_TABLE_SUFFIX`, YYYYMMDD
        return Period(None, f"{year}{first:02d}01", f"{year}{last:02d}{end_day:02d}", label)
    return Period(ref, f"{year}-{first:02d}-01", f"{year}-{last:02d}-{end_day:02d}", label)
