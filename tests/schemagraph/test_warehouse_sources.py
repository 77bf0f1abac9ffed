"""Every source records each database's engine (`Database.dialect`) and each table's name as
that engine qualifies it (`Table.engine_name`): INFORMATION_SCHEMA exports by their layout,
tables.json by its `engine` key, DDL by the dialect it was parsed with, SQLite files, and live
URLs by their backend."""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from schemagraph import Catalog, SourceError, load_catalog
from schemagraph.dialects import table_sql
from schemagraph.sources import load_ddl, load_infoschema, load_source, load_spider, load_sqlite
from schemagraph.sources.export_dialect import file_dialect, type_dialect
from schemagraph.sources.infoschema import ddl_description
from schemarag.cli import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
INFOSCHEMA = FIXTURES / "infoschema"
GA = "google_analytics_sample__ga_sessions_20170801"

#: the header of the Snowflake COLUMNS export of Spider 2.0's estate (16 columns)
SNOWFLAKE_16 = (
    "TABLE_CATALOG,TABLE_SCHEMA,TABLE_NAME,COLUMN_NAME,ORDINAL_POSITION,COLUMN_DEFAULT,"
    "IS_NULLABLE,DATA_TYPE,CHARACTER_MAXIMUM_LENGTH,CHARACTER_OCTET_LENGTH,NUMERIC_PRECISION,"
    "NUMERIC_PRECISION_RADIX,NUMERIC_SCALE,DATETIME_PRECISION,IS_IDENTITY,COMMENT"
)


def _dialects(catalog: Catalog) -> dict[str, str]:
    return {db.id: db.dialect for db in catalog}


# -- infoschema: the engine from the export's layout ---------------------------------------


@pytest.mark.parametrize(
    ("export", "database", "dialect", "table", "engine_name"),
    [
        (
            "bigquery",
            "acme-analytics",
            "bigquery",
            GA,
            ("acme-analytics", "google_analytics_sample", "ga_sessions_20170801"),
        ),
        ("snowflake", "ACME_DB", "snowflake", "CRM__CUSTOMERS", ("ACME_DB", "CRM", "CUSTOMERS")),
        ("databricks", "main", "databricks", "employees", ("hr", "employees")),
        ("postgres_columns.csv", "shop", "postgres", "products", ("public", "products")),
        ("trino_columns.jsonl", "hive", "trino", "sessions", ("web", "sessions")),
    ],
)
def test_each_engines_export_says_its_dialect_and_real_table_names(
    export: str, database: str, dialect: str, table: str, engine_name: tuple[str, ...]
) -> None:
    db = load_infoschema(INFOSCHEMA / export).database(database)
    assert db.dialect == dialect
    assert db.table(table).engine_name == engine_name
    assert all(len(t.engine_name) == len(engine_name) for t in db.tables)


def test_bigquery_table_reads_as_project_dataset_table() -> None:
    db = load_infoschema(INFOSCHEMA / "bigquery").database("acme-analytics")
    assert table_sql(db, GA) == "`acme-analytics.google_analytics_sample.ga_sessions_20170801`"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_snowflake_16_column_header_is_told_by_its_types(tmp_path: Path) -> None:
    """Spider 2.0's Snowflake export has none of Snowflake's own header names: its types
    (NUMBER, TEXT, VARIANT, TIMESTAMP_NTZ) say the engine."""
    rows = [
        "AUSTIN_SF,AUSTIN_BIKESHARE,TRIPS,TRIP_ID,1,,YES,NUMBER,,,38,10,0,,NO,",
        "AUSTIN_SF,AUSTIN_BIKESHARE,TRIPS,START_TIME,2,,YES,TIMESTAMP_NTZ,,,,,,9,NO,When",
        "AUSTIN_SF,AUSTIN_BIKESHARE,TRIPS,EXTRA,3,,YES,VARIANT,,,,,,,NO,",
    ]
    file = _write(tmp_path / "COLUMNS.csv", "\n".join([SNOWFLAKE_16, *rows]) + "\n")
    db = load_infoschema(file).database("AUSTIN_SF")
    assert db.dialect == "snowflake"
    assert db.table("TRIPS").engine_name == ("AUSTIN_SF", "AUSTIN_BIKESHARE", "TRIPS")


def test_an_export_that_does_not_say_its_engine_has_no_dialect(tmp_path: Path) -> None:
    file = _write(
        tmp_path / "cols.csv",
        "table_name,column_name,data_type\norders,id,integer\norders,placed,date\n",
    )
    db = load_infoschema(file).database("cols")
    assert db.dialect == ""
    assert db.table("orders").engine_name == ()  # no schema: the name is the table's


