"""Twins and containment in an estate: mirrors across engine conventions, extended copies, and
reference tables that many databases carry (which make no twins)."""

from __future__ import annotations

import itertools
import os
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemagraph import Catalog, load_catalog
from schemagraph.containment import (
    CONTAINS,
    catalog_schemas,
    containment,
    find_relations,
    rarity_weights,
    relations_of,
    similarity,
    table_key,
)
from schemagraph.model import Column, Database, Table
from schemagraph.twins import TWIN_THRESHOLD, find_twins

#: beside the repository, as `tests/conftest.py` finds Spider (set SCHEMARAG_SPIDER2_LITE_DIR)
SPIDER2_LITE = Path(
    os.environ.get(
        "SCHEMARAG_SPIDER2_LITE_DIR",
        Path(__file__).resolve().parents[2].parent / "shared/data/spider2-lite",
    )
)


def db(db_id: str, tables: dict[str, list[str]]) -> Database:
    return Database(
        db_id,
        tuple(Table(name, tuple(Column(c, "text") for c in cols)) for name, cols in tables.items()),
    )


AUSTIN = {
    "austin_311__311_service_requests": ["unique_key", "complaint_type", "city"],
    "austin_bikeshare__bikeshare_trips": ["trip_id", "duration_minutes", "start_station_id"],
    "austin_crime__crime": ["unique_key", "primary_type", "year"],
}
#: Snowflake's copy: upper case, and `_` before a name part that starts with a digit
AUSTIN_SF = {
    "AUSTIN_311___311_SERVICE_REQUESTS": ["UNIQUE_KEY", "COMPLAINT_TYPE", "CITY"],
    "AUSTIN_BIKESHARE__BIKESHARE_TRIPS": ["TRIP_ID", "DURATION_MINUTES", "START_STATION_ID"],
    "AUSTIN_CRIME__CRIME": ["UNIQUE_KEY", "PRIMARY_TYPE", "YEAR"],
}
STACKOVERFLOW = {
    "stackoverflow__posts_questions": ["id", "title", "body", "tags"],
    "stackoverflow__users": ["id", "display_name", "reputation"],
    "stackoverflow__badges": ["id", "name", "user_id"],
}
HACKERNEWS = {
    "HACKERNEWS__STORIES": ["ID", "TITLE", "SCORE"],
    "HACKERNEWS__COMMENTS": ["ID", "TEXT", "PARENT"],
}
#: public reference tables that many databases of an estate carry
BOUNDARIES = {
    f"geo_us_boundaries__{name}": ["geo_id", "name", "geom"]
    for name in (
        "states",
        "counties",
        "zip_codes",
        "cbsa",
        "csa",
        "railways",
        "urban_areas",
        "coastline",
        "national_outline",
        "adjacent_states",
    )
}


def upper_sf(tables: dict[str, list[str]]) -> dict[str, list[str]]:
    """`tables` as Snowflake names them."""
    return {
        "__".join(("_" + p if p[:1].isdigit() else p) for p in name.split("__")).upper(): [
            c.upper() for c in cols
        ]
        for name, cols in tables.items()
    }


def test_table_keys_fold_case_and_snowflake_underscores() -> None:
    assert table_key("AUSTIN_311___311_SERVICE_REQUESTS") == "austin_311__311_service_requests"
    assert table_key("_1000_GENOMES__PEDIGREE") == "1000_genomes__pedigree"
    assert table_key("Singer") == "singer"
    assert table_key("sqlite_sequence") == "sqlite_sequence"
    assert upper_sf(AUSTIN) == AUSTIN_SF


def test_a_mirror_in_another_engine_is_an_identical_twin() -> None:
    relations = find_relations([db("AUSTIN", AUSTIN), db("AUSTIN_SF", AUSTIN_SF)])
    (group,) = relations.twins
    assert group.members == ("AUSTIN", "AUSTIN_SF") and group.identical
    assert relations.containment == []  # a mirror adds nothing: twins say it
    # the plain measure over names as written sees nothing in common
    assert find_twins([db("AUSTIN", AUSTIN), db("AUSTIN_SF", AUSTIN_SF)]) == []


def test_an_extended_copy_contains_its_base_and_says_what_it_adds() -> None:
    catalog = Catalog(
        (
            db("stackoverflow", STACKOVERFLOW),
            db("STACKOVERFLOW_PLUS_SF", {**upper_sf(STACKOVERFLOW), **HACKERNEWS}),
            db("AUSTIN", AUSTIN),
        )
    )
    relations = find_relations(catalog)
    assert relations.twins == []
    (group,) = relations.containment
    assert group.base == "stackoverflow" and group.copies == ("STACKOVERFLOW_PLUS_SF",)
    assert group.adds == {"STACKOVERFLOW_PLUS_SF": ("HACKERNEWS__COMMENTS", "HACKERNEWS__STORIES")}
    assert group.as_dict() == {
        "base": "stackoverflow",
        "copies": ["STACKOVERFLOW_PLUS_SF"],
        "adds": {"STACKOVERFLOW_PLUS_SF": ["HACKERNEWS__COMMENTS", "HACKERNEWS__STORIES"]},
    }
    assert relations.related["stackoverflow"] == {"stackoverflow_plus_sf"}


