"""`infoschema:` exports of INFORMATION_SCHEMA views, in each engine's real layout: BigQuery
(COLUMNS, COLUMN_FIELD_PATHS as newline-delimited JSON, TABLE_OPTIONS, TABLES and key views),
Snowflake (upper-case headers, CRLF), Databricks Unity Catalog, Trino (JSON lines), PostgreSQL."""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemagraph import Catalog, ForeignKey, SourceError, load_catalog
from schemagraph.sources import load_infoschema, load_source
from schemarag.cli import main

FIXTURES = Path(__file__).parent.parent / "fixtures" / "infoschema"
BIGQUERY = FIXTURES / "bigquery"
SNOWFLAKE = FIXTURES / "snowflake"
DATABRICKS = FIXTURES / "databricks"
GA = "google_analytics_sample__ga_sessions_20170801"


def _names(catalog: Catalog, db: str, table: str) -> list[str]:
    return [c.name for c in catalog.database(db).table(table).columns]


def test_bigquery_project_is_one_database_with_dataset_prefixed_tables_and_nested_fields() -> None:
    catalog = load_infoschema(BIGQUERY)
    assert [db.id for db in catalog] == ["acme-analytics"]
    db = catalog.database("acme-analytics")
    assert [t.name for t in db.tables] == [GA, "web_shop__customers", "web_shop__orders"]
    assert db.schema is None  # two datasets
    assert db.path is None and db.url is None  # schema only
    # RECORD fields from COLUMN_FIELD_PATHS follow their column, named by their path
    assert _names(catalog, "acme-analytics", GA) == [
        "visitorId",
        "visitNumber",
        "visitId",
        "visitStartTime",
        "date",
        "totals",
        "totals.visits",
        "totals.hits",
        "totals.pageviews",
        "totals.transactionRevenue",
        "hits",
        "hits.hitNumber",
        "hits.product",
        "hits.product.productSKU",
        "hits.product.v2ProductName",
        "hits.product.productRevenue",
        "fullVisitorId",
        "channelGrouping",
    ]
    ga = db.table(GA)
    assert ga.column("totals").type == "STRUCT"
    assert ga.column("hits").type == "ARRAY<STRUCT>"
    assert ga.column("totals.pageviews").type == "INT64"
    assert ga.column("totals.pageviews").description == (
        "Total number of pageviews within the session."
    )
    assert ga.column("hits.product.productSKU").description == "Product SKU."
    assert ga.column("TOTALS").description.startswith("This section contains aggregate values")
    # TABLE_OPTIONS description, a string literal unquoted; other options ignored
    assert ga.description.startswith("Google Analytics 360 sessions of the Google Merchandise")
    orders = db.table("web_shop__orders")
    assert orders.description == 'Orders placed on the "web shop", one row per order'
    # system-defined pseudo-columns are not columns
    assert [c.name for c in orders.columns] == [
        "order_id",
        "customer_id",
        "order_total",
        "placed_at",
    ]
    assert orders.column("order_total").type == "NUMERIC(10, 2)"
    assert orders.column("order_total").description == "Order amount in euros, taxes included"
    # keys from TABLE_CONSTRAINTS + KEY_COLUMN_USAGE + CONSTRAINT_COLUMN_USAGE
    assert orders.primary_key == ("order_id",)
    assert db.table("web_shop__customers").primary_key == ("customer_id",)
    assert orders.foreign_keys == (
        ForeignKey("web_shop__orders", ("customer_id",), "web_shop__customers", ("customer_id",)),
    )
    assert ga.primary_key == () and ga.foreign_keys == ()
    assert catalog.problems == ()


def test_snowflake_upper_case_export_with_comments_skips_information_schema() -> None:
    catalog = load_source(f"infoschema:{SNOWFLAKE}")
    db = catalog.database("ACME_DB")
    assert [t.name for t in db.tables] == ["CRM__CUSTOMERS", "FINANCE__INVOICES"]
    # rows arrive in any order: ordinal positions decide
    assert _names(catalog, "ACME_DB", "CRM__CUSTOMERS") == [
        "CUST_ID",
        "FULL_NM",
        "SGMT_CD",
        "ATTRS",
    ]
    customers = db.table("crm__customers")
    assert customers.description == "Customers of the wholesale and retail channels"
    assert customers.column("SGMT_CD").description == (
        "Customer segment code: RET retail, WHL wholesale"
    )
    assert customers.column("ATTRS").type == "VARIANT"
    invoices = db.table("FINANCE__INVOICES")
    assert invoices.description == ""
    assert invoices.column("INV_ID").description == ""
    assert invoices.column("AMT_USD").description.startswith("Invoice amount in US dollars")
    assert catalog.problems == ()


