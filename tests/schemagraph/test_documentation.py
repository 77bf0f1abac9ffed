"""Descriptions from every documentation source, matched to the catalog, and read as words."""

from __future__ import annotations

import json
import shutil
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemagraph import Catalog, Column, Database, SourceError, Table, load_catalog, load_spider
from schemagraph.documentation import phrase, quoted_values, resolve_keys, summary
from schemagraph.sources import load_ddl, load_source

DDL = """
CREATE TABLE orders (id INT PRIMARY KEY, amt INT, cust_id INT);
CREATE TABLE customers (cust_id INT PRIMARY KEY, cust_name TEXT);
"""


def _ddl(folder: Path, name: str, text: str = DDL) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.sql"
    path.write_text(text)
    return path


def _column(catalog: Catalog, db: str, table: str, column: str) -> str:
    return catalog.database(db).table(table).column(column).description


def test_docs_file_in_json_and_yaml_describes_tables_and_columns(tmp_path: Path) -> None:
    ddl = _ddl(tmp_path / "ddl", "shop")
    (tmp_path / "notes.yaml").write_text(
        "shop.orders: One row per order\nshop.orders.amt: |\n  Order amount,\n  in cents\n"
    )
    (tmp_path / "notes.json").write_text(json.dumps({"shop.customers.cust_name": "Full name"}))
    catalog = load_catalog(
        [f"ddl:{ddl}", f"docs:{tmp_path / 'notes.yaml'}", f"docs:{tmp_path / 'notes.json'}"]
    )
    orders = catalog.database("shop").table("orders")
    assert orders.description == "One row per order"
    assert orders.column("amt").description == "Order amount, in cents"  # one line
    assert orders.column("id").description == ""
    assert _column(catalog, "shop", "customers", "cust_name") == "Full name"
    assert catalog.problems == ()


def test_docs_keys_match_the_longest_database_id_never_the_first_dot(tmp_path: Path) -> None:
    # `warehouse` and `warehouse.sales` both exist; `warehouse.sales.orders.amt` is in the second
    first = _ddl(tmp_path / "a", "warehouse")
    second = _ddl(tmp_path / "b", "warehouse.sales")
    notes = tmp_path / "notes.json"
    notes.write_text(
        json.dumps(
            {
                "warehouse.sales.orders.amt": "sales amount",
                "WAREHOUSE.orders.amt": "warehouse amount",  # ids match case-insensitively
            }
        )
    )
    catalog = load_catalog([f"ddl:{first}", f"ddl:{second}", f"docs:{notes}"])
    assert _column(catalog, "warehouse.sales", "orders", "amt") == "sales amount"
    assert _column(catalog, "warehouse", "orders", "amt") == "warehouse amount"


def test_docs_keys_that_match_nothing_are_counted_and_shown(tmp_path: Path) -> None:
    ddl = _ddl(tmp_path, "shop")
    notes = tmp_path / "notes.json"
    keys = [
        "shop.orders.nope",
        "shop.ghost",
        "other.orders",
        "shop",
        *[f"x.t{i}" for i in range(5)],
    ]
    notes.write_text(json.dumps({**dict.fromkeys(keys, "?"), "shop.orders": "Orders"}))
    catalog = load_catalog([f"ddl:{ddl}", f"docs:{notes}"])
    (problem,) = catalog.problems
    assert problem.startswith(f"docs:{notes}: 9 descriptions match no database, table or column")
    assert "shop.orders.nope, shop.ghost, other.orders, shop, x.t0, ..." in problem
    assert catalog.database("shop").table("orders").description == "Orders"


@pytest.mark.parametrize(
    ("text", "name", "message"),
    [
        ("[1, 2]", "notes.json", "expected a mapping"),
        ('{"shop.orders": 3}', "notes.json", "the value of 'shop.orders' is int"),
        ("{bad json", "notes.json", "malformed JSON at line 1"),
        ("a: [unclosed", "notes.yaml", "malformed YAML at line 1"),
    ],
)
def test_bad_docs_files_are_source_errors_naming_the_problem(
    tmp_path: Path, text: str, name: str, message: str
) -> None:
    ddl = _ddl(tmp_path, "shop")
    (tmp_path / name).write_text(text)
    with pytest.raises(SourceError, match=message):
        load_catalog([f"ddl:{ddl}", f"docs:{tmp_path / name}"])


def test_an_overlay_alone_is_an_error_naming_the_fix(tmp_path: Path) -> None:
    notes = tmp_path / "notes.json"
    notes.write_text("{}")
    with pytest.raises(SourceError, match="name at least one KIND:PATH"):
        load_catalog([f"docs:{notes}"])
    with pytest.raises(SourceError, match="same command line"):
        load_source(f"dbt:{notes}")
    with pytest.raises(SourceError, match="no such file"):
        load_catalog([f"ddl:{_ddl(tmp_path, 'shop')}", f"docs:{tmp_path / 'missing.yaml'}"])


