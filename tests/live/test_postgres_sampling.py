"""Sampling a live PostgreSQL server: values come back, a million-row table is not scanned, the
transaction cannot write, deadlines are the server's, and no password is shown."""

from __future__ import annotations

import logging
from urllib.parse import quote

import pytest
import sqlalchemy

from schemagraph import Catalog, load_source, sample_database
from schemagraph.connect import connection, create_engine, read_only
from tests.live.conftest import READER_PASSWORD, Warehouse


@pytest.fixture(scope="module")
def catalog(warehouse: Warehouse) -> Catalog:
    return load_source(warehouse.url)


def test_sampling_returns_rows_and_distinct_text_values(catalog: Catalog) -> None:
    sample = sample_database(catalog.database("warehouse.sales"), rows=3, seed=0)
    assert sample is not None
    customers = sample.table("customers")
    assert customers is not None
    assert customers.row_count == 5 and len(customers.rows) == 3
    assert customers.columns == ("customer_id", "full_name", "city", "segment")
    assert customers.text_values["city"] == ("Lisbon", "Porto", "Faro")
    assert customers.text_values["segment"] == ("C", "B")
    orders = sample.table("orders")
    assert orders is not None and set(orders.text_values["status"]) == {
        "shipped",
        "open",
        "cancelled",
    }
    products = sample.table("products")
    assert products is not None
    assert {row[2] for row in products.rows} <= {249.9, 89, 35.5}  # numeric as numbers
    assert "price" not in products.text_values


def test_sampling_is_deterministic_for_a_seed(catalog: Catalog) -> None:
    db = catalog.database("warehouse.analytics")
    first, again = sample_database(db, seed=3), sample_database(db, seed=3)
    assert first is not None and again is not None
    assert first.tables == again.tables


def test_the_million_row_table_is_sampled_without_a_scan(
    warehouse: Warehouse, catalog: Catalog
) -> None:
    cluster = warehouse.cluster
    cluster.execute(
        "SELECT pg_stat_reset_single_table_counters('analytics.events'::regclass)", "warehouse"
    )
    warehouse.wait_for_clients()
    sample = sample_database(catalog.database("warehouse.analytics"), rows=5, seed=1)
    warehouse.wait_for_clients()  # a session's statistics are written when it ends
    [(tuples_read, index_fetches)] = cluster.query(
        "SELECT seq_tup_read, coalesce(idx_tup_fetch, 0) FROM pg_stat_user_tables "
        "WHERE relid = 'analytics.events'::regclass",
        "warehouse",
    )
    assert 0 < tuples_read + index_fetches <= 10_000, tuples_read  # of 1,000,000
    assert sample is not None
    events = sample.table("events")
    assert events is not None and len(events.rows) == 5
    assert 900_000 <= events.row_count <= 1_100_000  # the planner's estimate
    assert set(events.text_values["channel"]) == {"web", "ios", "android"}
    ids = [row[0] for row in events.rows]
    assert len(set(ids)) == 5 and max(ids) > 2_000  # not just the first rows of the table


def test_large_values_are_cut_on_the_server(catalog: Catalog) -> None:
    sample = sample_database(catalog.database("warehouse.hr"), rows=2, max_value_chars=40)
    assert sample is not None
    employees = sample.table("employees")
    assert employees is not None
    by_name = {row[1]: dict(zip(employees.columns, row, strict=True)) for row in employees.rows}
    assert by_name["Rita Alves"]["photo"] == "<4 bytes>"
    assert by_name["Rita Alves"]["profile"] == '{"level": "lead"}'
    long = by_name["Tiago Nunes"]["profile"]
    assert isinstance(long, str) and len(long) == 40 and long.endswith("…")


def test_a_table_the_role_cannot_read_is_logged_and_left_out(
    catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        sample = sample_database(catalog.database("warehouse.vault"))
    assert sample is not None
    assert sample.table("keys") is None
    notes = sample.table("notes")
    assert notes is not None and notes.rows == (("readable",),)
    assert "table keys not sampled (permission denied for table keys)" in caplog.text
    assert READER_PASSWORD not in caplog.text and quote(READER_PASSWORD, safe="") not in caplog.text


def test_a_sampling_transaction_cannot_write_even_as_superuser(warehouse: Warehouse) -> None:
    engine = create_engine(warehouse.admin_url)
    try:
        with connection(engine) as conn:
            for write in (
                "INSERT INTO staging_tmp.scratch VALUES (1)",
                "CREATE TABLE staging_tmp.made_here (x int)",
                "SELECT nextval('staging_tmp.tickets')",
            ):
                refused = pytest.raises(sqlalchemy.exc.DBAPIError, match="read-only transaction")
                with refused, read_only(conn, timeout_s=5):
                    conn.exec_driver_sql(write)
            with read_only(conn, timeout_s=5):
                count = conn.exec_driver_sql("SELECT count(*) FROM staging_tmp.scratch").scalar()
                assert count == 0
    finally:
        engine.dispose()


def test_the_server_enforces_the_deadline(warehouse: Warehouse) -> None:
    engine = create_engine(warehouse.url)
    try:
        with connection(engine) as conn:
            cancelled = pytest.raises(sqlalchemy.exc.DBAPIError, match="statement timeout")
            with cancelled, read_only(conn, timeout_s=0.2):
                conn.exec_driver_sql("SELECT pg_sleep(30)")
            # the setting was local to that transaction: the next one has its own
            with read_only(conn, timeout_s=5):
                assert conn.exec_driver_sql("SHOW statement_timeout").scalar() == "5s"
    finally:
        engine.dispose()
