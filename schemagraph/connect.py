"""Connections to live database servers through SQLAlchemy: URLs, engines, read-only transactions.

A URL is anything of the form `scheme://...` that SQLAlchemy understands
(`postgresql://user@host/db`, `mysql+pymysql://...`, `duckdb:///file.duckdb`,
`sqlite:///file.sqlite`). A scheme without a driver gets the one the `live` extra installs
(`postgresql` → psycopg 3, `mysql`/`mariadb` → PyMySQL).

Passwords never leave this module in clear: `masked(url)` is what messages, logs and
`Database.origin` show, and `SourceError`s raised here have the password scrubbed from the
driver's own message too.

`read_only(engine, timeout_s)` opens one read-only transaction with a deadline, enforced at
every layer the dialect offers:

============  ===========================================  =====================================
dialect       read-only                                    deadline
============  ===========================================  =====================================
postgresql    SET TRANSACTION READ ONLY                    SET LOCAL statement_timeout,
                                                           lock_timeout
duckdb        the file opened with read_only=True          the connection interrupted
sqlite        the file opened with mode=ro                 the connection interrupted
mysql         START TRANSACTION READ ONLY (untested)       MAX_EXECUTION_TIME (untested)
mariadb       START TRANSACTION READ ONLY (untested)       max_statement_time (untested)
others        none here: give the URL a read-only role     none here
============  ===========================================  =====================================

SQLAlchemy is imported inside the functions, so `import schemagraph` stays light.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schemagraph.errors import SourceError
from schemagraph.readonly import connect_readonly

if TYPE_CHECKING:
    from sqlalchemy.engine import URL, Connection, Engine

log = logging.getLogger(__name__)

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
#: Query parameters whose values are secrets (Snowflake's key passphrase, tokens, ...).
_SECRET_KEY = re.compile(r"pass|secret|token|key|credential", re.IGNORECASE)
#: The driver of a URL that names none: the one the `live` extra installs.
DEFAULT_DRIVERS = {
    "postgresql": "postgresql+psycopg",
    "postgres": "postgresql+psycopg",
    "mysql": "mysql+pymysql",
    "mariadb": "mariadb+pymysql",
}
CONNECT_TIMEOUT_S = 10
INSTALL = "pip install 'schemarag[live]'"


def is_url(spec: str) -> bool:
    """Whether a source spec is a database URL (`scheme://...`) rather than `KIND:PATH`."""
    return bool(_URL.match(spec))


def _sqlalchemy() -> Any:
    try:
        import sqlalchemy
    except ImportError:
        raise SourceError(f"database URLs need SQLAlchemy and a driver: {INSTALL}") from None
    return sqlalchemy


def parse_url(url: str) -> URL:
    """The SQLAlchemy URL of `url`, with the default driver filled in; SourceError if it is not
    one (the message shows the URL masked)."""
    sqlalchemy = _sqlalchemy()
    try:
        parsed = sqlalchemy.engine.make_url(url)
    except (sqlalchemy.exc.ArgumentError, ValueError):
        raise SourceError(
            f"{masked(url)}: not a database URL; write "
            "DIALECT[+DRIVER]://USER@HOST[:PORT]/DATABASE (e.g. "
            "postgresql://reader@db.internal/warehouse, duckdb:///data/shop.duckdb)"
        ) from None
    driver = DEFAULT_DRIVERS.get(parsed.drivername)
    return parsed.set(drivername=driver) if driver else parsed


def masked(url: str | URL) -> str:
    """`url` with its password (and secret query parameters) replaced by `***`.

    Never raises: a string SQLAlchemy cannot parse is masked by pattern."""
    try:
        from sqlalchemy.engine import make_url

        parsed = make_url(url) if isinstance(url, str) else url
        query = {k: "***" if _SECRET_KEY.search(k) else v for k, v in parsed.query.items()}
        return str(parsed.set(query=query).render_as_string(hide_password=True))
    except Exception:  # not parsable, or no SQLAlchemy: mask by shape
        text = str(url)
        text = re.sub(r"(://[^/@:?#]*:)[^@/?#]*@", r"\1***@", text)
        return re.sub(
            r"((?:pass|secret|token|key|credential)[^=&]*=)[^&]*", r"\1***", text, flags=re.I
        )


def _secrets(url: URL) -> list[str]:
    values = [url.password] if url.password else []
    values += [
        v for k, v in url.query.items() if _SECRET_KEY.search(k) and isinstance(v, str) and v
    ]
    from urllib.parse import quote, quote_plus

    values += [quote(v, safe="") for v in list(values)] + [quote_plus(v) for v in list(values)]
    return sorted({str(v) for v in values}, key=len, reverse=True)


def scrub(text: str, url: URL) -> str:
    """`text` on one line with every secret of `url` replaced by `***`."""
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    return " ".join(text.split())


def create_engine(url: str | URL) -> Engine:
    """An engine for `url` without a connection pool (every connection is closed when released).

    DuckDB files are opened read-only; SQLite files through a read-only (`mode=ro`) connection.
    The engine does not connect yet; a missing driver is a SourceError naming the package."""
    sqlalchemy = _sqlalchemy()
    parsed = parse_url(url) if isinstance(url, str) else url
    backend = parsed.get_backend_name()
    options: dict[str, Any] = {"poolclass": sqlalchemy.pool.NullPool}
    if backend == "postgresql":
        options["connect_args"] = {
            "connect_timeout": CONNECT_TIMEOUT_S,
            "application_name": "schemarag",
        }
    elif backend in ("mysql", "mariadb"):
        options["connect_args"] = {"connect_timeout": CONNECT_TIMEOUT_S}
    elif backend == "duckdb":
        _existing_file(parsed, "DuckDB")
        options["connect_args"] = {"read_only": True}
    elif backend == "sqlite":
        file = _existing_file(parsed, "SQLite")
        options["creator"] = lambda: connect_readonly(file)
    try:
        return sqlalchemy.create_engine(parsed, **options)
    except sqlalchemy.exc.NoSuchModuleError:
        raise SourceError(
            f"{masked(parsed)}: SQLAlchemy has no dialect {parsed.drivername!r}; install the "
            f"dialect's package (snowflake-sqlalchemy, sqlalchemy-bigquery, ...) or {INSTALL}"
        ) from None
    except ImportError as exc:
        raise SourceError(
            f"{masked(parsed)}: the driver {exc.name or parsed.get_driver_name()!r} is not "
            f"installed; {INSTALL} or name an installed driver in the URL "
            "(postgresql+psycopg://, mysql+pymysql://)"
        ) from None


def _existing_file(url: URL, what: str) -> Path:
    if not url.database or url.database == ":memory:":
        raise SourceError(f"{masked(url)}: name a {what} file (e.g. {url.drivername}:///data.db)")
    file = Path(url.database)
    if not file.is_file():
        raise SourceError(f"{masked(url)}: no such {what} file {file}")
    return file


def database_name(url: URL) -> str | None:
    """The database a URL names, as ids use it: the file's stem for SQLite and DuckDB files."""
    if not url.database:
        return None
    if url.get_backend_name() in ("sqlite", "duckdb"):
        return Path(url.database).stem
    return url.database.split("/")[0]  # snowflake://account/DATABASE/SCHEMA