def test_dbt_manifest_describes_models_and_sources_matched_by_schema(
    tmp_path: Path, fixtures: Path
) -> None:
    # `shop` has orders and customers; `raw` has customers too: the dbt source `raw.customers`
    # must describe raw's, the model `shop.orders` shop's
    shop = _ddl(tmp_path, "shop")
    raw = _ddl(tmp_path / "raw", "raw", "CREATE TABLE customers (cust_id INT, cust_name TEXT);")
    project = fixtures / "docs" / "dbt_project"
    catalog = load_catalog([f"ddl:{shop}", f"ddl:{raw}", f"dbt:{project}"])
    orders = catalog.database("shop").table("orders")
    assert orders.description == "One row per order placed on the web shop"
    assert orders.column("amt").description == "Order amount in cents, taxes included"
    assert orders.column("cust_id").description == ""
    assert catalog.database("raw").table("customers").description.startswith("Customers, as")
    assert _column(catalog, "raw", "customers", "cust_name") == "Full name"
    assert catalog.database("shop").table("customers").description == ""
    (problem,) = catalog.problems  # the test node is not a table; the rest match nothing
    assert "2 descriptions match no" in problem
    assert "shop.orders.discount, shop.stg_payments" in problem


def test_dbt_needs_a_manifest(tmp_path: Path) -> None:
    ddl = _ddl(tmp_path, "shop")
    (tmp_path / "manifest.json").write_text('{"metadata": {}}')
    with pytest.raises(SourceError, match="not a dbt manifest"):
        load_catalog([f"ddl:{ddl}", f"dbt:{tmp_path / 'manifest.json'}"])
    with pytest.raises(SourceError, match="no such file"):
        load_catalog([f"ddl:{ddl}", f"dbt:{tmp_path}"])  # a folder without target/


def test_bird_description_csvs_with_bom_and_cp1252_are_read(fixtures: Path) -> None:
    catalog = load_spider(fixtures / "docs" / "bird")
    lab = catalog.database("clinic").table("Laboratory")
    assert lab.column("T-BIL").description.startswith("total bilirubin. Values: Commonsense")
    assert lab.column("GOT").description.endswith("N < 60 \u00b5/l")  # cp1252 micro sign
    patient = catalog.database("clinic").table("Patient")  # UTF-8 with a byte-order mark
    assert patient.column("ID").description == "identification of the patient"
    assert patient.column("SEX").description == "Sex. Values: F: female; M: male"


def test_bad_bird_description_files_are_problems_not_crashes(fixtures: Path) -> None:
    catalog = load_spider(fixtures / "docs" / "bird")
    problems = "\n".join(catalog.problems)
    assert "Examination.csv: not a readable description CSV (no original_column_name" in problems
    assert "Ghost.csv: 'clinic' has no table 'Ghost'" in problems
    assert "Laboratory.csv: clinic.Laboratory has no column 'T-CHO'" in problems
    assert len(catalog.problems) == 3
    assert catalog.database("clinic").table("Examination").column("KCT").description == ""


def test_an_undecodable_or_binary_description_csv_is_reported(
    tmp_path: Path, fixtures: Path
) -> None:
    folder = tmp_path / "bird"
    shutil.copytree(fixtures / "docs" / "bird", folder)
    described = folder / "database" / "clinic" / "database_description"
    (described / "Patient.csv").write_bytes(b"\x00\x01original_column_name\n\x00,\x00\n")
    catalog = load_spider(folder)
    assert any("Patient.csv" in p for p in catalog.problems)
    assert catalog.database("clinic").table("Patient").column("ID").description == ""


def test_ddl_comment_on_statements_and_inline_comments(tmp_path: Path) -> None:
    pg = _ddl(
        tmp_path / "pg",
        "pg",
        DDL
        + "COMMENT ON TABLE orders IS 'Orders placed';\n"
        + "COMMENT ON COLUMN public.orders.amt IS 'amount,\n in cents';\n"
        + "COMMENT ON COLUMN orders.nope IS 'lost';\n",
    )
    catalog = load_ddl(pg, "postgres")
    orders = catalog.database("pg").table("orders")
    assert (orders.description, orders.column("amt").description) == (
        "Orders placed",
        "amount, in cents",
    )
    assert catalog.problems == (f"{pg}:7: comment on unknown 'orders.nope' ignored",)
    my = _ddl(
        tmp_path / "my",
        "my",
        "CREATE TABLE t (a INT COMMENT 'the a', b TEXT) COMMENT='table t';",
    )
    t = load_ddl(my, "mysql").database("my").table("t")
    assert (t.description, t.column("a").description, t.column("b").description) == (
        "table t",
        "the a",
        "",
    )
    bq = _ddl(
        tmp_path / "bq",
        "bq",
        "CREATE TABLE t (a INT64 OPTIONS(description='the a')) OPTIONS(description='tt');",
    )
    t = load_ddl(bq, "bigquery").database("bq").table("t")
    assert (t.description, t.column("a").description) == ("tt", "the a")


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("total bilirubin", "total bilirubin"),
        ("Total Bilirubin: mg/dL, normal below 2.0", "total bilirubin"),
        ("The date of birth (YYYY-MM-DD)", "date of birth"),
        ("AST glutamic oxaloacetic transaminase", "AST glutamic oxaloacetic transaminase"),
        ("The number of goals scored by the home team at the end of a match.", None),
        ("", None),
        ("1.5", None),
        ("In the 'tips' table, the 'likes' column counts likes", None),
        ("Stores the amount", None),
        ("The 'amt' column", None),
        ("Unique identifier", None),
    ],
)
def test_phrase_is_a_short_noun_phrase_or_none(description: str, expected: str | None) -> None:
    assert phrase(description) == expected


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        (
            "The 'division' column in the 'divisions' table stores codes such as 'G1', 'E2'.",
            ["division", "divisions", "G1", "E2"],
        ),
        ('Status: "open", "closed" or \'open\'', ["open", "closed"]),
        ("the team's home ground, the players' names", []),
        ("no quotes at all", []),
        ("an empty '' quote", []),
    ],
)
def test_quoted_values_are_the_texts_a_description_quotes(
    description: str, expected: list[str]
) -> None:
    assert quoted_values(description) == expected


