"""Column families of wide tables (`schemagraph.families.column_families`): the table document
names each family once after the other columns, so that a table's own columns are not drowned
by its repeated measures."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from schemagraph import Column, Database, Table
from schemagraph.families import MIN_MEMBERS, WIDE_TABLE, column_families
from store.table_documents import table_document

OWN = ("store_name", "city", "region", "manager")
PERIODS = [f"m{i}_revenue" for i in range(1, 53)] + [f"w{i}_visits" for i in range(1, 30)]


def _store(columns: list[str], key: str = "store_id") -> Table:
    return Table("store", (Column(key, "number", True), *(Column(c, "number") for c in columns)))


# the store's own columns scattered among the period measures, as in real wide tables
WIDE = _store(
    [
        *PERIODS[:20],
        "store_name",
        *PERIODS[20:50],
        "city",
        "region",
        *PERIODS[50:],
        "manager",
        "udf_1",
        "udf_2",
    ]
)


def test_a_wide_tables_families_are_found_and_its_own_columns_kept_in_order() -> None:
    split = column_families(WIDE)
    assert [c.name for c in split.singles] == ["store_id", *OWN, "udf_1", "udf_2"]
    assert [(f[0].name, f[-1].name, len(f)) for f in split.families] == [
        ("m1_revenue", "m52_revenue", 52),
        ("w1_visits", "w29_visits", 29),
    ]


def test_a_narrow_table_has_no_families() -> None:
    narrow = _store([f"meter_{i}00" for i in range(1, WIDE_TABLE)])
    assert len(narrow.columns) == WIDE_TABLE
    split = column_families(narrow)
    assert split.families == () and split.singles == narrow.columns


@given(
    st.lists(
        st.from_regex(r"[a-c]{1,2}(_?[0-9]{1,2})?(_[a-c])?", fullmatch=True),
        min_size=WIDE_TABLE + 1,
        max_size=90,
        unique_by=str.casefold,
    )
)
def test_every_column_is_single_or_in_exactly_one_family(names: list[str]) -> None:
    table = Table("t", tuple(Column(n, "number") for n in names))
    split = column_families(table)
    members = [c.name for f in split.families for c in f]
    assert sorted([c.name for c in split.singles] + members) == sorted(names)
    assert [c.name for c in split.singles] == [n for n in names if n not in members]
    for family in split.families:
        assert len(family) >= MIN_MEMBERS
        assert len({re.sub(r"\d+", "#", c.name.casefold()) for c in family}) == 1
        numbers = [[int(n) for n in re.findall(r"\d+", c.name)] for c in family]
        assert numbers == sorted(numbers)


def test_the_document_of_a_wide_table_names_its_own_columns_first_and_each_family_once() -> None:
    db = Database("shop", (WIDE,))
    doc = table_document(db, WIDE)
    assert doc["text"] == (
        "store: store id, store name, city, region, manager, udf 1, udf 2, "
        "m1 revenue to m52 revenue, w1 visits to w29 visits"
    )
    # BM25 still reads every column, and the payload lists them all
    assert all(c.replace("_", " ") in doc["lexical"] for c in PERIODS)
    assert doc["columns"] == [c.name for c in WIDE.columns]


def test_the_document_of_a_narrow_table_is_unchanged() -> None:
    table = _store(["store_name", "line_1", "line_2", "line_3"])
    doc = table_document(Database("shop", (table,)), table)
    assert doc["text"] == doc["lexical"] == "store: store id, store name, line 1, line 2, line 3"


def test_a_warehouse_table_exported_bare_is_read_with_its_dataset() -> None:
    # an export of one BigQuery dataset names the table `badges`; its document, and the name
    # the retriever's name signals read, say `stackoverflow badges` as tables.json's id does
    from retriever.tables import TableEntry

    badges = Table(
        "badges",
        (Column("id", "INT64"), Column("name", "STRING")),
        engine_name=("bigquery-public-data", "stackoverflow", "badges"),
    )
    doc = table_document(Database("stackoverflow", (badges,)), badges)
    assert doc["table"] == "badges" and doc["text"].startswith("stackoverflow badges: ")
    entry = TableEntry.from_payload(doc)
    assert entry.table == "badges" and entry.word_name == "stackoverflow__badges"
    plain = Table("badges", (Column("id", "integer"),))
    assert TableEntry.from_payload(table_document(Database("s", (plain,)), plain)).word_name == (
        "badges"
    )
