"""Column roles on a warehouse export, where types are lossy (epoch timestamps and dates typed
as numbers) and no key is declared: a point in time is never averaged, and no question groups
a table's rows by the table's own id."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.synthesis.pairs import SynthesisRequest
from indexer.synthesis.profiles import ColumnInfo, profile_traversal
from indexer.synthesis.templates import TemplateSynthesizer
from schemagraph import Column, Database, Table, Traversal

ORDERS = Table(
    "THELOOK__ORDERS",
    (
        Column("order_id", "number"),
        Column("user_id", "number"),
        Column("status", "text"),
        Column("created_at", "number"),
        Column("visitStartTime", "number"),
        Column("event_timestamp", "number"),
        Column("aggregate_travel_time_to_work", "number"),
        Column("num_of_item", "number"),
        Column("sale_price", "number"),
    ),
)
DB = Database("THELOOK", (ORDERS,))
TRAVERSAL = Traversal("THELOOK", ("THELOOK__ORDERS",), "enumerated")
POINTS_IN_TIME = ("created_at", "visitStartTime", "event_timestamp")


def _roles() -> dict[str, ColumnInfo]:
    return {c.name: c for c in profile_traversal(DB, TRAVERSAL, None).tables[0].columns}


def test_a_name_ending_in_a_time_word_is_a_point_in_time_whatever_its_type() -> None:
    roles = _roles()
    for name in POINTS_IN_TIME:
        column = roles[name]
        assert column.temporal and not column.numeric and not column.measure, name
    # a time word that is not the name's head is a quantity
    assert roles["aggregate_travel_time_to_work"].measure
    assert roles["sale_price"].measure and not roles["sale_price"].temporal


def test_own_id_is_the_id_named_after_the_table() -> None:
    roles = _roles()
    assert roles["order_id"].own_id and roles["order_id"].key
    assert roles["user_id"].key and not roles["user_id"].own_id


def test_a_declared_primary_key_is_the_only_own_id() -> None:
    declared = Table("orders", (Column("order_no", "INTEGER", True), Column("order_id", "INTEGER")))
    db = Database("shop", (declared,))
    info = profile_traversal(db, Traversal("shop", ("orders",), "enumerated"), None)
    roles = {c.name: c.own_id for c in info.tables[0].columns}
    assert roles == {"order_no": True, "order_id": False}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_no_question_averages_a_point_in_time_or_groups_by_the_own_id(seed: int) -> None:
    pairs = TemplateSynthesizer().synthesize(SynthesisRequest(DB, TRAVERSAL, None, count=6, seed=seed))
    assert pairs
    for pair in pairs:
        for name in POINTS_IN_TIME:
            assert not re.search(rf"(AVG|SUM)\({name}\)", pair.sql), pair.sql
        assert "GROUP BY order_id" not in pair.sql, pair.sql