_VALUE = st.text(string.ascii_letters + string.digits + " -", min_size=1, max_size=20).filter(
    lambda v: v.strip() == v and v.strip() != ""
)


@settings(max_examples=80, deadline=None)
@given(values=st.lists(_VALUE, min_size=1, max_size=5), double=st.booleans())
def test_quoted_values_read_back_every_value_quoted_in_a_sentence(
    values: list[str], double: bool
) -> None:
    quote = '"' if double else "'"
    listed = ", ".join(f"{quote}{v}{quote}" for v in values)
    description = f"The table's code column holds values such as {listed}."

    # runs of spaces collapse to one, as everywhere descriptions are cleaned
    assert quoted_values(description) == list(dict.fromkeys(" ".join(v.split()) for v in values))


def test_summary_cuts_to_words() -> None:
    assert summary("a  b\nc") == "a b c"
    assert summary(" ".join("w" * 30), 3) == "w w w ..."


_NAME = st.text(string.ascii_letters + "_", min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(
    parts=st.lists(_NAME, min_size=1, max_size=3),
    tables=st.lists(_NAME, min_size=1, max_size=3, unique_by=str.casefold),
    column=_NAME,
    data=st.data(),
)
def test_keys_resolve_to_the_database_table_and_column_they_name(
    parts: list[str], tables: list[str], column: str, data: st.DataObject
) -> None:
    # databases `a`, `a.b`, `a.b.c`: every prefix of a dotted id is a database too
    ids = [".".join(parts[: i + 1]) for i in range(len(parts))]
    ids = list(dict.fromkeys(i.casefold() for i in ids))
    catalog = Catalog(
        tuple(Database(db_id, tuple(Table(t, (Column(column),)) for t in tables)) for db_id in ids)
    )
    db_id = data.draw(st.sampled_from(ids))
    table = data.draw(st.sampled_from(tables))
    with_column = data.draw(st.booleans())
    key = f"{db_id}.{table}" + (f".{column}" if with_column else "")
    found, unmatched = resolve_keys(catalog, {key: "text"})
    target = (db_id, table.casefold(), column.casefold() if with_column else "")
    # a key may read two ways when a longer id spells `db.table`: the longest id wins
    longer = [i for i in ids if len(i) > len(db_id) and key.casefold().startswith(i + ".")]
    if not longer:
        assert found == {target: "text"}
        assert unmatched == []
    assert len(found) + len(unmatched) == 1


def test_catalog_show_prints_descriptions(
    fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from schemarag.cli import main

    source = f"spider:{fixtures / 'docs' / 'bird'}"
    assert main(["catalog", "show", source]) == 0
    out = capsys.readouterr().out
    assert "    T-BIL: total bilirubin. Values: Commonsense evidence" in out
    assert main(["catalog", "show", source, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    lab = data["databases"][0]["tables"][1]
    assert lab["columns"][2]["description"].startswith("total bilirubin")
    assert len(data["problems"]) == 3


@settings(max_examples=80, deadline=None)
@given(
    content=st.one_of(
        st.binary(max_size=300),
        st.lists(st.lists(st.text(max_size=12), min_size=1, max_size=5), min_size=1, max_size=5)
        .map(
            lambda rows: (
                "original_column_name,column_description\n"
                + "\n".join(",".join(row) for row in rows)
            )
        )
        .map(str.encode),
    )
)
def test_any_description_csv_loads_or_is_reported_never_crashes(
    fixtures: Path, tmp_path_factory: pytest.TempPathFactory, content: bytes
) -> None:
    folder = tmp_path_factory.mktemp("bird")
    shutil.copytree(fixtures / "docs" / "bird", folder, dirs_exist_ok=True)
    (folder / "database" / "clinic" / "database_description" / "Patient.csv").write_bytes(content)
    catalog = load_spider(folder)
    patient = catalog.database("clinic").table("Patient")
    assert all("\n" not in c.description for c in patient.columns)
