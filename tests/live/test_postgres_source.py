"""A real PostgreSQL server as a source: schemas become databases with stable ids, the inspector's
tables, keys and comments land in the catalog, and no password is ever shown."""

from __future__ import annotations

import json
import logging
from urllib.parse import quote

import pytest

from schemagraph import Catalog, SourceError, database_fingerprint, load_catalog, load_source
from schemarag.cli import main
from tests.live.conftest import READER_PASSWORD, Warehouse

ALL = {
    "warehouse.analytics",
    "warehouse.Finance",
    "warehouse.hr",
    "warehouse.sales",
    "warehouse.staging_raw",
    "warehouse.staging_tmp",
    "warehouse.vault",
}


@pytest.fixture(scope="module")
def catalog(warehouse: Warehouse) -> Catalog:
    return load_source(warehouse.url)


def test_each_schema_is_a_database_and_empty_schemas_are_skipped(catalog: Catalog) -> None:
    assert {db.id for db in catalog} == ALL  # public has no tables
    sales = catalog.database("warehouse.sales")
    assert sales.schema == "sales" and sales.path is None
    assert [t.name for t in sales.tables] == ["customers", "order_lines", "orders", "products"]


def test_columns_types_keys_and_comments_match_the_fixture(catalog: Catalog) -> None:
    sales = catalog.database("warehouse.sales")
    customers = sales.table("customers")
    assert [(c.name, c.type, c.primary_key) for c in customers.columns] == [
        ("customer_id", "INTEGER", True),
        ("full_name", "TEXT", False),
        ("city", "VARCHAR(40)", False),
        ("segment", "CHAR(1)", False),
    ]
    assert customers.description == "People and companies who buy from us"
    # a comment on two lines becomes one
    assert customers.column("segment").description == "Customer segment: C consumer, B business"
    assert customers.column("city").description == ""
    assert sales.table("orders").column("placed_at").type == "TIMESTAMP WITH TIME ZONE"
    assert sales.table("products").column("tags").type == "TEXT[]"
    assert sales.table("order_lines").primary_key == ("order_id", "line_no")
    assert {(fk.table, fk.columns, fk.ref_table, fk.ref_columns) for fk in sales.foreign_keys} == {
        ("orders", ("customer_id",), "customers", ("customer_id",)),
        ("order_lines", ("order_id",), "orders", ("order_id",)),
        ("order_lines", ("product_id",), "products", ("product_id",)),
    }
    assert not sales.has_table("big_customers")  # views are not read
    ledger = catalog.database("warehouse.finance").table("Ledger Entries")
    assert [c.name for c in ledger.columns] == ["Entry ID", "Amount (EUR)", "Memo"]


def test_a_foreign_key_to_another_schema_is_left_out_and_reported(catalog: Catalog) -> None:
    hr = catalog.database("warehouse.hr")
    employees = hr.table("employees")
    assert employees.description == "Everyone on the payroll"
    assert {fk.ref_table for fk in employees.foreign_keys} == {"departments", "employees"}
    [problem] = [p for p in catalog.problems if "account_for" in p]
    assert "sales.customers, another schema; left out" in problem


@pytest.mark.parametrize(
    ("schemas", "exclude", "expected"),
    [
        (["sales", "hr"], [], {"warehouse.sales", "warehouse.hr"}),
        (["SALES"], [], {"warehouse.sales"}),  # case-insensitive
        (
            [],
            ["staging_*", "vault"],
            ALL - {"warehouse.staging_raw", "warehouse.staging_tmp", "warehouse.vault"},
        ),
        (["staging_*", "f*"], ["*_tmp"], {"warehouse.staging_raw", "warehouse.Finance"}),
    ],
)
def test_schemas_and_exclude_choose_schemas(
    warehouse: Warehouse, schemas: list[str], exclude: list[str], expected: set[str]
) -> None:
    catalog = load_source(warehouse.url, schemas=schemas, exclude=exclude)
    assert {db.id for db in catalog} == expected


def test_system_schemas_are_never_read(warehouse: Warehouse) -> None:
    with pytest.raises(SourceError, match="no schema matches --schemas pg_catalog"):
        load_source(warehouse.url, schemas=["pg_catalog", "information_schema"])


def test_no_matching_schema_names_the_ones_there_are(warehouse: Warehouse) -> None:
    with pytest.raises(SourceError) as caught:
        load_source(warehouse.url, schemas=["nope_*"])
    message = str(caught.value)
    assert "no schema matches --schemas nope_*" in message and "analytics, Finance, hr" in message
    assert "\n" not in message and READER_PASSWORD not in message


