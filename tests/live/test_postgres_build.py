"""Index builds from a live PostgreSQL server: the first builds every schema's traversals, a
second one after a table changed re-synthesizes only that table's."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from indexer import (
    BuildConfig,
    BuildServices,
    build_index,
    make_chain_runner,
    make_feedback,
    make_synthesizer,
)
from providers import HashingEmbedder
from schemagraph import (
    Database,
    DatabaseSample,
    Traversal,
    TraversalConfig,
    build_graph,
    enumerate_traversals,
    load_source,
)
from schemagraph.sql import close_engines
from schemarag.cli import main
from store import StoreLocation
from tests.pgcluster import PostgresCluster

CONFIG = BuildConfig(traversal=TraversalConfig(max_per_database=6, walks=1), chains=2, iterations=1)
SHOP = """
CREATE SCHEMA sales;
CREATE TABLE sales.customers (customer_id int PRIMARY KEY, name text, city text);
COMMENT ON TABLE sales.customers IS 'People who buy';
CREATE TABLE sales.orders (
  order_id int PRIMARY KEY, customer_id int REFERENCES sales.customers, status text);
CREATE TABLE sales.products (product_id int PRIMARY KEY, title text, price numeric(8, 2));
INSERT INTO sales.customers VALUES (1, 'Ana', 'Lisbon'), (2, 'Bruno', 'Porto');
INSERT INTO sales.orders VALUES (10, 1, 'open'), (11, 2, 'shipped');
INSERT INTO sales.products VALUES (5, 'Kettle', 35.50), (6, 'Grinder', 89.00);
CREATE SCHEMA hr;
CREATE TABLE hr.departments (dept_id int PRIMARY KEY, name text);
CREATE TABLE hr.employees (
  emp_id int PRIMARY KEY, name text, dept_id int REFERENCES hr.departments);
INSERT INTO hr.departments VALUES (1, 'Engineering');
INSERT INTO hr.employees VALUES (1, 'Rita', 1);
"""


def services(runner: Any = None) -> BuildServices:
    return BuildServices(
        synthesize=runner
        or make_chain_runner(
            make_synthesizer("template", None), make_feedback("rule", None), chains=2, iterations=1
        ),
        synthesizer_name="template",
        embedder=HashingEmbedder(256),
    )


@pytest.fixture
def shop(postgres_cluster: PostgresCluster) -> str:
    return postgres_cluster.create_database("shop", SHOP)


def test_a_changed_table_resynthesizes_only_its_traversals(
    postgres_cluster: PostgresCluster, shop: str, tmp_path: Path
) -> None:
    location = StoreLocation.parse(tmp_path / "kb")
    rollbacks = server_queries(postgres_cluster)
    first = build_index(load_source(shop), location, services(), CONFIG)
    assert first.databases == 2 and first.traversals_synthesized == first.traversals > 0
    assert first.traversals_reused == 0 and first.questions > 0
    assert not any("fails to run" in reason for reason in first.drop_reasons)
    # the synthesized SQL ran on the server (one read-only transaction each), not only sampling
    assert server_queries(postgres_cluster) - rollbacks >= first.synthesized > 0
    unchanged = build_index(load_source(shop), location, services(), CONFIG)
    assert unchanged.up_to_date and unchanged.traversals_reused == unchanged.traversals

    postgres_cluster.execute("ALTER TABLE sales.orders ADD COLUMN shipped_at date", "shop")
    catalog = load_source(shop)
    with_orders = [
        t
        for t in enumerate_traversals(build_graph(catalog), CONFIG.traversal)
        if t.db_id == "shop.sales" and "orders" in t.tables
    ]
    calls: list[tuple[str, tuple[str, ...]]] = []
    inner = services().synthesize

    def spy(db: Database, t: Traversal, s: DatabaseSample | None, seed: int) -> Any:
        calls.append((db.id, t.tables))
        return inner(db, t, s, seed)

    report = build_index(catalog, location, services(runner=spy), CONFIG)
    assert calls and all(db == "shop.sales" and "orders" in tables for db, tables in calls)
    assert report.traversals_synthesized == len(calls) == len(with_orders)
    assert report.traversals_removed == len(with_orders)
    assert report.traversals_reused == report.traversals - len(with_orders) > 0
    assert f"{report.traversals_reused} reused, {len(with_orders)} synthesized" in "\n".join(
        report.lines()
    )


def server_queries(cluster: PostgresCluster) -> int:
    """Transactions rolled back in the shop database so far: every query of the live engine and
    of the sampler is one. Sessions flush their counts when they end: close and wait first."""
    close_engines()
    deadline = time.monotonic() + 10
    while cluster.backends("shop") and time.monotonic() < deadline:
        time.sleep(0.05)
    rows = cluster.query("SELECT xact_rollback FROM pg_stat_database WHERE datname = 'shop'")
    return int(rows[0][0])


def test_a_comment_change_is_a_change(
    postgres_cluster: PostgresCluster, shop: str, tmp_path: Path
) -> None:
    location = StoreLocation.parse(tmp_path / "kb")
    build_index(load_source(shop), location, services(), CONFIG)
    postgres_cluster.execute("COMMENT ON COLUMN hr.employees.name IS 'Full legal name'", "shop")
    calls: list[tuple[str, tuple[str, ...]]] = []
    inner = services().synthesize

    def spy(db: Database, t: Traversal, s: DatabaseSample | None, seed: int) -> Any:
        calls.append((db.id, t.tables))
        return inner(db, t, s, seed)

    build_index(load_source(shop), location, services(runner=spy), CONFIG)
    assert calls and all(db == "shop.hr" and "employees" in tables for db, tables in calls)


def test_cli_index_build_from_a_url(
    postgres_cluster: PostgresCluster,
    shop: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCHEMARAG_CACHE", str(tmp_path / "cache.sqlite"))
    postgres_cluster.execute(
        "DO $$ BEGIN CREATE ROLE shop_reader LOGIN PASSWORD 'Sh0p-secret'; "
        "EXCEPTION WHEN duplicate_object THEN NULL; END $$; "
        "GRANT USAGE ON SCHEMA sales, hr TO shop_reader; "
        "GRANT SELECT ON ALL TABLES IN SCHEMA sales, hr TO shop_reader;",
        "shop",
    )
    url = postgres_cluster.url("shop", user="shop_reader", password="Sh0p-secret")
    argv = ["index", "build", url, "--schemas", "sales", "--embedder", "hashing"]
    argv += ["--store", str(tmp_path / "kb"), "--report", str(tmp_path / "report.json")]
    argv += ["--chains", "1", "--iterations", "1", "--max-per-database", "4", "--walks", "1"]
    assert main(argv) == 0
    out = capsys.readouterr()
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["databases"] == 1 and report["tables"] == 3 and report["questions"] > 0
    assert "Sh0p-secret" not in out.out + out.err + (tmp_path / "report.json").read_text()
