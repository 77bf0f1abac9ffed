"""Small test databases for test-case re-ranking (Li & Xie), as temporary SQLite files.

Two ways to fill one, each seeded:

- `random`: rows picked at random from the real database, keeping foreign keys: tables are
  visited in reverse foreign-key order (a table before the tables it references), each gets up
  to `max_rows` random rows, and every row a kept row references is added to its table; a last
  pass follows self-references and cycles.
- `fuzz`: synthetic rows, parents first: key columns get fresh unique values, foreign keys
  point at generated parent rows, other columns mix values seen in the real column (so the
  question's constants occur), perturbed numbers and text, and NULLs.

The schema is copied from the source's `sqlite_master` SQL (read through a read-only
connection; tables and views; a table whose DDL does not replay is rebuilt from the catalog).
The user's file is only ever read. Text values are cut to `max_value_chars` on insert and blobs
become NULL, so what a prompt shows is exactly what the file holds.
"""

from __future__ import annotations

import json
import logging
import random
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.errors import GeneratorConfigError, NoDataError
from schemagraph import Database, Table
from schemagraph.model import fold
from schemagraph.readonly import connect_readonly, quote_identifier

log = logging.getLogger(__name__)

METHODS = ("random", "fuzz")
POOL_VALUES = 30
"""Distinct real values per column that fuzzing draws from."""


@dataclass(frozen=True)
class TableRows:
    name: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True)
class TestDatabase:
    """A built test database: its file, how it was filled, and its full contents."""

    __test__ = False  # not a pytest test class

    path: Path
    method: str
    seed: int
    tables: tuple[TableRows, ...]

    @property
    def row_count(self) -> int:
        return sum(len(t.rows) for t in self.tables)

    def render(self) -> str:
        """The contents as JSON lines, one table per line (what a prompt shows)."""
        return render_tables(self.tables)


def render_tables(tables: Iterable[TableRows]) -> str:
    return "\n".join(
        json.dumps(
            {"table": t.name, "columns": list(t.columns), "rows": [list(r) for r in t.rows]},
            ensure_ascii=False,
        )
        for t in tables
    )


def parse_tables(text: str) -> list[TableRows]:
    """The inverse of `render_tables` (lines that are not such JSON objects are skipped)."""
    tables = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and {"table", "columns", "rows"} <= value.keys():
            rows = tuple(tuple(r) for r in value["rows"])
            tables.append(TableRows(str(value["table"]), tuple(value["columns"]), rows))
    return tables


def reverse_fk_order(db: Database) -> list[str]:
    """Table names, each before the tables it references (cycles broken in schema order)."""
    refs: dict[str, set[str]] = {fold(t.name): set() for t in db.tables}
    referenced_by: dict[str, set[str]] = {fold(t.name): set() for t in db.tables}
    for fk in db.foreign_keys:
        child, parent = fold(fk.table), fold(fk.ref_table)
        if child != parent and child in refs and parent in refs:
            refs[child].add(parent)
            referenced_by[parent].add(child)
    names = {fold(t.name): t.name for t in db.tables}
    order: list[str] = []
    waiting = {key: len(children) for key, children in referenced_by.items()}
    ready = [fold(t.name) for t in db.tables if waiting[fold(t.name)] == 0]
    while len(order) < len(names):
        if not ready:  # a cycle: take the first table still waiting
            ready = [next(fold(t.name) for t in db.tables if names[fold(t.name)] not in order)]
        key = ready.pop(0)
        if names[key] in order:
            continue
        order.append(names[key])
        for parent in sorted(refs[key], key=lambda k: [fold(t.name) for t in db.tables].index(k)):
            waiting[parent] -= 1
            if waiting[parent] == 0:
                ready.append(parent)
    return order


def build_test_database(
    db: Database,
    directory: Path,
    method: str,
    seed: int,
    *,
    max_rows: int = 5,
    max_value_chars: int = 40,
) -> TestDatabase:
    """A test database for `db` in `directory` (see the module docstring)."""
    if method not in METHODS:
        raise GeneratorConfigError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if max_rows < 1:
        raise GeneratorConfigError(f"max_rows must be >= 1, got {max_rows}")
    if db.path is None:
        raise NoDataError(f"database {db.id!r} has no SQLite file to build test databases from")
    rng = random.Random(seed)
    with closing(connect_readonly(db.path)) as source:
        source.text_factory = lambda b: b.decode("utf-8", errors="replace")
        if method == "random":
            rows = _random_rows(source, db, rng, max_rows)
        else:
            rows = _fuzz_rows(source, db, rng, max_rows)
        path = directory / f"test-{db.id}-{method}-{seed}.sqlite"
        path.unlink(missing_ok=True)
        return _write(source, db, rows, path, method, seed, max_value_chars)


