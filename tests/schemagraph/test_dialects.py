"""`schemagraph.dialects`: tables and nested fields as each engine writes them."""

from __future__ import annotations

import sqlglot
from hypothesis import given
from hypothesis import strategies as st

from schemagraph import Column, Database, Table
from schemagraph.dialects import (
    family_sql,
    quote_part,
    repeated_route,
    table_sql,
    unnest_clause,
)

NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,11}", fullmatch=True)


@given(st.lists(st.tuples(NAME, st.booleans()), min_size=1, max_size=4), NAME)
def test_a_nested_field_is_reached_through_every_repeated_record_on_its_path(
    path: list[tuple[str, bool]], leaf: str
) -> None:
    columns, prefix = [], ""
    for name, repeated in path:
        prefix = f"{prefix}.{name}" if prefix else name
        columns.append(Column(prefix, "ARRAY<STRUCT>" if repeated else "STRUCT"))
    field = f"{prefix}.{leaf}"
    table = Table("t", (*columns, Column(field, "INT64")), engine_name=("p", "d", "t"))
    joins, read = unnest_clause(table, field)
    route = repeated_route(table, field)
    assert len(route) == sum(repeated for _, repeated in path)
    assert joins.count("UNNEST(") == len(route)
    assert read.endswith(leaf)
    sql = f"SELECT {read} FROM {table_sql(Database('p', (table,), dialect='bigquery'), table)}"
    sqlglot.parse_one(sql + (f", {joins}" if joins else ""), read="bigquery")


@given(NAME, st.sampled_from(["bigquery", "snowflake", "postgres", "sqlite", "duckdb"]))
def test_a_quoted_identifier_reads_back_as_itself(name: str, dialect: str) -> None:
    quoted = quote_part(name, dialect)
    parsed = sqlglot.parse_one(f"SELECT {quoted} FROM x", read=dialect)
    column = parsed.expressions[0]
    read_back = column.name
    if dialect == "snowflake" and quoted == name:
        assert name.isupper() or not any(c.isalpha() for c in name)
    else:
        assert read_back == name


def test_tables_and_families_by_engine() -> None:
    shard = Table(
        "web__ga_sessions_20170801", (), engine_name=("acme", "web", "ga_sessions_20170801")
    )
    bq = Database("acme", (shard,), dialect="bigquery")
    assert table_sql(bq, shard) == "`acme.web.ga_sessions_20170801`"
    assert family_sql(bq, shard, "20170801") == "`acme.web.ga_sessions_*`"
    sf = Database(
        "SHOP",
        (Table("S__orders", (), engine_name=("SHOP", "S", "orders")),),
        "",
        dialect="snowflake",
    )
    assert table_sql(sf, sf.tables[0]) == 'SHOP.S."orders"'
    assert family_sql(sf, sf.tables[0], "s") == ""
    assert table_sql(Database("x", (Table("my table", ()),)), "my table") == '"my table"'


def test_sql_is_written_in_the_engines_dialect_only_where_nothing_runs_it(tmp_path) -> None:
    from schemagraph.dialects import sql_dialect

    export = Database("bq", (), dialect="bigquery")
    live = Database("pg", (), url="postgresql://localhost/db", dialect="postgres")
    copied = Database("lite", (), path=tmp_path / "x.sqlite", dialect="duckdb")
    assert sql_dialect(export) == "bigquery"
    assert sql_dialect(live) == sql_dialect(copied) == "sqlite"  # translated as it runs
    assert sql_dialect(Database("plain", ())) == "sqlite"
