"""A hostile corpus against a real PostgreSQL server and a DuckDB file: writes, DDL, several
statements, data-modifying CTEs, COPY to a program or a file, file readers, dblink, large
objects, SET ROLE, settings, sleeps, huge cartesian products and never-ending recursive CTEs.

Each corpus runs twice: through the guard, and with the guard bypassed (`run_unguarded`: the
engine's locks alone: PostgreSQL's read-only role, read-only transaction and single-statement
`DECLARE ... CURSOR`; DuckDB's read-only connection with file access off). After each run, every
table's checksum (md5 of its ordered rows), the list of tables and columns, the sequence and the
large objects are unchanged, no file was written, no result holds a line of /etc/passwd, and
every query that ran out of time answered within 0.5 s of its limit.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from schemagraph.sql import (
    ErrorKind,
    Limits,
    LiveEngine,
    QueryError,
    QueryOutcome,
    QueryResult,
    RefusalRule,
)
from tests.pgcluster import PostgresCluster

duckdb = pytest.importorskip("duckdb", reason="duckdb is not installed (pip install -e '.[live]')")

LIMIT_S = 1.0
SLACK_S = 0.5
READER = "hostile_reader"
READER_PASSWORD = "H0stile-Reader-pw"
APP = """
CREATE SCHEMA app;
CREATE TABLE app.accounts (id int PRIMARY KEY, owner text NOT NULL, balance numeric(12, 2));
INSERT INTO app.accounts VALUES (1, 'alice', 100.00), (2, 'bob', 250.50), (3, 'carol', 0);
CREATE TABLE app.big (n int);
INSERT INTO app.big SELECT generate_series(1, 3000);
CREATE SEQUENCE app.tickets;
-- a function anyone may call that writes: only the read-only transaction stops it
CREATE FUNCTION app.steal() RETURNS int LANGUAGE sql
  AS $$ UPDATE app.accounts SET balance = 0; SELECT 1 $$;
CREATE PROCEDURE app.steal_proc() LANGUAGE sql AS $$ UPDATE app.accounts SET balance = 0 $$;
"""


def readme_role_sql() -> str:
    """The README's read-only role ("Live sources"), verbatim but for the names."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = text.split("**A read-only role (PostgreSQL).**", 1)[1].split("```sql", 1)[1]
    sql = block.split("```", 1)[0]
    assert "GRANT SELECT ON ALL TABLES" in sql and "default_transaction_read_only" in sql
    sql = sql.replace("schemarag_reader", READER).replace("'...'", f"'{READER_PASSWORD}'")
    sql = sql.replace("warehouse", "hostile").replace("sales, hr", "app")
    create, rest = sql.split(";", 1)  # the role may exist from an earlier module of the session
    return f"DO $$ BEGIN {create.strip()}; EXCEPTION WHEN duplicate_object THEN NULL; END $$;{rest}"