def test_databricks_single_schema_keeps_table_names_and_reads_full_types() -> None:
    catalog = load_infoschema(DATABRICKS)
    db = catalog.database("main")
    assert db.schema == "hr"
    assert [t.name for t in db.tables] == ["departments", "employees"]
    employees = db.table("employees")
    # ordinal positions count from 0 in Databricks
    assert [c.name for c in employees.columns][:2] == ["emp_id", "dept_cd"]
    assert employees.column("base_salary").type == "decimal(10,2)"
    assert employees.column("home_address").type == "struct"
    assert employees.column("home_address").description == ""  # "null" is no comment
    assert employees.column("hire_dt").description == "Date the employee was hired"
    assert employees.description == "Current and former employees, one row each"
    assert db.table("departments").description == ""


def test_trino_json_lines_and_postgres_csv_single_files() -> None:
    trino = load_source(f"infoschema:{FIXTURES / 'trino_columns.jsonl'}")
    page_views = trino.database("hive").table("page_views")
    assert [c.name for c in page_views.columns] == ["view_time", "page_url", "geo", "session_id"]
    assert page_views.column("geo").type == "row"
    assert page_views.column("view_time").type == "timestamp(3)"
    assert page_views.column("page_url").description.startswith("URL of the page")
    postgres = load_source(f"infoschema:{FIXTURES / 'postgres_columns.csv'}")
    assert [db.id for db in postgres] == ["shop"]
    products = postgres.database("shop").table("products")  # pg_catalog left out
    assert [c.name for c in products.columns] == ["product_id", "title", "unit_price"]
    assert all(c.description == "" for c in products.columns)


def test_a_folder_of_every_engine_is_one_catalog() -> None:
    catalog = load_catalog([f"infoschema:{FIXTURES}"])
    assert sorted(db.id for db in catalog) == ["ACME_DB", "acme-analytics", "hive", "main", "shop"]
    assert catalog.problems == ()


def test_per_schema_option_makes_one_database_per_catalog_and_schema() -> None:
    catalog = load_source(f"infoschema[schema]:{BIGQUERY}")
    assert [db.id for db in catalog] == [
        "acme-analytics.google_analytics_sample",
        "acme-analytics.web_shop",
    ]
    shop = catalog.database("acme-analytics.web_shop")
    assert shop.schema == "web_shop"
    assert [t.name for t in shop.tables] == ["customers", "orders"]
    assert shop.table("orders").foreign_keys == (
        ForeignKey("orders", ("customer_id",), "customers", ("customer_id",)),
    )
    ga = catalog.database("acme-analytics.google_analytics_sample").table("ga_sessions_20170801")
    assert ga.column("totals.pageviews").description.startswith("Total number of pageviews")
    snowflake = load_source(f"infoschema[schema]:{SNOWFLAKE}")
    assert [db.id for db in snowflake] == ["ACME_DB.CRM", "ACME_DB.FINANCE"]
    # infoschema[catalog] is the default, said explicitly
    assert load_source(f"infoschema[catalog]:{BIGQUERY}") == load_infoschema(BIGQUERY)


def test_descriptions_are_overlaid_like_documentation(tmp_path: Path) -> None:
    # a docs: overlay replaces what the export said, matched by the same ids
    notes = tmp_path / "notes.json"
    notes.write_text(json.dumps({f"acme-analytics.{GA}.totals.hits": "Hits in the session"}))
    catalog = load_catalog([f"infoschema:{BIGQUERY}", f"docs:{notes}"])
    ga = catalog.database("acme-analytics").table(GA)
    assert ga.column("totals.hits").description == "Hits in the session"
    assert ga.column("totals.pageviews").description.startswith("Total number of pageviews")


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows([header, *rows])
    path.write_text(buffer.getvalue())
    return path


