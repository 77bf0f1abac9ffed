"""Sampled values of live server tables: bounded reads in read-only transactions.

Each table is read in its own read-only transaction with a deadline (`connect.read_only`):

1. `SELECT ... FROM t LIMIT scan_rows + 1`. A table that returns at most `scan_rows` rows is
   small: those are all its rows, and their number is its row count.
2. A larger table is sampled by blocks: PostgreSQL `TABLESAMPLE SYSTEM (p) REPEATABLE (seed)`,
   DuckDB `TABLESAMPLE system(p%) REPEATABLE (seed)`, with p chosen from the planner's row
   estimate (PostgreSQL `EXPLAIN`, DuckDB `estimated_size`) to return about `scan_rows` rows
   (DuckDB: at least eight of its 2,048-row vectors), and a LIMIT of twice that; its row count
   is the estimate. A sample that comes back with too few rows falls back to step 1's rows.
   Other dialects keep the rows of step 1: the first the server returns, not random, but
   bounded.

`rows` rows are then picked at random (seeded per database and table) from those read, and the
distinct text values come from the same rows, so no query ever scans a large table. Values are
cut on the server: text to `max_value_chars` + 1 characters, binary values replaced by their
length, so a table of large documents cannot flood memory.

A table that cannot be read (no SELECT privilege, past its deadline) is logged with the reason and
left out of the sample; failing to connect is a SourceError naming the URL with its password
masked.
"""

from __future__ import annotations

import datetime
import json
import logging
import random
import re
import uuid
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from schemagraph.connect import connection, create_engine, masked, parse_url, read_only, scrub
from schemagraph.errors import SourceError
from schemagraph.model import Database, Table, fold
from schemagraph.sampled import DatabaseSample, TableSample, Value, clip
from schemagraph.seeds import derive_seed

if TYPE_CHECKING:
    from sqlalchemy.engine import URL, Connection

log = logging.getLogger(__name__)

_TEXT = re.compile(
    r"^(n?var)?char|^character|^bpchar|^n?text|^tinytext|^mediumtext|^longtext|^string|^clob"
    r"|^citext|^varchar2|^nvarchar2",
    re.IGNORECASE,
)
_DOCUMENT = re.compile(r"^(jsonb?|xml)$", re.IGNORECASE)
_BINARY = re.compile(
    r"^(bytea|(tiny|medium|long)?blob|(var)?binary|bytes|image|raw)", re.IGNORECASE
)
#: Dialects with block sampling, and the fewest rows a sample should expect: DuckDB samples
#: whole vectors of 2,048 rows, so a sample of one or two vectors often comes back empty.
_SAMPLED = {"postgresql": 1, "duckdb": 8 * 2048}


def sample_live(
    db: Database,
    *,
    rows: int = 3,
    distinct: int = 50,
    max_value_chars: int = 80,
    seed: int = 0,
    timeout_s: float = 10.0,
    scan_rows: int = 1000,
) -> DatabaseSample:
    """Sample the live database `db` (which has `url`); see the module docstring."""
    if db.url is None:
        raise ValueError(f"database {db.id!r} has no URL")
    if scan_rows < 1 or max_value_chars < 2:
        raise ValueError("scan_rows must be >= 1 and max_value_chars >= 2")
    import sqlalchemy

    url = parse_url(db.url)
    engine = create_engine(url)
    tables: dict[str, TableSample] = {}
    try:
        with connection(engine, db.origin) as conn:
            for table in db.tables:
                rng = random.Random(derive_seed(seed, "sample", db.id, table.name))
                try:
                    with read_only(conn, timeout_s):
                        tables[fold(table.name)] = _sample_table(
                            conn, db.schema, table, rows, distinct, max_value_chars, scan_rows, rng
                        )
                except sqlalchemy.exc.DBAPIError as exc:
                    if exc.connection_invalidated:
                        raise SourceError(
                            f"{masked(url)}: lost the connection while sampling {db.id}."
                            f"{table.name} ({_reason(exc, url)})"
                        ) from None
                    log.warning(
                        "%s: table %s not sampled (%s)", db.origin, table.name, _reason(exc, url)
                    )
    finally:
        engine.dispose()
    return DatabaseSample(db.id, tables)


def _reason(exc: BaseException, url: URL) -> str:
    return scrub(str(getattr(exc, "orig", None) or exc).split("\n[SQL")[0], url)[:300]