def test_an_export_without_catalog_names_no_project(tmp_path: Path) -> None:
    """A BigQuery export whose rows do not say the project: the database id is the file's
    stem, which is no project, so the engine name is dataset and table."""
    file = _write(
        tmp_path / "shop.csv",
        "table_schema,table_name,column_name,data_type\nsales,orders,id,INT64\n",
    )
    db = load_infoschema(file).database("shop")
    assert db.dialect == "bigquery"
    assert db.table("orders").engine_name == ("sales", "orders")


def test_dialect_is_voted_per_catalog_across_files(tmp_path: Path) -> None:
    """Each file says its engine; each catalog takes what its files say."""
    _write(
        tmp_path / "bq" / "COLUMNS.csv",
        "table_catalog,table_schema,table_name,column_name,data_type,is_partitioning_column\n"
        "proj,ds,t,a,INT64,NO\n",
    )
    _write(
        tmp_path / "sf" / "COLUMNS.csv",
        SNOWFLAKE_16 + "\nDB,S,T,A,1,,YES,NUMBER,,,38,10,0,,NO,\n",
    )
    catalog = load_infoschema(tmp_path)
    assert _dialects(catalog) == {"DB": "snowflake", "proj": "bigquery"}


@pytest.mark.parametrize(
    ("header", "types", "dialect"),
    [
        (["table_name", "column_name", "field_path"], [], "bigquery"),
        (["table_name", "column_name", "is_partitioning_column"], ["DATE"], "bigquery"),
        (["table_name", "column_name", "data_type"], ["ARRAY<STRUCT<a INT64>>"], "bigquery"),
        (["table_name", "column_name", "data_type"], ["STRING", "INT64"], "bigquery"),
        (["table_name", "column_name", "full_data_type"], ["string"], "databricks"),
        (["table_name", "column_name", "data_type"], ["NUMBER", "TEXT"], "snowflake"),
        (["table_name", "table_owner", "is_transient"], [], "snowflake"),
        (["table_name", "column_name", "udt_name"], ["integer"], "postgres"),
        (["table_name", "column_name", "data_type"], ["character varying(20)"], "postgres"),
        (["table_name", "column_name", "column_type", "column_key"], ["int"], "mysql"),
        (["table_name", "column_name", "data_type"], ["row(a varchar)"], "trino"),
        (["table_name", "column_name", "data_type"], ["nvarchar", "int"], "tsql"),
        (["table_name", "column_name", "data_type"], ["integer", "date"], ""),
    ],
)
def test_file_dialect(header: list[str], types: list[str], dialect: str) -> None:
    assert file_dialect("COLUMNS", header, types) == dialect


def test_type_dialect_reads_the_type_name_not_its_arguments() -> None:
    assert type_dialect("NUMBER(38,0)") == "snowflake"
    assert type_dialect("timestamp without time zone") == "postgres"
    assert type_dialect("STRUCT<x STRING>") == "bigquery"
    assert type_dialect("DECIMAL(10,2)") == ""


# -- tables.json: the `engine` key ----------------------------------------------------------


def _entry(db_id: str, tables: list[str], engine: str | None) -> dict[str, object]:
    entry: dict[str, object] = {
        "db_id": db_id,
        "table_names_original": tables,
        "table_names": tables,
        "column_names_original": [[-1, "*"], *([i, "id"] for i in range(len(tables)))],
        "column_names": [[-1, "*"], *([i, "id"] for i in range(len(tables)))],
        "column_types": ["text", *("number" for _ in tables)],
        "primary_keys": [],
        "foreign_keys": [],
    }
    if engine is not None:
        entry["engine"] = engine
    return entry


