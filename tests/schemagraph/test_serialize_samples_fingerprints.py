"""Serialization for prompts, sampled values and fingerprints."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
import sqlglot

from schemagraph import (
    Column,
    Database,
    Table,
    TraversalError,
    compact_text,
    create_table_text,
    database_fingerprint,
    load_spider,
    load_sqlite,
    sample_database,
    table_fingerprint,
)


def test_create_table_text_parses_and_keeps_keys(sample_dir: Path) -> None:
    db = load_spider(sample_dir).database("pets_1")
    text = create_table_text(db, ["Student", "Has_Pet"])
    statements = sqlglot.parse(text, read="sqlite")
    assert [s.this.this.name for s in statements if s] == ["Student", "Has_Pet"]
    assert "PRIMARY KEY (StuID)" in text
    assert "FOREIGN KEY (StuID) REFERENCES Student(StuID)" in text
    # a key to a table outside the traversal is not shown
    assert "REFERENCES Pets" not in text


def test_create_table_text_with_sampled_rows(sample_dir: Path) -> None:
    db = load_spider(sample_dir).database("pets_1")
    sample = sample_database(db, rows=2, seed=1)
    text = create_table_text(db, ["Pets"], sample, rows=2)
    assert "/* 2 example rows from Pets:" in text
    header = text.split("example rows from Pets:\n")[1].splitlines()[0]
    assert header.split() == ["PetID", "PetType", "pet_age", "weight"]
    assert any(kind in text for kind in ("cat", "dog"))


def test_identifiers_that_need_quotes_are_quoted(fixtures: Path) -> None:
    from schemagraph import load_ddl

    db = load_ddl(fixtures / "ddl" / "blog_mysql.sql").database("blog_mysql")
    assert "`display name`" in create_table_text(replace(db, dialect="mysql"))  # its quotes
    assert '"display name"' in create_table_text(replace(db, dialect=""))  # SQLite's


def test_warehouse_tables_read_in_their_engines_names_and_nested_fields() -> None:
    table = Table(
        "web__ga_sessions_20170801",
        (
            Column("fullVisitorId", "STRING"),
            Column("totals", "STRUCT"),
            Column("totals.pageviews", "INT64", description="pages viewed"),
            Column("hits", "ARRAY<STRUCT>"),
            Column("hits.product", "ARRAY<STRUCT>"),
            Column("hits.product.productRevenue", "INT64"),
            Column("hits.type", "STRING"),
        ),
        engine_name=("acme-retail-prod", "web", "ga_sessions_20170801"),
    )
    bq = Database("acme", (table,), dialect="bigquery")
    text = create_table_text(bq)
    assert text.startswith("CREATE TABLE `acme-retail-prod.web.ga_sessions_20170801` (")
    assert "web__ga_sessions" not in text and '"hits.' not in text
    assert "  totals STRUCT<\n    pageviews INT64 -- pages viewed\n  >," in text
    assert "hits ARRAY<STRUCT< -- REPEATED: UNNEST(hits)" in text
    assert "product ARRAY<STRUCT< -- REPEATED: UNNEST(hits.product)" in text
    assert "UNNEST(hits) AS hits, UNNEST(hits.product) AS product -> product.productRevenue" in text
    assert compact_text(bq).startswith("database acme (BigQuery):\n`acme-retail-prod.web.ga_")
    sf_table = Table(
        "SALES__ORDERS",
        (Column("ORDER_ID", "NUMBER"), Column("created_at", "TIMESTAMP_NTZ")),
        engine_name=("SHOP", "SALES", "ORDERS"),
    )
    sf = create_table_text(Database("SHOP", (sf_table,), dialect="snowflake"))
    assert sf.startswith('CREATE TABLE SHOP.SALES.ORDERS (\n  ORDER_ID NUMBER,\n  "created_at"')


def test_compact_text_lists_tables_and_joins(sample_dir: Path) -> None:
    db = load_spider(sample_dir).database("pets_1")
    text = compact_text(db, ["Has_Pet", "Pets"])
    assert text.splitlines() == [
        "database pets_1:",
        "Has_Pet(StuID, PetID)",
        "Pets(PetID*, PetType, pet_age, weight)",
        "Has_Pet.PetID -> Pets.PetID",
    ]


def test_unknown_table_in_serialization_is_an_error(sample_dir: Path) -> None:
    db = load_spider(sample_dir).database("pets_1")
    with pytest.raises(TraversalError, match="no table 'Dogs'"):
        compact_text(db, ["Dogs"])


def test_samples_are_seeded_and_capped(sample_dir: Path) -> None:
    db = load_spider(sample_dir).database("car_1")
    one, again = sample_database(db, rows=3, seed=5), sample_database(db, rows=3, seed=5)
    other = sample_database(db, rows=3, seed=6)
    assert one is not None and other is not None
    assert one == again
    assert one.table("cars_data") != other.table("cars_data")
    makers = one.table("car_makers")
    assert makers is not None and makers.row_count == 22 and len(makers.rows) == 3
    capped = sample_database(db, distinct=4)
    assert capped is not None
    assert all(len(v) <= 4 for t in capped.tables.values() for v in t.text_values.values())
    countries = one.table("countries")
    assert countries is not None and "usa" in countries.text_values["CountryName"]


def test_a_sample_looks_columns_up_in_any_case(sample_dir: Path) -> None:
    db = load_spider(sample_dir).database("car_1")
    sample = sample_database(db, rows=3, seed=5)
    assert sample is not None
    countries = sample.table("countries")
    assert countries is not None
    names = countries.column_values("countryname")
    assert names == [row[countries.columns.index("CountryName")] for row in countries.rows]
    assert len(names) == 3
    assert countries.texts("COUNTRYNAME") == countries.text_values["CountryName"]
    assert countries.column_values("no_such_column") == []
    assert countries.texts("CountryId") == ()  # a number column has no text values


def test_samples_skip_databases_without_data(sample_copy: Path) -> None:
    (sample_copy / "database" / "pets_1" / "pets_1.sqlite").unlink()
    db = load_spider(sample_copy).database("pets_1")
    assert sample_database(db) is None


def test_sampling_does_not_modify_the_file(sample_copy: Path) -> None:
    path = sample_copy / "database" / "dog_kennels" / "dog_kennels.sqlite"
    before = path.read_bytes()
    (db,) = load_sqlite(path)
    sample_database(db)
    assert path.read_bytes() == before


def test_fingerprints_change_with_schema_not_with_case_or_key_order(sample_dir: Path) -> None:
    db = load_spider(sample_dir).database("pets_1")
    table = db.table("Has_Pet")
    base = table_fingerprint(table)
    assert table_fingerprint(replace(table, name="HAS_PET")) == base
    assert table_fingerprint(replace(table, foreign_keys=table.foreign_keys[::-1])) == base
    added = replace(table, columns=(*table.columns, Column("since", "date")))
    assert table_fingerprint(added) != base
    retyped = replace(table, columns=(replace(table.columns[0], type="text"), *table.columns[1:]))
    assert table_fingerprint(retyped) != base
    assert len(base) == 64
    changed_db = replace(db, tables=(added, *db.tables[1:]))
    assert database_fingerprint(changed_db) != database_fingerprint(db)


def test_fingerprints_follow_documentation_and_keep_their_value_without_it(
    sample_dir: Path,
) -> None:
    table = load_spider(sample_dir).database("pets_1").table("Pets")
    base = table_fingerprint(table)
    # the value a table had before descriptions existed (stores built then stay up to date)
    assert base == "c49733bd88bfb43e306008b0596ba5108e1c13d94c73206430d877e79bdcdd4e"
    described = replace(table, description="pets of the students")
    assert table_fingerprint(described) != base
    column = replace(table.columns[1], description="kind of animal")
    with_column = replace(table, columns=(table.columns[0], column, *table.columns[2:]))
    assert table_fingerprint(with_column) not in (base, table_fingerprint(described))
    assert table_fingerprint(replace(with_column, name="PETS")) == table_fingerprint(with_column)


def test_adding_a_column_to_a_sqlite_file_changes_only_that_table(sample_copy: Path) -> None:
    path = sample_copy / "database" / "pets_1" / "pets_1.sqlite"
    (before,) = load_sqlite(path)
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE Pets ADD COLUMN color TEXT")
    (after,) = load_sqlite(path)
    changed = {
        t.name
        for t in before.tables
        if table_fingerprint(t) != table_fingerprint(after.table(t.name))
    }
    assert changed == {"Pets"}