def write_rows(source_path: Path, db: Database, tables: Sequence[TableRows], path: Path) -> Path:
    """A new SQLite file at `path` with the schema of `source_path` and `tables`' rows (used
    to rebuild a database from its rendered contents)."""
    with closing(connect_readonly(source_path)) as source:
        rows = {
            fold(t.name): [dict(zip(t.columns, r, strict=False)) for r in t.rows] for t in tables
        }
        _write(source, db, rows, path, "given", 0, 1_000_000)
    return path


# -- writing ------------------------------------------------------------------------------------


def _write(
    source: sqlite3.Connection,
    db: Database,
    rows: Mapping[str, list[dict[str, Any]]],
    path: Path,
    method: str,
    seed: int,
    max_value_chars: int,
) -> TestDatabase:
    with closing(sqlite3.connect(path)) as target:
        # a throw-away file: no journal, no fsync
        target.execute("PRAGMA journal_mode = OFF")
        target.execute("PRAGMA synchronous = OFF")
        _copy_schema(source, target, db)
        for table in db.tables:
            columns = _target_columns(target, table.name)
            items = rows.get(fold(table.name), [])
            if not columns or not items or _internal(table.name):
                continue
            by_fold = {fold(c): c for c in columns}
            statement = (
                f"INSERT OR IGNORE INTO {quote_identifier(table.name)} "
                f"({', '.join(quote_identifier(c) for c in columns)}) "
                f"VALUES ({', '.join('?' for _ in columns)})"
            )
            for item in items:
                values = {fold(k): v for k, v in item.items()}
                target.execute(
                    statement,
                    [_storable(values.get(key), max_value_chars) for key in by_fold],
                )
        target.commit()
        tables = tuple(_read_table(target, t.name) for t in db.tables if not _internal(t.name))
    return TestDatabase(path, method, seed, tuple(t for t in tables if t is not None))


def _copy_schema(source: sqlite3.Connection, target: sqlite3.Connection, db: Database) -> None:
    entries = source.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
        "AND type IN ('table', 'view') ORDER BY type = 'view', rowid"
    ).fetchall()
    created: set[str] = set()
    for kind, name, sql in entries:
        if _internal(str(name)) or "virtual" in str(sql)[:30].lower():
            continue
        try:
            target.execute(sql)
            created.add(fold(name))
        except sqlite3.Error as exc:
            log.info("test database: %s %s not copied (%s)", kind, name, exc)
    for table in db.tables:
        if fold(table.name) in created or _internal(table.name):
            continue
        columns = ", ".join(quote_identifier(c.name) for c in table.columns)
        try:
            target.execute(f"CREATE TABLE {quote_identifier(table.name)} ({columns})")
        except sqlite3.Error as exc:
            log.info("test database: table %s not created (%s)", table.name, exc)


def _internal(name: str) -> bool:
    """SQLite's own tables (sqlite_sequence, sqlite_stat1, ...): never copied or filled."""
    return name.lower().startswith("sqlite_")


def _target_columns(target: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in target.execute(f"PRAGMA table_info({quote_identifier(table)})")]


def _read_table(conn: sqlite3.Connection, table: str) -> TableRows | None:
    try:
        cursor = conn.execute(f"SELECT * FROM {quote_identifier(table)}")
    except sqlite3.Error:
        return None
    columns = tuple(d[0] for d in cursor.description)
    return TableRows(table, columns, tuple(tuple(r) for r in cursor.fetchall()))


def _storable(value: Any, max_chars: int) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return None
    if isinstance(value, str) and len(value) > max_chars:
        return value[:max_chars]
    return value


# -- random selection that keeps foreign keys ---------------------------------------------------


def _source_rows(
    source: sqlite3.Connection, table: str, where: str = "", params: Sequence[Any] = ()
) -> tuple[list[str], list[tuple[Any, ...]]]:
    cursor = source.execute(f"SELECT * FROM {quote_identifier(table)} {where}", tuple(params))
    return [d[0] for d in cursor.description], cursor.fetchall()


