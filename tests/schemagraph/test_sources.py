"""Each source on real files, and malformed input of each kind."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from schemagraph import (
    Catalog,
    CatalogError,
    SourceError,
    load_catalog,
    load_ddl,
    load_source,
    load_spider,
    load_sqlite,
)

SAMPLE_DBS = {
    "car_1",
    "concert_singer",
    "department_store",
    "dog_kennels",
    "employee_hire_evaluation",
    "flight_2",
    "pets_1",
    "student_transcripts_tracking",
}


def test_spider_source_reads_tables_json_and_finds_sqlite_files(sample_dir: Path) -> None:
    catalog = load_spider(sample_dir)
    assert {db.id for db in catalog} == SAMPLE_DBS
    pets = catalog.database("PETS_1")  # ids match case-insensitively
    assert [t.name for t in pets.tables] == ["Student", "Has_Pet", "Pets"]
    assert pets.table("student").primary_key == ("StuID",)
    assert pets.path is not None and pets.path.name == "pets_1.sqlite"
    has_pet = pets.table("Has_Pet")
    assert {(fk.columns, fk.ref_table, fk.ref_columns) for fk in has_pet.foreign_keys} == {
        (("StuID",), "Student", ("StuID",)),
        (("PetID",), "Pets", ("PetID",)),
    }


def test_readable_names_in_tables_json_describe_what_they_rename(tmp_path: Path) -> None:
    entry = {
        "db_id": "league",
        "table_names_original": ["matchs", "tot_stats"],
        "table_names": ["matches", "tot stats"],
        "column_names_original": [[-1, "*"], [0, "FTHG"], [0, "HomeTeam"], [1, "tot_cred"]],
        "column_names": [[-1, "*"], [0, "Final-time Home-team Goals"], [0, "home team"], [1, 7]],
        "column_types": ["text", "number", "text", "number"],
    }
    (tmp_path / "tables.json").write_text(json.dumps([entry]))
    db = load_spider(tmp_path).database("league")
    matchs, stats = db.table("matchs"), db.table("tot_stats")
    # a label in other words describes; one that only respells the name ("home team"), or is
    # not text, does not
    assert (matchs.description, stats.description) == ("matches", "")
    assert [c.description for c in matchs.columns] == ["Final-time Home-team Goals", ""]
    assert stats.column("tot_cred").description == ""
    # BIRD's description files, when present, describe instead
    folder = tmp_path / "database" / "league" / "database_description"
    folder.mkdir(parents=True)
    (folder / "matchs.csv").write_text(
        "original_column_name,column_name,column_description,data_format,value_description\n"
        "FTHG,,home goals at full time,integer,\n"
    )
    assert load_spider(tmp_path).database("league").table("matchs").column("FTHG").description == (
        "home goals at full time"
    )


def test_spider_source_accepts_the_file_itself(sample_dir: Path) -> None:
    assert len(load_spider(sample_dir / "tables.json")) == len(SAMPLE_DBS)


def test_spider_database_without_sqlite_file_has_no_path(sample_copy: Path) -> None:
    shutil.rmtree(sample_copy / "database" / "pets_1")
    assert load_spider(sample_copy).database("pets_1").path is None


@pytest.mark.spider
def test_full_spider_counts(spider_dir: Path) -> None:
    catalog = load_spider(spider_dir)
    assert len(catalog) == 166
    assert catalog.table_count == 876
    assert sum(1 for db in catalog if db.path) == 163


def test_sqlite_source_introspects_tables_keys_and_foreign_keys(sample_dir: Path) -> None:
    catalog = load_sqlite(sample_dir / "database" / "pets_1" / "pets_1.sqlite")
    (pets,) = catalog
    assert pets.id == "pets_1"
    assert pets.table("Pets").column("weight").type == "REAL"
    assert pets.table("Student").primary_key == ("StuID",)
    refs = {(fk.columns, fk.ref_table) for fk in pets.table("Has_Pet").foreign_keys}
    assert refs == {(("StuID",), "Student"), (("PetID",), "Pets")}


def test_sqlite_source_reads_a_directory(sample_dir: Path) -> None:
    assert {db.id for db in load_sqlite(sample_dir / "database")} == SAMPLE_DBS


def test_sqlite_source_resolves_reference_to_primary_key_and_skips_dangling_keys(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE customer (cid INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE orders (oid INTEGER PRIMARY KEY, cid INTEGER REFERENCES customer,
                                 vid INTEGER REFERENCES vendor(vid));
            """
        )
    catalog = load_sqlite(path)
    orders = catalog.database("shop").table("orders")
    assert [(fk.ref_table, fk.ref_columns) for fk in orders.foreign_keys] == [
        ("customer", ("cid",))
    ]
    assert len(catalog.problems) == 1
    assert "shop.sqlite" in catalog.problems[0] and "vendor" in catalog.problems[0]


