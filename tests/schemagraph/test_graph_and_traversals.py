"""The schema graph and traversals: structure, and properties over generated catalogs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemagraph import (
    ROOT,
    Catalog,
    CatalogError,
    Column,
    Database,
    ForeignKey,
    Table,
    TraversalConfig,
    TraversalError,
    build_graph,
    enumerate_traversals,
    graph_stats,
    load_spider,
)
from schemagraph.traversals import walks_tried


def make_db(db_id: str, n_tables: int, edges: list[tuple[int, int]]) -> Database:
    fks: dict[int, list[ForeignKey]] = {}
    for a, b in edges:
        fks.setdefault(a, []).append(ForeignKey(f"t{a}", (f"ref{b}",), f"t{b}", ("id",)))
    tables = tuple(
        Table(
            f"t{i}",
            (Column("id", "int", True), *(Column(f"ref{j}", "int") for j in range(n_tables))),
            tuple(fks.get(i, ())),
        )
        for i in range(n_tables)
    )
    return Database(db_id, tables)


@st.composite
def catalogs(draw: st.DrawFn) -> Catalog:
    dbs = []
    for d in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 9))
        pairs = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
        edges = draw(st.lists(pairs, max_size=3 * n, unique=True))
        dbs.append(make_db(f"db{d}", n, edges))
    return Catalog(tuple(dbs))


configs = st.builds(
    TraversalConfig,
    cutoff=st.integers(1, 5),
    max_per_database=st.integers(0, 40),
    walks=st.integers(0, 6),
    seed=st.integers(0, 2**32),
)


def test_graph_has_root_databases_tables_and_fk_edges(sample_dir: Path) -> None:
    catalog = load_spider(sample_dir)
    graph = build_graph(catalog)
    assert graph.nodes[ROOT]["kind"] == "root"
    assert graph.edges[ROOT, "pets_1"]["kind"] == "database"
    assert graph.edges["pets_1", "pets_1.Pets"]["kind"] == "table"
    edge = graph.edges["pets_1.Has_Pet", "pets_1.Pets"]
    assert edge["kind"] == "foreign_key"
    assert [fk.columns for fk in edge["foreign_keys"]] == [("PetID",)]
    assert graph.nodes["pets_1.Pets"] == {"kind": "table", "db_id": "pets_1", "table": "Pets"}
    stats = graph_stats(graph)
    assert stats.databases == 8
    assert stats.tables == catalog.table_count
    assert stats.edges == stats.databases + stats.tables + stats.foreign_key_edges


def test_two_foreign_keys_between_the_same_tables_share_one_edge(sample_dir: Path) -> None:
    graph = build_graph(load_spider(sample_dir))
    # flight_2: flights.SourceAirport and flights.DestAirport both reference airports
    fks = graph.edges["flight_2.flights", "flight_2.airports"]["foreign_keys"]
    assert sorted(fk.columns for fk in fks) == [("DestAirport",), ("SourceAirport",)]


def test_ambiguous_node_ids_are_an_error() -> None:
    catalog = Catalog((make_db("a", 1, []), Database("a.t0", ())))
    with pytest.raises(CatalogError, match=r"'a\.t0' is ambiguous"):
        build_graph(catalog)


@pytest.mark.spider
def test_full_spider_graph(spider_dir: Path) -> None:
    catalog = load_spider(spider_dir)
    stats = graph_stats(build_graph(catalog))
    raw = json.loads((spider_dir / "tables.json").read_text())
    pairs = {
        (e["db_id"], *sorted((e["column_names_original"][a][0], e["column_names_original"][b][0])))
        for e in raw
        for a, b in e["foreign_keys"]
        if e["column_names_original"][a][0] != e["column_names_original"][b][0]
    }
    assert (stats.databases, stats.tables) == (166, 876)
    assert stats.foreign_key_edges == len(pairs)


@settings(max_examples=150, deadline=None)
@given(catalog=catalogs(), config=configs)
def test_traversals_are_connected_in_one_database_and_within_cutoff(
    catalog: Catalog, config: TraversalConfig
) -> None:
    graph = build_graph(catalog)
    traversals = enumerate_traversals(graph, config)
    for t in traversals:
        db = catalog.database(t.db_id)
        assert all(db.has_table(name) for name in t.tables)
        assert 1 <= len(t.tables) <= config.cutoff
        assert len(set(t.tables)) == len(t.tables)
        nodes = [f"{t.db_id}.{name}" for name in t.tables]
        # every prefix is connected: each table joins one before it along a foreign key
        for i in range(1, len(nodes)):
            assert any(
                graph.has_edge(nodes[i], prev)
                and graph.edges[nodes[i], prev]["kind"] == "foreign_key"
                for prev in nodes[:i]
            )
        assert nx.is_connected(graph.subgraph(nodes))
    # every table is covered by a single-table traversal, and table sets are unique per database
    assert sum(len(t.tables) == 1 for t in traversals) == catalog.table_count
    keys = [(t.db_id, frozenset(t.tables)) for t in traversals]
    assert len(keys) == len(set(keys))
    per_db: dict[str, int] = {}
    for t in traversals:
        if len(t.tables) > 1 and t.kind == "enumerated":
            per_db[t.db_id] = per_db.get(t.db_id, 0) + 1
    assert all(n <= config.max_per_database for n in per_db.values())


@settings(max_examples=50, deadline=None)
@given(catalog=catalogs(), config=configs)
def test_traversals_are_reproducible_from_the_seed(
    catalog: Catalog, config: TraversalConfig
) -> None:
    first = enumerate_traversals(build_graph(catalog), config)
    again = enumerate_traversals(build_graph(Catalog(tuple(reversed(catalog.databases)))), config)
    assert sorted(first, key=repr) == sorted(again, key=repr)


def test_small_databases_are_enumerated_completely() -> None:
    # a chain t0 - t1 - t2 - t3: connected sets of size <= 3 are 4 + 3 + 2
    catalog = Catalog((make_db("chain", 4, [(0, 1), (1, 2), (2, 3)]),))
    found = enumerate_traversals(build_graph(catalog), TraversalConfig(cutoff=3, walks=0))
    assert sorted(sorted(t.tables) for t in found) == sorted(
        [
            ["t0"],
            ["t1"],
            ["t2"],
            ["t3"],
            ["t0", "t1"],
            ["t1", "t2"],
            ["t2", "t3"],
            ["t0", "t1", "t2"],
            ["t1", "t2", "t3"],
        ]
    )


def test_budget_caps_a_wide_database() -> None:
    star = make_db("star", 300, [(i, 0) for i in range(1, 300)])
    config = TraversalConfig(cutoff=4, max_per_database=30, walks=5)
    found = enumerate_traversals(build_graph(Catalog((star,))), config)
    multi = [t for t in found if len(t.tables) > 1]
    assert len([t for t in multi if t.kind == "enumerated"]) <= 30
    assert len(multi) <= 35
    assert {len(t.tables) for t in multi} >= {2, 3, 4}


def test_changing_one_database_leaves_the_others_traversals_alone() -> None:
    a, b = make_db("a", 6, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]), make_db("b", 3, [(0, 1)])
    config = TraversalConfig(seed=3)
    before = enumerate_traversals(build_graph(Catalog((a, b))), config, ["a"])
    changed = make_db("b", 5, [(0, 1), (1, 2), (3, 4)])
    after = enumerate_traversals(build_graph(Catalog((a, changed))), config, ["a"])
    assert before == after


def test_same_seed_same_traversals_in_another_process(sample_dir: Path) -> None:
    code = (
        "from schemagraph import *;"
        f"g=build_graph(load_spider({str(sample_dir)!r}));"
        "print([t.id for t in enumerate_traversals(g, TraversalConfig(seed=11))])"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(runs) == 1
    graph = build_graph(load_spider(sample_dir))
    assert runs.pop().strip() == str(
        [t.id for t in enumerate_traversals(graph, TraversalConfig(seed=11))]
    )


def test_traversal_path_starts_at_the_root() -> None:
    graph = build_graph(Catalog((make_db("d", 2, [(0, 1)]),)))
    t = enumerate_traversals(graph, TraversalConfig(walks=0))[-1]
    assert t.path == (ROOT, "d", "d.t0", "d.t1") or t.path == (ROOT, "d", "d.t1", "d.t0")
    assert all(graph.has_edge(u, v) for u, v in zip(t.path, t.path[1:], strict=False))


def test_bad_arguments_are_errors_naming_them() -> None:
    with pytest.raises(TraversalError, match="cutoff must be >= 1"):
        TraversalConfig(cutoff=0)
    with pytest.raises(TraversalError, match="walks"):
        TraversalConfig(walks=-1)
    graph = build_graph(Catalog((make_db("d", 2, [(0, 1)]),)))
    with pytest.raises(TraversalError, match="unknown database 'nope'"):
        enumerate_traversals(graph, databases=["nope"])


@given(catalogs(), configs)
@settings(max_examples=60, deadline=None)
def test_every_foreign_key_is_counted_as_an_edge_a_parallel_key_or_a_self_reference(
    catalog: Catalog, config: TraversalConfig
) -> None:
    graph = build_graph(catalog)
    stats = graph_stats(graph)
    keys = [(db.id, fk) for db in catalog for fk in db.foreign_keys]
    assert stats.foreign_keys == len(keys)
    assert stats.self_references == sum(1 for _, fk in keys if fk.table == fk.ref_table)
    assert stats.foreign_keys == (
        stats.foreign_key_edges + stats.parallel_keys + stats.self_references
    )
    assert (stats.foreign_key_note() == "") == (stats.foreign_keys == stats.foreign_key_edges)
    walks = sum(1 for t in enumerate_traversals(graph, config) if t.kind == "walk")
    assert walks <= walks_tried(graph, config)
    joined = sum(1 for db in catalog if any(fk.table != fk.ref_table for fk in db.foreign_keys))
    assert walks_tried(graph, config) == config.walks * joined


def test_the_foreign_key_note_says_why_keys_and_edges_differ() -> None:
    # t0 -> t1 and t1 -> t0 (one pair, two keys), t1 -> t1 (a self-reference), t1 -> t2
    db = make_db("db", 3, [(0, 1), (1, 0), (1, 1), (1, 2)])
    stats = graph_stats(build_graph(Catalog((db,))))
    assert (stats.foreign_keys, stats.foreign_key_edges) == (4, 2)
    assert stats.foreign_key_note() == (
        "4 foreign keys: 1 joins a pair of tables already joined; 1 references its own table"
    )


def test_graph_stats_counts_the_foreign_keys_catalog_show_counts(sample_dir: Path) -> None:
    sample = graph_stats(build_graph(load_spider(sample_dir)))
    assert sample.foreign_key_note() == "45 foreign keys: 2 join a pair of tables already joined"