def test_tables_json_engine_key_gives_dialect_and_engine_names(tmp_path: Path) -> None:
    file = tmp_path / "tables.json"
    file.write_text(
        json.dumps(
            [
                _entry("austin", ["austin_bikeshare__trips", "austin_311__requests"], "bigquery"),
                _entry("AUSTIN_SF", ["AUSTIN_BIKESHARE__TRIPS"], "snowflake"),
                _entry("LONELY_SF", ["S__T"], "snowflake"),
                _entry("ga", ["ga_sessions_20170801"], "bigquery"),
                _entry("chinook", ["albums"], None),
                _entry("f1", ["races"], "sqlite"),
            ]
        )
    )
    catalog = load_spider(file)
    assert _dialects(catalog) == {
        "austin": "bigquery",
        "AUSTIN_SF": "snowflake",
        "LONELY_SF": "snowflake",
        "ga": "bigquery",
        "chinook": "",
        "f1": "sqlite",
    }
    austin = catalog.database("austin")
    assert austin.table("austin_bikeshare__trips").engine_name == (
        "austin",
        "austin_bikeshare",
        "trips",
    )
    assert table_sql(austin, "austin_bikeshare__trips") == "`austin.austin_bikeshare.trips`"
    # the data set's `_SF` (appended for the BigQuery twin) is not the engine's database name
    assert catalog.database("AUSTIN_SF").tables[0].engine_name == (
        "AUSTIN",
        "AUSTIN_BIKESHARE",
        "TRIPS",
    )
    # without a twin, `_SF` is part of the name
    assert catalog.database("LONELY_SF").tables[0].engine_name == ("LONELY_SF", "S", "T")
    # one dataset: plain names, whose dataset tables.json does not say
    assert catalog.database("ga").tables[0].engine_name == ()
    assert catalog.database("chinook").tables[0].engine_name == ()


def test_tables_json_unknown_engine_is_an_error_naming_it(tmp_path: Path) -> None:
    file = tmp_path / "tables.json"
    file.write_text(json.dumps([_entry("x", ["t"], "fooSQL")]))
    with pytest.raises(SourceError, match="unknown engine 'fooSQL'"):
        load_spider(file)


def test_snowflake_export_twin_of_another_source_loses_its_suffix(tmp_path: Path) -> None:
    """The `_SF` Spider 2.0 appends to a Snowflake id is dropped from the engine name when the
    plain id is another source's database (the estate's bigquery/ and snowflake/ folders)."""
    _write(
        tmp_path / "bq" / "COLUMNS.csv",
        "table_catalog,table_schema,table_name,column_name,data_type\n"
        "stackoverflow,so,users,id,INT64\n",
    )
    _write(tmp_path / "sf" / "COLUMNS.csv", SNOWFLAKE_16 + "\n")
    with (tmp_path / "sf" / "COLUMNS.csv").open("a") as out:
        out.write("STACKOVERFLOW_SF,STACKOVERFLOW,USERS,ID,1,,YES,NUMBER,,,38,10,0,,NO,\n")
    catalog = load_catalog([f"infoschema:{tmp_path / 'bq'}", f"infoschema:{tmp_path / 'sf'}"])
    sf = catalog.database("STACKOVERFLOW_SF")
    assert sf.table("USERS").engine_name == ("STACKOVERFLOW", "STACKOVERFLOW", "USERS")
    assert table_sql(sf, "USERS") == "STACKOVERFLOW.STACKOVERFLOW.USERS"
    alone = load_catalog([f"infoschema:{tmp_path / 'sf'}"]).database("STACKOVERFLOW_SF")
    assert alone.table("USERS").engine_name[0] == "STACKOVERFLOW_SF"


# -- ddl, sqlite files, live URLs -----------------------------------------------------------


def test_ddl_records_the_dialect_it_parsed_with(tmp_path: Path) -> None:
    ddl = FIXTURES / "ddl"
    assert load_ddl(ddl / "library_sqlite.sql", "sqlite").databases[0].dialect == "sqlite"
    assert load_ddl(ddl / "shop_postgres.sql", "postgres").databases[0].dialect == "postgres"
    inferred = load_ddl(ddl / "sales_snowflake.sql").databases[0]
    assert inferred.dialect  # whatever parsed every statement, said
    file = _write(
        tmp_path / "wh.sql",
        "CREATE TABLE sales.orders (id INT PRIMARY KEY);\nCREATE TABLE plain (id INT);\n",
    )
    db = load_source(f"ddl[duckdb]:{file}").databases[0]
    assert db.dialect == "duckdb"
    assert db.table("orders").engine_name == ("sales", "orders")
    assert db.table("plain").engine_name == ()


def test_sqlite_files_are_sqlite(tmp_path: Path) -> None:
    file = tmp_path / "shop.sqlite"
    with sqlite3.connect(file) as conn:
        conn.execute("CREATE TABLE t (a INTEGER)")
    conn.close()
    db = load_sqlite(file).databases[0]
    assert db.dialect == "sqlite"
    assert db.tables[0].engine_name == ()


