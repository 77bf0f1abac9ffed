"""The live engines: untrusted SQL on a PostgreSQL server and a DuckDB file, through their URLs,
with the guard in the server's dialect, a read-only transaction or connection, the schema as the
default, and the same limits and result types as SQLite; the CLI and the generator's runner."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from generator.errors import NoDataError
from generator.execution import database_runner
from generator.prompt import PromptConfig, build_prompt, prompt_sample
from indexer.synthesis.llm_synthesizer import LLMSynthesizer
from indexer.synthesis.pairs import SynthesisRequest
from indexer.validate import validate_sql
from providers.scripted import ScriptedLLM
from schemagraph import Column, Database, SourceError, Table, Traversal, load_source
from schemagraph.sql import (
    ErrorKind,
    Limits,
    LiveEngine,
    QueryError,
    QueryResult,
    RefusalRule,
    close_engines,
    live_engine,
    runs_queries,
    translate,
)
from schemarag.cli import main
from tests.live.conftest import Warehouse
from tests.pgcluster import PostgresCluster

duckdb = pytest.importorskip("duckdb", reason="duckdb is not installed (pip install -e '.[live]')")

PASSWORD = "Sh0p/p@ss:word"
SHOP = f"""
CREATE SCHEMA sales;
CREATE TABLE sales.customers (customer_id int PRIMARY KEY, name text, city text, born date,
                              balance numeric(10, 2), notes text);
CREATE TABLE sales.orders (order_id int PRIMARY KEY, customer_id int REFERENCES sales.customers,
                           status text);
INSERT INTO sales.customers VALUES (1, 'Ana', 'Lisbon', '1990-05-01', 12.50, repeat('x', 5000)),
                                   (2, 'Bruno', 'Porto', NULL, 7, NULL);
INSERT INTO sales.orders SELECT i, 1 + i % 2, CASE WHEN i % 3 = 0 THEN 'open' ELSE 'shipped' END
  FROM generate_series(1, 300) i;
CREATE SCHEMA hr;
CREATE TABLE hr.customers (id int);  -- the same name in another schema
DO $$ BEGIN CREATE ROLE engine_reader LOGIN PASSWORD '{PASSWORD}';
  EXCEPTION WHEN duplicate_object THEN NULL; END $$;
