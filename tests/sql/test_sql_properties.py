"""Property: no statement the allow-list accepts can change the database file.

Statements come from a small grammar of reads (SELECT, set operations, CTEs, bounded recursive
CTEs, subqueries) and writes (DML, DDL, data-modifying CTEs, ATTACH, PRAGMA, VACUUM, ...),
decorated with comments, odd casing and extra statements. Accepted statements are run on a
*writable* connection with no other protection, so only the guard stands between them and the
file; then every statement goes through the full executor. The file's hash must not move.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemagraph.sql import QueryResult, check_sql, execute, is_allowed

COLUMNS = {
    "singer": ["Singer_ID", "Name", "Age", "Country"],
    "stadium": ["Stadium_ID", "Name", "Capacity"],
    "concert": ["concert_ID", "Stadium_ID", "Year"],
}
TABLES = sorted(COLUMNS)
OPS = ["=", ">", "<", ">=", "!=", "LIKE"]


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def db_copy(tmp_path_factory: pytest.TempPathFactory, sample_dir: Path) -> Path:
    folder = tmp_path_factory.mktemp("property")
    target = folder / "concert_singer.sqlite"
    shutil.copyfile(sample_dir / "database" / "concert_singer" / "concert_singer.sqlite", target)
    return target


values = st.one_of(
    st.integers(-5, 100).map(str), st.sampled_from(["'France'", "'x%'", "NULL", "1.5"])
)


@st.composite
def conditions(draw: st.DrawFn, table: str) -> str:
    column = draw(st.sampled_from(COLUMNS[table]))
    return f"{column} {draw(st.sampled_from(OPS))} {draw(values)}"


@st.composite
def select_cores(draw: st.DrawFn) -> str:
    table = draw(st.sampled_from(TABLES))
    column = draw(st.sampled_from(COLUMNS[table]))
    projection = draw(
        st.sampled_from(["*", column, "count(*)", f"max({column})", f"DISTINCT {column}"])
    )
    sql = f"SELECT {projection} FROM {table}"
    if draw(st.booleans()):
        sql += f" WHERE {draw(conditions(table))}"
        if draw(st.booleans()):
            other = draw(st.sampled_from(TABLES))
            sql += f" AND {column} IN (SELECT {COLUMNS[other][0]} FROM {other})"
    if draw(st.booleans()):
        sql += f" GROUP BY {column}"
    if draw(st.booleans()):
        sql += f" ORDER BY {column} {draw(st.sampled_from(['ASC', 'DESC']))}"
    if draw(st.booleans()):
        sql += f" LIMIT {draw(st.integers(0, 5))}"
    return sql


@st.composite
def reads(draw: st.DrawFn) -> str:
    core = draw(select_cores())
    shape = draw(st.sampled_from(["plain", "setop", "cte", "recursive", "paren"]))
    if shape == "setop":
        op = draw(st.sampled_from(["UNION", "UNION ALL", "INTERSECT", "EXCEPT"]))
        return f"SELECT Name FROM singer {op} SELECT Name FROM stadium"
    if shape == "cte":
        return f"WITH x AS ({core}) SELECT * FROM x"
    if shape == "recursive":
        bound = draw(st.integers(1, 50))
        step = f"SELECT n + 1 FROM c WHERE n < {bound}"
        return f"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL {step}) SELECT n FROM c"
    if shape == "paren":
        return f"({core})"
    return core


@st.composite
def writes(draw: st.DrawFn) -> str:
    table = draw(st.sampled_from(TABLES))
    column = draw(st.sampled_from(COLUMNS[table]))
    where = f" WHERE {draw(conditions(table))}" if draw(st.booleans()) else ""
    folder = "/tmp/schemarag-property-never-created"
    return draw(
        st.sampled_from(
            [
                f"INSERT INTO {table} ({column}) VALUES ({draw(values)})",
                f"INSERT OR IGNORE INTO {table} SELECT * FROM {table}",
                f"REPLACE INTO {table} ({column}) VALUES (1)",
                f"UPDATE {table} SET {column} = {draw(values)}{where}",
                f"DELETE FROM {table}{where}",
                f"DROP TABLE {table}",
                f"DROP TABLE IF EXISTS {table}",
                f"DROP INDEX IF EXISTS idx_{table}",
                f"CREATE TABLE z_{table} (a INT)",
                "CREATE TEMP TABLE z (a INT)",
                f"CREATE VIEW v AS SELECT * FROM {table}",
                f"CREATE INDEX idx_{table} ON {table} ({column})",
                f"CREATE TRIGGER t AFTER INSERT ON {table} BEGIN DELETE FROM {table}; END",
                f"ALTER TABLE {table} RENAME TO {table}_old",
                f"ALTER TABLE {table} ADD COLUMN extra INT",
                f"ATTACH DATABASE '{folder}.db' AS evil",
                "DETACH DATABASE evil",
                f"PRAGMA user_version = {draw(st.integers(1, 9))}",
                "PRAGMA journal_mode = WAL",
                "PRAGMA writable_schema = ON",
                "PRAGMA foreign_keys = ON",
                "VACUUM",
                f"VACUUM INTO '{folder}.vacuum'",
                "REINDEX",
                "ANALYZE",
                "BEGIN",
                "COMMIT",
                f"WITH x AS (SELECT 1) DELETE FROM {table}{where}",
                f"WITH x AS (DELETE FROM {table} RETURNING *) SELECT * FROM x",
                f"WITH x AS (UPDATE {table} SET {column} = 1 RETURNING *) SELECT * FROM x",
                f"SELECT load_extension('{folder}.so')",
                f"SELECT * INTO copy_{table} FROM {table}",
            ]
        )
    )


@st.composite
def decorated(draw: st.DrawFn, statements: st.SearchStrategy[str]) -> str:
    sql = draw(statements)
    if draw(st.booleans()):
        sql = "".join(c.upper() if draw(st.booleans()) else c.lower() for c in sql[:6]) + sql[6:]
    prefix = draw(st.sampled_from(["", "/* note */ ", "-- note\n", "\n  "]))
    suffix = draw(st.sampled_from(["", ";", " ; ", ";\n-- trailing"]))
    return prefix + sql + suffix


@st.composite
def combined(draw: st.DrawFn) -> str:
    first = draw(st.one_of(reads(), writes()))
    second = draw(st.one_of(reads(), writes()))
    return f"{first}; {second}"


ANY_STATEMENT = st.one_of(decorated(reads()), decorated(writes()), combined())


def run_raw(path: Path, sql: str) -> None:
    """Run `sql` on a plain writable connection, with a deadline; errors are ignored."""
    connection = sqlite3.connect(path)
    deadline = time.monotonic() + 1.0
    connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 1_000)
    try:
        connection.execute(sql).fetchmany(100)
        connection.commit()
    except (sqlite3.Error, sqlite3.Warning):
        pass
    finally:
        connection.close()


@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sql=ANY_STATEMENT)
def test_guard_never_accepts_a_statement_that_changes_the_file(db_copy: Path, sql: str) -> None:
    before = file_sha256(db_copy)
    if is_allowed(sql):
        run_raw(db_copy, sql)
    assert file_sha256(db_copy) == before, sql


@settings(max_examples=150, deadline=None)
@given(sql=decorated(writes()))
def test_every_write_of_the_grammar_is_refused(sql: str) -> None:
    assert not is_allowed(sql), sql


@settings(max_examples=150, deadline=None)
@given(sql=combined())
def test_two_statements_are_always_refused(sql: str) -> None:
    assert not is_allowed(sql), sql


@settings(max_examples=150, deadline=None)
@given(sql=decorated(reads()))
def test_every_read_of_the_grammar_is_accepted(sql: str) -> None:
    assert is_allowed(sql), (sql, check_sql(sql))


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sql=ANY_STATEMENT)
def test_executor_never_changes_the_file(db_copy: Path, sql: str) -> None:
    before = file_sha256(db_copy)
    outcome = execute(db_copy, sql, timeout_s=0.5, max_rows=50)
    assert file_sha256(db_copy) == before, sql
    if isinstance(outcome, QueryResult):
        assert is_allowed(sql)