COLUMNS = ["table_catalog", "table_schema", "table_name", "column_name", "ordinal_position"]
RC = ["constraint_catalog", "constraint_schema", "constraint_name"]
RC += ["unique_constraint_catalog", "unique_constraint_schema", "unique_constraint_name"]


def test_rows_that_cannot_be_used_are_counted_problems(tmp_path: Path) -> None:
    _write_csv(
        tmp_path / "columns.csv",
        COLUMNS,
        [
            ["wh", "s", "t", "a", "1"],
            ["wh", "s", "", "b", "2"],  # no table name
            ["wh", "s", "", "c", "3"],
            ["wh", "s", "t", "", "2"],  # no column name
            ["wh", "s", "t", "A", "3"],  # listed twice (case-insensitively)
        ],
    )
    _write_csv(
        tmp_path / "tables.csv",
        ["table_catalog", "table_schema", "table_name", "comment"],
        [["wh", "s", "t", "T"], ["wh", "s", "ghost", "no columns exported"]],
    )
    catalog = load_infoschema(tmp_path)
    assert [c.name for c in catalog.database("wh").table("t").columns] == ["a"]
    assert catalog.database("wh").table("t").description == "T"
    problems = "\n".join(catalog.problems)
    assert "columns.csv: rows without a table_name left out (2; first: row 3)" in problems
    assert "columns.csv: rows without a column_name left out (row 5)" in problems
    assert "columns.csv: columns listed twice, the first kept (t.A at row 6)" in problems
    assert "tables.csv: tables without columns in the export left out (ghost)" in problems
    assert len(catalog.problems) == 4


def test_keys_need_table_constraints_and_stay_inside_one_database(tmp_path: Path) -> None:
    for name in ("COLUMNS.csv", "COLUMN_FIELD_PATHS.json", "KEY_COLUMN_USAGE.csv"):
        shutil.copy(BIGQUERY / name, tmp_path / name)
    alone = load_infoschema(tmp_path)
    assert all(
        not t.primary_key and not t.foreign_keys for t in alone.database("acme-analytics").tables
    )
    assert any("KEY_COLUMN_USAGE without TABLE_CONSTRAINTS" in p for p in alone.problems)
    # a foreign key between two datasets is one between two databases per schema
    for name in ("TABLE_CONSTRAINTS.csv", "CONSTRAINT_COLUMN_USAGE.csv"):
        shutil.copy(BIGQUERY / name, tmp_path / name)
    text = (tmp_path / "CONSTRAINT_COLUMN_USAGE.csv").read_text()
    lines = text.splitlines()
    lines[-1] = lines[-1].replace("web_shop,customers", "google_analytics_sample,customers")
    (tmp_path / "CONSTRAINT_COLUMN_USAGE.csv").write_text("\n".join(lines) + "\n")
    catalog = load_infoschema(tmp_path, per_schema=True)
    assert catalog.database("acme-analytics.web_shop").table("orders").foreign_keys == ()
    assert catalog.database("acme-analytics.web_shop").table("orders").primary_key == ("order_id",)
    assert any("foreign keys on tables without columns left out" in p for p in catalog.problems)