POSTGRES_CORPUS = [
    "INSERT INTO accounts VALUES (9, 'mallory', 1000000)",
    "UPDATE accounts SET balance = 0",
    "DELETE FROM accounts",
    "TRUNCATE accounts",
    "DROP TABLE accounts",
    "CREATE TABLE stolen AS SELECT * FROM accounts",
    "CREATE TEMP TABLE stolen AS SELECT * FROM accounts",
    "ALTER TABLE accounts ADD COLUMN x int",
    "GRANT ALL ON accounts TO PUBLIC",
    "SELECT * INTO stolen FROM accounts",
    "SELECT 1; DELETE FROM accounts",
    "SELECT 1; COMMIT; DELETE FROM accounts",
    "COMMIT; SET default_transaction_read_only = off; DELETE FROM accounts",
    "WITH gone AS (DELETE FROM accounts RETURNING *) SELECT count(*) FROM gone",
    "WITH up AS (UPDATE accounts SET balance = 0 RETURNING id) SELECT * FROM up",
    "COPY accounts TO PROGRAM 'touch {canary}/program'",
    "COPY (SELECT 1) TO '{canary}/copy'",
    "COPY accounts FROM '/etc/passwd'",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT pg_catalog.pg_read_file('/etc/passwd', 0, 100000)",
    "SELECT pg_read_binary_file('/etc/passwd')",
    "SELECT * FROM pg_ls_dir('/')",
    "SELECT lo_import('/etc/passwd')",
    "SELECT lo_export(lo_from_bytea(0, 'x'), '{canary}/lo')",
    "SELECT * FROM dblink('dbname=hostile', 'DELETE FROM app.accounts') AS t(x text)",
    "SELECT dblink_exec('dbname=hostile', 'DELETE FROM app.accounts')",
    "SET ROLE postgres",
    "RESET ROLE",
    "SELECT set_config('role', 'postgres', false)",
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "SELECT pg_terminate_backend(pg_backend_pid())",
    "SELECT nextval('tickets')",
    "SELECT steal()",
    "SELECT * FROM accounts FOR UPDATE",
    "SELECT query_to_xml('DELETE FROM app.accounts RETURNING 1', true, false, '')",
    "DO $$ BEGIN DELETE FROM app.accounts; END $$",
    "CALL app.steal_proc()",
    "LOCK TABLE accounts",
    "VACUUM accounts",
    "PREPARE p AS DELETE FROM accounts",
    "SELECT pg_advisory_lock(42)",
    "LISTEN evil",
    "SELECT pg_notify('evil', 'x')",
    "SELECT pg_reload_conf()",
]
POSTGRES_SLOW = [
    "SELECT pg_sleep(10)",
    "SELECT count(*) FROM big a, big b, big c",
    "SELECT a.n, b.n, c.n FROM big a, big b, big c ORDER BY a.n + b.n * c.n DESC",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    "SELECT count(*) FROM generate_series(1, 1000000000000)",
]
POSTGRES_HARMLESS_UNGUARDED = {
    # they run with the guard bypassed, and change nothing that outlives the transaction
    "SELECT set_config('default_transaction_read_only', 'off', false)",  # rolled back
    "SELECT pg_advisory_lock(42)",  # released: unguarded connections are never kept
    "SELECT pg_notify('evil', 'x')",  # notifications are sent at commit: never
    "SELECT pg_sleep(10)",  # cancelled (checked below)
}
PASS_THE_GUARD = {
    # a function of the database: the guard cannot see that it writes; the transaction refuses
    "SELECT steal()",
}
POSTGRES_WRITES_IN_A_SELECT = [
    "SELECT steal()",
    "SELECT nextval('tickets')",
    "SELECT * FROM accounts FOR UPDATE",
    "WITH t AS (SELECT steal()) SELECT * FROM t",
]

DUCKDB_CORPUS = [
    "INSERT INTO accounts VALUES (9, 'mallory', 1000000)",
    "UPDATE accounts SET balance = 0",
    "DELETE FROM accounts",
    "DROP TABLE accounts",
    "CREATE TABLE stolen AS SELECT * FROM accounts",
    "CREATE TEMP TABLE stolen AS SELECT * FROM accounts",
    "ALTER TABLE accounts ADD COLUMN x INTEGER",
    "SELECT 1; DELETE FROM accounts",
    "WITH gone AS (DELETE FROM accounts RETURNING *) SELECT count(*) FROM gone",
    "COPY accounts TO '{canary}/copy.csv'",
    "COPY (SELECT * FROM accounts) TO '{canary}/copy.parquet' (FORMAT parquet)",
    "EXPORT DATABASE '{canary}/export'",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('/etc/passwd', header = false)",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_blob('/etc/passwd')",
    "SELECT * FROM '/etc/passwd'",
    "FROM '/etc/passwd'",
    "SELECT * FROM read_parquet('{canary}/*.parquet')",
    "SELECT * FROM read_json('/etc/passwd')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM query('SELECT * FROM read_text(''/etc/passwd'')')",
    "SELECT * FROM query_table('accounts')",
    "ATTACH '{canary}/evil.duckdb' AS evil",
    "ATTACH ':memory:' AS scratch",
    "DETACH shop",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "RESET enable_external_access",
    "SET threads = 1",
    "CHECKPOINT",
    "VACUUM",
    "CREATE SECRET evil (TYPE s3, KEY_ID 'x', SECRET 'y')",
    "SELECT getenv('HOME')",
    "PRAGMA database_list",
    "CALL pragma_version()",
]
DUCKDB_HARMLESS_UNGUARDED = {
    "SELECT * FROM query_table('accounts')",  # reads a table of the database, nothing else
}
DUCKDB_SLOW = [
    "SELECT count(*) FROM big a, big b, big c",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    "SELECT sum(length(repeat('x', 100000000 + i))) FROM range(1000) t(i)",
    "SELECT count(*) FROM range(1000000000000)",
]


