"""`check_sql`: queries verified against a schema-only catalog, in each engine's dialect.

The catalog is read by the real loaders from tests/fixtures/check: a BigQuery export (a sharded
`ga_sessions_*` family with RECORD and repeated fields, and a `ref` dataset), a Snowflake export
(lower-case columns that must be quoted, a VARIANT), and SQLite DDL. Nothing has a connection.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemagraph import Catalog, load_catalog
from schemagraph.model import Column, Database, Table
from schemagraph.sql.check import CheckResult, ProblemKind, check_sql

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "check"
GA = "`shop-analytics.web.ga_sessions_2017*`"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(
        [
            f"infoschema:{FIXTURES}/bigquery",
            f"infoschema:{FIXTURES}/snowflake",
            f"ddl[sqlite]:{FIXTURES}/sqlite",
        ]
    )


def check(catalog: Catalog, db_id: str, sql: str) -> CheckResult:
    return check_sql(catalog.database(db_id), sql, catalog)


def accepted(catalog: Catalog, db_id: str, sql: str) -> CheckResult:
    result = check(catalog, db_id, sql)
    assert result.ok, result.lines()
    assert result.problems == ()
    return result


def rejected(catalog: Catalog, db_id: str, sql: str, kind: ProblemKind, name: str) -> list[str]:
    """The suggestions of the one problem `sql` has, which is of `kind` about `name`."""
    result = check(catalog, db_id, sql)
    assert not result.ok
    assert [(p.kind, p.name) for p in result.problems] == [(kind, name)], result.lines()
    return list(result.problems[0].suggestions)


# --- BigQuery ---------------------------------------------------------------------------------


def test_bigquery_unnest_wildcard_and_table_suffix(catalog: Catalog) -> None:
    sql = f"""
        SELECT p.v2ProductName, SUM(p.productRevenue) AS revenue, h.page.pagePath
        FROM {GA} AS s, UNNEST(s.hits) AS h, UNNEST(h.product) AS p
        WHERE _TABLE_SUFFIX BETWEEN '0801' AND '0831' AND h.type = 'PAGE'
          AND totals.pageviews > 1 AND s.device.deviceCategory = 'mobile'
        GROUP BY 1, 3 ORDER BY revenue DESC"""
    result = accepted(catalog, "shop-analytics", sql)
    assert result.dialect == "bigquery"
    assert result.tables == ("web__ga_sessions_2017*",)


def test_bigquery_public_project_dataset_and_bare_names(catalog: Catalog) -> None:
    # public datasets are read under another project than the export's catalog
    accepted(
        catalog,
        "shop-analytics",
        "SELECT fullVisitorId FROM `bigquery-public-data.web.ga_sessions_20170801`",
    )
    accepted(catalog, "shop-analytics", "SELECT name FROM ref.products")
    accepted(catalog, "shop-analytics", "SELECT name FROM products")
    accepted(catalog, "shop-analytics", "SELECT name FROM ref__products")  # the catalog's id


def test_bigquery_cte_struct_path_and_unnest_through_the_cte(catalog: Catalog) -> None:
    sql = """
        WITH s AS (
          SELECT fullVisitorId, totals.pageviews AS views, hits
          FROM `shop-analytics.web.ga_sessions_20170801`
        ),
        top AS (SELECT * FROM s WHERE views > 3)
        SELECT top.fullVisitorId, views, h.page.pagePath, p.productRevenue
        FROM top, UNNEST(top.hits) AS h, UNNEST(h.product) AS p
        ORDER BY views"""
    accepted(catalog, "shop-analytics", sql)
    suggestions = rejected(
        catalog,
        "shop-analytics",
        sql.replace("h.page.pagePath", "h.page.pagePth"),
        ProblemKind.UNKNOWN_COLUMN,
        "h.page.pagePth",
    )
    assert suggestions[0] == "`h.page.pagePath`"
    rejected(
        catalog,
        "shop-analytics",
        sql.replace("top.fullVisitorId", "top.fullVisitor"),
        ProblemKind.UNKNOWN_COLUMN,
        "top.fullVisitor",
    )


def test_bigquery_scalar_arrays_offsets_correlation_and_script_variables(
    catalog: Catalog,
) -> None:
    accepted(
        catalog,
        "shop-analytics",
        "SELECT tag, i FROM `shop-analytics.web.ga_sessions_20170801`, UNNEST(tags) AS tag "
        "WITH OFFSET AS i",
    )
    accepted(
        catalog,
        "shop-analytics",
        "SELECT day FROM UNNEST(GENERATE_DATE_ARRAY('2017-08-01', '2017-08-31')) AS day",
    )
    accepted(
        catalog,
        "shop-analytics",
        "SELECT fullVisitorId, (SELECT COUNT(*) FROM UNNEST(hits) AS h WHERE h.type = 'PAGE') "
        "AS pages FROM `shop-analytics.web.ga_sessions_20170801` QUALIFY pages > 0",
    )
    accepted(
        catalog,
        "shop-analytics",
        "DECLARE first STRING DEFAULT '0801'; DECLARE last STRING DEFAULT '0831';\n"
        f"SELECT COUNT(*) FROM {GA} WHERE _TABLE_SUFFIX BETWEEN first AND last",
    )


def test_bigquery_scalar_elements_have_no_fields(catalog: Catalog) -> None:
    table = "`shop-analytics.web.ga_sessions_20170801`"
    rejected(
        catalog,
        "shop-analytics",
        f"SELECT fullVisitorId, tagg FROM {table}, UNNEST(tags) AS tag",
        ProblemKind.UNKNOWN_COLUMN,
        "tagg",
    )
    rejected(
        catalog,
        "shop-analytics",
        f"SELECT tag.x FROM {table}, UNNEST(tags) AS tag",
        ProblemKind.UNKNOWN_COLUMN,
        "tag.x",
    )
    rejected(
        catalog,
        "shop-analytics",
        f"SELECT fullVisitorId FROM {table} AS s WHERE EXISTS "
        "(SELECT 1 FROM UNNEST(SPLIT(s.date, '-')) AS part WHERE prt = '2017')",
        ProblemKind.UNKNOWN_COLUMN,
        "prt",
    )


def test_bigquery_names_the_nested_field_and_its_unnests(catalog: Catalog) -> None:
    suggestions = rejected(
        catalog,
        "shop-analytics",
        f"SELECT SUM(productRevenue) FROM {GA}",
        ProblemKind.UNKNOWN_COLUMN,
        "productRevenue",
    )
    assert suggestions[0] == (
        "`hits.product.productRevenue` through `UNNEST(hits)` then `UNNEST(hits.product)`"
    )
    result = check(catalog, "shop-analytics", f"SELECT productRevenue FROM {GA}")
    assert "no column `productRevenue` in `ga_sessions_2017*`" in result.problems[0].message


def test_bigquery_a_path_into_a_repeated_column_needs_unnest(catalog: Catalog) -> None:
    suggestions = rejected(
        catalog,
        "shop-analytics",
        f"SELECT hits.product.productRevenue FROM {GA}",
        ProblemKind.NOT_UNNESTED,
        "hits.product.productRevenue",
    )
    assert "UNNEST(hits.product)" in suggestions[0]
    # one level unnested, the next not
    rejected(
        catalog,
        "shop-analytics",
        f"SELECT h.product.productRevenue FROM {GA}, UNNEST(hits) AS h",
        ProblemKind.NOT_UNNESTED,
        "h.product.productRevenue",
    )


def test_bigquery_unknown_tables_families_and_suffixes(catalog: Catalog) -> None:
    suggestions = rejected(
        catalog,
        "shop-analytics",
        "SELECT 1 FROM `shop-analytics.web.ga_sesions_*`",
        ProblemKind.UNKNOWN_TABLE,
        "shop-analytics.web.ga_sesions_*",
    )
    assert suggestions == ["`shop-analytics.web.ga_sessions_*`"]
    rejected(
        catalog,
        "shop-analytics",
        "SELECT 1 FROM `shop-analytics.web.ga_sessions_2019*`",
        ProblemKind.UNKNOWN_TABLE,
        "shop-analytics.web.ga_sessions_2019*",
    )
    assert rejected(
        catalog,
        "shop-analytics",
        "SELECT name FROM ref.product",
        ProblemKind.UNKNOWN_TABLE,
        "ref.product",
    ) == ["`ref.products`"]
    rejected(
        catalog,
        "shop-analytics",
        "SELECT _TABLE_SUFFIX FROM `shop-analytics.web.ga_sessions_20170801`",
        ProblemKind.UNKNOWN_COLUMN,
        "_TABLE_SUFFIX",
    )


def test_a_column_moved_to_the_wrong_table_names_the_right_one(catalog: Catalog) -> None:
    sql = (
        "SELECT l.order_id, p.quantity FROM ref.order_lines AS l "
        "JOIN ref.products AS p ON p.product_id = l.product_id"
    )
    suggestions = rejected(catalog, "shop-analytics", sql, ProblemKind.UNKNOWN_COLUMN, "p.quantity")
    assert suggestions[0] == "`l.quantity`"


# --- Snowflake --------------------------------------------------------------------------------


def test_snowflake_qualified_names_flatten_and_quoted_columns(catalog: Catalog) -> None:
    result = accepted(
        catalog,
        "PATENTS_DEMO",
        """
        SELECT p."publication_number", c.value:"code"::STRING AS code, c.index, f.value
        FROM PATENTS_DEMO.PATENTS.PUBLICATIONS AS p,
             LATERAL FLATTEN(input => p."cpc") AS c,
             TABLE(FLATTEN(input => p."cpc")) f
        WHERE p."country_code" = 'US' AND family_id IS NOT NULL
        QUALIFY ROW_NUMBER() OVER (PARTITION BY code ORDER BY p."filing_date") = 1""",
    )
    assert result.dialect == "snowflake"
    assert result.tables == ("PUBLICATIONS",)
    # unquoted names are read in upper case, so either case of an upper-case column works
    accepted(catalog, "PATENTS_DEMO", 'SELECT citing_number, "category" FROM PATENTS.CITATIONS')
    # an export may rename the database (Spider 2.0's `_SF`): schema and table still name it
    accepted(catalog, "PATENTS_DEMO", "SELECT CITED_NUMBER FROM PATENTS.PATENTS.CITATIONS")


def test_snowflake_lower_case_columns_must_be_quoted(catalog: Catalog) -> None:
    suggestions = rejected(
        catalog,
        "PATENTS_DEMO",
        "SELECT publication_number FROM PATENTS_DEMO.PATENTS.PUBLICATIONS",
        ProblemKind.UNKNOWN_COLUMN,
        "publication_number",
    )
    assert suggestions == ['`"publication_number"`']
    rejected(
        catalog,
        "PATENTS_DEMO",
        'SELECT "CATEGORY" FROM PATENTS.CITATIONS',
        ProblemKind.UNKNOWN_COLUMN,
        "CATEGORY",
    )
    # suggestions are spelt as Snowflake needs them: quoted unless upper case
    assert rejected(
        catalog,
        "PATENTS_DEMO",
        'SELECT c."country_code" FROM PATENTS.PUBLICATIONS p '
        'JOIN PATENTS.CITATIONS c ON c.CITING_NUMBER = p."publication_number"',
        ProblemKind.UNKNOWN_COLUMN,
        "c.country_code",
    ) == ['`p."country_code"`']
    assert (
        rejected(
            catalog,
            "PATENTS_DEMO",
            "SELECT cited_numbr FROM PATENTS.CITATIONS",
            ProblemKind.UNKNOWN_COLUMN,
            "cited_numbr",
        )[0]
        == "`CITED_NUMBER`"
    )


def test_snowflake_flatten_has_six_columns(catalog: Catalog) -> None:
    suggestions = rejected(
        catalog,
        "PATENTS_DEMO",
        'SELECT c.valu FROM PATENTS.PUBLICATIONS AS p, LATERAL FLATTEN(input => p."cpc") AS c',
        ProblemKind.UNKNOWN_COLUMN,
        "c.valu",
    )
    assert suggestions == ["`c.value`"]


# --- SQLite and every dialect -----------------------------------------------------------------


def test_sqlite_joins_aliases_and_suggestions(catalog: Catalog) -> None:
    result = accepted(
        catalog,
        "shop",
        "SELECT c.name AS who, COUNT(*) AS n, rowid FROM customers AS c "
        "JOIN orders o ON o.customer_id = c.customer_id GROUP BY who HAVING n > 1 ORDER BY n",
    )
    assert (result.dialect, result.tables) == ("sqlite", ("customers", "orders"))
    assert rejected(
        catalog, "shop", "SELECT totl FROM orders", ProblemKind.UNKNOWN_COLUMN, "totl"
    ) == ["`total`"]
    assert rejected(
        catalog, "shop", "SELECT 1 FROM order_", ProblemKind.UNKNOWN_TABLE, "order_"
    ) == ["`orders`"]


def test_union_order_by_reads_the_output_names(catalog: Catalog) -> None:
    accepted(
        catalog,
        "shop",
        "SELECT name, city FROM customers UNION SELECT 'x' AS name, 'y' AS city ORDER BY city",
    )
    accepted(
        catalog,
        "shop",
        "WITH a AS (SELECT * FROM orders), b AS (SELECT * FROM orders) "
        "SELECT * FROM a UNION SELECT * FROM b ORDER BY total DESC",
    )


@pytest.mark.parametrize(
    ("sql", "rule"),
    [
        ("DELETE FROM orders", "write"),
        ("INSERT INTO orders (order_id) VALUES (1)", "write"),
        ("DROP TABLE orders", "write"),
        ("WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d", "write"),
        ("SELECT 1; SELECT 2", "multiple_statements"),
        ("PRAGMA user_version = 1", "pragma"),
        ("SELECT FROM WHERE (", "parse_error"),
        ("", "empty"),
    ],
)
def test_writes_and_non_queries_are_refused_as_run_sql_refuses_them(
    catalog: Catalog, sql: str, rule: str
) -> None:
    result = check(catalog, "shop", sql)
    assert not result.ok
    [problem] = result.problems
    assert (problem.kind, problem.name) == (ProblemKind.REFUSED, rule)


def test_a_bigquery_script_runs_nothing_but_declares(catalog: Catalog) -> None:
    result = check(catalog, "shop-analytics", "DECLARE x INT64; DELETE FROM ref.products")
    assert [(p.kind, p.name) for p in result.problems] == [(ProblemKind.REFUSED, "write")]


def test_a_catalog_built_by_hand_resolves_engine_names() -> None:
    orders = Table(
        "sales__orders",
        (Column("id", "INT64"), Column("amount", "NUMERIC")),
        engine_name=("acme-prod", "sales", "orders"),
    )
    db = Database("acme", (orders,), dialect="bigquery")
    assert check_sql(db, "SELECT amount FROM `acme-prod.sales.orders`").ok
    assert check_sql(db, "SELECT o.amount FROM sales.orders AS o").ok
    result = check_sql(db, "SELECT o.amont FROM `acme-prod.sales.orders` o")
    assert result.as_dict() == {
        "ok": False,
        "database": "acme",
        "dialect": "bigquery",
        "problems": [
            {
                "kind": "unknown_column",
                "message": "no column `amont` in `orders`; nearest: `o.amount`",
                "name": "o.amont",
                "suggestions": ["`o.amount`"],
            }
        ],
        "tables": ["sales__orders"],
    }
    # the table of another database of the catalog, fully qualified
    other = Database(
        "geo",
        (Table("zips", (Column("zip"),), engine_name=("geo", "census", "zips")),),
        dialect="bigquery",
    )
    catalog = Catalog((db, other))
    sql = "SELECT z.zip FROM `bigquery-public-data.census.zips` AS z"
    assert check_sql(db, sql, catalog).tables == ("geo.zips",)
    assert not check_sql(db, sql).ok


def test_a_line_per_problem() -> None:
    db = Database("s", (Table("t", (Column("a"),)),))
    assert check_sql(db, "SELECT a FROM t").lines() == ["ok: the query reads 1 table of s"]
    assert check_sql(db, "SELECT b, c FROM t").lines() == [
        "unknown_column: no column `b` in `t`",
        "unknown_column: no column `c` in `t`",
    ]


# --- never raises -----------------------------------------------------------------------------

WORDS = [
    "SELECT", "FROM", "WHERE", "JOIN", "ON", "AS", "WITH", "UNNEST", "LATERAL", "FLATTEN",
    "GROUP", "BY", "ORDER", "UNION", "(", ")", ",", ".", "*", "=", ";", "'x'", "1", "hits",
    "h", "p", "totals", "pageviews", "`shop-analytics.web.ga_sessions_*`", "ref.products",
    "name", "_TABLE_SUFFIX", "input", "=>", ":", '"cpc"', "value", "DELETE", "DECLARE",
]  # fmt: skip


@given(text=st.text(max_size=200))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_arbitrary_text_is_answered_never_raised(catalog: Catalog, text: str) -> None:
    for db_id in ("shop-analytics", "PATENTS_DEMO", "shop"):
        result = check(catalog, db_id, text)
        assert result.ok == (not result.problems)
        if not any(w in text.upper() for w in ("SELECT", "VALUES", "FROM")):
            assert not result.ok


@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=30))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_sql_like_token_soup_is_answered_never_raised(catalog: Catalog, words: list[str]) -> None:
    text = " ".join(words)
    for db_id in ("shop-analytics", "PATENTS_DEMO", "shop"):
        result = check(catalog, db_id, text)
        assert result.ok == (not result.problems)
        assert all(p.message for p in result.problems)