def _sample_table(
    conn: Connection,
    schema: str | None,
    table: Table,
    rows: int,
    distinct: int,
    max_chars: int,
    scan_rows: int,
    rng: random.Random,
) -> TableSample:
    import sqlalchemy as sa

    source = sa.table(table.name, *(sa.column(c.name) for c in table.columns), schema=schema)
    names = tuple(c.name for c in table.columns)
    binary = {c.name for c in table.columns if _BINARY.match(c.type)}

    def select(frm: Any, limit: int) -> list[tuple[Any, ...]]:
        exprs = [_expression(sa, conn, frm.c[c.name], c.type, max_chars) for c in table.columns]
        query = sa.select(*exprs).select_from(frm).limit(limit)
        return [tuple(r) for r in conn.execute(query)]

    read = select(source, scan_rows + 1)
    count = len(read)
    if count > scan_rows:
        read = read[:scan_rows]
        granule = _SAMPLED.get(conn.dialect.name)
        estimate = _estimate(conn, source, schema, table.name)
        count = max(count, estimate or 0)
        if granule and estimate:
            target = max(scan_rows, granule)
            percent = min(100.0, 100.0 * target / estimate)
            suffix = "%" if conn.dialect.name == "duckdb" else ""
            sampled = sa.tablesample(
                source,
                sa.func.system(sa.literal_column(f"{percent:.6f}{suffix}")),
                seed=sa.literal_column(str(rng.randrange(2**31))),
            )
            found = select(sampled, 2 * target)
            if len(found) >= min(rows, scan_rows):
                read = found
    picked = [read[i] for i in sorted(rng.sample(range(len(read)), min(rows, len(read))))]
    text_values: dict[str, tuple[str, ...]] = {}
    if distinct:
        for i, name in enumerate(names):
            seen: dict[str, None] = {}
            for row in read:
                value = row[i]
                if isinstance(value, str) and value.strip() and name not in binary:
                    seen.setdefault(str(clip(value, max_chars)), None)
                    if len(seen) >= distinct:
                        break
            if seen:
                text_values[name] = tuple(seen)
    plain = tuple(
        tuple(_plain(v, n in binary, max_chars) for v, n in zip(row, names, strict=True))
        for row in picked
    )
    return TableSample(table.name, names, plain, count, text_values)


def _expression(sa: Any, conn: Connection, column: Any, type_: str, max_chars: int) -> Any:
    """What to select for a column: text cut on the server, the length of binary values."""
    if _BINARY.match(type_):
        length = "length" if conn.dialect.name in ("sqlite", "bigquery") else "octet_length"
        return getattr(sa.func, length)(column).label(column.name)
    if _DOCUMENT.match(type_):
        return sa.func.substr(sa.cast(column, sa.Text), 1, max_chars + 1).label(column.name)
    if _TEXT.match(type_) and "[]" not in type_:
        return sa.func.substr(column, 1, max_chars + 1).label(column.name)
    return column


def _estimate(conn: Connection, source: Any, schema: str | None, table: str) -> int | None:
    """The server's estimate of a table's rows, without reading it; None where there is none."""
    import sqlalchemy as sa

    dialect = conn.dialect.name
    if dialect == "postgresql":
        everything: Any = sa.select(sa.literal_column("*")).select_from(source)
        sql = str(everything.compile(dialect=conn.dialect))
        plan = conn.exec_driver_sql("EXPLAIN (FORMAT JSON) " + sql).scalar_one()
        plan = json.loads(plan) if isinstance(plan, str) else plan
        return int(plan[0]["Plan"]["Plan Rows"])
    if dialect == "duckdb":
        found = conn.execute(
            sa.text(
                "SELECT estimated_size FROM duckdb_tables() WHERE database_name = "
                "current_database() AND schema_name = :schema AND table_name = :table"
            ),
            {"schema": schema or "main", "table": table},
        ).scalar()
        return int(found) if found is not None else None
    return None


def _plain(value: Any, binary: bool, max_chars: int) -> Value:
    """A driver's value as one of the sample's plain types, text cut to `max_chars`."""
    if binary and value is not None:
        return f"<{value} bytes>" if isinstance(value, int) else f"<{len(value)} bytes>"
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Decimal):
        whole = value.is_finite() and value == value.to_integral_value()
        return int(value) if whole else float(value)
    if isinstance(value, datetime.datetime):
        text: str = value.isoformat(sep=" ")
    elif isinstance(value, datetime.date | datetime.time):
        text = value.isoformat()
    elif isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(value)} bytes>"
    elif isinstance(value, str | uuid.UUID | datetime.timedelta):
        text = str(value)
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    return clip(text, max_chars)