def test_an_export_of_one_dataset_is_contained_by_its_copy_with_nested_fields_left_out() -> None:
    # the BigQuery export of one dataset names its tables bare (`badges`) and lists the
    # fields of a RECORD (`owner.id` ...); Snowflake's copy names them `STACKOVERFLOW__BADGES`
    # and keeps the record as one VARIANT column
    def table(name: str, engine: tuple[str, ...], columns: list[str]) -> Table:
        return Table(name, tuple(Column(c, "STRING") for c in columns), engine_name=engine)

    fields = ["owner", *(f"owner.f{i}" for i in range(20))]
    base = Database(
        "stackoverflow",
        tuple(
            table(t, ("bigquery-public-data", "stackoverflow", t), [*cols, *fields])
            for t, cols in (("badges", ["id", "name"]), ("users", ["id", "display_name"]))
        ),
    )
    plus = Database(
        "STACKOVERFLOW_PLUS",
        tuple(
            table(f"{ds.upper()}__{t.upper()}", ("STACKOVERFLOW_PLUS", ds.upper(), t.upper()), c)
            for ds, t, c in (
                ("stackoverflow", "badges", ["ID", "NAME", "OWNER"]),
                ("stackoverflow", "users", ["ID", "DISPLAY_NAME", "OWNER"]),
                ("hackernews", "comments", ["ID", "TEXT"]),
            )
        ),
    )
    assert catalog_schemas([base])["stackoverflow"]["stackoverflow__badges"] == {
        "id",
        "name",
        "owner",
    }
    (group,) = find_relations(Catalog((base, plus))).containment
    assert group.base == "stackoverflow" and group.copies == ("STACKOVERFLOW_PLUS",)
    assert group.adds == {"STACKOVERFLOW_PLUS": ("HACKERNEWS__COMMENTS",)}


def test_column_drift_is_tolerated_up_to_a_quarter_of_a_table() -> None:
    wide = {"t": ["a", "b", "c", "d", "e"], "u": ["x", "y"]}
    drifted = {"t": ["a", "b", "c", "d"], "u": ["x", "y"], "extra": ["z"]}
    lost = {"t": ["a", "b", "c"], "u": ["x", "y"], "extra": ["z"]}
    relations = find_relations([db("base", wide), db("drifted", drifted), db("lost", lost)])
    assert [(g.base, g.copies) for g in relations.containment] == [("base", ("drifted",))]


def test_reference_tables_many_databases_carry_make_no_twins() -> None:
    own = ["fec", "covid", "sdoh", "census", "noaa", "bls", "iowa", "nhtsa"]
    catalog = [db(name, {**BOUNDARIES, f"{name}__facts": ["id", "value", "year"]}) for name in own]
    # the plain measure joins them all: 30 of 33 table.column names are the same
    (plain,) = find_twins(catalog)
    assert len(plain.members) == len(own) and plain.similarity > TWIN_THRESHOLD
    relations = find_relations(catalog)
    assert relations.twins == [] and relations.containment == []


def test_a_family_of_yearly_tables_weighs_like_one_table() -> None:
    census = {f"acs__county_{year}_5yr": ["geo_id", "population"] for year in range(2007, 2021)}
    catalog = [
        db("census", census),
        db("covid", {**census, "covid__cases": ["date", "county", "cases"]}),
        db("fec", {**census, "fec__contributions": ["cmte_id", "amount"]}),
    ]
    # 14 of 15 tables shared: twins by the plain measure, not when the family weighs as one
    assert len(find_twins(catalog)[0].members) == 3
    relations = find_relations(catalog)
    assert relations.twins == []
    (group,) = relations.containment
    assert group.base == "census" and group.copies == ("covid", "fec")
    assert relations.related["covid"] == {"census", "fec"}


# -- properties ----------------------------------------------------------------------------

_TABLES = st.sampled_from(["t0", "t1", "t2", "ds__t3", "ds__1t4", "t_2020", "t_2021"])
_COLUMNS = st.lists(
    st.sampled_from([f"c{i}" for i in range(5)]), min_size=1, max_size=4, unique=True
)
_SCHEMAS = st.dictionaries(_TABLES, _COLUMNS, min_size=1, max_size=4)


def _as_snowflake(tables: dict[str, list[str]], rng: random.Random) -> dict[str, list[str]]:
    renamed = upper_sf(tables)
    return {(name if rng.random() < 0.5 else name.lower()): cols for name, cols in renamed.items()}


