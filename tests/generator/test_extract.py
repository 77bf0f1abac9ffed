"""SQL extraction from model replies: fences, JSON, `SQL:` lines, prose; never raises."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.extract import extract_sql


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("```sql\nSELECT 1;\n```", "SELECT 1"),
        ("```SQL\nSELECT a FROM t\n```\nThis selects a.", "SELECT a FROM t"),
        (
            "Sure!\n```\nWITH x AS (SELECT 1) SELECT * FROM x\n```",
            "WITH x AS (SELECT 1) SELECT * FROM x",
        ),
        ("~~~sql\nSELECT 2\n~~~", "SELECT 2"),
        ('{"sql": "SELECT name FROM singer"}', "SELECT name FROM singer"),
        ('```json\n{"query": "SELECT 3"}\n```', "SELECT 3"),
        ("SQL: select name from singer\n\nIt lists names.", "select name from singer"),
        (
            "Here you go: SELECT a FROM t WHERE b = 'x;y'; hope it helps",
            "SELECT a FROM t WHERE b = 'x;y'",
        ),
        ("With pleasure! The query is SELECT count(*) FROM singer", "SELECT count(*) FROM singer"),
        ("```python\nprint(1)\n```\n```sql\nSELECT 4\n```", "SELECT 4"),
        ("```sql\n-- count them\nSELECT count(*) FROM t\n```", "SELECT count(*) FROM t"),
    ],
)
def test_extracts_sql_from_common_reply_shapes(reply: str, expected: str) -> None:
    assert extract_sql(reply) == expected


# Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, llamacpp:, greedy) explaining its query before the
# ```sql block; cut at the token limit before the block, the prose is not a query.
QWEN_REASONING = (
    "Let's examine the database and the question.\n\nThe task is to retrieve the names and "
    "countries of singers who are older than 30, ordered by their age in descending order. To "
    "achieve this, we need to select the `Name` and `Country` columns from the `singer` table. "
    "The `WHERE` clause is used to filter the rows where the `Age` column is greater than 30. "
    "The `ORDER BY` clause is used to sort the results by the `Age` column in descending order."
    "\n\nAccordingly, the final SQL query is:\n\n```sql\nSELECT Name, Country FROM singer "
    "WHERE Age > 30 ORDER BY Age DESC\n```"
)


def test_a_small_local_models_reasoning_gives_its_query_and_never_its_prose() -> None:
    cut = QWEN_REASONING.index("\n\nAccordingly")

    assert (
        extract_sql(QWEN_REASONING)
        == "SELECT Name, Country FROM singer WHERE Age > 30 ORDER BY Age DESC"
    )
    assert extract_sql(QWEN_REASONING[:cut]) is None
    assert extract_sql("we select the name from the singer table") is None
    assert extract_sql("select name from singer where age > 30") == (
        "select name from singer where age > 30"
    )


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("DROP TABLE singer;", "DROP TABLE singer"),
        ("```sql\nDELETE FROM singer\n```", "DELETE FROM singer"),
        ("Sure.\nSQL: PRAGMA table_info(singer)\n\nDone.", "PRAGMA table_info(singer)"),
        ("VACUUM", "VACUUM"),
    ],
)
def test_a_statement_that_is_not_a_query_comes_back_for_the_guard_to_refuse(
    reply: str, expected: str
) -> None:
    assert extract_sql(reply) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   ",
        "I cannot answer that.",
        "I will select the right rows for you.",
        "```\n\n```",
        "True",
        "We should drop the table and update it.",
        "Update: nothing to change.",
    ],
)
def test_replies_without_a_query_give_none(reply: str) -> None:
    assert extract_sql(reply) is None


_IDENT = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,8}", fullmatch=True).filter(
    lambda s: s.upper() not in {"SELECT", "WITH", "FROM", "WHERE", "AS", "SQL", "QUERY", "ANSWER"}
)
_VALUE = st.one_of(
    st.integers(-1000, 1000).map(str),
    st.text(
        st.characters(whitelist_categories=("L", "N", "Zs"), whitelist_characters=";-*/"),
        max_size=12,
    ).map(lambda s: "'" + s.replace("'", "") + "'"),
)


@st.composite
def queries(draw: st.DrawFn) -> str:
    columns = draw(st.lists(_IDENT, min_size=1, max_size=3))
    sql = f"SELECT {', '.join(columns)} FROM {draw(_IDENT)}"
    if draw(st.booleans()):
        sql += f" WHERE {draw(_IDENT)} = {draw(_VALUE)}"
    if draw(st.booleans()):
        sql += f" ORDER BY {columns[0]} {draw(st.sampled_from(['ASC', 'DESC']))}"
    return sql


_WRAPPERS = (
    "```sql\n{sql}\n```",
    "```sql\n{sql};\n```",
    "Here is the query:\n\n```\n{sql}\n```\n\nIt returns what you asked for.",
    "{sql}",
    "{sql};",
    "SQL: {sql}",
    "The answer is:\n{sql};\nThis works because of the filter.",
    "{json}",
    "```json\n{json}\n```",
)


@settings(max_examples=200, deadline=None)
@given(queries(), st.sampled_from(_WRAPPERS))
def test_any_wrapped_query_comes_back_unchanged(sql: str, wrapper: str) -> None:
    reply = wrapper.format(sql=sql, json=json.dumps({"sql": sql}))
    assert extract_sql(reply) == sql


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_never_raises_and_returns_a_stripped_query_or_none(reply: str) -> None:
    found = extract_sql(reply)
    assert found is None or (found == found.strip() and found and not found.endswith(";"))
