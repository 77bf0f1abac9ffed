"""SQLite files, introspected through a read-only connection."""

from __future__ import annotations

import logging
import sqlite3
from contextlib import closing
from pathlib import Path

from schemagraph.errors import SourceError
from schemagraph.model import Catalog, Column, Database, ForeignKey, Table, validate_database
from schemagraph.readonly import connect_readonly, quote_identifier

log = logging.getLogger(__name__)

SUFFIXES = (".sqlite", ".sqlite3", ".db")


def load_sqlite(path: str | Path) -> Catalog:
    """One `.sqlite` file, or every `.sqlite`/`.sqlite3`/`.db` file below a directory.

    The database id is the file's stem. SQLite accepts foreign keys to tables or columns that do
    not exist (it checks them only on writes); such a key is left out of the catalog and listed
    in `Catalog.problems`, because the database itself is usable.
    """
    path = Path(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or directory (sqlite: expects a file or folder)")
    files = sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES) if path.is_dir() else [path]
    if not files:
        raise SourceError(f"{path}: no {'/'.join(SUFFIXES)} files found")
    problems: list[str] = []
    databases = tuple(_introspect(f, problems) for f in files)
    return Catalog(databases, problems=tuple(problems))


def _introspect(file: Path, problems: list[str]) -> Database:
    try:
        with closing(connect_readonly(file)) as conn:
            names = [
                r[0]
                for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
                )
            ]
            raw = {name: _table(conn, name) for name in names}
    except sqlite3.DatabaseError as exc:
        raise SourceError(f"{file}: not a readable SQLite database ({exc})") from None
    known = {n.casefold(): {c.name.casefold() for c in cols} for n, (cols, _) in raw.items()}
    tables = []
    for name, (columns, fks) in raw.items():
        kept = []
        for fk in fks:
            ref_cols = known.get(fk.ref_table.casefold())
            missing = _missing_reference(fk, ref_cols)
            if missing:
                problems.append(
                    f"{file}: foreign key {name}({', '.join(fk.columns)}) references missing "
                    f"{missing}; left out"
                )
            else:
                kept.append(fk)
        tables.append(Table(name, columns, tuple(kept)))
    db = Database(file.stem, tuple(tables), origin=str(file), path=file, dialect="sqlite")
    validate_database(db)
    return db


def _table(conn: sqlite3.Connection, name: str) -> tuple[tuple[Column, ...], list[ForeignKey]]:
    info = conn.execute(f"PRAGMA table_info({quote_identifier(name)})").fetchall()
    columns = tuple(Column(r[1], r[2] or "", bool(r[5])) for r in info)
    by_id: dict[int, list[tuple[str, str, str | None]]] = {}
    for row in conn.execute(f"PRAGMA foreign_key_list({quote_identifier(name)})"):
        by_id.setdefault(row[0], []).append((row[2], row[3], row[4]))
    fks = []
    for parts in by_id.values():
        ref_table = parts[0][0]
        # A reference without columns means the referenced table's primary key.
        ref_cols = tuple(p[2] for p in parts if p[2])
        if len(ref_cols) != len(parts):
            ref_info = conn.execute(f"PRAGMA table_info({quote_identifier(ref_table)})").fetchall()
            ref_cols = tuple(r[1] for r in sorted(ref_info, key=lambda r: r[5]) if r[5])
        fks.append(ForeignKey(name, tuple(p[1] for p in parts), ref_table, ref_cols))
    return columns, fks


def _missing_reference(fk: ForeignKey, ref_cols: set[str] | None) -> str | None:
    """What a foreign key points at that does not exist, or None when it is sound."""
    if ref_cols is None:
        return f"table {fk.ref_table!r}"
    if len(fk.ref_columns) != len(fk.columns):
        return f"primary key of {fk.ref_table!r} (it has none)"
    for col in fk.ref_columns:
        if col.casefold() not in ref_cols:
            return f"column {fk.ref_table}.{col}"
    return None
