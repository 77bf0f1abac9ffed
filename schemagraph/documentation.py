"""Descriptions of tables and columns: attaching them to a catalog, and reading them as words.

An overlay (a user's glossary, a dbt manifest) holds text keyed by `db.table` or
`db.table.column`. Database ids of live sources contain dots (`warehouse.sales`), so a key is
never split on its first dot: its database is the longest catalog id it starts with, then a table
of that database, then (maybe) a column. Keys that match nothing are reported, not dropped.

Downstream stages read descriptions from the catalog only. `summary` is a description cut to a
few words (for table documents and prompts); `phrase` is a description short enough to stand
for the name in a question ("total bilirubin" for `T-BIL`), or None; `quoted_values` are the
values a description quotes ("such as 'Eredivisie' and 'Süper Lig'"), which a schema without
sampled rows has nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from schemagraph.counted import counted
from schemagraph.model import Catalog, Database, Table, fold

#: (folded db id, folded table name, folded column name or "" for the table) → text
Described = dict[tuple[str, str, str], str]

#: how many unmatched keys a problem line shows
SHOWN_UNMATCHED = 5

_SPACE = re.compile(r"\s+")
_CLAUSE = re.compile(r"[.,;:(\[]|\s[-–—]\s")
_ARTICLE = re.compile(r"^(the|a|an)\s+", re.IGNORECASE)
_MAX_PHRASE_WORDS = 5
#: first words of a clause that is not a name ("In the orders table, ...", "Stores the ...")
_NOT_NAME_START = frozenset(
    (  # noqa: SIM905
        "in of for on at by to from with within this these it its each every which that stores "
        "represents indicates contains records refers is are was"
    ).split()
)
#: last words of a clause about the schema, not the data ("the 'orders' table")
_NOT_NAME_END = frozenset({"table", "column", "field", "database", "key"})
#: phrases that say what a column is for, not what it holds
_GENERIC = frozenset({"identifier", "unique identifier", "unique id", "id", "primary key"})
#: a quoted stretch of text: 'x' or "x" (not an apostrophe inside a word: "the table's")
_QUOTED = re.compile(r"""(?<!\w)'([^'\n]{1,60})'(?!\w)|(?<!\w)"([^"\n]{1,60})"(?!\w)""")


def clean(text: object) -> str:
    """Description text on one line, without surrounding blanks ("" for None and non-text)."""
    return _SPACE.sub(" ", text).strip() if isinstance(text, str) else ""


def summary(description: str, max_words: int = 24) -> str:
    """The first `max_words` words of a description, "..." marking a cut."""
    words = clean(description).split(" ")
    if len(words) <= max_words:
        return " ".join(words)
    return " ".join(words[:max_words]) + " ..."


def phrase(description: str) -> str | None:
    """The description's first clause when it is a short noun phrase ("Total bilirubin: mg/dL"
    → "total bilirubin"), else None: a sentence cannot replace a name in a question."""
    text = clean(description)
    head = _CLAUSE.split(text, maxsplit=1)[0].strip() if text else ""
    head = _ARTICLE.sub("", head)
    words = head.split(" ")
    if (
        not head
        or len(words) > _MAX_PHRASE_WORDS
        or not any(c.isalpha() for c in head)
        or any(q in head for q in "'\"`")
        or words[0].lower() in _NOT_NAME_START
        or words[-1].lower() in _NOT_NAME_END
        or head.lower() in _GENERIC
    ):
        return None
    # lower-case ordinary words, keep acronyms (ID, GDP) as written
    return " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in words)


def quoted_values(description: str) -> list[str]:
    """The texts `description` quotes ('x' or "x"), in order, without repeats, with runs of
    white space collapsed as `clean` collapses them. Descriptions
    quote the schema's own names too ("the 'division' column"): the caller tells those apart."""
    out: dict[str, None] = {}
    for match in _QUOTED.finditer(clean(description)):
        text = (match.group(1) or match.group(2) or "").strip()
        if text:
            out.setdefault(text, None)
    return list(out)


def resolve_keys(catalog: Catalog, entries: Mapping[str, str]) -> tuple[Described, list[str]]:
    """`db.table` / `db.table.column` keys resolved against `catalog`: the described parts and
    the keys that match no database, table or column (in the given order)."""
    ids = sorted((fold(db.id) for db in catalog), key=len, reverse=True)
    found: Described = {}
    unmatched: list[str] = []
    for key, text in entries.items():
        target = _resolve(catalog, ids, key)
        if target is None:
            unmatched.append(key)
        elif clean(text):
            found[target] = clean(text)
    return found, unmatched


def _resolve(catalog: Catalog, ids: list[str], key: str) -> tuple[str, str, str] | None:
    folded = fold(key.strip())
    for db_id in ids:  # longest first: `warehouse.sales.orders` is in `warehouse.sales`
        if not folded.startswith(db_id + "."):
            continue
        db = catalog.database(db_id)
        rest = key.strip()[len(db_id) + 1 :]
        # table names may hold dots too: try the longest table name the rest starts with
        for table in sorted(db.tables, key=lambda t: len(t.name), reverse=True):
            name = fold(table.name)
            if fold(rest) == name:
                return db_id, name, ""
            if fold(rest).startswith(name + ".") and table.has_column(rest[len(name) + 1 :]):
                return db_id, name, fold(rest[len(name) + 1 :])
    return None


def unmatched_problem(origin: str, unmatched: list[str]) -> str:
    """One problem line: how many keys of `origin` matched nothing, and the first few."""
    shown = ", ".join(unmatched[:SHOWN_UNMATCHED])
    more = ", ..." if len(unmatched) > SHOWN_UNMATCHED else ""
    return (
        f"{origin}: {counted(len(unmatched), 'description')} "
        f"{'matches' if len(unmatched) == 1 else 'match'} no database, table or column "
        f"of the catalog ({shown}{more}); keys are db.table or db.table.column"
    )


def describe(catalog: Catalog, described: Described, problems: Sequence[str] = ()) -> Catalog:
    """`catalog` with the descriptions of `described` (replacing what was there) and
    `problems` added to its problems."""
    if not described:
        return Catalog(catalog.databases, (*catalog.problems, *problems))
    return Catalog(
        tuple(describe_database(db, described) for db in catalog),
        (*catalog.problems, *problems),
    )


def describe_database(db: Database, described: Described) -> Database:
    """`db` with the descriptions of `described` that are about it."""
    key = fold(db.id)
    return replace(db, tables=tuple(_describe_table(key, t, described) for t in db.tables))


def _describe_table(db_key: str, table: Table, described: Described) -> Table:
    name = fold(table.name)
    columns = tuple(
        replace(c, description=text) if (text := described.get((db_key, name, fold(c.name)))) else c
        for c in table.columns
    )
    text = described.get((db_key, name, ""), table.description)
    return replace(table, columns=columns, description=text)
