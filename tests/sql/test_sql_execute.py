"""Safe execution: hostile statements are refused or stopped and never change the file."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from schemagraph.sql import (
    DatabaseFileError,
    ErrorKind,
    Limits,
    LimitsError,
    QueryError,
    QueryResult,
    RefusalRule,
    SqliteEngine,
    execute,
    read_only_authorizer,
)
from schemagraph.sql.execute import TRUNCATION_MARKER, connect_read_only, run_unguarded
from schemagraph.sql.worker import WorkerDied, call_with_deadline


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


NEVER_ENDING_CTE = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
)
CARTESIAN_12 = "SELECT count(*) FROM " + ", ".join(f"singer AS s{i}" for i in range(12))

HOSTILE = {
    "drop": "DROP TABLE singer",
    "delete": "DELETE FROM singer",
    "update": "UPDATE singer SET Name = 'x'",
    "insert": "INSERT INTO singer (Name) VALUES ('x')",
    "attach": "ATTACH DATABASE '{tmp}/evil.db' AS evil",
    "pragma_write": "PRAGMA user_version = 7",
    "pragma_journal": "PRAGMA journal_mode = WAL",
    "two_statements": "SELECT 1; DROP TABLE singer",
    "data_modifying_cte": "WITH x AS (DELETE FROM singer RETURNING *) SELECT * FROM x",
    "load_extension": "SELECT load_extension('{tmp}/evil.so')",
    "vacuum_into": "VACUUM INTO '{tmp}/copy.db'",
    "vacuum": "VACUUM",
    "create": "CREATE TABLE z (a INT)",
    "create_temp": "CREATE TEMP TABLE z (a INT)",
    "never_ending_cte": NEVER_ENDING_CTE,
    "cartesian_12": CARTESIAN_12,
}
TIMEOUT_CASES = {"never_ending_cte", "cartesian_12"}
WRITES_FOR_AUTHORIZER = [
    "drop",
    "delete",
    "update",
    "insert",
    "attach",
    "pragma_write",
    "pragma_journal",
    "vacuum_into",
    "vacuum",
    "create",
    "create_temp",
    "load_extension",
]


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_statement_is_refused_or_stopped_and_file_unchanged(
    name: str, concert_db: Path, tmp_path: Path
) -> None:
    before = file_sha256(concert_db)
    outcome = execute(concert_db, HOSTILE[name].format(tmp=tmp_path), timeout_s=1.0)
    assert isinstance(outcome, QueryError), outcome
    expected = ErrorKind.TIMEOUT if name in TIMEOUT_CASES else ErrorKind.REFUSED
    assert outcome.kind is expected, outcome
    assert outcome.elapsed_ms < 10_000
    assert file_sha256(concert_db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["concert_singer.sqlite"]


@pytest.mark.parametrize("name", WRITES_FOR_AUTHORIZER)
def test_engine_locks_alone_deny_writes_and_attach(
    name: str, concert_db: Path, tmp_path: Path
) -> None:
    """Bypassing the sqlglot guard, mode=ro plus the authorizer still refuse every write."""
    before = file_sha256(concert_db)
    outcome = run_unguarded(concert_db, HOSTILE[name].format(tmp=tmp_path), Limits(timeout_s=1))
    assert isinstance(outcome, QueryError)
    assert outcome.kind is ErrorKind.REFUSED, outcome
    assert outcome.rule is RefusalRule.AUTHORIZER
    assert file_sha256(concert_db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["concert_singer.sqlite"]


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM singer",
        "DROP TABLE singer",
        "UPDATE singer SET Name = 'x'",
        "CREATE TABLE z (a INT)",
        "ATTACH DATABASE ':memory:' AS other",
        "PRAGMA user_version = 7",
    ],
)
def test_authorizer_denies_writes_even_on_a_writable_connection(sql: str, concert_db: Path) -> None:
    before = file_sha256(concert_db)
    connection = sqlite3.connect(concert_db)
    connection.set_authorizer(read_only_authorizer)
    try:
        with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
            connection.execute(sql)
        connection.commit()
    finally:
        connection.close()
    assert file_sha256(concert_db) == before


def test_read_only_handle_alone_refuses_writes(concert_db: Path) -> None:
    before = file_sha256(concert_db)
    connection = connect_read_only(concert_db)
    connection.set_authorizer(None)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            connection.execute("DELETE FROM singer")
    finally:
        connection.close()
    assert file_sha256(concert_db) == before


def test_the_unguarded_path_also_stops_non_ending_queries(concert_db: Path) -> None:
    outcome = run_unguarded(concert_db, NEVER_ENDING_CTE, Limits(timeout_s=0.5))
    assert isinstance(outcome, QueryError) and outcome.kind is ErrorKind.TIMEOUT


def test_queries_with_slow_single_steps_are_stopped_too(concert_db: Path) -> None:
    """Few opcodes, each slow: the timer-thread interrupt stops what the progress handler can't."""
    sql = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) "
        "SELECT count(*) FROM c WHERE length(randomblob(5000000)) > 0"
    )
    outcome = execute(concert_db, sql, timeout_s=0.3)
    assert isinstance(outcome, QueryError) and outcome.kind is ErrorKind.TIMEOUT
    assert outcome.elapsed_ms < 10_000