def test_referential_constraints_name_the_referenced_key(tmp_path: Path) -> None:
    # PostgreSQL and Databricks: REFERENTIAL_CONSTRAINTS instead of CONSTRAINT_COLUMN_USAGE,
    # a composite key whose columns are listed in another order than the referenced key's
    _write_csv(
        tmp_path / "columns.csv",
        COLUMNS,
        [
            ["db", "public", "lines", "order_no", "1"],
            ["db", "public", "lines", "shop", "2"],
            ["db", "public", "orders", "shop", "1"],
            ["db", "public", "orders", "order_no", "2"],
        ],
    )
    tc = ["constraint_catalog", "constraint_schema", "constraint_name", "table_catalog"]
    tc += ["table_schema", "table_name", "constraint_type"]
    _write_csv(
        tmp_path / "table_constraints.csv",
        tc,
        [
            ["db", "public", "orders_pkey", "db", "public", "orders", "PRIMARY KEY"],
            ["db", "public", "lines_order_fkey", "db", "public", "lines", "FOREIGN KEY"],
        ],
    )
    kcu = [
        "constraint_catalog",
        "constraint_schema",
        "constraint_name",
        "table_catalog",
        "table_schema",
        "table_name",
        "column_name",
        "ordinal_position",
        "position_in_unique_constraint",
    ]
    _write_csv(
        tmp_path / "key_column_usage.csv",
        kcu,
        [
            ["db", "public", "orders_pkey", "db", "public", "orders", "shop", "1", ""],
            ["db", "public", "orders_pkey", "db", "public", "orders", "order_no", "2", ""],
            ["db", "public", "lines_order_fkey", "db", "public", "lines", "order_no", "1", "2"],
            ["db", "public", "lines_order_fkey", "db", "public", "lines", "shop", "2", "1"],
        ],
    )
    _write_csv(
        tmp_path / "referential_constraints.csv",
        [*RC, "match_option", "update_rule", "delete_rule"],
        [
            [
                "db",
                "public",
                "lines_order_fkey",
                "db",
                "public",
                "orders_pkey",
                "NONE",
                "NO ACTION",
                "CASCADE",
            ]
        ],
    )
    catalog = load_infoschema(tmp_path)
    assert catalog.problems == ()
    db = catalog.database("db")
    assert db.table("orders").primary_key == ("shop", "order_no")
    assert db.table("lines").foreign_keys == (
        ForeignKey("lines", ("order_no", "shop"), "orders", ("order_no", "shop")),
    )


def test_gzipped_csv_and_json_array(tmp_path: Path) -> None:
    data = (SNOWFLAKE / "COLUMNS.csv").read_bytes()
    (tmp_path / "columns.csv.gz").write_bytes(gzip.compress(data))
    rows = [
        json.loads(line) for line in (FIXTURES / "trino_columns.jsonl").read_text().splitlines()
    ]
    (tmp_path / "trino.json").write_text(json.dumps(rows, indent=2))
    catalog = load_infoschema(tmp_path)
    assert sorted(db.id for db in catalog) == ["ACME_DB", "hive"]
    assert catalog.database("ACME_DB").table("CRM__CUSTOMERS").column("SGMT_CD").description


def test_an_export_without_catalog_is_named_after_its_file(tmp_path: Path) -> None:
    file = _write_csv(tmp_path / "billing.csv", ["TABLE_NAME", "COLUMN_NAME"], [["invoices", "id"]])
    assert [db.id for db in load_infoschema(file)] == ["billing"]


# -- bad input: one line naming the file and the fix, exit 2 ---------------------------------


def _bad_inputs(root: Path) -> list[tuple[str, str, str]]:
    """(source, text the one line names, the fix it gives)"""
    (root / "parquet.csv").write_bytes(b"PAR1\x15\x04\x15\x00\x00\x00binary")
    _write_csv(root / "no_table.csv", ["column_name", "data_type"], [["a", "INT64"]])
    _write_csv(root / "unknown.csv", ["foo", "bar"], [["1", "2"]])
    (root / "empty.csv").write_text("\n\n")
    (root / "commas.csv").write_text(",,,\n,,,\n")
    (root / "header_only.csv").write_text(",".join(COLUMNS) + "\n")
    (root / "broken.jsonl").write_text('{"table_name": "t", "column_name": "a"}\n{"table_name": \n')
    (root / "list.jsonl").write_text('["t", "a"]\n["t", "b"]\n')
    (root / "nothing").mkdir()
    (root / "nothing" / "README.md").write_text("exports go here")
    return [
        (f"infoschema:{root / 'parquet.csv'}", "parquet.csv: not CSV or JSON text", "COLUMNS"),
        (f"infoschema:{root / 'no_table.csv'}", "no_table.csv", "no table_name column"),
        (f"infoschema:{root / 'unknown.csv'}", "unknown.csv", "found: foo, bar"),
        (f"infoschema:{root / 'empty.csv'}", "empty.csv: empty", "with a header row"),
        (f"infoschema:{root / 'commas.csv'}", "commas.csv: empty", "with a header row"),
        (
            f"infoschema:{root / 'header_only.csv'}",
            "header_only.csv: no columns",
            "export the rows",
        ),
        (
            f"infoschema:{root / 'broken.jsonl'}",
            "broken.jsonl: malformed JSON at line 2",
            "one object",
        ),
        (f"infoschema:{root / 'list.jsonl'}", "list.jsonl: item 1 is list", "one object per row"),
        (f"infoschema:{root / 'nothing'}", "nothing: no .csv, .json", "one file per view"),
        (f"infoschema:{root / 'missing'}", "missing: no such file", "INFORMATION_SCHEMA"),
        (f"infoschema[tables]:{BIGQUERY}", "infoschema[tables]", "infoschema[schema]:PATH"),
    ]