def test_sqlite_url_is_sqlite_without_schema_names(tmp_path: Path) -> None:
    file = tmp_path / "shop.sqlite"
    with sqlite3.connect(file) as conn:
        conn.execute("CREATE TABLE t (a INTEGER)")
    conn.close()
    db = load_source(f"sqlite:///{file}").databases[0]
    assert db.dialect == "sqlite"
    assert db.tables[0].engine_name == ()


def test_duckdb_url_is_duckdb_with_schema_and_table(tmp_path: Path) -> None:
    duckdb = pytest.importorskip("duckdb", reason="duckdb is not installed")
    pytest.importorskip("duckdb_engine", reason="duckdb-engine is not installed")
    path = tmp_path / "wh.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE SCHEMA sales; CREATE TABLE sales.orders (id INTEGER)")
    conn.close()
    db = load_source(f"duckdb:///{path}").database("wh.sales")
    assert db.dialect == "duckdb"
    assert db.table("orders").engine_name == ("sales", "orders")


def test_postgresql_url_is_postgres_with_schema_and_table(postgres_cluster: object) -> None:
    from tests.pgcluster import PostgresCluster

    assert isinstance(postgres_cluster, PostgresCluster)
    postgres_cluster.create_database(
        "dialects", "CREATE SCHEMA sales; CREATE TABLE sales.orders (id integer PRIMARY KEY);"
    )
    db = load_source(postgres_cluster.url("dialects")).database("dialects.sales")
    assert db.dialect == "postgres"
    assert db.table("orders").engine_name == ("sales", "orders")
    assert table_sql(db, "orders") == "sales.orders"


# -- a CSV export cut off is a reported problem, never a silent loss -------------------------

WAREHOUSE = FIXTURES / "warehouse"
#: a BigQuery COLUMNS export of three tables, the last row quoted
_COLUMNS_HEADER = "table_catalog,table_schema,table_name,column_name,ordinal_position,data_type"
_COLUMNS_ROWS = [
    "proj,sales,orders,order_id,1,INT64",
    "proj,sales,orders,placed_at,2,TIMESTAMP",
    "proj,sales,customers,customer_id,1,INT64",
    'proj,sales,returns,"reason, as given",1,STRING',
]


def _columns_text() -> str:
    return "\n".join([_COLUMNS_HEADER, *_COLUMNS_ROWS]) + "\n"


def test_a_whole_export_loads_without_problems(tmp_path: Path) -> None:
    catalog = load_infoschema(_write(tmp_path / "COLUMNS.csv", _columns_text()))
    assert catalog.problems == ()
    assert [t.name for t in catalog.database("proj").tables] == ["customers", "orders", "returns"]


def test_export_cut_off_mid_row_is_a_reported_problem(tmp_path: Path) -> None:
    """The newcomer's failure: a file cut mid-row loaded with exit 0 and "0 problems
    reported", its last table silently missing."""
    text = _columns_text()
    cut = text[: text.index("returns") + 4]  # 'proj,sales,retu'
    catalog = load_infoschema(_write(tmp_path / "COLUMNS.csv", cut))
    [problem] = catalog.problems
    assert "COLUMNS.csv" in problem and "cut off" in problem and "row 5" in problem
    assert "3 of 6 fields" in problem
    assert [t.name for t in catalog.database("proj").tables] == ["customers", "orders"]


def test_export_cut_off_inside_a_quoted_field_is_a_reported_problem(tmp_path: Path) -> None:
    text = _columns_text()
    cut = text[: text.index("as given")]  # inside "reason, as given"
    catalog = load_infoschema(_write(tmp_path / "COLUMNS.csv", cut))
    [problem] = catalog.problems
    assert "COLUMNS.csv" in problem and "cut off inside a quoted field" in problem
    assert "row 5" in problem
    assert [t.name for t in catalog.database("proj").tables] == ["customers", "orders"]


def test_export_cut_off_at_the_end_of_a_field_is_a_reported_problem(tmp_path: Path) -> None:
    """Cut inside the last field of a row: every field is there, the last one maybe short."""
    text = _columns_text()
    cut = text[: text.index("TIMESTAMP") + 4]
    catalog = load_infoschema(_write(tmp_path / "COLUMNS.csv", cut))
    [problem] = catalog.problems
    assert "does not end with a line break" in problem and "row 3" in problem


