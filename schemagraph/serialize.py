"""Schema text for prompts.

`create_table_text`: PET-SQL's reference-enhanced representation: CREATE TABLE statements with
primary and foreign keys (only those between the tables shown), descriptions as `--` comments
(the table's above its statement, a column's after its line) and a few sampled rows per table;
columns a prompt leaves out (`hidden`) are counted in a comment, and left out of the rows too.
`compact_text`: one line per table, `table(col*, col, ...)` with `*` marking primary keys, then
one line per foreign key, for small prompts.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from schemagraph.documentation import summary
from schemagraph.errors import TraversalError
from schemagraph.model import Database, Table, fold
from schemagraph.sampled import DatabaseSample, Value

#: words of a description shown in a prompt
DESCRIPTION_WORDS = 40

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def ident(name: str) -> str:
    """`name` as written, double-quoted only when it is not a plain identifier."""
    return name if _PLAIN.match(name) else '"' + name.replace('"', '""') + '"'


def _tables(db: Database, names: Sequence[str] | None) -> list[Table]:
    if names is None:
        return list(db.tables)
    try:
        return [db.table(n) for n in names]
    except KeyError as exc:
        raise TraversalError(str(exc.args[0])) from None


def create_table_text(
    db: Database,
    tables: Sequence[str] | None = None,
    sample: DatabaseSample | None = None,
    rows: int = 3,
    *,
    descriptions: bool = True,
    hidden: Mapping[str, Collection[str]] | None = None,
) -> str:
    """CREATE TABLE statements for `tables` (default: all) of `db`, with `rows` sampled rows each
    when `sample` is given, and the tables' and columns' descriptions unless `descriptions` is
    False (each cut to `DESCRIPTION_WORDS` words). `hidden`: per folded table name, the folded
    names of columns not to show (a comment says how many there are)."""
    chosen = _tables(db, tables)
    shown = {fold(t.name) for t in chosen}
    parts = []
    for table in chosen:
        left_out = set((hidden or {}).get(fold(table.name), ()))
        visible = [c for c in table.columns if fold(c.name) not in left_out]
        lines = [
            (f"  {ident(c.name)} {c.type}".rstrip(), c.description if descriptions else "")
            for c in visible
        ]
        if table.primary_key:
            keys = ", ".join(ident(c) for c in table.primary_key)
            lines.append((f"  PRIMARY KEY ({keys})", ""))
        for fk in table.foreign_keys:
            if fold(fk.ref_table) in shown:
                lines.append(
                    (
                        f"  FOREIGN KEY ({', '.join(ident(c) for c in fk.columns)}) REFERENCES "
                        f"{ident(fk.ref_table)}({', '.join(ident(c) for c in fk.ref_columns)})",
                        "",
                    )
                )
        body = "\n".join(
            line + ("," if i < len(lines) - 1 else "") + _comment(note)
            for i, (line, note) in enumerate(lines)
        )
        if len(visible) < len(table.columns):
            body += f"\n  /* {len(table.columns) - len(visible)} more columns not shown */"
        text = f"CREATE TABLE {ident(table.name)} (\n{body}\n);"
        if descriptions and table.description:
            text = f"{_comment(table.description).lstrip()}\n{text}"
        table_sample = sample.table(table.name) if sample else None
        if table_sample and rows > 0 and table_sample.rows:
            keep = [i for i, c in enumerate(table_sample.columns) if fold(c) not in left_out]
            picked = [[row[i] for i in keep] for row in table_sample.rows[:rows]]
            text += (
                f"\n/* {len(picked)} example rows from {ident(table.name)}:\n"
                + _grid([table_sample.columns[i] for i in keep], picked)
                + "\n*/"
            )
        parts.append(text)
    return "\n\n".join(parts)


def _comment(description: str) -> str:
    """ " -- text" for a description ("" for none), on one line."""
    return f" -- {summary(description, DESCRIPTION_WORDS)}" if description else ""


def compact_text(db: Database, tables: Sequence[str] | None = None) -> str:
    """`db_id: table(col*, col, ...)` lines and `a.x -> b.y` foreign keys between them."""
    chosen = _tables(db, tables)
    shown = {fold(t.name) for t in chosen}
    lines = [
        f"{t.name}({', '.join(c.name + ('*' if c.primary_key else '') for c in t.columns)})"
        for t in chosen
    ]
    for table in chosen:
        for fk in table.foreign_keys:
            if fold(fk.ref_table) in shown:
                pairs = zip(fk.columns, fk.ref_columns, strict=True)
                lines.extend(f"{fk.table}.{a} -> {fk.ref_table}.{b}" for a, b in pairs)
    return f"database {db.id}:\n" + "\n".join(lines)


def _grid(columns: Sequence[str], rows: Sequence[Sequence[Value]]) -> str:
    cells = [list(columns), *[[_cell(v) for v in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    return "\n".join(
        "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells
    )


def _cell(value: Value) -> str:
    if value is None:
        return "NULL"
    return str(value).replace("\n", " ").replace("*/", "* /")