def test_bad_exports_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for source, names, fix in _bad_inputs(tmp_path):
        with pytest.raises(SourceError):
            load_source(source)
        assert main(["catalog", "show", source]) == 2, source
        err = capsys.readouterr().err
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert "Traceback" not in err
        assert names in lines[0] and fix in lines[0], lines[0]


# -- the catalog does not depend on the order of rows or the case of headers -----------------


def _rewrite(source: Path, target: Path, order: list[int], upper: list[bool]) -> None:
    """`source` (a fixture CSV or JSON lines file) with its rows in `order` (indexes taken
    modulo the row count) and each header name in upper case where `upper` says."""
    if source.suffix == ".csv":
        header, *rows = list(csv.reader(io.StringIO(source.read_text(), newline="")))
        names = [h.upper() if upper[i % len(upper)] else h.lower() for i, h in enumerate(header)]
        _write_csv(target, names, [rows[i] for i in _permutation(order, len(rows))])
        return
    items = [json.loads(line) for line in source.read_text().splitlines()]
    recased = [
        {(k.upper() if upper[i % len(upper)] else k): v for i, (k, v) in enumerate(item.items())}
        for item in items
    ]
    target.write_text("".join(json.dumps(item) + "\n" for item in recased))


def _permutation(order: list[int], n: int) -> list[int]:
    ranked = sorted(range(n), key=lambda i: (order[i % len(order)], i))
    return ranked


@settings(max_examples=25, deadline=None)
@given(
    order=st.lists(st.integers(0, 1000), min_size=1, max_size=40),
    upper=st.lists(st.booleans(), min_size=1, max_size=12),
    per_schema=st.booleans(),
)
def test_row_order_and_header_case_do_not_change_the_catalog(
    order: list[int], upper: list[bool], per_schema: bool
) -> None:
    """Rows are permuted in every file whose rows carry an ordinal position or none is needed;
    COLUMN_FIELD_PATHS keeps its order (nested fields have no position but the file's)."""
    for folder in (BIGQUERY, SNOWFLAKE, DATABRICKS):
        expected = load_infoschema(folder, per_schema=per_schema)
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / folder.name
            copy.mkdir()
            for file in folder.iterdir():
                _rewrite(file, copy / file.name, order, upper)
            got = load_infoschema(copy, per_schema=per_schema)
        assert [(db.id, db.schema, db.tables) for db in got] == [
            (db.id, db.schema, db.tables) for db in expected
        ]
        assert len(got.problems) == len(expected.problems)


# -- end to end: a build from an export, and a question naming a described column ----------


def test_index_build_from_an_export_routes_a_question_by_its_descriptions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCHEMARAG_CACHE", str(tmp_path / "cache.sqlite"))
    store = str(tmp_path / "store")
    argv = ["index", "build", f"infoschema:{FIXTURES}", "--store", store]
    assert main([*argv, "--embedder", "hashing:64", "--no-cache", "--chains", "1"]) == 0
    capsys.readouterr()
    for question, db in [
        ("Which wholesale customers have the largest invoice amounts in US dollars?", "ACME_DB"),
        ("Total pageviews per session for each product SKU", "acme-analytics"),
        ("Yearly base salary of employees hired in 2020 by department", "main"),
    ]:
        retrieve = ["retrieve", question, "--store", store, "--embedder", "hashing:64", "--json"]
        assert main(retrieve) == 0
        result = json.loads(capsys.readouterr().out)
        assert result["databases"][0]["db_id"] == db, (question, result["databases"][:2])