def test_rows_with_too_many_or_too_few_fields_are_reported(tmp_path: Path) -> None:
    rows = [*_COLUMNS_ROWS[:2], "proj,sales,orders,extra,3,INT64,surplus", *_COLUMNS_ROWS[2:]]
    rows.insert(1, "proj,sales")
    text = "\n".join([_COLUMNS_HEADER, *rows]) + "\n"
    catalog = load_infoschema(_write(tmp_path / "COLUMNS.csv", text))
    assert len(catalog.problems) == 2
    assert any("fewer fields than the header" in p and "row 3" in p for p in catalog.problems)
    assert any("more fields than the header" in p and "row 5" in p for p in catalog.problems)
    assert not catalog.database("proj").table("orders").has_column("extra")


def test_cut_off_gzip_export_is_an_error_naming_the_file(tmp_path: Path) -> None:
    data = gzip.compress(_columns_text().encode() * 200)
    file = tmp_path / "COLUMNS.csv.gz"
    file.write_bytes(data[: len(data) // 2])
    with pytest.raises(SourceError, match=r"COLUMNS\.csv\.gz: cut off"):
        load_infoschema(file)


def test_catalog_show_of_a_cut_export_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _columns_text()
    file = _write(tmp_path / "COLUMNS.csv", text[: text.index("returns") + 4])
    assert main(["catalog", "show", f"infoschema:{file}"]) == 0
    captured = capsys.readouterr()
    assert "1 problem reported" in captured.out
    assert "cut off" in captured.err and "COLUMNS.csv" in captured.err


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(min_value=len(_COLUMNS_HEADER) + 2, max_value=len(_columns_text()) - 2))
def test_an_export_cut_anywhere_loses_nothing_unsaid(cut: int) -> None:
    """Wherever the file is cut, every row that is not loaded whole is reported (but at a line
    break: such a file cannot be told from a whole one)."""
    assume(_columns_text()[cut - 1] != "\n")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            catalog = load_infoschema(_write(Path(tmp) / "COLUMNS.csv", _columns_text()[:cut]))
        except SourceError as exc:  # not one row whole: the error says why
            assert "cut off" in str(exc)
            return
    loaded = {(t.name, c.name) for db in catalog for t in db.tables for c in t.columns}
    expected = [("orders", "order_id"), ("orders", "placed_at"), ("customers", "customer_id")]
    expected.append(("returns", "reason, as given"))
    whole = [pair for pair in expected if pair in loaded]
    assert whole == expected[: len(whole)]  # a prefix of the rows, each whole
    if len(whole) < len(expected):
        assert catalog.problems, f"cut at {cut}: rows lost without a word"


# -- BigQuery TABLES.ddl descriptions --------------------------------------------------------


def test_bigquery_tables_ddl_gives_table_descriptions() -> None:
    """The newcomer's failure: `OPTIONS(description=...)` in TABLES.ddl was not read."""
    db = load_infoschema(WAREHOUSE / "bigquery_ddl").database("bigquery-public-data")
    assert db.dialect == "bigquery"
    trips = db.table("austin_bikeshare__bikeshare_trips")
    assert trips.description == (
        'Trips of Austin\'s B-cycle bike share (since 2013), one row per "trip"'
    )
    # a column's own OPTIONS is not the table's
    assert db.table("austin_bikeshare__bikeshare_stations").description == ""
    assert db.table("austin_311__requests").description == (
        "311 service requests; raw text: C:\\311\\requests"
    )


@pytest.mark.parametrize(
    ("ddl", "description"),
    [
        ('CREATE TABLE `p.d.t` (a INT64) OPTIONS(description="One")', "One"),
        ("CREATE TABLE t (a INT64) OPTIONS (labels=[('k','v')], description='Its \\'s')", "Its 's"),
        ('CREATE TABLE t (a STRING OPTIONS(description="col"))', ""),
        ('CREATE TABLE t (a INT64) -- OPTIONS(description="comment")\n', ""),
        ('CREATE TABLE t (a INT64) OPTIONS(description="a\\nb (c)")', "a\nb (c)"),
        ("", ""),
        ("CREATE TABLE t (a INT64) OPTIONS(description=", ""),
    ],
)
def test_ddl_description(ddl: str, description: str) -> None:
    assert ddl_description(ddl) == description


@settings(max_examples=80, deadline=None)
@given(text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_ddl_description_reads_back_any_text(text: str) -> None:
    """Whatever a description says, BigQuery's quoting of it reads back as it was."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    ddl = (
        'CREATE TABLE `p.d.t`\n(\n  a STRING OPTIONS(description="(col)")\n)\n'
        f'OPTIONS(\n  description="{escaped}"\n);'
    )
    assert ddl_description(ddl) == text.replace("\r", "\\r") or "\r" in text


# -- the sqlite dialect: what SQLite reads is not lost ---------------------------------------


def test_sqlite_ddl_sqlglot_cannot_read_is_read_by_sqlite() -> None:
    """The newcomer's failure: Pagila and sqlite-sakila lost `film` to `BLOB SUB_TYPE TEXT`."""
    catalog = load_source(f"ddl[sqlite]:{WAREHOUSE / 'sakila_sqlite.sql'}")
    db = catalog.database("sakila_sqlite")
    assert db.dialect == "sqlite"
    assert [t.name for t in db.tables] == [
        "language",
        "film",
        "film_text",
        "veg_txn_df",
        "ERD",
        "sales_by_store",
        "sqlite_sequence",
    ]
    film = db.table("film")
    assert [(c.name, c.type) for c in film.columns] == [
        ("film_id", "INT"),
        ("title", "VARCHAR(255)"),
        ("description", "BLOB SUB_TYPE TEXT"),
        ("release_year", "VARCHAR(4)"),
        ("language_id", "SMALLINT"),
        ("rental_rate", "DECIMAL(4,2)"),
    ]
    assert film.primary_key == ("film_id",)
    [fk] = film.foreign_keys
    assert (fk.columns, fk.ref_table, fk.ref_columns) == (
        ("language_id",),
        "language",
        ("language_id",),
    )


def test_sqlite_ddl_names_printed_without_quotes_are_read_and_reported() -> None:
    catalog = load_source(f"ddl[sqlite]:{WAREHOUSE / 'sakila_sqlite.sql'}")
    db = catalog.database("sakila_sqlite")
    assert [(c.name, c.type) for c in db.table("veg_txn_df").columns] == [
        ("index", "INTEGER"),
        ("txn_date", "TEXT"),
        ("qty_sold(kg)", "REAL"),
        ("unit_selling_px_rmb/kg", "REAL"),
        ("discount(%)", "INTEGER"),
    ]
    assert [c.name for c in db.table("ERD").columns] == [
        "table",
        "column",
        "Unnamed: 2",
        "Unnamed: 3",
    ]
    assert len(catalog.problems) == 2
    assert all("need quotes" in p and "read with them quoted" in p for p in catalog.problems)
    assert any("veg_txn_df" in p and "qty_sold(kg)" in p for p in catalog.problems)


def test_sqlite_ddl_columns_without_a_type_are_kept() -> None:
    db = load_source(f"ddl[sqlite]:{WAREHOUSE / 'sakila_sqlite.sql'}").database("sakila_sqlite")
    assert [(c.name, c.type) for c in db.table("sales_by_store").columns] == [
        ("store_id", "INTEGER"),
        ("store", ""),
        ("manager", ""),
        ("total_sales", ""),
    ]
    assert [c.name for c in db.table("sqlite_sequence").columns] == ["name", "seq"]


def test_sqlite_ddl_a_statement_sqlite_refuses_too_is_still_reported(tmp_path: Path) -> None:
    file = _write(
        tmp_path / "bad.sql",
        "CREATE TABLE ok (a INT);\nCREATE TABLE broken (a INT,, b TEXT SUB_TYPE (;\n",
    )
    catalog = load_ddl(file, "sqlite")
    assert [t.name for t in catalog.databases[0].tables] == ["ok"]
    [problem] = catalog.problems
    assert "bad.sql:2: statement skipped (sqlite)" in problem and "SQLite:" in problem


def test_sqlite_dialect_is_inferred_where_only_sqlite_reads_a_file() -> None:
    db = load_ddl(WAREHOUSE / "sakila_sqlite.sql").databases[0]
    assert db.dialect == "sqlite"
    assert db.has_table("film")


@pytest.mark.spider
def test_the_spider2_estate_loads_every_table_of_the_export() -> None:
    """Spider 2.0-lite's estate as each engine exports it: every table the export holds."""
    beside = Path(__file__).resolve().parents[3] / "shared/data/spider2-lite"
    root = Path(os.environ.get("SCHEMARAG_SPIDER2_LITE_DIR", beside)) / "infoschema"
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    catalog = load_ddl(root / "sqlite", "sqlite")
    created = sum(
        text.count("CREATE TABLE")
        for text in (f.read_text() for f in (root / "sqlite").glob("*.sql"))
    )
    assert catalog.table_count == created == 432
    assert not [p for p in catalog.problems if "skipped" in p]