@settings(max_examples=150, deadline=None)
@given(st.lists(_SCHEMAS, min_size=2, max_size=8), st.randoms(use_true_random=False))
def test_containment_survives_renaming_by_engine_conventions(
    schemas: list[dict[str, list[str]]], rng: random.Random
) -> None:
    base, *others = schemas
    copy = {**base, "extra__table": ["e"]}
    databases = [
        db("base", base),
        db("copy", copy),
        *(db(f"o{i}", s) for i, s in enumerate(others)),
    ]
    renamed = [db("base", base), db("copy", _as_snowflake(copy, rng)), *databases[2:]]
    for estate in (databases, renamed):
        schemas_ = catalog_schemas(estate)
        weights = rarity_weights(schemas_)
        assert containment(schemas_["base"], schemas_["copy"], weights) == 1.0
        groups = {g.base: g.copies for g in find_relations(estate).containment}
        assert "copy" in groups["base"]


@settings(max_examples=150, deadline=None)
@given(st.lists(_SCHEMAS, min_size=1, max_size=8))
def test_a_database_contains_itself_and_similarity_is_symmetric(
    schemas: list[dict[str, list[str]]],
) -> None:
    estate = catalog_schemas([db(f"d{i}", s) for i, s in enumerate(schemas)])
    weights = rarity_weights(estate)
    for a, b in itertools.product(estate.values(), repeat=2):
        assert containment(a, a, weights) == 1.0 and similarity(a, a, weights) == 1.0
        assert similarity(a, b, weights) == pytest.approx(similarity(b, a, weights))


def _brute_force(
    estate: dict[str, dict[str, frozenset[str]]],
) -> tuple[set[frozenset[str]], set[tuple[str, str]]]:
    """Twin components and containment pairs, comparing every pair."""
    weights = rarity_weights(estate)
    parent = {d: d for d in estate}

    def root(x: str) -> str:
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in itertools.combinations(sorted(estate), 2):
        if similarity(estate[a], estate[b], weights) >= TWIN_THRESHOLD - 1e-9:
            parent[root(b)] = root(a)
    groups: dict[str, set[str]] = {}
    for d in estate:
        groups.setdefault(root(d), set()).add(d)
    contained = {
        (a, b)
        for a, b in itertools.permutations(sorted(estate), 2)
        if containment(estate[a], estate[b], weights) >= CONTAINS - 1e-9
        and estate[b].keys() - estate[a].keys()
    }
    return {frozenset(g) for g in groups.values() if len(g) > 1}, contained


@settings(max_examples=200, deadline=None)
@given(st.lists(_SCHEMAS, min_size=2, max_size=10), st.randoms(use_true_random=False))
def test_groups_are_exactly_those_of_comparing_every_pair_in_any_order(
    schemas: list[dict[str, list[str]]], rng: random.Random
) -> None:
    databases = [db(f"d{i}", s) for i, s in enumerate(schemas)]
    twins, contained = _brute_force(catalog_schemas(databases))
    rng.shuffle(databases)
    relations = find_relations(databases)
    assert {frozenset(g.members) for g in relations.twins} == twins
    assert {(g.base, c) for g in relations.containment for c in g.copies} == contained
    for group in relations.twins:  # symmetric: every member lists every other as related
        for member in group.members:
            assert set(group.members) - {member} <= relations.related[member]


def test_thresholds_must_be_in_range() -> None:
    with pytest.raises(ValueError, match="thresholds"):
        relations_of({}, twin_threshold=0.0)


# -- the real estate -----------------------------------------------------------------------


@pytest.mark.skipif(
    not (SPIDER2_LITE / "tables.json").exists(), reason="Spider 2.0-lite data not found"
)
def test_spider2_lite_mirrors_and_extended_copies() -> None:
    catalog = load_catalog([f"spider:{SPIDER2_LITE / 'tables.json'}"])
    relations = find_relations(catalog)
    groups = {frozenset(g.members) for g in relations.twins}
    assert frozenset({"AUSTIN", "AUSTIN_SF"}) in groups
    assert frozenset({"NOAA_DATA_SF", "noaa_data"}) in groups
    # the databases that carry the same census tables are no twins any more
    census = {"CENSUS_BUREAU_ACS_2", "census_bureau_acs_1", "covid19_usa", "fec", "sdoh"}
    assert all(len(g & census) < 2 for g in groups)
    contains = {(g.base, c) for g in relations.containment for c in g.copies}
    assert {
        ("noaa_data", "NOAA_DATA_PLUS"),
        ("stackoverflow", "STACKOVERFLOW_PLUS_SF"),
        ("GITHUB_REPOS", "GITHUB_REPOS_DATE"),
        ("PATENTS", "PATENTS_USPTO"),
    } <= contains