GRANT USAGE ON SCHEMA sales, hr TO engine_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA sales, hr TO engine_reader;
"""


@pytest.fixture(scope="module")
def shop_url(postgres_cluster: PostgresCluster) -> Iterator[str]:
    postgres_cluster.create_database("engine_shop", SHOP)
    yield postgres_cluster.url("engine_shop", user="engine_reader", password=PASSWORD)
    close_engines()


@pytest.fixture(scope="module")
def shop_duckdb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("duck") / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute(
            """
            CREATE SCHEMA sales;
            CREATE TABLE sales.customers (customer_id INTEGER PRIMARY KEY, name VARCHAR,
                                          balance DECIMAL(10, 2));
            INSERT INTO sales.customers VALUES (1, 'Ana', 12.50), (2, 'Bruno', 7);
            CREATE TABLE main.customers (id INTEGER);
            """
        )
    return path


def test_postgres_query_in_the_schema_with_values_as_sqlite_gives_them(shop_url: str) -> None:
    engine = LiveEngine(shop_url, "sales")
    outcome = engine.run("SELECT name, born, balance FROM customers ORDER BY customer_id")
    assert isinstance(outcome, QueryResult), outcome
    assert outcome.columns == ("name", "born", "balance")
    assert outcome.rows == (("Ana", "1990-05-01", 12.5), ("Bruno", None, 7))
    assert engine.dialect == "postgres"
    other = LiveEngine(shop_url, "hr").run("SELECT count(*) FROM customers")
    assert isinstance(other, QueryResult) and other.rows == ((0,),)
    engine.close()


def test_postgres_row_and_value_caps(shop_url: str) -> None:
    engine = LiveEngine(shop_url, "sales")
    limits = Limits(timeout_s=5, max_rows=10, max_value_bytes=100)
    many = engine.run("SELECT * FROM orders", limits)
    assert isinstance(many, QueryResult) and len(many.rows) == 10 and many.truncated
    long = engine.run("SELECT notes FROM customers WHERE customer_id = 1", limits)
    assert isinstance(long, QueryResult) and long.values_truncated
    assert len(long.rows[0][0]) < 120
    engine.close()


def test_postgres_connections_are_kept_between_calls(
    shop_url: str, postgres_cluster: PostgresCluster
) -> None:
    engine = LiveEngine(shop_url, "sales")
    started = time.perf_counter()
    for _ in range(50):
        assert engine.run("SELECT count(*) FROM orders").ok
    per_query = (time.perf_counter() - started) / 50
    assert per_query < 0.05, per_query
    pids = postgres_cluster.query(
        "SELECT count(*) FROM pg_stat_activity WHERE usename = 'engine_reader'", "engine_shop"
    )
    assert pids[0][0] <= 2
    engine.close()


def test_a_kept_connection_the_server_ended_is_replaced(
    shop_url: str, postgres_cluster: PostgresCluster
) -> None:
    engine = LiveEngine(shop_url, "sales")
    assert engine.run("SELECT 1").ok
    postgres_cluster.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'engine_reader'"
    )
    time.sleep(0.1)
    assert engine.run("SELECT 1").ok
    engine.close()


def test_sqlite_sql_is_translated_for_the_server(shop_url: str) -> None:
    engine = LiveEngine(shop_url, "sales")

    def run(sql: str, names: tuple[str, ...] = ()) -> Any:
        return engine.run(translate(sql, read="sqlite", write="postgres", names=names))

    outcome = run("SELECT IFNULL(city, 'none') FROM customers ORDER BY customer_id")
    assert isinstance(outcome, QueryResult), outcome
    assert [row[0] for row in outcome.rows] == ["Lisbon", "Porto"]
    refused = run("DELETE FROM customers")
    assert isinstance(refused, QueryError) and refused.rule is RefusalRule.WRITE
    quoted = translate("SELECT memo FROM Ledger", read="sqlite", write="postgres", names=["Memo"])
    assert quoted == 'SELECT "Memo" FROM Ledger'
    engine.close()


def test_mixed_case_names_of_a_live_database_resolve(warehouse: Warehouse) -> None:
    """SQLite's SQL names tables and columns in any case; PostgreSQL needs them quoted."""
    db = load_source(warehouse.url, schemas=["Finance"]).database("warehouse.Finance")
    run = database_runner(db)
    outcome = run('SELECT memo FROM "Ledger Entries" ORDER BY "Entry ID"')
    assert isinstance(outcome, QueryResult), outcome
    assert outcome.rows == (("Coffee beans",), ("Refund",))
    assert validate_sql(db, 'SELECT Memo FROM "Ledger Entries" ORDER BY "Amount (EUR)"').ok
    close_engines()
    warehouse.wait_for_clients()


def test_a_bad_password_or_dialect_never_shows_the_secret(shop_url: str, tmp_path: Path) -> None:
    wrong = shop_url.replace(quote(PASSWORD, safe=""), "Wr0ng-secret")
    outcome = LiveEngine(wrong, "sales").run("SELECT 1")
    assert isinstance(outcome, QueryError) and outcome.kind is ErrorKind.ERROR
    assert "cannot connect" in outcome.message and "Wr0ng-secret" not in outcome.message
    with pytest.raises(SourceError, match="PostgreSQL, DuckDB and SQLite only") as info:
        LiveEngine("mysql+pymysql://u:Hidden-pw@localhost/db")
    assert "Hidden-pw" not in str(info.value)


def test_duckdb_query_in_the_schema(shop_duckdb: Path) -> None:
    engine = LiveEngine(f"duckdb:///{shop_duckdb}", "sales")
    outcome = engine.run("SELECT name, balance FROM customers ORDER BY customer_id")
    assert isinstance(outcome, QueryResult), outcome
    assert outcome.rows == (("Ana", 12.5), ("Bruno", 7))
    default = LiveEngine(f"duckdb:///{shop_duckdb}").run("SELECT count(*) FROM customers")
    assert isinstance(default, QueryResult) and default.rows == ((0,),)  # main.customers
    refused = engine.run("SELECT * FROM read_csv('/etc/passwd')")
    assert isinstance(refused, QueryError) and refused.rule is RefusalRule.TABLE_FUNCTION
    # no process keeps the file open between queries: a writer can open it
    with duckdb.connect(str(shop_duckdb)) as writer:
        assert writer.execute("SELECT count(*) FROM sales.customers").fetchone() == (2,)