def test_ids_and_fingerprints_are_stable_across_runs_and_selections(
    warehouse: Warehouse, catalog: Catalog
) -> None:
    again = load_source(warehouse.url)
    assert [db.id for db in again] == [db.id for db in catalog]
    assert [database_fingerprint(db) for db in again] == [
        database_fingerprint(db) for db in catalog
    ]
    alone = load_source(warehouse.url, schemas=["sales"]).database("warehouse.sales")
    assert database_fingerprint(alone) == database_fingerprint(catalog.database("warehouse.sales"))
    # the superuser sees the same schema the same way: ids do not depend on who connects
    admin = load_source(warehouse.admin_url, schemas=["sales"]).database("warehouse.sales")
    assert database_fingerprint(admin) == database_fingerprint(alone)


def test_a_url_without_a_driver_uses_psycopg(warehouse: Warehouse) -> None:
    bare = warehouse.url.replace("postgresql+psycopg://", "postgresql://")
    db = load_source(bare, schemas=["hr"]).database("warehouse.hr")
    assert db.origin.startswith("postgresql://reader:***@") and db.url == bare


def test_the_password_is_masked_in_origins_reprs_problems_and_logs(
    warehouse: Warehouse, caplog: pytest.LogCaptureFixture
) -> None:
    encoded = quote(READER_PASSWORD, safe="")
    with caplog.at_level(logging.DEBUG):
        catalog = load_source(warehouse.url)
    shown = [
        *(db.origin for db in catalog),
        repr(catalog),
        *catalog.problems,
        caplog.text,
    ]
    assert caplog.text and all("reader:***@127.0.0.1" in db.origin for db in catalog)
    for text in shown:
        assert READER_PASSWORD not in text and encoded not in text
    assert catalog.database("warehouse.sales").url == warehouse.url  # kept, for connecting


def test_a_wrong_password_is_one_line_naming_the_masked_url_and_the_fix(
    warehouse: Warehouse,
) -> None:
    url = warehouse.cluster.url("warehouse", user="reader", password="Wr0ng-p@ss")
    with pytest.raises(SourceError) as caught:
        load_source(url)
    message = str(caught.value)
    assert message.startswith(f"postgresql+psycopg://reader:***@127.0.0.1:{warehouse.cluster.port}")
    assert "cannot connect" in message and "password authentication failed" in message
    assert "PGPASSWORD" in message and "\n" not in message
    assert "Wr0ng" not in message and quote("Wr0ng-p@ss", safe="") not in message


def test_an_unreachable_server_is_a_source_error(warehouse: Warehouse) -> None:
    url = f"postgresql://reader:{quote(READER_PASSWORD, safe='')}@127.0.0.1:1/warehouse"
    with pytest.raises(SourceError, match=r"127\.0\.0\.1:1/warehouse: cannot connect"):
        load_source(url)


def test_a_missing_database_name_is_refused(warehouse: Warehouse) -> None:
    url = f"postgresql://reader@127.0.0.1:{warehouse.cluster.port}"
    with pytest.raises(SourceError, match="name the database in the URL"):
        load_source(url)


def test_the_password_can_come_from_the_environment(
    warehouse: Warehouse, monkeypatch: pytest.MonkeyPatch
) -> None:
    without = f"postgresql://reader@127.0.0.1:{warehouse.cluster.port}/warehouse"
    monkeypatch.setenv("PGPASSWORD", READER_PASSWORD)  # libpq reads it
    assert {db.id for db in load_source(without, schemas=["hr"])} == {"warehouse.hr"}
    # or the whole URL, through env:NAME (the CLI passes its environment)
    catalog = load_catalog(
        ["env:WAREHOUSE_URL"], schemas=["sales"], environ={"WAREHOUSE_URL": warehouse.url}
    )
    assert [db.id for db in catalog] == ["warehouse.sales"]


def test_cli_catalog_show_with_a_url_and_schema_patterns(
    warehouse: Warehouse, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WAREHOUSE_URL", warehouse.url)
    argv = ["catalog", "show", "env:WAREHOUSE_URL", "--schemas", "sales,hr", "--exclude", "hr"]
    assert main([*argv, "--json"]) == 0
    out = capsys.readouterr()
    shown = json.loads(out.out)
    assert [db["db_id"] for db in shown["databases"]] == ["warehouse.sales"]
    assert shown["databases"][0]["data"].startswith("postgresql+psycopg://reader:***@")
    assert main(["catalog", "show", warehouse.url, "--schemas", "hr"]) == 0
    out2 = capsys.readouterr()
    assert "warehouse.hr  (2 tables, live postgresql+psycopg://reader:***@" in out2.out
    assert "references sales.customers, another schema" in out2.err
    for text in (out.out, out.err, out2.out, out2.err):
        assert READER_PASSWORD not in text and quote(READER_PASSWORD, safe="") not in text


def test_cli_connection_error_exits_2_with_one_line(
    warehouse: Warehouse, capsys: pytest.CaptureFixture[str]
) -> None:
    url = warehouse.cluster.url("warehouse", user="reader", password="Wr0ng-p@ss")
    assert main(["catalog", "show", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot connect" in err and "Wr0ng" not in err
