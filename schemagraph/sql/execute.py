"""Run one untrusted query against a database, safely, and return a typed result.

Three locks stand between a language model's SQL and a user's file:

1. the guard (`guard.check_sql`): one statement, a query, nothing that writes (sqlglot tree);
2. the engine: SQLite opened through a `mode=ro` URI, so the handle itself cannot write, with
   `SQLITE_LIMIT_ATTACHED` set to 0;
3. an authorizer (`read_only_authorizer`) that allows only SELECT, reads, recursive CTEs and
   functions outside a deny-list; ATTACH, PRAGMA, transactions and every write are denied at
   prepare time even if the parser misread the statement.

Resources are bounded per call. Guard, execution and fetching run in a worker process
(`worker.py`) that is killed `worker.KILL_GRACE_S` after the deadline, because one SQLite
opcode (one function call) can run for minutes and nothing in-process interrupts it. Inside
the worker, a progress handler interrupts SQLite at the deadline, backed by a timer thread
calling `interrupt()` for queries whose single steps are slow, so that the usual timeout keeps
the worker; at most `max_rows` rows are fetched (one more is read to detect truncation), and
text or blob values longer than `max_value_bytes` are cut with a marker.

Every call opens its own connection and closes it, so any number of threads may call `execute`
or share one `SqliteEngine` at the same time: each calling thread has its own worker.

`QueryEngine` is the seam for other engines: `live_engine.LiveEngine` runs queries on a
PostgreSQL server or a DuckDB file with the same guard (in the server's dialect), limits and
result types.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from schemagraph.sql.errors import DatabaseFileError, LimitsError
from schemagraph.sql.guard import DANGEROUS_FUNCTIONS, Refusal, RefusalRule, check_sql
from schemagraph.sql.worker import DeadlinePassed, WorkerDied, call_with_deadline

log = logging.getLogger(__name__)

SQLITE_HEADER = b"SQLite format 3\x00"
TRUNCATION_MARKER = "…[truncated]"
ENGINE_MAX_LENGTH = 64 * 1024 * 1024
"""SQLITE_LIMIT_LENGTH for our connections: no string, blob or row may grow beyond 64 MiB."""
ENGINE_MAX_SQL_LENGTH = 1_000_000
PROGRESS_EVERY_OPCODES = 1_000

_SQLITE_RECURSIVE = getattr(sqlite3, "SQLITE_RECURSIVE", 33)
ALLOWED_ACTIONS: frozenset[int] = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, _SQLITE_RECURSIVE}
)
"""Authorizer action codes that are allowed; every other action is denied."""

_ACTION_NAMES: tuple[str, ...] = (
    "COPY", "CREATE_INDEX", "CREATE_TABLE", "CREATE_TEMP_INDEX", "CREATE_TEMP_TABLE",
    "CREATE_TEMP_TRIGGER", "CREATE_TEMP_VIEW", "CREATE_TRIGGER", "CREATE_VIEW", "DELETE",
    "DROP_INDEX", "DROP_TABLE", "DROP_TEMP_INDEX", "DROP_TEMP_TABLE", "DROP_TEMP_TRIGGER",
    "DROP_TEMP_VIEW", "DROP_TRIGGER", "DROP_VIEW", "INSERT", "PRAGMA", "READ", "SELECT",
    "TRANSACTION", "UPDATE", "ATTACH", "DETACH", "ALTER_TABLE", "REINDEX", "ANALYZE",
    "CREATE_VTABLE", "DROP_VTABLE", "FUNCTION", "SAVEPOINT", "RECURSIVE",
)  # fmt: skip
"""SQLite authorizer action codes 0..33 by name (sqlite3.h), for error messages."""


class ErrorKind(enum.StrEnum):
    """Why a query produced no result."""

    REFUSED = "refused"
    TIMEOUT = "timeout"
    ERROR = "error"


@dataclass(frozen=True)
class Limits:
    """Per-call bounds on an untrusted query; validated here so that callers fail early."""

    timeout_s: float = 5.0
    max_rows: int = 1_000
    max_value_bytes: int = 10_000

    def __post_init__(self) -> None:
        if not (self.timeout_s > 0):
            raise LimitsError(f"timeout_s must be > 0 seconds, got {self.timeout_s!r}")
        if self.max_rows < 0:
            raise LimitsError(f"max_rows must be >= 0, got {self.max_rows!r}")
        if self.max_value_bytes < 1:
            raise LimitsError(f"max_value_bytes must be >= 1, got {self.max_value_bytes!r}")


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class QueryResult:
    """Rows of a query that ran. `truncated`: more rows existed than `max_rows`.
    `values_truncated`: at least one value was cut to `max_value_bytes` (marked in the value)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool = False
    values_truncated: bool = False
    elapsed_ms: float = 0.0
    ok: bool = field(default=True, init=False)


