"""DuckDB files and SQLite files through URLs, and what any URL source does before connecting:
spec recognition, masking, env: sources, drivers that are not installed."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy

from schemagraph import (
    SourceError,
    load_catalog,
    load_source,
    load_sqlite,
    sample_database,
    table_fingerprint,
)
from schemagraph.connect import connection, create_engine, is_url, masked, read_only
from schemagraph.model import Database

duckdb = pytest.importorskip("duckdb", reason="duckdb is not installed (pip install -e '.[live]')")
pytest.importorskip("duckdb_engine", reason="duckdb-engine is not installed")


@pytest.fixture(scope="module")
def shop_duckdb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("duck") / "shop.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute(
        """
        CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name VARCHAR NOT NULL,
                                city VARCHAR, photo BLOB);
        COMMENT ON TABLE customers IS 'People who buy';
        COMMENT ON COLUMN customers.city IS 'Home city';
        CREATE TABLE orders (order_id BIGINT PRIMARY KEY,
                             customer_id INTEGER REFERENCES customers (customer_id),
                             total DECIMAL(10, 2), placed DATE);
        CREATE VIEW lisbon AS SELECT * FROM customers WHERE city = 'Lisbon';
        CREATE SCHEMA staging;
        CREATE TABLE staging.clicks (click_id BIGINT, page VARCHAR);
        INSERT INTO customers VALUES (1, 'Ana', 'Lisbon', 'abc'::BLOB), (2, 'Bruno', 'Porto', NULL),
                                     (3, 'Carla', 'Lisbon', NULL);
        INSERT INTO orders VALUES (10, 1, 12.50, DATE '2024-03-01'), (11, 3, 7.00, NULL);
        INSERT INTO staging.clicks
          SELECT i, ['home', 'cart', 'checkout'][1 + i % 3] FROM range(300000) t(i);
        """
    )
    conn.close()
    return path


def test_duckdb_file_schemas_tables_keys_and_comments(shop_duckdb: Path) -> None:
    catalog = load_source(f"duckdb:///{shop_duckdb}")
    assert [db.id for db in catalog] == ["shop.main", "shop.staging"]
    main = catalog.database("shop.main")
    assert [t.name for t in main.tables] == ["customers", "orders"]  # the view is not read
    customers = main.table("customers")
    assert customers.description == "People who buy"
    assert customers.column("city").description == "Home city"
    assert [(c.name, c.type, c.primary_key) for c in customers.columns] == [
        ("customer_id", "INTEGER", True),
        ("name", "VARCHAR", False),
        ("city", "VARCHAR", False),
        ("photo", "BLOB", False),
    ]
    assert main.table("orders").column("total").type == "DECIMAL(10,2)"
    [fk] = main.foreign_keys
    assert (fk.table, fk.columns, fk.ref_table, fk.ref_columns) == (
        "orders",
        ("customer_id",),
        "customers",
        ("customer_id",),
    )
    assert load_source(f"duckdb:///{shop_duckdb}", exclude=["main"]).database("shop.staging")


def test_duckdb_sampling_reads_values_and_bounds_large_tables(shop_duckdb: Path) -> None:
    catalog = load_source(f"duckdb:///{shop_duckdb}")
    main = sample_database(catalog.database("shop.main"), rows=3)
    assert main is not None
    customers = main.table("customers")
    assert customers is not None and customers.row_count == 3
    assert customers.text_values["city"] == ("Lisbon", "Porto")
    assert "photo" not in customers.text_values
    assert {row[3] for row in customers.rows} == {"<3 bytes>", None}
    staging = sample_database(catalog.database("shop.staging"), rows=4, scan_rows=500, seed=2)
    assert staging is not None
    clicks = staging.table("clicks")
    assert clicks is not None and len(clicks.rows) == 4
    assert clicks.row_count == 300_000  # DuckDB's estimate, not a count
    assert set(clicks.text_values["page"]) == {"home", "cart", "checkout"}
    assert max(row[0] for row in clicks.rows) > 500  # a sample, not the first rows


def test_duckdb_connections_are_read_only(shop_duckdb: Path) -> None:
    engine = create_engine(f"duckdb:///{shop_duckdb}")
    try:
        with connection(engine) as conn:
            refused = pytest.raises(sqlalchemy.exc.DBAPIError, match="read-only")
            with refused, read_only(conn, timeout_s=5):
                conn.exec_driver_sql("INSERT INTO customers VALUES (9, 'X', 'Y', NULL)")
            interrupted = pytest.raises(sqlalchemy.exc.DBAPIError, match="Interrupt")
            with interrupted, read_only(conn, timeout_s=0.2):
                conn.exec_driver_sql("SELECT count(*) FROM range(100000000000)").scalar()
    finally:
        engine.dispose()
    with duckdb.connect(str(shop_duckdb), read_only=True) as check:
        assert check.execute("SELECT count(*) FROM customers").fetchone() == (3,)


def test_a_missing_duckdb_file_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such DuckDB file"):
        load_source(f"duckdb:///{tmp_path / 'nope.duckdb'}")


def test_sqlite_url_source_matches_the_sqlite_source(sample_dir: Path) -> None:
    file = sample_dir / "database" / "pets_1" / "pets_1.sqlite"
    catalog = load_source(f"sqlite:///{file}")
    [db] = catalog
    assert db.id == "pets_1.main" and db.path == file and db.schema == "main"
    plain = load_sqlite(file).database("pets_1")
    assert [t.name for t in db.tables] == sorted((t.name for t in plain.tables), key=str.casefold)
    for table in plain.tables:
        live = db.table(table.name)
        assert [(c.name, c.primary_key) for c in live.columns] == [
            (c.name, c.primary_key) for c in table.columns
        ]
        assert {(f.columns, f.ref_table) for f in live.foreign_keys} == {
            (f.columns, f.ref_table) for f in table.foreign_keys
        }
    assert sample_database(db) is not None  # through its file, like sqlite:


def test_the_generic_sampler_bounds_reads_with_a_plain_limit(tmp_path: Path) -> None:
    file = tmp_path / "big.sqlite"
    with sqlite3.connect(file) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, word TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", ((i, f"w{i % 7}") for i in range(5000)))
    [db] = load_source(f"sqlite:///{file}")
    live_only = Database(db.id, db.tables, db.origin, url=db.url, schema=db.schema)  # no path
    sample = sample_database(live_only, rows=3, scan_rows=100)
    assert sample is not None
    t = sample.table("t")
    assert t is not None and len(t.rows) == 3
    assert t.row_count == 101  # a lower bound: no estimate, no count
    assert all(row[0] < 101 for row in t.rows) and len(t.text_values["word"]) == 7


def test_fingerprints_of_a_url_source_are_deterministic(shop_duckdb: Path) -> None:
    def prints() -> list[str]:
        catalog = load_source(f"duckdb:///{shop_duckdb}")
        return [table_fingerprint(t) for db in catalog for t in db.tables]

    assert prints() == prints()


@pytest.mark.parametrize(
    ("spec", "url"),
    [
        ("postgresql://u@h/db", True),
        ("mysql+pymysql://u:p@h/db", True),
        ("duckdb:///x.duckdb", True),
        ("sqlite:///x.sqlite", True),
        ("sqlite:x.sqlite", False),
        ("spider:data/spider", False),
        ("ddl[postgres]:schema.sql", False),
    ],
)
def test_urls_are_told_from_kind_path_specs(spec: str, url: bool) -> None:
    assert is_url(spec) is url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:hunter2@h:5432/db", "postgresql://u:***@h:5432/db"),
        ("postgresql://u:p%40ss%2Fw@h/db", "postgresql://u:***@h/db"),
        ("snowflake://u@acct/db/sch?private_key_passphrase=xyz&role=r", "role=r"),
        ("not a url at all://u:hunter2@h", "u:***@h"),
    ],
)
def test_masking_hides_passwords_and_secret_parameters(url: str, shown: str) -> None:
    text = masked(url)
    assert shown in text
    assert "hunter2" not in text and "p%40ss" not in text and "xyz" not in text


def test_env_sources_read_the_given_environment_and_never_show_its_value() -> None:
    with pytest.raises(SourceError, match="WAREHOUSE_URL is not set"):
        load_catalog(["env:WAREHOUSE_URL"], environ={})
    with pytest.raises(SourceError) as caught:
        load_catalog(["env:WAREHOUSE_URL"], environ={"WAREHOUSE_URL": "hunter2"})
    assert "does not hold a database URL" in str(caught.value)
    assert "hunter2" not in str(caught.value)
    with pytest.raises(SourceError, match="need the environment"):
        load_source("env:WAREHOUSE_URL")


def test_schema_patterns_need_a_url_source(sample_dir: Path) -> None:
    with pytest.raises(SourceError, match="--schemas and --exclude choose schemas"):
        load_catalog([f"spider:{sample_dir}"], schemas=["sales"])


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("snowflake://u:hunter2@acct/db/sch", "no dialect 'snowflake'; install"),
        ("postgresql+psycopg2://u:hunter2@127.0.0.1:1/db", "driver 'psycopg2' is not installed"),
        ("postgresql://u:hunter2@h:notaport/db", "not a database URL"),
    ],
)
def test_missing_dialects_and_drivers_are_one_line_errors(
    url: str, message: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG), pytest.raises(SourceError) as caught:
        load_source(url)
    assert message in str(caught.value) and "***" in str(caught.value)
    assert "hunter2" not in str(caught.value) + caplog.text
