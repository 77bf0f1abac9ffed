"""The build's plan (`indexer.building.plan`): what to synthesize, carry over, remove and rewrite,
decided from the catalog and the served manifest alone, with no store, model or embedding."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from indexer.building.plan import (
    BuildPlan,
    plan_build,
    routing_databases,
    synthesis_signature,
    table_signature,
    traversal_key,
)
from indexer.examples.stored import StoredExample
from schemagraph import (
    Catalog,
    TraversalConfig,
    build_graph,
    database_fingerprint,
    enumerate_traversals,
    load_catalog,
    table_fingerprint,
)
from schemagraph.containment import EstateRelations, find_relations
from schemagraph.families import collapse_families
from schemarag.samples import SPIDER_SAMPLE
from store.manifest import Manifest

EMBEDDER = "hashing:64"
CATALOG: Catalog = collapse_families(load_catalog([f"spider:{SPIDER_SAMPLE}"]))
TRAVERSALS = enumerate_traversals(build_graph(CATALOG), TraversalConfig(max_per_database=4))
SIGNATURE = synthesis_signature("template", EMBEDDER, 1, 1, 0, TraversalConfig().__dict__)


def example(db_id: str, table: str, n: int, fingerprint: str | None = None) -> StoredExample:
    real = CATALOG.database(db_id).table(table)
    return StoredExample(
        id=f"ex_{db_id}_{table}_{n}",
        question=f"question {n} about {table}",
        sql=f"SELECT * FROM {table}",
        db_id=db_id,
        tables=(table,),
        fingerprints=((table, fingerprint or table_fingerprint(real)),),
        source="test.jsonl",
        line=n,
    )


EXAMPLES = [example(db.id, db.tables[0].name, i) for i, db in enumerate(CATALOG)]


def plan(
    served: Manifest | None,
    examples: Sequence[StoredExample] = (),
    *,
    full: bool = False,
    seed: int = 0,
) -> BuildPlan:
    return plan_build(
        CATALOG, TRAVERSALS, SIGNATURE, served, examples, embedder=EMBEDDER, seed=seed, full=full
    )


def published(planned: BuildPlan, build_id: str = "b1") -> Manifest:
    """The manifest of the build `planned` makes once every traversal is done."""
    done = [*planned.synthesize, *planned.embed_examples]
    return Manifest(
        build_id=build_id,
        created_at="2026-01-01T00:00:00+00:00",
        base=planned.base,
        embedder=EMBEDDER,
        dim=64,
        synthesizer="template",
        collections={},
        databases={db.id: database_fingerprint(db) for db in CATALOG},
        sources=[{"kind": "spider", "spec": "spider:/data/spider"}],
        traversal_keys=planned.published_traversals(done),
        examples=planned.published_examples(done),
        table_documents=table_signature(0),
    )


FIRST = plan(None, EXAMPLES)
SERVED = published(FIRST)
KEYS = sorted(FIRST.traversals)


def test_a_first_build_synthesizes_everything_and_removes_nothing() -> None:
    assert FIRST.base is None and FIRST.rewrite_documents is None
    assert FIRST.synthesize == tuple(KEYS) and len(KEYS) == len(TRAVERSALS) > 0
    assert FIRST.remove == () and FIRST.reused == 0 and not FIRST.up_to_date
    assert FIRST.embed_examples == tuple(sorted(FIRST.examples.keyed))
    assert len(FIRST.examples.keyed) == len(EXAMPLES)


def test_an_unchanged_catalog_is_up_to_date_and_plans_the_same_twice() -> None:
    again = plan(SERVED, EXAMPLES)
    assert again.up_to_date and again.base == "b1" and again.reused == len(KEYS)
    assert again.rewrite_documents == frozenset()
    assert again == plan(SERVED, EXAMPLES) and again.plan_id == plan(SERVED, EXAMPLES).plan_id


@given(
    missing=st.sets(st.sampled_from(KEYS)),
    extra=st.sets(st.text("0123456789abcdef", min_size=32, max_size=32)),
)
def test_keys_the_served_build_lacks_are_synthesized_and_vanished_ones_removed(
    missing: set[str], extra: set[str]
) -> None:
    held = [k for k in SERVED.traversal_keys if k not in missing] + sorted(extra - set(KEYS))
    planned = plan(SERVED.but(traversal_keys=held), EXAMPLES)
    assert planned.synthesize == tuple(sorted(missing))
    assert planned.remove == tuple(sorted(extra - set(KEYS)))
    assert planned.reused == len(KEYS) - len(missing)
    assert planned.up_to_date == (not missing and not (extra - set(KEYS)))
    assert planned.published_traversals(planned.synthesize) == KEYS
    assert planned.published_traversals(()) == sorted(set(KEYS) - missing)
    if missing or extra - set(KEYS):
        assert planned.plan_id != plan(SERVED, EXAMPLES).plan_id


@given(changed=st.sets(st.sampled_from([db.id for db in CATALOG])), gone=st.booleans())
def test_table_documents_are_rewritten_for_changed_and_gone_databases_only(
    changed: set[str], gone: bool
) -> None:
    before = {d: ("0" * 64 if d in changed else fp) for d, fp in SERVED.databases.items()}
    if gone:
        before["no_longer_there"] = "1" * 64
    planned = plan(SERVED.but(databases=before), EXAMPLES)
    assert planned.rewrite_documents == frozenset(
        changed | ({"no_longer_there"} if gone else set())
    )


def test_documents_of_another_seed_or_version_are_all_rewritten() -> None:
    assert plan(SERVED, EXAMPLES, seed=1).rewrite_documents is None
    old = SERVED.but(table_documents={"seed": 0, "version": 1})
    assert plan(old, EXAMPLES).rewrite_documents is None and not plan(old, EXAMPLES).up_to_date


def test_a_full_build_starts_from_nothing_but_still_reports_the_served_examples() -> None:
    planned = plan(SERVED, EXAMPLES, full=True)
    assert planned.base is None and planned.rewrite_documents is None
    assert planned.synthesize == tuple(KEYS) and planned.remove == ()
    assert planned.served_examples == SERVED.examples
    assert planned.published_examples(()) == {}


@given(stale=st.sets(st.integers(0, len(EXAMPLES) - 1)), removed=st.booleans())
def test_users_examples_whose_table_changed_are_dropped_and_reported(
    stale: set[int], removed: bool
) -> None:
    stored = [
        dataclasses.replace(e, fingerprints=((e.tables[0], "f" * 64),)) if i in stale else e
        for i, e in enumerate(EXAMPLES)
    ]
    if removed:
        stored = stored[1:]
    planned = plan(SERVED, stored)
    kept = [e for i, e in enumerate(EXAMPLES) if i not in stale and (i > 0 or not removed)]
    assert sorted(e.id for e in planned.examples.keyed.values()) == sorted(e.id for e in kept)
    assert {d.id for d in planned.dropped_examples} == {
        EXAMPLES[i].id for i in stale if i > 0 or not removed
    }
    assert all("changed since" in d.reason for d in planned.dropped_examples)
    gone_keys = {SERVED.examples[e.id] for e in EXAMPLES if e.id not in {k.id for k in kept}}
    assert set(planned.remove) == gone_keys and planned.embed_examples == ()
    assert planned.published_examples(()) == {e.id: SERVED.examples[e.id] for e in kept}


@pytest.mark.parametrize(
    "key",
    [
        "traversal_keys",
        "examples",
        "table_documents",
        "containment",
        "related",
        "sources",
        "dialects",
    ],
)
def test_a_manifest_reads_back_as_written_keys_absent_from_older_builds_included(key: str) -> None:
    written = SERVED.to_json()
    assert list(written) == [
        "build_id",
        "created_at",
        "base",
        "embedder",
        "dim",
        "synthesizer",
        "collections",
        "databases",
        "sources",
        "dialects",
        "runnable",
        "twins",
        "containment",
        "related",
        "families",
        "traversal_keys",
        "examples",
        "layout",
        "table_documents",
        "report",
    ]
    assert (
        Manifest.from_json(written) == SERVED and Manifest.from_json(written).to_json() == written
    )
    older = {k: v for k, v in written.items() if k != key} | {"from_the_future": [1]}
    read = Manifest.from_json(older)
    assert read.to_json() == older and list(read.to_json()) == list(older)
    assert key in read.but(**{key: getattr(SERVED, key)}).to_json()


def test_a_manifest_names_the_spec_of_its_embedder() -> None:
    assert Manifest.from_json(
        {"embedder": "minilm:all-MiniLM-L6-v2+schema-v2"}
    ).embedder_spec() == ("minilm+schema")
    assert Manifest.from_json({"embedder": "hashing:256"}).embedder_spec() == "hashing:256"
    assert Manifest.from_json({}).embedder_spec() == "minilm"


def test_a_manifest_types_twins_containment_and_families_and_writes_them_as_read() -> None:
    from schemagraph.containment import ContainmentGroup
    from schemagraph.families import TableFamily
    from schemagraph.twins import TwinGroup
    from store.manifest import Containment, Family, Twins

    twins = TwinGroup(("pets_1", "pets_eu"), False, 0.912, {"pets_eu": ("pets.vip",), "pets_1": ()})
    copies = ContainmentGroup("noaa", ("noaa_plus",), {"noaa_plus": ("gsod2024",)})
    shards = TableFamily("ga", "ga_sessions_", "ga_sessions_YYYYMMDD", "date", ("ga_20170801",))
    written = SERVED.but(
        twins=[Twins.from_json(twins.as_dict())],
        containment=[Containment.from_json(copies.as_dict())],
        families=[Family.from_json(shards.as_dict())],
    ).to_json()
    assert written["twins"] == [twins.as_dict()]
    assert written["containment"] == [copies.as_dict()]
    assert written["families"] == [shards.as_dict()]
    read = Manifest.from_json(json.loads(json.dumps(written)))
    assert read.to_json() == written
    (group,) = read.twins
    assert group.members == ("pets_1", "pets_eu") and group.only == {"pets_eu": ("pets.vip",)}
    assert read.containment[0].adds == {"noaa_plus": ("gsod2024",)}
    (family,) = read.families
    assert (family.database, family.last, family.tables) == ("ga", "ga_20170801", 1)


def test_routing_keys_go_to_warehouses_once_per_twin_group() -> None:
    """A warehouse gets routing keys, its mirror does not (the first of the twins by id does),
    and a SQLite database never; the traversal keys say which."""
    sample = load_catalog([f"spider:{SPIDER_SAMPLE}"])
    pets = sample.database("pets_1")
    singers = sample.database("concert_singer")
    catalog = Catalog(
        (
            dataclasses.replace(pets, id="PETS_SF", dialect="snowflake", path=None),
            dataclasses.replace(pets, id="pets", dialect="bigquery", path=None),
            dataclasses.replace(singers, dialect="bigquery", path=None),
            pets,
        )
    )
    assert routing_databases(catalog, lambda: find_relations(catalog)) == {
        "pets",
        "concert_singer",
    }

    def unasked() -> EstateRelations:
        raise AssertionError("an estate without a warehouse needs no relations")

    assert routing_databases(Catalog((pets,)), unasked) == frozenset()
    db = catalog.database("pets")
    traversal = enumerate_traversals(build_graph(catalog))[0]
    assert traversal_key(db, traversal, "s", True) != traversal_key(db, traversal, "s")
