"""Schema text for prompts.

`create_table_text`: PET-SQL's reference-enhanced representation: CREATE TABLE statements with
primary and foreign keys (only those between the tables shown), descriptions as `--` comments
(the table's above its statement, a column's after its line) and a few sampled rows per table;
columns a prompt leaves out (`hidden`) are counted in a comment, and left out of the rows too.
`compact_text`: one line per table, `table(col*, col, ...)` with `*` marking primary keys, then
one line per foreign key, for small prompts.

Both speak the database's engine (`schemagraph.dialects`): a warehouse table is named as its
engine names it (`` `project.dataset.table` ``, `DB.SCHEMA.TABLE`), identifiers are quoted the
engine's way, and BigQuery's nested fields are shown inside their RECORD column as BigQuery's
own DDL writes them (`hits ARRAY<STRUCT<product ARRAY<STRUCT<productRevenue INT64>>>>`), each
repeated one marked with the `UNNEST` that reads it. SQLite databases read as before.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from schemagraph.dialects import (
    SQLITE,
    engine_label,
    is_nested,
    is_repeated,
    quote_part,
    sql_dialect,
    table_sql,
    unnest_clause,
)
from schemagraph.documentation import summary
from schemagraph.errors import TraversalError
from schemagraph.model import Column, Database, Table, fold
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
    dialect = sql_dialect(db)
    name = (lambda c: ident(c)) if dialect == SQLITE else (lambda c: quote_part(c, dialect))
    parts = []
    for table in chosen:
        left_out = set((hidden or {}).get(fold(table.name), ()))
        visible = [c for c in table.columns if fold(c.name) not in left_out]
        if dialect == "bigquery" and any(is_nested(c) for c in visible):
            lines = _nested_lines(table, visible, descriptions)
        else:
            lines = [
                (f"  {name(c.name)} {c.type}".rstrip(), c.description if descriptions else "")
                for c in visible
            ]
        if table.primary_key:
            keys = ", ".join(name(c) for c in table.primary_key)
            lines.append((f"  PRIMARY KEY ({keys})", ""))
        for fk in table.foreign_keys:
            if fold(fk.ref_table) in shown:
                lines.append(
                    (
                        f"  FOREIGN KEY ({', '.join(name(c) for c in fk.columns)}) REFERENCES "
                        f"{_table_name(db, fk.ref_table)}"
                        f"({', '.join(name(c) for c in fk.ref_columns)})",
                        "",
                    )
                )
        body = "\n".join(
            line + ("," if _comma_after(lines, i) else "") + _comment(note)
            for i, (line, note) in enumerate(lines)
        )
        if len(visible) < len(table.columns):
            body += f"\n  /* {len(table.columns) - len(visible)} more columns not shown */"
        text = f"CREATE TABLE {_table_name(db, table.name)} (\n{body}\n);"
        if dialect == "bigquery":
            text += _unnest_note(table, visible)
        if descriptions and table.description:
            text = f"{_comment(table.description).lstrip()}\n{text}"
        table_sample = sample.table(table.name) if sample else None
        if table_sample and rows > 0 and table_sample.rows:
            keep = [i for i, c in enumerate(table_sample.columns) if fold(c) not in left_out]
            picked = [[row[i] for i in keep] for row in table_sample.rows[:rows]]
            text += (
                f"\n/* {len(picked)} example rows from {_table_name(db, table.name)}:\n"
                + _grid([table_sample.columns[i] for i in keep], picked)
                + "\n*/"
            )
        parts.append(text)
    return "\n\n".join(parts)


def _comma_after(lines: Sequence[tuple[str, str]], i: int) -> bool:
    """Whether line `i` of a statement's body takes a comma: not the last, not one that opens a
    RECORD (`... STRUCT<`), not one before the RECORD's closing bracket."""
    if i >= len(lines) - 1 or lines[i][0].endswith("<"):
        return False
    return not lines[i + 1][0].lstrip().startswith(">")


def _table_name(db: Database, name: str) -> str:
    """The name a statement uses for table `name` of `db`: its engine's, for a warehouse."""
    if sql_dialect(db) == SQLITE or not db.has_table(name):
        return ident(name)
    return table_sql(db, db.table(name))


