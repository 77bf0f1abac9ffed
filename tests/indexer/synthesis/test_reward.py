"""The ICRL reward (paper eq. 1-2, A.3): worked examples and properties."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.synthesis.reward import BUCKETS, marginal_gain, reward, reward_of_counts


def test_buckets_hold_the_papers_keyword_scores() -> None:
    scores = {b.name: dict(b.scores) for b in BUCKETS}
    assert scores["retrieval"]["INNER JOIN"] == 3
    assert scores["retrieval"]["GROUP BY"] == 3
    assert scores["retrieval"]["LIMIT"] == 1
    assert scores["modification"] == {"INSERT": 2, "UPDATE": 3, "DELETE": 4}
    assert scores["conditional"]["CASE"] == 3
    assert scores["conditional"]["END"] == 1
    assert scores["aggregation"] == {
        "AVG": 3,
        "SUM": 3,
        "COUNT": 3,
        "MIN": 3,
        "MAX": 3,
        "ASC": 1,
        "DESC": 1,
    }


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        # B1: SELECT 1 + FROM 1, one bucket holding every keyword: R = 2 * 1
        ("SELECT name FROM singer", 2.0),
        # B1 f=4 (SELECT, FROM, WHERE), c=3/4; B4 f=3 (COUNT), c=1/4
        ("SELECT COUNT(*) FROM Dogs WHERE weight > 10", 4 * 3 / 4 + 3 * 1 / 4),
        # B1 f=12 over 7 keywords (SELECT FROM JOIN ON GROUP BY ORDER BY LIMIT); B4 f=4 (COUNT DESC)
        (
            "SELECT T2.Name FROM concert AS T1 JOIN stadium AS T2 ON T1.Stadium_ID = T2.Stadium_ID"
            " GROUP BY T1.Stadium_ID ORDER BY COUNT(*) DESC LIMIT 1",
            12 * 7 / 9 + 4 * 2 / 9,
        ),
        # NOT LIKE and IS NOT NULL each carry a NOT: B3 = LIKE 2 + NOT 1 + NOT 1 + AND 1
        ("SELECT a FROM t WHERE a NOT LIKE '%x%' AND b IS NOT NULL", 4 * 3 / 7 + 5 * 4 / 7),
        # LEFT OUTER JOIN counts JOIN and LEFT JOIN; CASE counts CASE, WHEN, THEN, ELSE, END
        (
            "SELECT CASE WHEN a > 1 THEN 'x' ELSE 'y' END FROM t LEFT OUTER JOIN u ON t.id = u.id",
            9 * 5 / 10 + 10 * 5 / 10,
        ),
        # a nested query counts its own SELECT and FROM
        (
            "SELECT name FROM singer WHERE age > (SELECT AVG(age) FROM singer)",
            6 * 5 / 6 + 3 * 1 / 6,
        ),
        # COUNT(DISTINCT x) counts DISTINCT
        ("SELECT COUNT(DISTINCT country) FROM singer", 4 * 3 / 4 + 3 * 1 / 4),
        # data modification: DELETE 4 and WHERE 2, one keyword each
        ("DELETE FROM t WHERE a = 1", 4 * 1 / 2 + 2 * 1 / 2),
        # several statements add up
        ("SELECT a FROM t; SELECT b FROM u", 4.0),
    ],
)
def test_worked_examples(sql: str, expected: float) -> None:
    assert reward(sql).total == pytest.approx(expected)


def test_a_column_named_like_a_keyword_is_not_a_keyword() -> None:
    scored = reward(
        'SELECT "select", order_date, group_id, "group" FROM "order" WHERE note = \'GROUP BY x\''
    )
    assert scored.count("GROUP BY") == 0
    assert scored.count("ORDER BY") == 0
    assert scored.count("SELECT") == 1
    assert scored.total == pytest.approx(4 * 3 / 3)  # SELECT, FROM, WHERE


def test_explicit_asc_counts_and_the_default_order_does_not() -> None:
    explicit = reward("SELECT a FROM t ORDER BY a ASC")
    implicit = reward("SELECT a FROM t ORDER BY a")
    assert explicit.count("ASC") == 1
    assert implicit.count("ASC") == 0
    assert explicit.total == pytest.approx(4 * 3 / 4 + 1 / 4)
    assert implicit.total == pytest.approx(4.0)


def test_a_comma_join_counts_as_a_join() -> None:
    assert reward("SELECT a FROM t1, t2").count("JOIN") == 1


def test_bucket_breakdown_gives_frequency_and_share() -> None:
    scored = reward("SELECT COUNT(*) FROM Dogs WHERE weight > 10")
    retrieval, aggregation = scored.bucket("retrieval"), scored.bucket("aggregation")
    assert (retrieval.count, retrieval.frequency, retrieval.share) == (3, 4.0, 0.75)
    assert (aggregation.count, aggregation.frequency, aggregation.share) == (1, 3.0, 0.25)
    assert scored.bucket("modification").share == 0.0
    assert scored.as_dict()["buckets"]["retrieval"]["frequency"] == 4.0  # type: ignore[index]
    with pytest.raises(KeyError, match="no bucket"):
        scored.bucket("joins")


def test_unparseable_sql_scores_zero_with_an_error() -> None:
    scored = reward("SELECT FROM WHERE ((")
    assert scored.total == 0.0
    assert scored.error is not None and "cannot parse" in scored.error


def test_an_unknown_dialect_is_an_error() -> None:
    with pytest.raises(ValueError):
        reward("SELECT 1", dialect="no-such-dialect")


def test_adding_a_keyword_to_a_sparse_bucket_can_lower_the_total() -> None:
    """R is not monotone: COUNT dilutes a query whose keywords all sit in one bucket."""
    base = reward("SELECT name FROM t WHERE a = 1")
    assert marginal_gain(base, ["COUNT"]) < 0
    assert marginal_gain(base, ["GROUP BY"]) > 0
    assert reward_of_counts(base.counts + Counter({"COUNT": 1})).total == pytest.approx(
        reward("SELECT COUNT(name) FROM t WHERE a = 1").total
    )


# --- properties over generated queries -------------------------------------------------------

_TABLES = st.sampled_from(["singer", "concert", '"order"', '"select"', "t_group"])
_COLUMNS = st.sampled_from(["name", "age", "order_date", '"where"', "group_id", "x"])


@st.composite
def _conditions(draw: st.DrawFn) -> str:
    column = draw(_COLUMNS)
    kind = draw(st.sampled_from(["cmp", "like", "not_like", "in", "between", "null", "sub"]))
    value = draw(st.integers(-5, 500))
    return {
        "cmp": f"{column} {draw(st.sampled_from(['=', '<>', '>', '<=']))} {value}",
        "like": f"{column} LIKE '%{value}%'",
        "not_like": f"{column} NOT LIKE 'a%'",
        "in": f"{column} IN ({value}, {value + 1})",
        "between": f"{column} BETWEEN {value} AND {value + 10}",
        "null": f"{column} IS NOT NULL",
        "sub": f"{column} > (SELECT AVG({column}) FROM {draw(_TABLES)})",
    }[kind]


@st.composite
def _queries(draw: st.DrawFn) -> dict[str, str]:
    """Parts of a SELECT; `compose` puts them together with or without WHERE / GROUP BY."""
    column = draw(_COLUMNS)
    item = draw(st.sampled_from([column, "COUNT(*)", f"AVG({column})", f"MAX({column})", "*"]))
    join = draw(st.sampled_from(["", " JOIN u ON a.id = u.id", " LEFT JOIN u ON a.x = u.x", ", v"]))
    conditions = draw(st.lists(_conditions(), min_size=1, max_size=3))
    connector = draw(st.sampled_from([" AND ", " OR "]))
    order = draw(st.sampled_from(["", f" ORDER BY {column}", f" ORDER BY {column} DESC"]))
    return {
        "select": f"SELECT {'DISTINCT ' if draw(st.booleans()) else ''}{item}",
        "from": f" FROM {draw(_TABLES)} AS a{join}",
        "where": " WHERE " + connector.join(conditions),
        "group": f" GROUP BY {column}" + (" HAVING COUNT(*) > 1" if draw(st.booleans()) else ""),
        "order": order + (" LIMIT 3" if order and draw(st.booleans()) else ""),
    }


def _compose(parts: dict[str, str], *, where: bool, group: bool) -> str:
    return (
        parts["select"]
        + parts["from"]
        + (parts["where"] if where else "")
        + (parts["group"] if group else "")
        + parts["order"]
    )


@settings(max_examples=150, deadline=None)
@given(_queries(), st.booleans(), st.booleans())
def test_reward_is_non_negative_and_deterministic(
    parts: dict[str, str], where: bool, group: bool
) -> None:
    sql = _compose(parts, where=where, group=group)
    first, second = reward(sql), reward(sql)
    assert first.error is None, sql
    assert first.total >= 0
    assert first == second
    assert sum(b.share for b in first.buckets) == pytest.approx(1.0)


@settings(max_examples=150, deadline=None)
@given(_queries(), st.booleans())
def test_adding_where_or_group_by_never_lowers_a_bucket(parts: dict[str, str], other: bool) -> None:
    base = reward(_compose(parts, where=False, group=other))
    with_where = reward(_compose(parts, where=True, group=other))
    base_g = reward(_compose(parts, where=other, group=False))
    with_group = reward(_compose(parts, where=other, group=True))
    for before, after in ((base, with_where), (base_g, with_group)):
        for old, new in zip(before.buckets, after.buckets, strict=True):
            assert new.count >= old.count
            assert new.frequency >= old.frequency
    assert with_where.count("WHERE") == base.count("WHERE") + 1
    assert with_group.count("GROUP BY") == base_g.count("GROUP BY") + 1


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_reward_never_raises_on_arbitrary_text(text: str) -> None:
    scored = reward(text)
    assert scored.total >= 0
    assert (scored.error is None) or scored.total == 0.0