def test_sqlite_source_never_writes_the_file(sample_copy: Path) -> None:
    path = sample_copy / "database" / "car_1" / "car_1.sqlite"
    before = path.read_bytes()
    load_sqlite(path)
    assert path.read_bytes() == before
    assert not path.with_name("car_1.sqlite-journal").exists()


@pytest.mark.parametrize(
    ("file", "dialect", "tables", "fk"),
    [
        (
            "shop_postgres.sql",
            "postgres",
            ["customers", "orders", "order_items"],
            ("order_items", "orders", ("id",)),
        ),
        ("blog_mysql.sql", "mysql", ["authors", "posts"], ("posts", "authors", ("author_id",))),
        ("library_sqlite.sql", "sqlite", ["book", "loan"], ("loan", "book", ("isbn",))),
        (
            "sales_snowflake.sql",
            "snowflake",
            ["REGIONS", "SALES"],
            ("SALES", "REGIONS", ("REGION_ID",)),
        ),
        ("events_bigquery.sql", "bigquery", ["users", "events"], ("events", "users", ("user_id",))),
    ],
)
def test_ddl_source_in_each_dialect(
    fixtures: Path, file: str, dialect: str, tables: list[str], fk: tuple[str, str, tuple[str, ...]]
) -> None:
    catalog = load_ddl(fixtures / "ddl" / file, dialect)
    (db,) = catalog
    assert db.id == file.removesuffix(".sql")
    assert [t.name for t in db.tables] == tables
    table, ref_table, ref_columns = fk
    assert (ref_table, ref_columns) in {
        (k.ref_table, k.ref_columns) for k in db.table(table).foreign_keys
    }
    assert catalog.problems == ()


def test_ddl_source_infers_the_dialect(fixtures: Path) -> None:
    catalog = load_ddl(fixtures / "ddl")
    assert len(catalog) == 5
    shop = catalog.database("shop_postgres")
    assert shop.table("order_items").primary_key == ("order_id", "line_no")
    assert shop.table("customers").column("ID").primary_key
    blog = catalog.database("blog_mysql")
    assert blog.table("authors").has_column("display name")
    # REFERENCES without columns means the referenced table's primary key
    loan = catalog.database("library_sqlite").table("loan")
    assert loan.foreign_keys[0].ref_columns == ("isbn",)


def test_ddl_bad_statement_is_reported_and_skipped(tmp_path: Path) -> None:
    file = tmp_path / "mixed.sql"
    file.write_text(
        "CREATE TABLE good (id INT PRIMARY KEY);\n"
        "CREATE TABLE broken (id INT PRIMARY KEY,, name TEXT (;\n"
        "CREATE TABLE also_good (id INT, good_id INT REFERENCES good(id));\n"
    )
    catalog = load_ddl(file, "postgres")
    assert [t.name for t in catalog.database("mixed").tables] == ["good", "also_good"]
    assert len(catalog.problems) == 1
    assert "mixed.sql:2" in catalog.problems[0]