def test_database_runner_and_validation_use_the_live_engine(shop_url: str) -> None:
    db = load_source(shop_url).database("engine_shop.sales")
    run = database_runner(db)
    outcome = run("SELECT count(*) FROM orders WHERE status = 'open'")
    assert isinstance(outcome, QueryResult) and outcome.rows == ((100,),)
    assert live_engine(db.url or "", db.schema) is live_engine(db.url or "", db.schema)
    assert validate_sql(db, "SELECT status FROM orders").ok
    failing = validate_sql(db, "SELECT status FROM orders WHERE status / 2 = 1")
    assert not failing.ok and "fails to run" in failing.reason
    assert PASSWORD not in failing.reason


def test_cli_sql_run_on_a_url(
    shop_url: str,
    shop_duckdb: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SHOP_URL", shop_url)
    argv = ["sql", "run", "--url", "env:SHOP_URL", "--schema", "sales"]
    assert main([*argv, "SELECT name FROM customers ORDER BY 1"]) == 0
    out = capsys.readouterr().out
    assert "Ana" in out and "Bruno" in out and "(2 rows" in out
    assert main([*argv, "--json", "SELECT pg_read_file('/etc/passwd')"]) == 1
    assert '"rule": "dangerous_function"' in capsys.readouterr().out
    duck = ["sql", "run", "--url", f"duckdb:///{shop_duckdb}", "--schema", "sales"]
    assert main([*duck, "SELECT count(*) AS n FROM customers"]) == 0
    assert "n" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main(["sql", "run", "--url", shop_url, "--db", "x.sqlite", "SELECT 1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "not allowed with argument" in err and PASSWORD not in err
    assert main(["sql", "run", "--url", "not-a-url", "SELECT 1"]) == 2
    assert "not a database URL" in capsys.readouterr().err
    wrong = shop_url.replace(quote(PASSWORD, safe=""), "Wr0ng-secret")
    assert main(["sql", "run", "--url", wrong, "SELECT 1"]) == 1
    err = capsys.readouterr().err
    assert "cannot connect" in err and "Wr0ng-secret" not in err and PASSWORD not in err


def test_llm_synthesis_and_prompts_on_a_live_database(shop_url: str) -> None:
    """The LLM synthesizer's traversal scope keeps the URL (its SQL runs on the server), and
    generation prompts show rows sampled from the server."""
    db = load_source(shop_url).database("engine_shop.sales")
    runs = {"question": "Which orders are open?", "sql": "SELECT order_id FROM orders"}
    fails = {"question": "Halved statuses?", "sql": "SELECT status / 2 FROM orders"}
    llm = ScriptedLLM(json.dumps([runs, fails]))
    request = SynthesisRequest(db, Traversal(db.id, ("orders",), "enumerated"), None, count=2)
    pairs = LLMSynthesizer(llm, execute=True).synthesize(request)
    assert [p.sql for p in pairs] == [runs["sql"]]  # the other failed to run on the server
    sample = prompt_sample(db, PromptConfig(sample_rows=2))
    assert sample is not None and len(sample.tables) == 2
    prompt = build_prompt("Who lives in Porto?", db, sample=sample)
    assert "example rows from orders" in prompt.user and "Porto" in prompt.user


def test_ask_execute_on_a_live_database(
    shop_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHOP_URL", shop_url)
    reply = "```sql\nSELECT name FROM customers WHERE IFNULL(city, '') = 'Porto'\n```"
    argv = ["ask", "Who lives in Porto?", "--source", "env:SHOP_URL", "--db", "engine_shop.sales"]
    assert main([*argv, "--llm", f"scripted:{reply}", "--strategy", "single", "--execute"]) == 0
    out, err = capsys.readouterr()
    assert "Bruno" in out, out + err
    assert PASSWORD not in out + err and quote(PASSWORD, safe="") not in out + err
    reply = "```sql\nSELECT pg_read_file('/etc/passwd')\n```"
    assert main([*argv, "--llm", f"scripted:{reply}", "--strategy", "single", "--execute"]) == 1
    out, err = capsys.readouterr()
    assert "root:x:" not in out + err, out + err
    assert "pg_read_file is not allowed" in out + err


def test_servers_without_an_engine_are_read_but_not_queried() -> None:
    """A MySQL catalog still builds (its SQL is checked, not run); execution says why not."""
    table = Table("orders", (Column("order_id", "INT", True), Column("status", "TEXT")))
    db = Database("shop", (table,), url="mysql+pymysql://u:Hidden-pw@db.internal/shop")
    assert not runs_queries(db.url or "") and runs_queries("postgresql://u@h/d")
    assert validate_sql(db, "SELECT status FROM orders").ok
    with pytest.raises(NoDataError, match="PostgreSQL, DuckDB and SQLite only") as info:
        database_runner(db)
    assert "Hidden-pw" not in str(info.value)
