"""Run one untrusted query on a live server (PostgreSQL, or a DuckDB file) through its URL.

`LiveEngine` is the `QueryEngine` of a live database (`Database.url` and `Database.schema`, see
`schemagraph.sources.live`); it returns the same `QueryResult` / `QueryError` values as
`SqliteEngine` and never raises for a bad query. The locks, in order:

1. the guard, in the server's dialect (`guard.check_sql(sql, dialect="postgres" | "duckdb")`),
   with the dialect's deny-list of functions that read files, run SQL given as text, sleep,
   signal or change settings;
2. the engine:

   - PostgreSQL: every query runs in its own transaction that starts with
     `SET TRANSACTION READ ONLY`, with `SET LOCAL statement_timeout`, `lock_timeout` and
     `search_path` (the database's schema, so unqualified table names resolve). The query is
     sent as `DECLARE ... CURSOR FOR <query>` in the extended protocol: one statement only, and
     PostgreSQL accepts only a SELECT or VALUES there (no data-modifying WITH). Rows come from
     one `FETCH` of `max_rows + 1` rows, so a result with many rows is never transferred (values
     are cut to `max_value_bytes` after they arrive). The transaction is rolled back. Give the
     URL a read-only role as well (README, "Live sources").
   - DuckDB: the file is opened with `read_only=True`, `enable_external_access=false` (no file,
     URL, ATTACH, COPY, INSTALL or LOAD) and `lock_configuration=true` (a query cannot turn that
     back on); DuckDB's own parser must find exactly one SELECT statement.

Deadlines hold within `KILL_GRACE_S` / `CANCEL_GRACE_S` (well under 0.5 s) of `timeout_s`:

- PostgreSQL: the server cancels the statement at `statement_timeout`; if no answer came
  `CANCEL_GRACE_S` after the deadline, a timer thread sends the server a cancel request. Not
  covered: connecting (bounded by the 10 s connect timeout, `connect.CONNECT_TIMEOUT_S`) and a
  server that stops answering altogether.
- DuckDB: `interrupt()` at the deadline does not hold for single long operations (`repeat` of a
  huge string takes seconds to notice it), so DuckDB queries run in a worker process
  (`worker.call_with_deadline`), killed `worker.KILL_GRACE_S` after the deadline. Each call
  opens the file and closes it, so no process keeps it open between queries.

The engine runs SQL written in the server's dialect. The generator and the synthesizers write
SQLite's; `translate` turns it into the server's with sqlglot (`IFNULL` → `COALESCE`, ...) and,
for PostgreSQL, quotes the database's mixed-case names as the server spells them.

PostgreSQL connections are kept between calls (up to `MAX_IDLE` per engine; one unused for
`IDLE_CLOSE_S` is replaced rather than reused), so a build validating thousands of queries
connects a few times, not thousands. Values are returned as SQLite's are (numbers, text, bytes,
NULL): decimals as numbers, dates and times as ISO text, JSON as text. Credentials never appear
in a message.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
import threading
import time
import uuid
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError

from schemagraph.connect import create_engine, masked, parse_url, scrub
from schemagraph.errors import SourceError
from schemagraph.model import Database, fold
from schemagraph.sql._parse import parse_statements
from schemagraph.sql.execute import (
    DEFAULT_LIMITS,
    ErrorKind,
    Limits,
    QueryError,
    QueryOutcome,
    QueryResult,
    SqliteEngine,
    _cap_row,
)
from schemagraph.sql.guard import MAX_SQL_CHARS, Refusal, RefusalRule, check_sql
from schemagraph.sql.worker import DeadlinePassed, WorkerDied, call_with_deadline

log = logging.getLogger(__name__)

CANCEL_GRACE_S = 0.1
"""How long after the deadline a PostgreSQL query that has not answered is cancelled."""
MAX_IDLE = 2
"""PostgreSQL connections kept per engine between calls."""
IDLE_CLOSE_S = 60.0
"""A kept connection unused for longer is closed instead of reused."""
MAX_ENGINES = 8
"""Engines `live_engine` keeps (with their connections), the least recently used closed first."""
CURSOR = "schemarag_query"
DIALECTS = {"postgresql": "postgres", "duckdb": "duckdb"}
"""SQLAlchemy backends with a live engine, and their sqlglot dialects."""
_REFUSED_STATES = {"25006", "42501"}  # read_only_sql_transaction, insufficient_privilege
_CANCELED_STATES = {"57014"}  # query_canceled (statement_timeout, cancel request)


def live_engine(url: str, schema: str | None = None) -> LiveEngine | SqliteEngine:
    """The `QueryEngine` of a database URL: `LiveEngine` for PostgreSQL and DuckDB, `SqliteEngine`
    for a `sqlite:///` file. SourceError (the URL masked) for other dialects or a bad URL.

    Engines are kept (the `MAX_ENGINES` last used), so that every caller working on the same
    database shares its connections; `close_engines()` closes them all."""
    parsed = parse_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database:
        return SqliteEngine(parsed.database)
    key = (url, schema)
    with _engines_lock:  # creating one connects to nothing: cheap enough to hold the lock
        engine = _engines.pop(key, None) or LiveEngine(url, schema)
        _engines[key] = engine  # the most recently used last
        evicted = [_engines.pop(k) for k in list(_engines)[: max(0, len(_engines) - MAX_ENGINES)]]
    for old in evicted:
        old.close()
    return engine


def runs_queries(url: str) -> bool:
    """Whether queries can run on the database of `url` (PostgreSQL, DuckDB, SQLite); False for
    other dialects and for what is not a URL."""
    try:
        backend = parse_url(url).get_backend_name()
    except SourceError:
        return False
    return backend in DIALECTS or backend == "sqlite"


def translate(sql: str, *, read: str, write: str, names: Iterable[str] = ()) -> str:
    """`sql`, written in dialect `read`, in dialect `write` (sqlglot); unchanged when it is not
    exactly one statement sqlglot can read (the guard then says what is wrong).

    `names`: the database's table and column names as the server writes them. SQLite matches
    names case-insensitively and PostgreSQL folds unquoted names to lower case, so for PostgreSQL
    an unquoted name that matches one of `names` with capitals (`Memo`, `memo` for "Memo") is
    written quoted, as the server spells it."""
    if read == write or len(sql) > MAX_SQL_CHARS:
        return sql
    try:
        trees = parse_statements(sql, read)
        if len(trees) != 1:
            return sql
        tree = trees[0]
        if write == "postgres":
            spelled = {fold(n): n for n in names if n != n.lower()}
            for identifier in tree.find_all(exp.Identifier):
                real = spelled.get(fold(identifier.name))
                if real is not None and not identifier.quoted:
                    identifier.set("this", real)
                    identifier.set("quoted", True)
        return tree.sql(dialect=write)
    except (SqlglotError, RecursionError, ValueError):
        return sql


def database_names(db: Database) -> list[str]:
    """The table and column names of `db`, for `translate`."""
    return [t.name for t in db.tables] + [c.name for t in db.tables for c in t.columns]


def run_on_server(db: Database, sql: str, limits: Limits = DEFAULT_LIMITS) -> QueryOutcome:
    """Run `sql`, written in SQLite's SQL (as prompts and synthesizers write it), on the server
    of `db` (`db.url`): translated to the server's dialect, then guarded and run by its shared
    engine."""
    if db.url is None:
        raise ValueError(f"database {db.id!r} has no server URL")
    engine = live_engine(db.url, db.schema)
    return engine.run(
        translate(sql, read="sqlite", write=engine.dialect, names=database_names(db)), limits
    )


def close_engines() -> None:
    """Close the connections of every engine `live_engine` kept, and forget the engines."""
    with _engines_lock:
        engines = list(_engines.values())
        _engines.clear()
    for engine in engines:
        engine.close()


_engines: dict[tuple[str, str | None], LiveEngine] = {}
_engines_lock = threading.Lock()


class LiveEngine:
    """A `QueryEngine` over one schema of a PostgreSQL database or a DuckDB file. It runs SQL
    written in the server's dialect; `translate` turns SQLite's (the generator's) into it."""

    def __init__(self, url: str, schema: str | None = None) -> None:
        parsed = parse_url(url)
        backend = parsed.get_backend_name()
        if backend not in DIALECTS:
            raise SourceError(
                f"{masked(parsed)}: queries run on PostgreSQL, DuckDB and SQLite only, not "
                f"{backend}; the catalog can still be read from this URL"
            )
        self._dialect = DIALECTS[backend]
        self._schema = schema
        self._shown = masked(parsed)
        self._postgres: _Postgres | None = None
        self._duckdb: Path | None = None
        if backend == "postgresql":
            self._postgres = _Postgres(url, schema)
        else:
            create_engine(parsed).dispose()  # checks the file exists, with a one-line error
            self._duckdb = Path(str(parsed.database)).resolve()

    @property
    def dialect(self) -> str:
        return self._dialect

    @property
    def schema(self) -> str | None:
        return self._schema

    def __repr__(self) -> str:
        return f"LiveEngine({self._shown!r}, schema={self._schema!r})"

    def run(self, sql: str, limits: Limits = DEFAULT_LIMITS) -> QueryOutcome:
        """Guard in the server's dialect, execute read-only and fetch within `limits`; the time
        limit counts all of it."""
        return self._run(sql, limits, guarded=True)

    def run_unguarded(self, sql: str, limits: Limits = DEFAULT_LIMITS) -> QueryOutcome:
        """Execute `sql` with the engine's locks and limits only (no sqlglot guard): for tests
        showing what the server alone refuses."""
        return self._run(sql, limits, guarded=False)

    def close(self) -> None:
        """Close the connections kept for the next calls."""
        if self._postgres is not None:
            self._postgres.close()

    def _run(self, sql: str, limits: Limits, *, guarded: bool) -> QueryOutcome:
        started = time.perf_counter()
        deadline = time.monotonic() + limits.timeout_s
        if self._postgres is not None:
            if guarded:
                verdict = check_sql(sql, dialect=self._dialect)
                if isinstance(verdict, Refusal):
                    return _refused(verdict, started)
            # unguarded SQL may leave session state behind (an advisory lock): never kept
            outcome = self._postgres.run(sql, limits, deadline, keep=guarded)
        else:
            assert self._duckdb is not None
            try:
                outcome = call_with_deadline(
                    _duckdb_run,
                    (str(self._duckdb), self._schema, sql, limits, guarded),
                    max(0.0, deadline - time.monotonic()),
                )
            except DeadlinePassed:
                outcome = QueryError(ErrorKind.TIMEOUT, _timeout_message(limits))
            except WorkerDied as exc:
                message = f"the process running the query ended without an answer ({exc})"
                outcome = QueryError(ErrorKind.ERROR, message)
        return dataclasses.replace(outcome, elapsed_ms=(time.perf_counter() - started) * 1000)


def _refused(verdict: Refusal, started: float) -> QueryError:
    log.debug("refused (%s): %s", verdict.rule, verdict.message)
    elapsed = (time.perf_counter() - started) * 1000
    return QueryError(ErrorKind.REFUSED, verdict.message, verdict.rule, elapsed)


def _timeout_message(limits: Limits) -> str:
    return f"interrupted after the {limits.timeout_s:g} s time limit"


class _Postgres:
    """PostgreSQL connections of one engine, and one query's transaction on them."""

    def __init__(self, url: str, schema: str | None) -> None:
        self._parsed = parse_url(url)
        self._engine = create_engine(self._parsed)
        self._schema = schema
        self._idle: list[tuple[float, Any]] = []
        self._lock = threading.Lock()
        self._closed = False

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
            self._closed = True
        for _, proxied in idle:
            _close(proxied)

    def _take(self) -> tuple[Any, bool]:
        """A connection, and whether it was kept from an earlier call."""
        now = time.monotonic()
        with self._lock:
            while self._idle:
                since, proxied = self._idle.pop()
                if now - since < IDLE_CLOSE_S and not proxied.driver_connection.closed:
                    return proxied, True
                _close(proxied)
        return self._engine.raw_connection(), False

    def _give_back(self, proxied: Any) -> None:
        with self._lock:
            if len(self._idle) < MAX_IDLE and not self._closed:
                self._idle.append((time.monotonic(), proxied))
                return
        _close(proxied)

    def run(self, sql: str, limits: Limits, deadline: float, *, keep: bool) -> QueryOutcome:
        """`sql`'s outcome; `keep`: whether the connection may serve later calls."""
        while True:
            try:
                proxied, kept = self._take()
            except Exception as exc:  # the driver's or SQLAlchemy's: one line, password scrubbed
                return QueryError(ErrorKind.ERROR, f"cannot connect ({self._reason(exc)})")
            outcome, broken = self._run_on(proxied, sql, limits, deadline, keep)
            if not (broken and kept):
                return outcome
            # a kept connection the server closed meanwhile (restart, idle timeout): once more
            log.debug("a kept connection was closed by the server; connecting again")

    def _run_on(
        self, proxied: Any, sql: str, limits: Limits, deadline: float, keep: bool
    ) -> tuple[QueryOutcome, bool]:
        """The outcome of `sql` on one connection, and whether the connection broke."""
        conn = proxied.driver_connection
        watchdog = _Canceller(conn, max(0.0, deadline - time.monotonic()) + CANCEL_GRACE_S)
        outcome: QueryOutcome
        try:
            with watchdog:
                outcome = self._query(conn, sql, limits, deadline)
        except Exception as exc:  # the driver's errors: the query's outcome, never raised
            outcome = self._error(exc, limits, watchdog.fired)
        except BaseException:  # interrupted (Ctrl-C): the connection is in an unknown state
            _close(proxied)
            raise
        broken = bool(conn.broken)
        # a connection that was sent a cancel could pass it on to the next query: closed
        if _rolled_back(conn) and keep and not watchdog.fired:
            self._give_back(proxied)
        else:
            _close(proxied)
        return outcome, broken

    def _query(self, conn: Any, sql: str, limits: Limits, deadline: float) -> QueryResult:
        def remaining_ms() -> int:
            return max(1, int((deadline - time.monotonic()) * 1000))

        with conn.cursor() as cur:
            cur.execute("SET TRANSACTION READ ONLY")
            cur.execute(f"SET LOCAL lock_timeout = {remaining_ms()}")
            if self._schema is not None:
                cur.execute("SELECT set_config('search_path', %s, true)", (_ident(self._schema),))
            cur.execute(f"SET LOCAL statement_timeout = {remaining_ms()}")
            # binary=True: the extended protocol, which takes exactly one statement
            cur.execute(f"DECLARE {CURSOR} NO SCROLL CURSOR FOR {sql}", binary=True)
            cur.execute(f"SET LOCAL statement_timeout = {remaining_ms()}")
            cur.execute(f"FETCH FORWARD {limits.max_rows + 1} FROM {CURSOR}")
            columns = tuple(str(d.name) for d in cur.description or ())
            fetched = cur.fetchall()
        return _result(columns, fetched, limits)

    def _error(self, exc: Exception, limits: Limits, cancelled: bool) -> QueryError:
        state = getattr(exc, "sqlstate", None)
        reason = self._reason(exc)
        if state in _CANCELED_STATES or cancelled:
            return QueryError(ErrorKind.TIMEOUT, _timeout_message(limits))
        if state in _REFUSED_STATES:
            return QueryError(
                ErrorKind.REFUSED, f"refused by the server: {reason}", RefusalRule.ENGINE
            )
        return QueryError(ErrorKind.ERROR, reason)

    def _reason(self, exc: BaseException) -> str:
        text = str(getattr(exc, "orig", None) or exc).split("\n[SQL")[0]
        return " ".join(scrub(text, self._parsed).split())[:500] or type(exc).__name__


class _Canceller:
    """Sends PostgreSQL a cancel request for `conn` if the block outlives `after_s`. The lock
    makes sure no cancel is sent after the block ended (it could hit the next query)."""

    def __init__(self, conn: Any, after_s: float) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self._done = False
        self.fired = False
        self._timer = threading.Timer(after_s, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.fired = True
            try:
                self._conn.cancel_safe(timeout=1.0)
            except Exception as exc:  # the query goes on until statement_timeout
                log.warning("could not cancel a query past its deadline: %s", type(exc).__name__)

    def __enter__(self) -> _Canceller:
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            self._done = True
        self._timer.cancel()


def _rolled_back(conn: Any) -> bool:
    try:
        if not conn.closed:
            conn.rollback()
            return not conn.broken
    except Exception:
        pass
    return False


def _close(proxied: Any) -> None:
    """Close a connection for good. `invalidate`, not `close`: the pool would roll back first,
    and log a traceback when the server already ended the connection."""
    try:
        proxied.invalidate()
    except Exception as exc:
        log.debug("closing a connection: %s", type(exc).__name__)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _result(columns: tuple[str, ...], fetched: list[Any], limits: Limits) -> QueryResult:
    truncated = len(fetched) > limits.max_rows
    rows: list[tuple[Any, ...]] = []
    values_truncated = False
    for row in fetched[: limits.max_rows]:
        capped, cut = _cap_row(tuple(_value(v) for v in row), limits.max_value_bytes)
        rows.append(capped)
        values_truncated = values_truncated or cut
    return QueryResult(columns, tuple(rows), truncated, values_truncated)


def _value(value: Any) -> Any:
    """A driver's value as SQLite would give it: numbers, text, bytes or None."""
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return value
    if isinstance(value, Decimal):
        if not value.is_finite():
            return float(value)
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, uuid.UUID | datetime.timedelta):
        return str(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def _duckdb_run(
    path: str, schema: str | None, sql: str, limits: Limits, guarded: bool, deadline: float
) -> QueryOutcome:
    """In a worker process: one query on a read-only DuckDB connection, interrupted at the
    deadline (the caller kills the worker if that does not hold)."""
    import duckdb

    if guarded:
        verdict = check_sql(sql, dialect="duckdb")
        if isinstance(verdict, Refusal):
            return QueryError(ErrorKind.REFUSED, verdict.message, verdict.rule)
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        return QueryError(ErrorKind.ERROR, _duckdb_reason(exc))
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        kinds = ", ".join(s.type.name for s in statements) or "none"
        message = f"refused by the engine: one SELECT statement may run, found {kinds}"
        return QueryError(ErrorKind.REFUSED, message, RefusalRule.ENGINE)
    config = {
        "enable_external_access": False,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "lock_configuration": True,
    }
    fired: list[bool] = []
    try:
        conn = duckdb.connect(path, read_only=True, config=config)  # type: ignore[arg-type]
    except duckdb.Error as exc:
        return QueryError(ErrorKind.ERROR, f"cannot open the DuckDB file ({_duckdb_reason(exc)})")
    lock = threading.Lock()
    done: list[bool] = []

    def interrupt() -> None:
        with lock:
            if not done:
                fired.append(True)
                conn.interrupt()

    timer = threading.Timer(max(0.0, deadline - time.monotonic()), interrupt)
    timer.daemon = True
    try:
        if schema is not None:
            conn.execute(f"SET schema = '{schema.replace(chr(39), chr(39) * 2)}'")
        timer.start()
        cursor = conn.execute(sql)
        columns = tuple(str(d[0]) for d in cursor.description or ())
        fetched = cursor.fetchmany(limits.max_rows + 1)
        return _result(columns, fetched, limits)
    except duckdb.Error as exc:
        if fired or isinstance(exc, duckdb.InterruptException):
            return QueryError(ErrorKind.TIMEOUT, _timeout_message(limits))
        if isinstance(exc, duckdb.PermissionException):
            return QueryError(
                ErrorKind.REFUSED, f"refused by the engine: {exc}", RefusalRule.ENGINE
            )
        return QueryError(ErrorKind.ERROR, _duckdb_reason(exc))
    finally:
        with lock:
            done.append(True)
        timer.cancel()
        conn.close()


def _duckdb_reason(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:500] or type(exc).__name__