@contextmanager
def connection(engine: Engine, shown: str | None = None) -> Iterator[Connection]:
    """A connection of `engine`; failing to connect is a one-line SourceError with the fix,
    naming `shown` (the URL as the user wrote it, masked) or the engine's masked URL."""
    sqlalchemy = _sqlalchemy()
    try:
        conn = engine.connect()
    except sqlalchemy.exc.DBAPIError as exc:
        raise connect_error(engine.url, exc, shown) from None
    try:
        yield conn
    finally:
        conn.close()


def connect_error(url: URL, exc: BaseException, shown: str | None = None) -> SourceError:
    reason = scrub(str(getattr(exc, "orig", None) or exc).split("\n[SQL")[0], url)
    backend = url.get_backend_name()
    if backend == "duckdb" and "lock" in reason.lower():
        fix = "another process holds the file open for writing; read a copy, or stop the writer"
    elif backend in ("duckdb", "sqlite"):
        fix = "check that the file is a readable database"
    else:
        where = "PGPASSWORD, ~/.pgpass or " if backend == "postgresql" else ""
        fix = (
            f"check the host, port, database, user and password ({where}the URL, e.g. taken "
            "from an environment variable with env:NAME) and that the server accepts this client"
        )
    return SourceError(f"{shown or masked(url)}: cannot connect ({reason}); {fix}")


def query_error(url: URL, exc: BaseException, doing: str) -> SourceError:
    reason = scrub(str(getattr(exc, "orig", None) or exc).split("\n[SQL")[0], url)
    return SourceError(
        f"{masked(url)}: {doing} failed ({reason}); the user of the URL needs USAGE on the "
        "schemas and SELECT on the tables"
    )


@contextmanager
def read_only(conn: Connection, timeout_s: float) -> Iterator[Connection]:
    """One read-only transaction on `conn` with a deadline of `timeout_s` per statement (PostgreSQL)
    or for the whole block (DuckDB, SQLite: the connection is interrupted); rolled back at the
    end. A statement past its deadline raises the driver's error (sqlalchemy.exc.DBAPIError)."""
    if timeout_s <= 0:
        raise ValueError("timeout_s must be > 0")
    backend = conn.dialect.name
    ms = max(1, int(timeout_s * 1000))
    timer: threading.Timer | None = None
    transaction = conn.begin()
    try:
        if backend == "postgresql":
            conn.exec_driver_sql("SET TRANSACTION READ ONLY")
            conn.exec_driver_sql(f"SET LOCAL statement_timeout = {ms}")
            conn.exec_driver_sql(f"SET LOCAL lock_timeout = {ms}")
        elif backend in ("mysql", "mariadb"):
            if getattr(conn.dialect, "is_mariadb", False):
                conn.exec_driver_sql(f"SET SESSION max_statement_time = {ms / 1000:.3f}")
            else:
                conn.exec_driver_sql(f"SET SESSION MAX_EXECUTION_TIME = {ms}")
            conn.exec_driver_sql("START TRANSACTION READ ONLY")
        elif backend in ("duckdb", "sqlite"):
            raw = conn.connection.dbapi_connection
            if raw is not None and hasattr(raw, "interrupt"):
                timer = threading.Timer(timeout_s, raw.interrupt)
                timer.daemon = True
                timer.start()
        else:
            log.info("%s: no read-only transaction in dialect %s", masked(conn.engine.url), backend)
        yield conn
    finally:
        if timer is not None:
            timer.cancel()
        if transaction.is_active:
            transaction.rollback()