def _numbers(n: int) -> str:
    return f"(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {n}) " + (
        "SELECT x FROM c)"
    )


SLOW_SINGLE_CALLS = {
    # One function call is one SQLite opcode, which no interrupt stops: the worker is killed.
    "printf_repeat": ("SELECT printf('%.*c', 2000000000, 'x')", ErrorKind.TIMEOUT),
    "like_long_pattern": (
        "SELECT printf('%.*c', 5000000, 'a') LIKE ('%' || printf('%.*c', 40000, 'a') || 'b')",
        ErrorKind.TIMEOUT,
    ),
    "json_patch": (
        f"SELECT json_patch((SELECT json_group_object(x, x) FROM {_numbers(80000)}), "
        f"(SELECT json_group_object(x + 80000, x) FROM {_numbers(80000)}))",
        ErrorKind.TIMEOUT,
    ),
    # Over the engine's length limit: refused by SQLite at once.
    "zeroblob": ("SELECT length(zeroblob(2000000000))", ErrorKind.ERROR),
    "randomblob": ("SELECT length(randomblob(2000000000))", ErrorKind.ERROR),
    "replace_growth": (
        "SELECT length(replace(printf('%.*c', 60000000, 'a'), 'a', 'aaaa'))",
        ErrorKind.ERROR,
    ),
    # Deep recursion: a never-ending recursive CTE, and expressions nested past every limit.
    "never_ending_cte": (NEVER_ENDING_CTE, ErrorKind.TIMEOUT),
    "nested_parentheses": ("SELECT " + "(" * 3000 + "1" + ")" * 3000, ErrorKind.REFUSED),
    "deep_expression": ("SELECT " + " + ".join(["1"] * 20000), ErrorKind.ERROR),
}


@pytest.mark.parametrize("name", sorted(SLOW_SINGLE_CALLS))
def test_the_deadline_holds_for_every_statement(name: str, concert_db: Path) -> None:
    sql, kind = SLOW_SINGLE_CALLS[name]
    before = file_sha256(concert_db)
    # the statements stopped by a limit get time to reach it on a loaded machine
    timeout_s = 1.0 if kind is ErrorKind.TIMEOUT else 5.0
    outcome = execute(concert_db, sql, timeout_s=timeout_s)
    assert isinstance(outcome, QueryError) and outcome.kind is kind, outcome
    assert outcome.elapsed_ms <= timeout_s * 1000 + 500, outcome
    assert file_sha256(concert_db) == before
    if name in ("zeroblob", "replace_growth"):
        assert "64 MiB limit" in outcome.message


def test_after_a_killed_query_the_next_one_runs(concert_db: Path) -> None:
    engine = SqliteEngine(concert_db)
    stuck = engine.run(SLOW_SINGLE_CALLS["printf_repeat"][0], Limits(timeout_s=0.3))
    assert isinstance(stuck, QueryError) and stuck.kind is ErrorKind.TIMEOUT
    after = engine.run("SELECT count(*) FROM singer", Limits(timeout_s=5))
    assert isinstance(after, QueryResult) and after.rows == ((6,),)


def _die(deadline: float) -> None:
    """Run in a worker (imported there by reference): it dies as a crashing extension would."""
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_that_dies_is_an_error_not_a_hang() -> None:
    with pytest.raises(WorkerDied, match="exit code -9"):
        call_with_deadline(_die, (), timeout_s=5)
    assert call_with_deadline(max, (1,), timeout_s=5) > 1  # max(1, deadline): a new worker


def test_starting_a_worker_does_not_count_against_the_deadline() -> None:
    """A new worker imports the called function's module (here one that takes 1.5 s, as sqlglot
    can on a loaded machine) before the 1 s deadline starts."""
    from schemagraph.sql import worker
    from tests.sql.slow_import import answer

    with worker._lock:
        idle, worker._idle[:] = list(worker._idle), []
    for old in idle:
        old.kill()
        old.wait()
    assert call_with_deadline(answer, (), timeout_s=1.0) == 42


