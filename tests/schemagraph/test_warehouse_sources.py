"""Every source records each database's engine (`Database.dialect`) and each table's name as
that engine qualifies it (`Table.engine_name`): INFORMATION_SCHEMA exports by their layout,
tables.json by its `engine` key, DDL by the dialect it was parsed with, SQLite files, and live
URLs by their backend."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from schemagraph import Catalog, SourceError, load_catalog
from schemagraph.dialects import table_sql
from schemagraph.sources import load_ddl, load_infoschema, load_source, load_spider, load_sqlite
from schemagraph.sources.export_dialect import file_dialect, type_dialect

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