@dataclass(frozen=True)
class QueryError:
    """A query that did not produce rows: refused (with the rule), timed out, or failed."""

    kind: ErrorKind
    message: str
    rule: RefusalRule | None = None
    elapsed_ms: float = 0.0
    ok: bool = field(default=False, init=False)


QueryOutcome = QueryResult | QueryError


class QueryEngine(Protocol):
    """Runs one untrusted query within limits. Implementations must never write."""

    @property
    def dialect(self) -> str:
        """The sqlglot dialect the guard parses with."""
        ...

    def run(self, sql: str, limits: Limits = DEFAULT_LIMITS) -> QueryOutcome:
        """Guard, execute and fetch; errors are returned as `QueryError`, never raised."""
        ...


class SqliteEngine:
    """A `QueryEngine` over one SQLite file, opened read-only afresh for every call."""

    def __init__(self, db_path: str | Path) -> None:
        self._path = check_database_file(db_path)

    @property
    def dialect(self) -> str:
        return "sqlite"

    @property
    def path(self) -> Path:
        return self._path

    def run(self, sql: str, limits: Limits = DEFAULT_LIMITS) -> QueryOutcome:
        return _in_worker(_run_guarded, self._path, sql, limits)


def execute(
    db_path: str | Path,
    sql: str,
    *,
    timeout_s: float = DEFAULT_LIMITS.timeout_s,
    max_rows: int = DEFAULT_LIMITS.max_rows,
    max_value_bytes: int = DEFAULT_LIMITS.max_value_bytes,
) -> QueryOutcome:
    """Run untrusted `sql` on the SQLite file `db_path`: guard, read-only engine, limits.

    Raises `DatabaseFileError` for a missing or non-SQLite file and `LimitsError` for bad limits
    (user mistakes); everything about the query itself comes back as a `QueryError`.
    """
    limits = Limits(timeout_s=timeout_s, max_rows=max_rows, max_value_bytes=max_value_bytes)
    return SqliteEngine(db_path).run(sql, limits)


def check_database_file(db_path: str | Path) -> Path:
    """The resolved path of an existing SQLite file, or `DatabaseFileError` naming the problem."""
    path = Path(db_path)
    if not path.exists():
        raise DatabaseFileError(f"{path}: no such database file")
    if not path.is_file():
        raise DatabaseFileError(f"{path}: not a file (expected an SQLite database file)")
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise DatabaseFileError(f"{path}: cannot read ({exc.strerror})") from exc
    if header and header != SQLITE_HEADER:
        raise DatabaseFileError(f"{path}: not an SQLite database (bad header)")
    return path.resolve()


def read_only_authorizer(
    action: int, arg1: str | None, arg2: str | None, db_name: str | None, trigger: str | None
) -> int:
    """SQLite authorizer: allow SELECT, column reads, recursive CTEs and safe functions only.

    For SQLITE_FUNCTION, `arg2` is the function name; names in `DANGEROUS_FUNCTIONS` are denied.
    Everything else (writes, DDL, ATTACH/DETACH, PRAGMA, transactions, ...) is denied.
    """
    if action not in ALLOWED_ACTIONS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in DANGEROUS_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def connect_read_only(db_path: Path, *, busy_timeout_s: float = 5.0) -> sqlite3.Connection:
    """A fresh connection that cannot write: `mode=ro` URI, no ATTACH, read-only authorizer."""
    uri = db_path.resolve().as_uri() + "?mode=ro"
    connection = sqlite3.connect(uri, uri=True, timeout=busy_timeout_s, isolation_level=None)
    connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, ENGINE_MAX_LENGTH)
    connection.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, ENGINE_MAX_SQL_LENGTH)
    connection.text_factory = _decode_text
    connection.set_authorizer(read_only_authorizer)
    return connection