def test_ddl_foreign_key_to_missing_table_is_an_error(tmp_path: Path) -> None:
    file = tmp_path / "dangling.sql"
    file.write_text("CREATE TABLE a (id INT, b_id INT REFERENCES nowhere(id));")
    with pytest.raises(CatalogError, match=r"dangling.sql.*missing table 'nowhere'"):
        load_ddl(file, "postgres")


def test_ddl_foreign_key_to_missing_column_is_an_error(tmp_path: Path) -> None:
    file = tmp_path / "badcol.sql"
    file.write_text(
        "CREATE TABLE b (id INT PRIMARY KEY);\n"
        "CREATE TABLE a (id INT, b_id INT REFERENCES b(nope));"
    )
    with pytest.raises(CatalogError, match=r"badcol.sql.*missing column b.nope"):
        load_ddl(file, "postgres")


def test_ddl_file_without_tables_is_an_error(tmp_path: Path) -> None:
    file = tmp_path / "empty.sql"
    file.write_text("-- nothing here\nSELECT 1;")
    with pytest.raises(SourceError, match="no CREATE TABLE"):
        load_ddl(file)


def test_ddl_unknown_dialect_names_the_choices(fixtures: Path) -> None:
    with pytest.raises(SourceError, match=r"unknown SQL dialect 'klingon'.*postgres"):
        load_ddl(fixtures / "ddl", "klingon")


def test_malformed_tables_json_names_file_and_line(tmp_path: Path) -> None:
    file = tmp_path / "tables.json"
    file.write_text('[{"db_id": "x",\n "table_names_original": [}]')
    with pytest.raises(SourceError, match=r"tables.json: malformed JSON at line 2"):
        load_spider(tmp_path)


def test_tables_json_with_missing_keys_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "tables.json").write_text(json.dumps([{"db_id": "x"}]))
    with pytest.raises(SourceError, match="database #0: missing one of the keys"):
        load_spider(tmp_path)


def test_tables_json_key_to_missing_column_is_an_error(tmp_path: Path) -> None:
    entry = {
        "db_id": "x",
        "table_names_original": ["t"],
        "column_names_original": [[-1, "*"], [0, "id"]],
        "column_types": ["text", "number"],
        "primary_keys": [1],
        "foreign_keys": [[1, 7]],
    }
    (tmp_path / "tables.json").write_text(json.dumps([entry]))
    with pytest.raises(SourceError, match="'x': key refers to column #7"):
        load_spider(tmp_path)


def test_missing_paths_are_errors_naming_the_path(tmp_path: Path) -> None:
    for spec in ("spider:", "sqlite:", "ddl:"):
        with pytest.raises(SourceError, match="no such file"):
            load_source(spec + str(tmp_path / "missing"))


def test_not_a_sqlite_file_is_an_error(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.sqlite"
    bogus.write_text("this is not a database")
    with pytest.raises(SourceError, match=r"bogus\.sqlite: not a readable SQLite database"):
        load_sqlite(bogus)


def test_bad_spec_names_the_kinds() -> None:
    with pytest.raises(SourceError, match="KIND one of spider, sqlite, ddl"):
        load_source("csv:file.csv")
    with pytest.raises(SourceError, match=r"only ddl \(a dialect\) and infoschema"):
        load_source("sqlite[postgres]:x.sqlite")


def test_sources_combine_and_duplicate_ids_name_both_origins(
    sample_dir: Path, fixtures: Path
) -> None:
    catalog = load_catalog(
        [f"spider:{sample_dir}", f"ddl[postgres]:{fixtures}/ddl/shop_postgres.sql"]
    )
    assert len(catalog) == len(SAMPLE_DBS) + 1
    with pytest.raises(CatalogError) as info:
        load_catalog([f"spider:{sample_dir}", f"sqlite:{sample_dir}/database/pets_1"])
    message = str(info.value)
    assert "'pets_1' appears twice" in message
    assert "tables.json" in message and "pets_1.sqlite" in message


def test_catalog_rejects_duplicate_ids_directly() -> None:
    from schemagraph import Database

    with pytest.raises(CatalogError, match="appears twice"):
        Catalog((Database("A", (), origin="one"), Database("a", (), origin="two")))
