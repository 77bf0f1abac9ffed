"""A table whose columns have no type, or that was read with no column at all, does not break
synthesis (issue 45: "synthesis failed for BowlingLeague ['sqlite_sequence']: tuple index out
of range")."""

from __future__ import annotations

from pathlib import Path

from indexer.synthesis.pairs import SynthesisRequest
from indexer.synthesis.templates import TemplateSynthesizer, feasible_operators
from indexer.validate import validate_sql
from schemagraph import Traversal, build_graph, enumerate_traversals, load_catalog
from schemagraph.model import Column, Database, Table

SYNTH = TemplateSynthesizer()

BOWLING = """CREATE TABLE sqlite_sequence(name,seq);
CREATE TABLE Bowlers (BowlerID INTEGER PRIMARY KEY, BowlerLastName TEXT, TeamID INT);
"""


def test_sqlite_sequence_from_ddl_synthesizes_without_failing(tmp_path: Path) -> None:
    (tmp_path / "BowlingLeague.sql").write_text(BOWLING)
    catalog = load_catalog([f"ddl[sqlite]:{tmp_path}"])
    db = catalog.database("BowlingLeague")
    traversals = enumerate_traversals(build_graph(catalog))
    assert ("sqlite_sequence",) in {t.tables for t in traversals}
    for traversal in traversals:
        for seed in range(4):
            request = SynthesisRequest(db, traversal, None, count=4, seed=seed)
            pairs = SYNTH.synthesize(request)  # raised IndexError on sqlite_sequence
            feasible_operators(request)
            for pair in pairs:
                assert validate_sql(db, pair.sql).ok, pair.sql
                assert set(validate_sql(db, pair.sql).tables) == set(traversal.tables)
    bowlers = Traversal(db.id, ("Bowlers",), "enumerated")
    assert SYNTH.synthesize(SynthesisRequest(db, bowlers, None, count=3))


def test_typeless_columns_get_pairs_that_name_them() -> None:
    table = Table("sqlite_sequence", (Column("name"), Column("seq")))
    db = Database("BowlingLeague", (table,))
    traversal = Traversal(db.id, ("sqlite_sequence",), "enumerated")
    found = []
    for seed in range(5):
        found += SYNTH.synthesize(SynthesisRequest(db, traversal, None, count=3, seed=seed))
    assert found
    for pair in found:
        assert validate_sql(db, pair.sql).ok, pair.sql
    assert any("name" in p.sql for p in found)


def test_a_table_without_columns_gets_no_pairs_and_no_operators() -> None:
    db = Database("BowlingLeague", (Table("sqlite_sequence", ()),))
    request = SynthesisRequest(db, Traversal(db.id, ("sqlite_sequence",), "enumerated"), None)
    assert SYNTH.synthesize(request) == []
    assert feasible_operators(request) == frozenset()