def test_a_wide_cartesian_product_without_aggregation_stops_at_the_row_cap(
    concert_db: Path,
) -> None:
    sql = "SELECT * FROM " + ", ".join(f"singer AS s{i}" for i in range(12))
    outcome = execute(concert_db, sql, timeout_s=1.0, max_rows=50)
    assert isinstance(outcome, QueryResult)
    assert outcome.truncated and len(outcome.rows) == 50


def test_result_has_columns_rows_and_timing(concert_db: Path) -> None:
    outcome = execute(concert_db, "SELECT Name, Age FROM singer ORDER BY Age LIMIT 2")
    assert isinstance(outcome, QueryResult) and outcome.ok
    assert outcome.columns == ("Name", "Age")
    assert outcome.rows == (("Tribal King", 25), ("Justin Brown", 29))
    assert not outcome.truncated and not outcome.values_truncated
    assert outcome.elapsed_ms > 0


def test_row_cap_sets_truncated(tiny_db: Path) -> None:
    outcome = execute(tiny_db, "SELECT id FROM t ORDER BY id", max_rows=2)
    assert isinstance(outcome, QueryResult)
    assert outcome.rows == ((1,), (2,))
    assert outcome.truncated
    exact = execute(tiny_db, "SELECT id FROM t", max_rows=4)
    assert isinstance(exact, QueryResult) and not exact.truncated and len(exact.rows) == 4


def test_long_values_are_cut_with_a_marker(tiny_db: Path) -> None:
    outcome = execute(
        tiny_db, "SELECT printf('%.50c', 'x'), randomblob(64), 'short'", max_value_bytes=8
    )
    assert isinstance(outcome, QueryResult)
    text, blob, short = outcome.rows[0]
    assert text == "x" * 8 + TRUNCATION_MARKER
    assert isinstance(blob, bytes) and blob.startswith(blob[:8]) and len(blob) < 64
    assert short == "short"
    assert outcome.values_truncated


def test_execution_errors_are_typed_results(concert_db: Path) -> None:
    outcome = execute(concert_db, "SELECT no_such_column FROM singer")
    assert isinstance(outcome, QueryError)
    assert outcome.kind is ErrorKind.ERROR and outcome.rule is None
    assert "no_such_column" in outcome.message


def test_refusals_carry_the_rule(concert_db: Path) -> None:
    outcome = execute(concert_db, "SELECT 1; SELECT 2")
    assert isinstance(outcome, QueryError)
    assert outcome.kind is ErrorKind.REFUSED
    assert outcome.rule is RefusalRule.MULTIPLE_STATEMENTS


def test_many_concurrent_callers_get_their_own_results(concert_db: Path) -> None:
    engine = SqliteEngine(concert_db)
    limits = Limits(timeout_s=0.5)
    jobs = [f"SELECT {i}, count(*) FROM singer" for i in range(12)] + [NEVER_ENDING_CTE] * 2
    with ThreadPoolExecutor(max_workers=6) as pool:
        outcomes = list(pool.map(lambda sql: engine.run(sql, limits), jobs))
    for i, outcome in enumerate(outcomes[:12]):
        assert isinstance(outcome, QueryResult) and outcome.rows == ((i, 6),)
    assert all(isinstance(o, QueryError) and o.kind is ErrorKind.TIMEOUT for o in outcomes[12:])


def test_bad_database_paths_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(DatabaseFileError, match="no such database file"):
        execute(tmp_path / "missing.sqlite", "SELECT 1")
    with pytest.raises(DatabaseFileError, match="not a file"):
        execute(tmp_path, "SELECT 1")
    text = tmp_path / "notes.sqlite"
    text.write_text("hello, not a database")
    with pytest.raises(DatabaseFileError, match="not an SQLite database"):
        execute(text, "SELECT 1")


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"timeout_s": 0}, "timeout_s"),
        ({"max_rows": -1}, "max_rows"),
        ({"max_value_bytes": 0}, "max_value_bytes"),
    ],
)
def test_limits_are_validated_and_name_the_argument(
    kwargs: dict[str, float], argument: str
) -> None:
    with pytest.raises(LimitsError, match=argument):
        Limits(**kwargs)  # type: ignore[arg-type]


def test_engine_reports_its_dialect(concert_db: Path) -> None:
    assert SqliteEngine(concert_db).dialect == "sqlite"