def _nested_lines(
    table: Table, visible: Sequence[Column], descriptions: bool
) -> list[tuple[str, str]]:
    """BigQuery DDL lines for `visible` columns, nested fields inside their RECORD column
    (`hits ARRAY<STRUCT<` ... `>>`), each field under its own (last) name. A RECORD column whose
    fields are all hidden keeps its cut type (`STRUCT`)."""
    names = {fold(c.name) for c in visible}
    lines: list[tuple[str, str]] = []
    open_paths: list[tuple[str, str]] = []  # (path, closing) of the RECORDs being written

    def close_until(path: str) -> None:
        while open_paths and not fold(path).startswith(fold(open_paths[-1][0]) + "."):
            _, closing = open_paths.pop()
            lines.append(("  " * (len(open_paths) + 1) + closing, ""))

    for position, column in enumerate(visible):
        close_until(column.name)
        indent = "  " * (len(open_paths) + 1)
        leaf = column.name.rsplit(".", 1)[-1] if open_paths else column.name
        note = column.description if descriptions else ""
        nested_next = position + 1 < len(visible) and fold(visible[position + 1].name).startswith(
            fold(column.name) + "."
        )
        kind = column.type.upper()
        if nested_next and kind in ("STRUCT", "ARRAY<STRUCT>", "RECORD"):
            repeated = is_repeated(column)
            opening = "ARRAY<STRUCT<" if repeated else "STRUCT<"
            mark = f"REPEATED: UNNEST({column.name})" if repeated else ""
            lines.append((f"{indent}{quote_part(leaf, 'bigquery')} {opening}", _joined(mark, note)))
            open_paths.append((column.name, ">>" if repeated else ">"))
            continue
        if fold(column.name) in names:
            lines.append((f"{indent}{quote_part(leaf, 'bigquery')} {column.type}".rstrip(), note))
    close_until("")
    return lines


def _joined(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def _unnest_note(table: Table, visible: Sequence[Column]) -> str:
    """How to read the fields of the innermost repeated RECORDs shown, as comments after the
    statement (`hits.product.productRevenue: FROM t, UNNEST(hits) AS hits, UNNEST(hits.product)
    AS product -> product.productRevenue`)."""
    repeated = [c.name for c in visible if is_repeated(c)]
    innermost = [
        p for p in repeated if not any(fold(q).startswith(fold(p) + ".") for q in repeated)
    ]
    ways = []
    for path in innermost:
        field = next(
            (
                c
                for c in visible
                if fold(c.name).startswith(fold(path) + ".") and not is_repeated(c)
            ),
            None,
        )
        if field is not None:
            joins, read = unnest_clause(table, field.name)
            ways.append(f"--   {field.name}: FROM t, {joins} -> {read}")
    if not ways:
        return ""
    return "\n-- repeated (ARRAY) fields are read row by row through UNNEST, e.g.:\n" + "\n".join(
        ways[:5]
    )


def _comment(description: str) -> str:
    """ " -- text" for a description ("" for none), on one line."""
    return f" -- {summary(description, DESCRIPTION_WORDS)}" if description else ""


def compact_text(db: Database, tables: Sequence[str] | None = None) -> str:
    """`db_id: table(col*, col, ...)` lines and `a.x -> b.y` foreign keys between them."""
    chosen = _tables(db, tables)
    shown = {fold(t.name) for t in chosen}
    warehouse = sql_dialect(db) != SQLITE

    def named(table: str) -> str:
        return _table_name(db, table) if warehouse else table

    lines = [
        f"{named(t.name)}({', '.join(c.name + ('*' if c.primary_key else '') for c in t.columns)})"
        for t in chosen
    ]
    for table in chosen:
        for fk in table.foreign_keys:
            if fold(fk.ref_table) in shown:
                pairs = zip(fk.columns, fk.ref_columns, strict=True)
                lines.extend(
                    f"{named(fk.table)}.{a} -> {named(fk.ref_table)}.{b}" for a, b in pairs
                )
    engine = f" ({engine_label(sql_dialect(db))})" if warehouse else ""
    return f"database {db.id}{engine}:\n" + "\n".join(lines)


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