def run_unguarded(db_path: Path, sql: str, limits: Limits) -> QueryOutcome:
    """Execute `sql` with the engine-level locks and limits only (no sqlglot guard).

    For callers that already guarded the SQL, and for tests showing that the authorizer alone
    denies writes; other callers want `execute`.
    """
    return _in_worker(_run_here, db_path, sql, limits)


def _in_worker(
    function: Callable[[Path, str, Limits, float], QueryOutcome],
    db_path: Path,
    sql: str,
    limits: Limits,
) -> QueryOutcome:
    """`function` in a worker process that is killed if it outlives the deadline."""
    started = time.perf_counter()
    try:
        # elapsed: measured in the worker (starting one is not the query's time)
        return call_with_deadline(function, (db_path, sql, limits), limits.timeout_s)
    except DeadlinePassed as exc:
        log.debug("query worker killed at the deadline")
        return QueryError(ErrorKind.TIMEOUT, _timeout_message(limits), None, exc.waited_s * 1000)
    except WorkerDied as exc:
        message = f"the process running the query ended without an answer ({exc})"
        return QueryError(ErrorKind.ERROR, message, None, _elapsed_ms(started))


def _run_guarded(db_path: Path, sql: str, limits: Limits, deadline: float) -> QueryOutcome:
    """In the worker: the sqlglot guard, then the engine."""
    started = time.perf_counter()
    verdict = check_sql(sql, dialect="sqlite")
    if isinstance(verdict, Refusal):
        log.debug("refused (%s): %s", verdict.rule, verdict.message)
        return QueryError(ErrorKind.REFUSED, verdict.message, verdict.rule, _elapsed_ms(started))
    outcome = _run_here(db_path, sql, limits, deadline)
    return dataclasses.replace(outcome, elapsed_ms=_elapsed_ms(started))


def _run_here(db_path: Path, sql: str, limits: Limits, deadline: float) -> QueryOutcome:
    """In the worker: run `sql` on a read-only connection, interrupted at `deadline`."""
    started = time.perf_counter()
    denied: list[str] = []
    interrupted: list[bool] = []
    try:
        connection = connect_read_only(db_path, busy_timeout_s=min(limits.timeout_s, 5.0))
    except sqlite3.Error as exc:
        return QueryError(ErrorKind.ERROR, f"cannot open database: {exc}", None, 0.0)
    try:
        connection.set_authorizer(_recording(read_only_authorizer, denied))
        handler = _deadline_handler(deadline, interrupted)
        connection.set_progress_handler(handler, PROGRESS_EVERY_OPCODES)
        with _Watchdog(connection, max(0.0, deadline - time.monotonic()), interrupted):
            return _fetch(connection, sql, limits, started)
    except (sqlite3.Error, sqlite3.Warning) as exc:
        return _error_outcome(exc, denied, bool(interrupted), limits, started)
    finally:
        connection.close()


def _fetch(connection: sqlite3.Connection, sql: str, limits: Limits, started: float) -> QueryResult:
    """Read at most `max_rows` + 1 rows, one at a time, capping each row's values as it comes.

    Row by row, so that a hostile query returning huge values holds one of them in memory at
    a time, not a whole batch.
    """
    cursor = connection.execute(sql)
    columns = tuple(str(d[0]) for d in cursor.description or ())
    rows: list[tuple[Any, ...]] = []
    values_truncated = truncated = False
    while cursor.description is not None:
        row = cursor.fetchone()
        if row is None:
            break
        if len(rows) == limits.max_rows:
            truncated = True
            break
        capped, cut = _cap_row(row, limits.max_value_bytes)
        rows.append(capped)
        values_truncated = values_truncated or cut
    return QueryResult(
        columns=columns,
        rows=tuple(rows),
        truncated=truncated,
        values_truncated=values_truncated,
        elapsed_ms=_elapsed_ms(started),
    )


