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
