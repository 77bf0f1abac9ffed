"""The sqlglot allow-list: which statements pass, and which rule refuses the others."""

from __future__ import annotations

import pytest

from schemagraph.sql import Accepted, Refusal, RefusalRule, check_sql, is_allowed

ACCEPTED = [
    "SELECT 1",
    "SELECT name FROM singer;",
    "select name from singer where age > 20 order by age desc limit 3",
    "(SELECT 1)",
    "SELECT a FROM t UNION SELECT b FROM u",
    "SELECT a FROM t INTERSECT SELECT b FROM u EXCEPT SELECT c FROM v",
    "WITH x AS (SELECT 1 AS a) SELECT a FROM x",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5) SELECT x FROM c",
    "SELECT * FROM t WHERE a IN (SELECT b FROM u) AND EXISTS (SELECT 1 FROM v)",
    "SELECT count(DISTINCT a), max(b), group_concat(c) FROM t GROUP BY d HAVING count(*) > 1",
    'SELECT "a;b" FROM t -- a comment; DROP TABLE t',
    "SELECT 'DROP TABLE t; DELETE FROM t' AS text",
]

REFUSED = [
    ("", RefusalRule.EMPTY),
    (" ; ", RefusalRule.EMPTY),
    ("SELECT 1; SELECT 2", RefusalRule.MULTIPLE_STATEMENTS),
    ("SELECT 1; DROP TABLE singer", RefusalRule.MULTIPLE_STATEMENTS),
    ("SELECT 1 /* hi */; DELETE FROM singer", RefusalRule.MULTIPLE_STATEMENTS),
    ("DROP TABLE singer", RefusalRule.WRITE),
    ("DROP VIEW v", RefusalRule.WRITE),
    ("DELETE FROM singer", RefusalRule.WRITE),
    ("UPDATE singer SET age = 1", RefusalRule.WRITE),
    ("INSERT INTO singer (name) VALUES ('x')", RefusalRule.WRITE),
    ("INSERT INTO singer SELECT * FROM singer", RefusalRule.WRITE),
    ("REPLACE INTO singer (name) VALUES ('x')", RefusalRule.WRITE),
    ("CREATE TABLE z (a INT)", RefusalRule.WRITE),
    ("CREATE TEMP VIEW v AS SELECT 1", RefusalRule.WRITE),
    ("CREATE INDEX i ON singer (age)", RefusalRule.WRITE),
    ("ALTER TABLE singer ADD COLUMN z INT", RefusalRule.WRITE),
    ("WITH x AS (DELETE FROM singer RETURNING *) SELECT * FROM x", RefusalRule.WRITE),
    ("WITH x AS (INSERT INTO t VALUES (1) RETURNING *) SELECT * FROM x", RefusalRule.WRITE),
    ("SELECT * INTO t2 FROM singer", RefusalRule.SELECT_INTO),
    ("ATTACH DATABASE '/tmp/evil.db' AS evil", RefusalRule.ATTACH),
    ("DETACH DATABASE evil", RefusalRule.ATTACH),
    ("PRAGMA journal_mode = WAL", RefusalRule.PRAGMA),
    ("PRAGMA user_version = 7", RefusalRule.PRAGMA),
    ("PRAGMA table_info(singer)", RefusalRule.PRAGMA),
    ("VACUUM", RefusalRule.MAINTENANCE),
    ("VACUUM INTO '/tmp/copy.db'", RefusalRule.MAINTENANCE),
    ("ANALYZE", RefusalRule.MAINTENANCE),
    ("BEGIN", RefusalRule.TRANSACTION),
    ("COMMIT", RefusalRule.TRANSACTION),
    ("ROLLBACK", RefusalRule.TRANSACTION),
    ("REINDEX", RefusalRule.MAINTENANCE),
    ("SAVEPOINT a", RefusalRule.TRANSACTION),
    ("release savepoint a", RefusalRule.TRANSACTION),
    ("VALUES (1, 2)", RefusalRule.NOT_A_QUERY),
    ("EXPLAIN SELECT 1", RefusalRule.NOT_A_QUERY),
    ("EXPLAIN QUERY PLAN SELECT 1", RefusalRule.NOT_A_QUERY),
    ("SELECT * FROM pragma_table_info('singer')", RefusalRule.PRAGMA),
    ("SELECT * FROM json_each('[1, 2]')", RefusalRule.TABLE_FUNCTION),
    ("SELECT load_extension('/tmp/evil.so')", RefusalRule.DANGEROUS_FUNCTION),
    ("SELECT name FROM singer WHERE LOAD_EXTENSION('x') IS NULL", RefusalRule.DANGEROUS_FUNCTION),
    ("SELECT readfile('/etc/passwd')", RefusalRule.DANGEROUS_FUNCTION),
    ("SELECT writefile('/tmp/x', 'data')", RefusalRule.DANGEROUS_FUNCTION),
    ("SELECT * FROM zipfile('/tmp/a.zip')", RefusalRule.DANGEROUS_FUNCTION),
    ("SELECT * FROM sqlite_dbpage", RefusalRule.DANGEROUS_FUNCTION),
    ("SELECT FROM WHERE (", RefusalRule.PARSE_ERROR),
    ("->", RefusalRule.PARSE_ERROR),  # sqlglot's SQLite parser raises a TypeError on it
]


