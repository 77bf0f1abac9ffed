"""PreSQL schema linking (PET-SQL): the tables a preliminary query reads become the schema of
the final prompt, and the PreSQL's Spider hardness picks the voters of the fine-grained vote.

Tables come from the sqlglot syntax tree (`schemagraph.sql.tables_in_sql`), mapped to the
catalog's spelling; names the database does not have are reported and dropped. When the PreSQL
is missing, does not parse or names no table of the database, the linking falls back to the
schema the PreSQL was written against.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from schemagraph import Database
from schemagraph.dialects import name_parts, sql_dialect
from schemagraph.model import fold
from schemagraph.sql import SqlError, spider_hardness, tables_in_sql


@dataclass(frozen=True)
class Linking:
    """The linked tables (catalog spelling, schema order), how they were found, the unknown
    names the PreSQL used, and the PreSQL's hardness (None when it does not parse)."""

    tables: tuple[str, ...]
    fallback: bool
    reason: str = ""
    unknown: tuple[str, ...] = ()
    hardness: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "tables": list(self.tables),
            "fallback": self.fallback,
            "reason": self.reason,
            "unknown_tables": list(self.unknown),
            "hardness": self.hardness,
        }


def presql_hardness(sql: str | None) -> str | None:
    """Spider hardness of `sql` (easy, medium, hard, extra), or None if it does not parse."""
    if not sql:
        return None
    try:
        return spider_hardness(sql).value
    except SqlError:
        return None


def link_tables(db: Database, presql: str | None, schema: Sequence[str]) -> Linking:
    """The tables of `db` that `presql` reads; `schema` (what the PreSQL saw) on failure."""
    hardness = presql_hardness(presql)
    if not presql:
        return Linking(tuple(schema), True, "no PreSQL", hardness=hardness)
    try:
        named = tables_in_sql(presql, dialect=sql_dialect(db))
    except SqlError as exc:
        return Linking(tuple(schema), True, f"PreSQL does not parse: {exc}", hardness=hardness)
    # a warehouse table is named as its engine names it: matched by its last part, and a
    # wildcard (`ga_sessions_*`) stands for the family it covers
    read = {t.name: fold(name_parts(t)[-1]) for t in db.tables}
    stems = [n[:-1] for n in named if n.endswith("*")]
    known = [
        t
        for t, last in read.items()
        if fold(t) in named or last in named or any(last.startswith(s) for s in stems)
    ]
    covered = {fold(t) for t in known} | {read[t] for t in known}
    unknown = tuple(sorted(n for n in named if n not in covered and not n.endswith("*")))
    if not known:
        return Linking(
            tuple(schema), True, "PreSQL reads no table of the database", unknown, hardness
        )
    return Linking(tuple(known), False, "", unknown, hardness)
