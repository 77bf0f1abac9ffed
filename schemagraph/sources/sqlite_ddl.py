"""CREATE TABLE statements that SQLite reads and sqlglot does not, read by SQLite itself.

SQLite's grammar is lenient where sqlglot's is not: a type of several words
(`description BLOB SUB_TYPE TEXT`, Pagila's and sqlite-sakila's `film`) is a type to SQLite.
Such a statement is executed in an empty in-memory database and read back with
`PRAGMA table_info` and `PRAGMA foreign_key_list`: columns, declared types, primary and foreign
keys as SQLite understands them.

Schemas printed by tools that drop the quotes of names (`index INTEGER`, `qty_sold(kg) REAL`,
`Unnamed: 2 REAL`) are read by neither. Such a statement is repaired one column definition at a
time: a definition SQLite rejects gets its name quoted, the name being the words before the
first that begins a type (`Unnamed: 2` before `REAL`). `read_create_table` says which names it
had to quote, so the caller can report the guess.
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from dataclasses import dataclass

from schemagraph.model import Column, ForeignKey
from schemagraph.readonly import quote_identifier

_CREATE = re.compile(
    r"^\s*CREATE\s+(?:(?:TEMP|TEMPORARY)\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?", re.IGNORECASE
)
_CONSTRAINT = re.compile(r"^\s*(CONSTRAINT|PRIMARY|FOREIGN|UNIQUE|CHECK)\b", re.IGNORECASE)
#: what starts a type in SQLite's affinity rules, and the other common type names
_TYPE_WORD = re.compile(
    r"^(\w*(INT|CHAR|CLOB|TEXT|BLOB|REAL|FLOA|DOUB|NUM|DEC|BOOL|DATE|TIME|BIT|BINARY|SERIAL|"
    r"UUID|JSON|MONEY|STRING)\w*)(\(|$)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class SQLiteTable:
    """A table as SQLite read it; `quoted` lists the names that had to be quoted first."""

    name: str
    columns: tuple[Column, ...]
    foreign_keys: tuple[ForeignKey, ...]
    quoted: tuple[str, ...] = ()


def is_create_table(statement: str) -> bool:
    return bool(_CREATE.match(statement))


def read_create_table(statement: str) -> SQLiteTable | str:
    """The table one CREATE TABLE statement makes in SQLite, or why SQLite refuses it."""
    error = _execute(statement)
    if isinstance(error, SQLiteTable):
        return error
    repaired = _repair(statement)
    if repaired is None:
        return error
    text, quoted = repaired
    table = _execute(text)
    if isinstance(table, SQLiteTable):
        return SQLiteTable(table.name, table.columns, table.foreign_keys, tuple(quoted))
    return error


def _execute(statement: str) -> SQLiteTable | str:
    with closing(sqlite3.connect(":memory:")) as conn:
        try:
            conn.execute(statement)
        except (sqlite3.Error, sqlite3.Warning) as exc:
            return f"SQLite: {exc}"
        names = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid"
            )
        ]
        if len(names) != 1:
            return "SQLite: not one CREATE TABLE statement"
        return _table(conn, names[0])


def _table(conn: sqlite3.Connection, name: str) -> SQLiteTable:
    info = conn.execute(f"PRAGMA table_info({quote_identifier(name)})").fetchall()
    columns = tuple(Column(r[1], r[2] or "", bool(r[5])) for r in info)
    parts: dict[int, list[tuple[str, str, str | None]]] = {}
    for row in conn.execute(f"PRAGMA foreign_key_list({quote_identifier(name)})"):
        parts.setdefault(row[0], []).append((row[2], row[3], row[4]))
    keys = []
    for key in parts.values():
        ref_columns = tuple(p[2] for p in key if p[2])
        keys.append(
            ForeignKey(
                name,
                tuple(p[1] for p in key),
                key[0][0],
                ref_columns if len(ref_columns) == len(key) else (),  # () : its primary key
            )
        )
    return SQLiteTable(name, columns, tuple(keys))


def _repair(statement: str) -> tuple[str, list[str]] | None:
    """The statement with the names SQLite rejects quoted, and those names; None when it is
    not a CREATE TABLE with a column list, or nothing needed quoting."""
    match = _CREATE.match(statement)
    if not match:
        return None
    open_at = statement.find("(", match.end())
    if open_at < 0:
        return None
    items, close_at = _items(statement, open_at + 1)
    if close_at < 0:
        return None
    quoted: list[str] = []
    fixed = []
    for item in items:
        if _CONSTRAINT.match(item) or _accepts(item):
            fixed.append(item)
            continue
        repaired = _quote_name(item)
        if repaired is None:
            return None
        fixed.append(repaired[0])
        quoted.append(repaired[1])
    if not quoted:
        return None
    text = statement[: open_at + 1] + ",".join(fixed) + statement[close_at:]
    return text, quoted


def _accepts(definition: str) -> bool:
    """Whether SQLite accepts one column definition."""
    return isinstance(_execute(f"CREATE TABLE t ({definition})"), SQLiteTable)


def _items(text: str, start: int) -> tuple[list[str], int]:
    """The comma-separated items from `start` to the parenthesis that closes the list, and
    where that parenthesis is (-1 when it is not closed)."""
    items: list[str] = []
    depth, i, begin = 0, start, start
    while i < len(text):
        char = text[i]
        if char in "'\"`[":
            close = "]" if char == "[" else char
            end = text.find(close, i + 1)
            while end >= 0 and close != "]" and text[end + 1 : end + 2] == close:
                end = text.find(close, end + 2)  # a doubled quote inside the name
            if end < 0:
                return items, -1
            i = end
        elif char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                items.append(text[begin:i].strip())
                return [item for item in items if item], i
            depth -= 1
        elif char == "," and depth == 0:
            items.append(text[begin:i].strip())
            begin = i + 1
        i += 1
    return items, -1


def _quote_name(item: str) -> tuple[str, str] | None:
    """A column definition SQLite rejects, with its name quoted, and that name: the name is
    the words before the first that begins a type, or before the first SQLite accepts after
    it, or the whole definition (a column without a type)."""
    words = item.split()
    candidates = []
    for k in range(1, len(words) + 1):
        name, rest = " ".join(words[:k]), " ".join(words[k:])
        definition = f"{quote_identifier(name)} {rest}".strip()
        if not _accepts(definition):
            continue
        typed = bool(rest) and bool(_TYPE_WORD.match(words[k]))
        candidates.append((not typed, k, definition, name))
    if not candidates:
        return None
    _, _, definition, name = min(candidates)
    return definition, name