NAMED_REASONS = [
    ("SELECT * FROM pragma_table_info('x')", "table-valued PRAGMA function pragma_table_info"),
    ("SAVEPOINT a", "SAVEPOINT is not a query"),
    ("EXPLAIN SELECT 1", "EXPLAIN is not a query"),
    ("VACUUM", "VACUUM is not a query"),
    ("REPLACE INTO singer (name) VALUES ('x')", "REPLACE modifies the database"),
]


@pytest.mark.parametrize(("sql", "reason"), NAMED_REASONS)
def test_refusals_name_the_real_reason_without_sqlglot_warnings(
    sql: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    verdict = check_sql(sql)
    assert isinstance(verdict, Refusal) and reason in verdict.message, verdict
    assert "Falling back" not in caplog.text


@pytest.mark.parametrize("sql", ACCEPTED)
def test_read_only_queries_are_accepted(sql: str) -> None:
    verdict = check_sql(sql)
    assert isinstance(verdict, Accepted), verdict
    assert is_allowed(sql)


@pytest.mark.parametrize(("sql", "rule"), REFUSED)
def test_each_refusal_names_its_rule(sql: str, rule: RefusalRule) -> None:
    verdict = check_sql(sql)
    assert isinstance(verdict, Refusal), sql
    assert verdict.rule is rule, verdict
    assert verdict.message
    assert not is_allowed(sql)


def test_overlong_sql_is_refused_before_parsing() -> None:
    verdict = check_sql("SELECT " + "1 + " * 50 + "1", max_chars=20)
    assert isinstance(verdict, Refusal) and verdict.rule is RefusalRule.TOO_LONG


def test_refusal_rules_are_stable_strings() -> None:
    assert RefusalRule.WRITE == "write"
    assert RefusalRule("multiple_statements") is RefusalRule.MULTIPLE_STATEMENTS


SERVER_ACCEPTED = [
    ("postgres", "SELECT n FROM generate_series(1, 3) AS g(n)"),
    ("postgres", "SELECT x FROM unnest(ARRAY[1, 2]) AS x"),
    ("postgres", "SELECT * FROM lo_items"),  # a table whose name starts like lo_import
    ("postgres", "SELECT lower(name), log(10, 100) FROM t"),
    ("postgres", "SELECT current_setting('search_path')"),
    ("postgres", "TABLE t"),
    ("duckdb", "SELECT * FROM range(10)"),
    ("duckdb", "SELECT * FROM generate_series(1, 3)"),
    ("duckdb", "SELECT name FROM t WHERE name GLOB 'A*'"),
    ("duckdb", 'SELECT * FROM "orders"'),
    ("sqlite", "SELECT name FROM t WHERE name GLOB 'A*'"),
]

SERVER_REFUSED = [
    ("postgres", "SELECT pg_read_file('/etc/passwd')", RefusalRule.DANGEROUS_FUNCTION),
    ("postgres", "SELECT pg_catalog.pg_read_binary_file('/x')", RefusalRule.DANGEROUS_FUNCTION),
    ("postgres", "SELECT * FROM pg_ls_dir('/')", RefusalRule.DANGEROUS_FUNCTION),
    ("postgres", "SELECT lo_import('/etc/passwd')", RefusalRule.DANGEROUS_FUNCTION),
    ("postgres", "SELECT lo_export(1, '/tmp/x')", RefusalRule.DANGEROUS_FUNCTION),
    (
        "postgres",
        "SELECT * FROM dblink('db', 'DELETE FROM t') AS t(x int)",
        RefusalRule.DANGEROUS_FUNCTION,
    ),
    ("postgres", "SELECT dblink_exec('db', 'DELETE FROM t')", RefusalRule.DANGEROUS_FUNCTION),
    ("postgres", "SELECT pg_sleep(10)", RefusalRule.DANGEROUS_FUNCTION),
    (
        "postgres",
        "SELECT a FROM t WHERE pg_sleep_for('1 hour') IS NULL",
        RefusalRule.DANGEROUS_FUNCTION,
    ),
    ("postgres", "SELECT set_config('role', 'postgres', false)", RefusalRule.DANGEROUS_FUNCTION),
    ("postgres", "SELECT pg_terminate_backend(1)", RefusalRule.DANGEROUS_FUNCTION),
    ("postgres", "SELECT nextval('s')", RefusalRule.DANGEROUS_FUNCTION),
    (
        "postgres",
        "SELECT query_to_xml('DELETE FROM t', true, true, '')",
        RefusalRule.DANGEROUS_FUNCTION,
    ),
    ("postgres", "SELECT pg_advisory_lock(1)", RefusalRule.DANGEROUS_FUNCTION),
    ("postgres", "SELECT * FROM t FOR UPDATE", RefusalRule.LOCK),
    ("postgres", "COPY t TO PROGRAM 'id'", RefusalRule.WRITE),
    ("postgres", "COPY (SELECT 1) TO '/tmp/x'", RefusalRule.WRITE),
    ("postgres", "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", RefusalRule.WRITE),
    ("postgres", "SET ROLE postgres", RefusalRule.COMMAND),
    ("postgres", "DO $$ BEGIN END $$", RefusalRule.COMMAND),
    ("duckdb", "SELECT * FROM read_csv('/etc/passwd')", RefusalRule.TABLE_FUNCTION),
    ("duckdb", "SELECT * FROM read_text('/etc/passwd')", RefusalRule.TABLE_FUNCTION),
    ("duckdb", "SELECT * FROM read_parquet('x.parquet')", RefusalRule.TABLE_FUNCTION),
    ("duckdb", "SELECT * FROM glob('/etc/*')", RefusalRule.TABLE_FUNCTION),
    ("duckdb", "SELECT * FROM query('DELETE FROM t')", RefusalRule.TABLE_FUNCTION),
    ("duckdb", "SELECT * FROM '/etc/passwd'", RefusalRule.DANGEROUS_FUNCTION),
    ("duckdb", "FROM 'orders'", RefusalRule.DANGEROUS_FUNCTION),  # a string: a file name
    ("duckdb", "SELECT * FROM t JOIN 'data.csv' USING (id)", RefusalRule.DANGEROUS_FUNCTION),
    ("duckdb", "SELECT getenv('HOME')", RefusalRule.DANGEROUS_FUNCTION),
    ("duckdb", "COPY t TO '/tmp/x.csv'", RefusalRule.WRITE),
    ("duckdb", "ATTACH '/tmp/x.duckdb' AS x", RefusalRule.ATTACH),
    ("duckdb", "INSTALL httpfs", RefusalRule.NOT_A_QUERY),
    ("duckdb", "LOAD httpfs", RefusalRule.COMMAND),
    ("duckdb", "SET enable_external_access = true", RefusalRule.NOT_A_QUERY),
]


@pytest.mark.parametrize(("dialect", "sql"), SERVER_ACCEPTED)
def test_server_dialects_accept_plain_queries(dialect: str, sql: str) -> None:
    verdict = check_sql(sql, dialect=dialect)
    assert isinstance(verdict, Accepted), (sql, verdict)


@pytest.mark.parametrize(("dialect", "sql", "rule"), SERVER_REFUSED)
def test_server_dialects_refuse_what_reaches_outside(
    dialect: str, sql: str, rule: RefusalRule
) -> None:
    verdict = check_sql(sql, dialect=dialect)
    assert isinstance(verdict, Refusal) and verdict.rule is rule, (sql, verdict)
