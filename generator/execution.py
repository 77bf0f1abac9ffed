"""Candidates and their execution: every query runs through the SQL toolkit's safe executor.

A `Candidate` is one generated query (or a reply without one), tagged with the model, the
temperature, the sample number and its generation order. `run_candidates` executes them with a
`Runner` (by default `database_runner`: guard, read-only engine, time limit, row cap, on the
database's SQLite file or live server) and returns
`Executed` values; `result_key` is the canonical form used to group equal results for voting
(row order ignored, column order ignored, `1 == 1.0`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.errors import NoDataError
from generator.text import clip
from schemagraph import Database
from schemagraph.sql import (
    Limits,
    QueryError,
    QueryOutcome,
    QueryResult,
    SqliteEngine,
    run_on_server,
    runs_queries,
)

Runner = Callable[[str], QueryOutcome]
"""Runs one query on one database and returns its outcome (never raises for a bad query)."""

DEFAULT_RUN_LIMITS = Limits(timeout_s=5.0, max_rows=1000, max_value_bytes=10_000)


@dataclass(frozen=True)
class Candidate:
    """One generated query. `sql` is None when the reply held no query. `index` is the
    generation order, which breaks ties everywhere."""

    index: int
    sql: str | None
    llm: str
    temperature: float = 0.0
    sample: int = 0
    logprob: float | None = None
    reply: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "sql": self.sql,
            "llm": self.llm,
            "temperature": self.temperature,
            "sample": self.sample,
            "logprob": self.logprob,
        }


@dataclass(frozen=True)
class Executed:
    """A candidate and what running it gave; `outcome` is None when there was no SQL."""

    candidate: Candidate
    outcome: QueryOutcome | None

    @property
    def ok(self) -> bool:
        return isinstance(self.outcome, QueryResult)

    @property
    def result(self) -> QueryResult | None:
        return self.outcome if isinstance(self.outcome, QueryResult) else None

    @property
    def error(self) -> str | None:
        if self.outcome is None:
            return "the reply contained no SQL"
        if isinstance(self.outcome, QueryError):
            return f"{self.outcome.kind.value}: {self.outcome.message}"
        return None

    def as_dict(self, max_rows: int = 5) -> dict[str, Any]:
        return {**self.candidate.as_dict(), **outcome_summary(self.outcome, max_rows)}


def sqlite_runner(db_path: str | Path, limits: Limits = DEFAULT_RUN_LIMITS) -> Runner:
    """A `Runner` over one SQLite file through `schemagraph.sql` (read-only, guarded, limited)."""
    engine = SqliteEngine(db_path)

    def run(sql: str) -> QueryOutcome:
        return engine.run(sql, limits)

    return run


def database_runner(db: Database, limits: Limits = DEFAULT_RUN_LIMITS) -> Runner:
    """A `Runner` for a catalog database: `sqlite_runner` on its SQLite file, or the live engine
    of its server (`db.url`, PostgreSQL or DuckDB: the query, written in SQLite's SQL as the
    prompts ask, is translated to the server's, guarded and run in a read-only transaction with
    the same limits). `NoDataError` when it has neither."""
    if db.path is not None:
        return sqlite_runner(db.path, limits)
    if db.url is not None:
        if not runs_queries(db.url):
            raise NoDataError(
                f"database {db.id!r} is on a server where schemarag does not run queries "
                "(PostgreSQL, DuckDB and SQLite only)"
            )
        return lambda sql: run_on_server(db, sql, limits)
    raise NoDataError(
        f"database {db.id!r} has no SQLite file and no server URL, so its queries cannot be run; "
        "load it from a spider: or sqlite: source that has the data, or from a database URL"
    )


def cached_runner(runner: Runner) -> Runner:
    """`runner` remembering outcomes by SQL text (the database is read-only, so they hold)."""
    cache: dict[str, QueryOutcome] = {}
    lock = threading.Lock()

    def run(sql: str) -> QueryOutcome:
        with lock:
            hit = cache.get(sql)
        if hit is not None:
            return hit
        outcome = runner(sql)
        with lock:
            cache[sql] = outcome
        return outcome

    return run


def run_candidates(candidates: Sequence[Candidate], runner: Runner) -> list[Executed]:
    """Execute every candidate that has SQL, in order."""
    return [Executed(c, runner(c.sql) if c.sql is not None else None) for c in candidates]


def result_key(result: QueryResult) -> Hashable:
    """A canonical form of a result: equal for the same bag of rows up to row order, column
    order, and integers written as floats."""
    rows = [tuple(_value_key(v) for v in row) for row in result.rows]
    if not rows:
        return ("empty",)
    width = len(rows[0])
    columns = [tuple(sorted(row[i] for row in rows)) for i in range(width)]
    order = sorted(range(width), key=lambda i: columns[i])
    return (width, tuple(sorted(tuple(row[i] for i in order) for row in rows)))


def _value_key(value: Any) -> tuple[str, str]:
    if value is None:
        return ("0", "")
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int | float):
        return ("1", repr(value))
    if isinstance(value, bytes):
        return ("3", value.hex())
    return ("2", str(value))


def json_value(value: Any, max_chars: int = 200) -> Any:
    """A SQLite value as JSON: numbers and NULL as they are, text clipped, bytes as a size."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return clip(str(value), max_chars)


def outcome_summary(outcome: QueryOutcome | None, max_rows: int = 5) -> dict[str, Any]:
    """A JSON-ready summary: columns and the first rows, or the error."""
    if outcome is None:
        return {"ok": False, "error": "no SQL in the reply"}
    if isinstance(outcome, QueryError):
        return {"ok": False, "error": f"{outcome.kind.value}: {clip(outcome.message, 300)}"}
    return {
        "ok": True,
        "columns": list(outcome.columns),
        "rows": [[json_value(v) for v in row] for row in outcome.rows[:max_rows]],
        "row_count": len(outcome.rows),
        "truncated": outcome.truncated,
    }
