"""Sampled cell values: a few seeded random rows per table and the distinct values of text
columns, read through a read-only connection.

They feed serialization (PET-SQL's cell-value references: "Male" vs "M" matters) and, later,
value matching in retrieval. Databases of live servers (`Database.url`) are sampled by
`schemagraph.live_samples`, within a read-only transaction, a deadline and a row cap; databases
with neither a SQLite file nor a URL have no samples.
"""

from __future__ import annotations

import logging
import random
import sqlite3
from contextlib import closing

from schemagraph.errors import SourceError
from schemagraph.model import Database, fold
from schemagraph.readonly import connect_readonly, quote_identifier
from schemagraph.sampled import DatabaseSample, TableSample, Value, clip
from schemagraph.seeds import derive_seed

__all__ = [
    "DISTINCT_VALUES",
    "DatabaseSample",
    "TableSample",
    "Value",
    "sample_database",
]

log = logging.getLogger(__name__)

#: distinct values read per text column by default (the value index keeps them all)
DISTINCT_VALUES = 50


def sample_database(
    db: Database,
    *,
    rows: int = 3,
    distinct: int = DISTINCT_VALUES,
    max_value_chars: int = 80,
    seed: int = 0,
    timeout_s: float = 10.0,
    scan_rows: int = 1000,
) -> DatabaseSample | None:
    """Sample `db`, or None when it has no data (no SQLite file and no live server).

    `rows` random rows per table (seeded per database and table, so the same seed gives the same
    rows on any machine), up to `distinct` distinct values per text column, text cut to
    `max_value_chars`. Live servers only: each table is read in its own read-only transaction
    with a deadline of `timeout_s`, at most about `scan_rows` rows per query, never a full scan
    of a large table (see `schemagraph.live_samples`).
    """
    if rows < 0 or distinct < 0:
        raise ValueError("rows and distinct must be >= 0")
    if db.path is None and db.url is not None:
        from schemagraph.live_samples import sample_live

        return sample_live(
            db,
            rows=rows,
            distinct=distinct,
            max_value_chars=max_value_chars,
            seed=seed,
            timeout_s=timeout_s,
            scan_rows=scan_rows,
        )
    if db.path is None:
        return None
    tables: dict[str, TableSample] = {}
    try:
        with closing(connect_readonly(db.path)) as conn:
            conn.text_factory = lambda b: b.decode("utf-8", errors="replace")
            for table in db.tables:
                rng = random.Random(derive_seed(seed, "sample", db.id, table.name))
                tables[fold(table.name)] = _sample_table(
                    conn, table.name, rows, distinct, max_value_chars, rng
                )
    except sqlite3.DatabaseError as exc:
        raise SourceError(f"{db.path}: cannot sample database {db.id!r}: {exc}") from None
    return DatabaseSample(db.id, tables)


def _sample_table(
    conn: sqlite3.Connection,
    table: str,
    rows: int,
    distinct: int,
    max_chars: int,
    rng: random.Random,
) -> TableSample:
    quoted = quote_identifier(table)
    cursor = conn.execute(f"SELECT * FROM {quoted} LIMIT 0")
    columns = tuple(d[0] for d in cursor.description)
    count = conn.execute(f"SELECT COUNT(*) FROM {quoted}").fetchone()[0]
    offsets = sorted(rng.sample(range(count), min(rows, count)))
    picked = [
        tuple(
            clip(v, max_chars)
            for v in conn.execute(f"SELECT * FROM {quoted} LIMIT 1 OFFSET ?", (offset,)).fetchone()
        )
        for offset in offsets
    ]
    text_values: dict[str, tuple[str, ...]] = {}
    if distinct:
        for column in columns:
            col = quote_identifier(column)
            found = conn.execute(
                f"SELECT DISTINCT {col} FROM {quoted} "
                f"WHERE typeof({col}) = 'text' AND trim({col}) != '' LIMIT ?",
                (distinct,),
            ).fetchall()
            if found:
                text_values[column] = tuple(str(clip(r[0], max_chars)) for r in found)
    return TableSample(table, columns, tuple(picked), count, text_values)