def _error_outcome(
    exc: sqlite3.Error | sqlite3.Warning,
    denied: list[str],
    interrupted: bool,
    limits: Limits,
    started: float,
) -> QueryError:
    elapsed = _elapsed_ms(started)
    if denied:
        message = f"denied by the read-only authorizer: {', '.join(denied)} ({exc})"
        log.debug("authorizer refused: %s", message)
        return QueryError(ErrorKind.REFUSED, message, RefusalRule.AUTHORIZER, elapsed)
    if interrupted:
        log.debug("query interrupted after %.0f ms", elapsed)
        return QueryError(ErrorKind.TIMEOUT, _timeout_message(limits), None, elapsed)
    if "too big" in str(exc):
        limit = ENGINE_MAX_LENGTH // 2**20
        message = f"a string or blob would exceed the engine's {limit} MiB limit ({exc})"
        return QueryError(ErrorKind.ERROR, message, None, elapsed)
    return QueryError(ErrorKind.ERROR, f"{type(exc).__name__}: {exc}", None, elapsed)


def _timeout_message(limits: Limits) -> str:
    return f"interrupted after the {limits.timeout_s:g} s time limit"


def _recording(
    authorizer: Callable[[int, str | None, str | None, str | None, str | None], int],
    denied: list[str],
) -> Callable[[int, str | None, str | None, str | None, str | None], int]:
    """Wrap an authorizer so that each denial is remembered for the error message."""

    def wrapped(
        action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None
    ) -> int:
        verdict = authorizer(action, arg1, arg2, db, trigger)
        if verdict != sqlite3.SQLITE_OK:
            detail = " ".join(a for a in (arg1, arg2) if a)
            name = _ACTION_NAMES[action] if 0 <= action < len(_ACTION_NAMES) else str(action)
            denied.append(f"{name} {detail}".strip())
        return verdict

    return wrapped


def _deadline_handler(deadline: float, fired: list[bool]) -> Callable[[], int]:
    """A progress handler that interrupts SQLite once `deadline` has passed, and says so."""

    def handler() -> int:
        if time.monotonic() < deadline:
            return 0
        fired.append(True)
        return 1

    return handler


class _Watchdog:
    """Interrupts a connection from a timer thread at the deadline.

    The progress handler runs every `PROGRESS_EVERY_OPCODES` opcodes, which can be seconds
    apart when single opcodes are slow (`randomblob(30000000)` per row); `interrupt()` is safe
    to call from another thread and stops SQLite at the next opcode. The lock makes sure the
    timer never touches the connection after `__exit__`, so it can be closed safely.
    """

    def __init__(self, connection: sqlite3.Connection, timeout_s: float, fired: list[bool]) -> None:
        self._connection = connection
        self._fired = fired
        self._lock = threading.Lock()
        self._done = False
        self._timer = threading.Timer(timeout_s, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        with self._lock:
            if not self._done:
                self._fired.append(True)
                self._connection.interrupt()

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            self._done = True
        self._timer.cancel()


def _cap_row(row: tuple[Any, ...], max_bytes: int) -> tuple[tuple[Any, ...], bool]:
    capped = [_cap_value(value, max_bytes) for value in row]
    return tuple(value for value, _ in capped), any(cut for _, cut in capped)


def _cap_value(value: Any, max_bytes: int) -> tuple[Any, bool]:
    if isinstance(value, str) and len(value) > max_bytes // 4:
        encoded = value.encode("utf-8")
        if len(encoded) > max_bytes:
            return encoded[:max_bytes].decode("utf-8", errors="ignore") + TRUNCATION_MARKER, True
    if isinstance(value, bytes) and len(value) > max_bytes:
        return value[:max_bytes] + TRUNCATION_MARKER.encode("utf-8"), True
    return value, False


def _decode_text(raw: bytes) -> str:
    """TEXT that is not valid UTF-8 is decoded with replacement characters, not an error."""
    return raw.decode("utf-8", errors="replace")


def _elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
