"""Twin databases: found exactly as comparing every pair would, told apart by what differs."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from schemagraph import Catalog
from schemagraph.model import Column, Database, Table
from schemagraph.twins import TWIN_THRESHOLD, find_twins, jaccard, schema_names, twin_map


def db(db_id: str, tables: dict[str, list[str]]) -> Database:
    return Database(
        db_id,
        tuple(Table(name, tuple(Column(c, "text") for c in cols)) for name, cols in tables.items()),
    )


SHOP = {"orders": ["id", "customer_id", "total"], "customers": ["id", "name", "country"]}
SCHOOL = {"students": ["id", "name", "grade"], "teachers": ["id", "name", "subject"]}


def test_copies_and_edited_copies_are_twins_and_say_what_differs() -> None:
    edited = {**SHOP, "customers": ["id", "name", "country", "vip"]}
    catalog = Catalog(
        (
            db("shop_eu", SHOP),
            db("shop_us", SHOP),
            db("shop_v2", edited),
            db("school", SCHOOL),
            db("school_archive", {**SCHOOL, "old_marks": ["id", "mark"]}),
        )
    )
    groups = find_twins(catalog)
    assert [g.members for g in groups] == [("shop_eu", "shop_us", "shop_v2")]
    (shop,) = groups
    assert not shop.identical and shop.similarity == 6 / 7
    assert shop.only == {"shop_eu": (), "shop_us": (), "shop_v2": ("customers.vip",)}
    # a whole table of its own is named once, as the table
    archive = find_twins(catalog, threshold=0.7)[1]
    assert archive.members == ("school", "school_archive")
    assert archive.only["school_archive"] == ("old_marks",)
    assert twin_map(groups)["shop_us"] == {"shop_eu", "shop_us", "shop_v2"}


def test_identical_copies_are_identical() -> None:
    (group,) = find_twins([db("a", SHOP), db("b", SHOP)])
    assert group.identical and group.similarity == 1.0 and group.only == {"a": (), "b": ()}


_NAMES = st.sampled_from([f"t{i}" for i in range(4)])
_COLUMNS = st.lists(
    st.sampled_from([f"c{i}" for i in range(6)]), min_size=1, max_size=4, unique=True
)
_SCHEMAS = st.dictionaries(_NAMES, _COLUMNS, min_size=1, max_size=3)


def brute_force(databases: list[Database], threshold: float) -> set[frozenset[str]]:
    """Connected components of the Jaccard >= threshold relation, comparing every pair."""
    parent = {d.id: d.id for d in databases}

    def root(x: str) -> str:
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in itertools.combinations(databases, 2):
        if jaccard(schema_names(a), schema_names(b)) >= threshold:
            parent[root(b.id)] = root(a.id)
    groups: dict[str, set[str]] = {}
    for d in databases:
        groups.setdefault(root(d.id), set()).add(d.id)
    return {frozenset(g) for g in groups.values() if len(g) > 1}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_SCHEMAS, min_size=2, max_size=12),
    st.sampled_from([0.5, 0.6, TWIN_THRESHOLD, 0.9, 1.0]),
    st.randoms(use_true_random=False),
)
def test_groups_are_exactly_the_components_of_the_pairwise_relation(
    schemas: list[dict[str, list[str]]], threshold: float, rng: random.Random
) -> None:
    databases = [db(f"d{i}", schema) for i, schema in enumerate(schemas)]
    expected = brute_force(databases, threshold)
    rng.shuffle(databases)
    groups = find_twins(databases, threshold)
    assert {frozenset(g.members) for g in groups} == expected
    for group in groups:
        assert group.similarity >= threshold
        same = {schema_names(d) for d in databases if d.id in group.members}
        assert group.identical == (len(same) == 1)
