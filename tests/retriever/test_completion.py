"""Foreign-key path completion."""

from __future__ import annotations

from retriever.completion import complete_tables, fk_adjacency, join_paths
from retriever.tables import ForeignKeyRef, TableEntry


def _entry(name: str, *refs: str) -> TableEntry:
    return TableEntry(
        "db", name, name, foreign_keys=tuple(ForeignKeyRef(("x",), r, ("id",)) for r in refs)
    )


GRAPH = fk_adjacency(
    [
        _entry("student"),
        _entry("pets"),
        _entry("has_pet", "student", "pets"),
        _entry("a"),
        _entry("b", "a"),
        _entry("c", "b"),
        _entry("d", "c"),
        _entry("island"),
    ]
)


def test_a_many_to_many_link_table_is_added_as_a_bridge() -> None:
    assert complete_tables(GRAPH, ["student", "pets"]) == [
        ("student", False),
        ("pets", False),
        ("has_pet", True),
    ]


def test_a_longer_path_adds_every_table_on_it() -> None:
    assert complete_tables(GRAPH, ["a", "d"]) == [
        ("a", False),
        ("d", False),
        ("b", True),
        ("c", True),
    ]


def test_connected_tables_need_no_bridge() -> None:
    assert complete_tables(GRAPH, ["student", "has_pet"]) == [
        ("student", False),
        ("has_pet", False),
    ]


def test_a_table_chosen_after_it_was_added_as_a_bridge_is_no_longer_a_bridge() -> None:
    assert complete_tables(GRAPH, ["student", "pets", "has_pet"]) == [
        ("student", False),
        ("pets", False),
        ("has_pet", False),
    ]


def test_a_table_without_a_path_stays_alone() -> None:
    assert complete_tables(GRAPH, ["student", "island"]) == [("student", False), ("island", False)]


def test_self_references_and_unknown_targets_are_ignored() -> None:
    graph = fk_adjacency([_entry("t", "t", "missing")])
    assert graph == {"t": set()}


def test_join_paths_say_which_tables_each_bridge_joins() -> None:
    assert join_paths(GRAPH, ["a", "d", "student", "pets"]) == [
        ("a", None),
        ("d", None),
        ("b", ("a", "d")),
        ("c", ("a", "d")),
        ("student", None),
        ("pets", None),
        ("has_pet", ("student", "pets")),
    ]
    # a bridge chosen later is chosen: nothing joins it
    assert join_paths(GRAPH, ["student", "pets", "has_pet"]) == [
        ("student", None),
        ("pets", None),
        ("has_pet", None),
    ]