@pytest.fixture
def canary() -> Iterator[Path]:
    """A folder anyone may write to (the server runs as another OS user): it must stay empty."""
    folder = Path(tempfile.mkdtemp(prefix="schemarag-canary-", dir="/tmp"))
    os.chmod(folder, 0o777)
    yield folder
    for path in sorted(folder.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    folder.rmdir()


@pytest.fixture(scope="module")
def hostile(postgres_cluster: PostgresCluster) -> Iterator[PostgresCluster]:
    postgres_cluster.create_database("hostile", APP + readme_role_sql())
    yield postgres_cluster


def postgres_state(cluster: PostgresCluster) -> list[Any]:
    """Everything the corpus must not change: each table's rows (md5 of the ordered rows), the
    tables and columns, the sequence, large objects, and the role's settings."""
    tables = [r[0] for r in cluster.query(_PG_TABLES, "hostile")]
    sums = [
        (t, cluster.query(f"SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) "
                          f"FROM app.{t} x", "hostile")[0][0])
        for t in tables
    ]  # fmt: skip
    return [
        sums,
        cluster.query(_PG_COLUMNS, "hostile"),
        cluster.query("SELECT last_value, is_called FROM app.tickets", "hostile"),
        cluster.query("SELECT count(*) FROM pg_largeobject_metadata", "hostile"),
        cluster.query(f"SELECT rolsuper, rolconfig FROM pg_roles WHERE rolname = '{READER}'"),
        cluster.query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"),
    ]


_PG_TABLES = (
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'app' ORDER BY 1"
)
_PG_COLUMNS = (
    "SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns "
    "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2, 3"
)


def run_corpus(
    run: Callable[[str, Limits], QueryOutcome], corpus: list[str], canary: Path
) -> dict[str, tuple[QueryOutcome, float]]:
    outcomes = {}
    for template in corpus:
        sql = template.replace("{canary}", str(canary))
        started = time.perf_counter()
        outcome = run(sql, Limits(timeout_s=LIMIT_S, max_rows=100, max_value_bytes=10_000))
        outcomes[template] = (outcome, time.perf_counter() - started)
    return outcomes


def assert_safe(
    outcomes: dict[str, tuple[QueryOutcome, float]], canary: Path, harmless: set[str]
) -> None:
    for sql, (outcome, elapsed) in outcomes.items():
        assert elapsed <= LIMIT_S + SLACK_S, (sql, elapsed, outcome)
        if isinstance(outcome, QueryResult):
            assert sql in harmless, (sql, outcome)
            assert "root:" not in repr(outcome.rows), sql
        elif outcome.kind is ErrorKind.TIMEOUT:
            assert elapsed >= LIMIT_S - 0.05, (sql, elapsed)
    assert not any(canary.iterdir()), list(canary.iterdir())


def assert_deadlines(outcomes: dict[str, tuple[QueryOutcome, float]]) -> None:
    """Every slow query that was not refused timed out, and answered within SLACK_S."""
    for sql, (outcome, elapsed) in outcomes.items():
        assert isinstance(outcome, QueryError), (sql, outcome)
        if outcome.kind is not ErrorKind.REFUSED:
            assert outcome.kind is ErrorKind.TIMEOUT, (sql, outcome)
            assert LIMIT_S - 0.05 <= elapsed <= LIMIT_S + SLACK_S, (sql, elapsed)


def test_postgres_corpus_through_the_guard(hostile: PostgresCluster, canary: Path) -> None:
    before = postgres_state(hostile)
    engine = LiveEngine(hostile.url("hostile", READER, READER_PASSWORD), "app")
    try:
        outcomes = run_corpus(engine.run, POSTGRES_CORPUS, canary)
        for sql, (outcome, _) in outcomes.items():
            assert isinstance(outcome, QueryError) and outcome.kind is ErrorKind.REFUSED, sql
            by_server = outcome.rule is RefusalRule.ENGINE
            assert by_server == (sql in PASS_THE_GUARD), (sql, outcome)
        assert_safe(outcomes, canary, set())
        slow = run_corpus(engine.run, POSTGRES_SLOW, canary)
        assert_deadlines(slow)
        assert slow["SELECT pg_sleep(10)"][0].kind is ErrorKind.REFUSED  # type: ignore[union-attr]
        rows = engine.run("SELECT a.n FROM big a, big b, big c", Limits(max_rows=50))
        assert isinstance(rows, QueryResult) and len(rows.rows) == 50 and rows.truncated
    finally:
        engine.close()
    assert postgres_state(hostile) == before


def test_postgres_corpus_with_the_guard_bypassed(hostile: PostgresCluster, canary: Path) -> None:
    """The read-only role and transaction alone: nothing changes, no file is read or written."""
    members = hostile.query(
        f"SELECT rolname FROM pg_roles WHERE pg_has_role('{READER}', oid, 'MEMBER')"
    )
    assert members == [(READER,)]  # the README's check: no other role's rights
    before = postgres_state(hostile)
    engine = LiveEngine(hostile.url("hostile", READER, READER_PASSWORD), "app")
    try:
        outcomes = run_corpus(engine.run_unguarded, POSTGRES_CORPUS, canary)
        assert_safe(outcomes, canary, POSTGRES_HARMLESS_UNGUARDED)
        slow = run_corpus(engine.run_unguarded, POSTGRES_SLOW, canary)
        assert_deadlines(slow)
        assert all(o.kind is ErrorKind.TIMEOUT for o, _ in slow.values())  # type: ignore[union-attr]
        assert engine.run("SELECT count(*) FROM accounts").ok  # the engine still works
    finally:
        engine.close()
    assert postgres_state(hostile) == before


def test_the_read_only_transaction_refuses_writes_even_to_a_superuser(
    hostile: PostgresCluster, canary: Path
) -> None:
    """Without the guard and without the read-only role: writes hidden in a SELECT still fail."""
    before = postgres_state(hostile)
    engine = LiveEngine(hostile.url("hostile"), "app")
    try:
        outcomes = run_corpus(engine.run_unguarded, POSTGRES_WRITES_IN_A_SELECT, canary)
        for sql, (outcome, _) in outcomes.items():
            assert isinstance(outcome, QueryError), sql
            assert outcome.rule is RefusalRule.ENGINE and "read-only" in outcome.message, (
                sql,
                outcome,
            )
    finally:
        engine.close()
    assert postgres_state(hostile) == before


@pytest.fixture(scope="module")
def shop_duckdb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute(
            """
            CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner VARCHAR, balance DECIMAL(12, 2));
            INSERT INTO accounts VALUES (1, 'alice', 100.00), (2, 'bob', 250.50), (3, 'carol', 0);
            CREATE TABLE big AS SELECT range AS n FROM range(6000);
            """
        )
    return path


def duckdb_state(path: Path) -> list[Any]:
    with duckdb.connect(str(path), read_only=True) as conn:
        found = conn.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()
        tables = [r[0] for r in found]
        sums = [
            conn.execute(
                f"SELECT md5(coalesce(string_agg(x::VARCHAR, '|' ORDER BY x::VARCHAR), '')) "
                f"FROM {t} x"
            ).fetchone()
            for t in tables
        ]
        columns = conn.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() ORDER BY ALL"
        ).fetchall()
        databases = conn.execute("SELECT database_name FROM duckdb_databases() ORDER BY 1")
        return [tables, sums, columns, databases.fetchall(), path.stat().st_size]


@pytest.mark.parametrize("guarded", [True, False], ids=["guard", "engine-only"])
def test_duckdb_corpus(shop_duckdb: Path, canary: Path, guarded: bool) -> None:
    before = duckdb_state(shop_duckdb)
    engine = LiveEngine(f"duckdb:///{shop_duckdb}")
    run = engine.run if guarded else engine.run_unguarded
    assert engine.run("SELECT 1").ok  # a worker process ready, as in a running service
    outcomes = run_corpus(run, DUCKDB_CORPUS, canary)
    for sql, (outcome, _) in outcomes.items():
        if guarded:
            assert isinstance(outcome, QueryError) and outcome.kind is ErrorKind.REFUSED, sql
            assert outcome.rule is not RefusalRule.ENGINE, (sql, outcome)
    assert_safe(outcomes, canary, set() if guarded else DUCKDB_HARMLESS_UNGUARDED)
    assert_deadlines(run_corpus(run, DUCKDB_SLOW, canary))
    rows = run("SELECT a.n FROM big a, big b, big c", Limits(max_rows=50))
    assert isinstance(rows, QueryResult) and len(rows.rows) == 50 and rows.truncated
    assert duckdb_state(shop_duckdb) == before