def _random_rows(
    source: sqlite3.Connection, db: Database, rng: random.Random, max_rows: int
) -> dict[str, list[dict[str, Any]]]:
    chosen: dict[str, list[dict[str, Any]]] = {fold(t.name): [] for t in db.tables}
    needed: dict[str, list[tuple[tuple[str, ...], tuple[Any, ...]]]] = {k: [] for k in chosen}

    def add(table: Table, row: dict[str, Any]) -> None:
        bucket = chosen[fold(table.name)]
        if row in bucket:
            return
        bucket.append(row)
        for fk in table.foreign_keys:
            if fold(fk.ref_table) not in chosen:
                continue
            values = tuple(_get(row, c) for c in fk.columns)
            if all(v is not None for v in values):
                needed[fold(fk.ref_table)].append((fk.ref_columns, values))

    def satisfy(table: Table) -> None:
        pending = needed[fold(table.name)]
        needed[fold(table.name)] = []
        for columns, values in pending:
            if any(_matches(row, columns, values) for row in chosen[fold(table.name)]):
                continue
            where = "WHERE " + " AND ".join(f"{quote_identifier(c)} = ?" for c in columns)
            names, found = _source_rows(source, table.name, where + " LIMIT 1", values)
            for row in found:
                add(table, dict(zip(names, row, strict=True)))

    for name in reverse_fk_order(db):
        table = db.table(name)
        satisfy(table)
        count = source.execute(f"SELECT COUNT(*) FROM {quote_identifier(table.name)}").fetchone()[0]
        room = max_rows - len(chosen[fold(table.name)])
        for offset in sorted(rng.sample(range(count), min(count, max(room, 0)))):
            names, found = _source_rows(source, table.name, "LIMIT 1 OFFSET ?", (offset,))
            for row in found:
                add(table, dict(zip(names, row, strict=True)))
    for _ in range(3):  # self-references and cycles
        if not any(needed.values()):
            break
        for table in db.tables:
            satisfy(table)
    return chosen


def _get(row: Mapping[str, Any], column: str) -> Any:
    key = fold(column)
    for name, value in row.items():
        if fold(name) == key:
            return value
    return None


def _matches(row: Mapping[str, Any], columns: Sequence[str], values: Sequence[Any]) -> bool:
    return all(str(_get(row, c)) == str(v) for c, v in zip(columns, values, strict=True))


# -- fuzzing ------------------------------------------------------------------------------------


def _fuzz_rows(
    source: sqlite3.Connection, db: Database, rng: random.Random, max_rows: int
) -> dict[str, list[dict[str, Any]]]:
    made: dict[str, list[dict[str, Any]]] = {}
    for name in reversed(reverse_fk_order(db)):
        table = db.table(name)
        pools = {c.name: _pool(source, table.name, c.name) for c in table.columns}
        fk_of = {fold(c): fk for fk in table.foreign_keys for c in fk.columns}
        count = rng.randint(2, max(2, max_rows))
        rows: list[dict[str, Any]] = []
        for number in range(count):
            row: dict[str, Any] = {}
            for column in table.columns:
                if column.name in row:
                    continue
                fk = fk_of.get(fold(column.name))
                parents = made.get(fold(fk.ref_table), []) if fk is not None else []
                if fk is not None and parents:
                    parent = rng.choice(parents)
                    for own, ref in zip(fk.columns, fk.ref_columns, strict=True):
                        row[table.column(own).name] = _get(parent, ref)
                elif column.primary_key and len(table.primary_key) == 1:
                    row[column.name] = _fresh_key(pools[column.name], rows, column.name, number)
                else:
                    row[column.name] = _fuzz_value(pools[column.name], column.type, rng)
            rows.append(row)
        made[fold(table.name)] = rows
    return made


def _pool(source: sqlite3.Connection, table: str, column: str) -> list[Any]:
    col = quote_identifier(column)
    try:
        found = source.execute(
            f"SELECT DISTINCT {col} FROM {quote_identifier(table)} WHERE {col} IS NOT NULL LIMIT ?",
            (POOL_VALUES,),
        ).fetchall()
    except sqlite3.Error:
        return []
    return [r[0] for r in found if not isinstance(r[0], bytes)]


def _fresh_key(pool: Sequence[Any], rows: Sequence[Mapping[str, Any]], column: str, n: int) -> Any:
    used = {str(r.get(column)) for r in rows}
    for value in pool:
        if str(value) not in used:
            return value
    numeric = not pool or all(isinstance(v, int | float) for v in pool)
    return (
        max((v for v in pool if isinstance(v, int | float)), default=0) + n + 1
        if numeric
        else f"{column}_{n + 1}"
    )


def _fuzz_value(pool: Sequence[Any], declared: str, rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.08:
        return None
    if pool and roll < 0.75:
        return rng.choice(pool)
    base = rng.choice(pool) if pool else None
    if isinstance(base, int):
        return base + rng.choice((-1, 1)) * rng.randint(1, 10)
    if isinstance(base, float):
        return round(base * rng.uniform(0.5, 1.5), 2)
    if base is None and any(t in declared.lower() for t in ("int", "num", "real", "float")):
        return rng.randint(0, 100)
    if isinstance(base, str) and base and rng.random() < 0.5:
        return base.upper() if rng.random() < 0.5 else base + "x"
    return "v" + str(rng.randint(0, 999))
