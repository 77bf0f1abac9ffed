"""Test databases (FK-preserving random rows, fuzzing) and test-case re-ranking."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from generator import Executed, TestCaseConfig, build_test_database, rerank_by_tests
from generator.errors import GeneratorConfigError, NoDataError
from generator.execution import Candidate, Runner
from generator.reranking import parse_expected, same_result
from generator.testdb import parse_tables, reverse_fk_order, write_rows
from providers import LLMRequest, ScriptedLLM
from schemagraph import Catalog, Database
from schemagraph.model import fold
from schemagraph.sql import QueryResult, execute

Make = Callable[..., list[Executed]]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_reverse_fk_order_puts_tables_before_the_tables_they_reference(catalog: Catalog) -> None:
    for db in catalog:
        order = [fold(n) for n in reverse_fk_order(db)]
        assert sorted(order) == sorted(fold(t.name) for t in db.tables)
        for fk in db.foreign_keys:
            if fold(fk.table) != fold(fk.ref_table):
                assert order.index(fold(fk.table)) < order.index(fold(fk.ref_table)), (db.id, fk)


@pytest.mark.parametrize("db_id", ["car_1", "dog_kennels", "student_transcripts_tracking"])
def test_random_test_database_keeps_foreign_keys_and_leaves_the_source_alone(
    catalog: Catalog, tmp_path: Path, db_id: str
) -> None:
    db = catalog.database(db_id)
    assert db.path is not None
    before = _digest(db.path)
    test = build_test_database(db, tmp_path, "random", seed=11, max_rows=5)
    assert _digest(db.path) == before
    assert test.path.parent == tmp_path and test.row_count > 0
    with closing(sqlite3.connect(test.path)) as conn:
        for fk in db.foreign_keys:
            for own, ref in zip(fk.columns, fk.ref_columns, strict=True):
                children = {
                    str(r[0])
                    for r in conn.execute(f'SELECT "{own}" FROM "{fk.table}"')
                    if r[0] is not None
                }
                with closing(sqlite3.connect(db.path)) as real:
                    exists = {
                        str(r[0]) for r in real.execute(f'SELECT "{ref}" FROM "{fk.ref_table}"')
                    }
                parents = {str(r[0]) for r in conn.execute(f'SELECT "{ref}" FROM "{fk.ref_table}"')}
                # every child value that points at a real parent row brought that row along
                assert children & exists <= parents, (fk, children - parents)


def test_random_test_databases_are_small_seeded_and_differ_by_seed(
    catalog: Catalog, tmp_path: Path
) -> None:
    db = catalog.database("concert_singer")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = build_test_database(db, tmp_path / "a", "random", seed=1)
    again = build_test_database(db, tmp_path / "b", "random", seed=1)
    other = build_test_database(db, tmp_path, "random", seed=2)
    assert first.tables == again.tables
    assert first.tables != other.tables
    assert all(len(t.rows) <= 5 for t in first.tables if t.name in ("stadium", "singer_in_concert"))


def test_fuzzed_test_database_has_synthetic_rows_with_valid_references(
    catalog: Catalog, tmp_path: Path
) -> None:
    db = catalog.database("pets_1")
    test = build_test_database(db, tmp_path, "fuzz", seed=5, max_rows=4)
    tables = {fold(t.name): t for t in test.tables}
    assert all(1 <= len(t.rows) <= 4 for t in test.tables)
    student_ids = {r[0] for r in tables["student"].rows}
    pet_ids = {r[0] for r in tables["pets"].rows}
    for stuid, petid in tables["has_pet"].rows:
        assert stuid in student_ids and petid in pet_ids


def test_rendered_contents_parse_back_exactly(catalog: Catalog, tmp_path: Path) -> None:
    test = build_test_database(catalog.database("car_1"), tmp_path, "random", seed=3)
    assert tuple(parse_tables(test.render())) == test.tables
    assert all(json.loads(line)["table"] for line in test.render().splitlines())


def test_long_text_is_cut_on_insert(catalog: Catalog, tmp_path: Path) -> None:
    test = build_test_database(
        catalog.database("dog_kennels"), tmp_path, "random", seed=3, max_value_chars=8
    )
    assert all(len(v) <= 8 for t in test.tables for r in t.rows for v in r if isinstance(v, str))


def test_test_database_needs_data_and_valid_arguments(concert: Database, tmp_path: Path) -> None:
    with pytest.raises(GeneratorConfigError, match="method"):
        build_test_database(concert, tmp_path, "magic", seed=0)
    with pytest.raises(GeneratorConfigError, match="max_rows"):
        build_test_database(concert, tmp_path, "random", seed=0, max_rows=0)
    ddl_db = Database("nodata", concert.tables)
    with pytest.raises(NoDataError):
        build_test_database(ddl_db, tmp_path, "random", seed=0)


@pytest.mark.parametrize(
    ("reply", "rows"),
    [
        ('{"columns": ["n"], "rows": [[4]]}', [(4,)]),
        ('```json\n[[1, "a"], [2, "b"]]\n```', [(1, "a"), (2, "b")]),
        ('The answer is ["x", "y"]', [("x",), ("y",)]),
        ('{"rows": []}', []),
        ("no idea", None),
        ('{"columns": ["n"]}', None),
    ],
)
def test_expected_results_are_read_tolerantly(reply: str, rows: list | None) -> None:
    assert parse_expected(reply) == rows


def test_relaxed_comparison_allows_extra_columns_and_rounding() -> None:
    assert same_result([(1,), (2,)], [(2, "b"), (1, "a")])
    assert same_result([(0.33333,)], [(1 / 3,)])
    assert not same_result([(1,)], [(1,), (2,)])


def _oracle(concert: Database, gold: str, folder: Path) -> ScriptedLLM:
    """Rebuilds the test database shown in the prompt and answers the gold query's result."""

    def reply(request: LLMRequest) -> str:
        text = request.messages[-1].content
        data = text.split("<data>\n", 1)[1].split("\n</data>", 1)[0]
        path = folder / f"oracle-{len(list(folder.iterdir()))}.sqlite"
        assert concert.path is not None
        write_rows(concert.path, concert, parse_tables(data), path)
        outcome = execute(path, gold)
        assert isinstance(outcome, QueryResult)
        return json.dumps({"rows": [list(r) for r in outcome.rows]})

    return ScriptedLLM(reply, model="oracle")


def test_reranking_prefers_the_candidate_that_passes_the_tests(
    concert: Database, run_all: Make, tmp_path: Path
) -> None:
    gold = "SELECT Name FROM singer WHERE Age > 30"
    wrong = "SELECT Name FROM singer"
    executed = run_all(wrong, wrong, gold)  # the wrong one has the majority
    oracle = _oracle(concert, gold, tmp_path)
    selection = rerank_by_tests(
        "Names of singers older than 30?", concert, executed, oracle, schema="singer(...)"
    )
    assert selection.sql == gold
    assert selection.details["groups"] == [[0, 1], [2]]
    tests = selection.details["tests"]
    assert tests and all(t["prediction"] for t in tests) and 2 in tests[0]["passed"]
    assert selection.details["distinguished"] is True
    assert oracle.call_count == len(tests) == 1  # one useful test tells the groups apart


def test_reranking_needs_no_call_when_all_runnable_candidates_agree(
    concert: Database, run_all: Make
) -> None:
    oracle = ScriptedLLM("[[6]]", model="oracle")
    executed = run_all(
        "SELECT nope", "SELECT count(*) FROM singer", "SELECT COUNT(Name) FROM singer"
    )
    selection = rerank_by_tests("How many singers?", concert, executed, oracle, schema="")
    assert selection.position == 1 and oracle.call_count == 0
    assert "same result" in selection.reason


def test_reranking_with_useless_predictions_stops_at_the_limit_and_falls_back(
    concert: Database, run_all: Make
) -> None:
    oracle = ScriptedLLM("I cannot tell.", model="oracle")
    executed = run_all(
        "SELECT Name FROM singer",
        "SELECT Name FROM singer WHERE Age > 30",
        "SELECT Name FROM singer WHERE Age > 30",
    )
    config = TestCaseConfig(max_tests=2, max_builds=6)
    selection = rerank_by_tests("q", concert, executed, oracle, schema="", config=config)
    assert oracle.call_count == 2
    assert selection.details["distinguished"] is False
    assert selection.position == 1  # no passes anywhere: the bigger group wins


def test_reranking_breaks_pass_ties_by_logprob(concert: Database, concert_runner: Runner) -> None:
    candidates = [
        Candidate(0, "SELECT Name FROM singer", "m", logprob=-5.0),
        Candidate(1, "SELECT Name FROM singer WHERE Age > 30", "m", logprob=-1.0),
    ]
    executed = [Executed(c, concert_runner(c.sql or "")) for c in candidates]
    oracle = ScriptedLLM("nothing useful", model="oracle")
    selection = rerank_by_tests(
        "q", concert, executed, oracle, schema="", config=TestCaseConfig(max_tests=1, max_builds=2)
    )
    assert selection.position == 1


def test_reranking_with_nothing_runnable_returns_the_first_with_sql(
    concert: Database, run_all: Make
) -> None:
    selection = rerank_by_tests(
        "q", concert, run_all(None, "SELECT nope"), ScriptedLLM("[]"), schema=""
    )
    assert selection.position == 1 and "no candidate ran" in selection.reason


def test_test_case_config_is_validated() -> None:
    with pytest.raises(GeneratorConfigError, match="max_builds"):
        TestCaseConfig(max_tests=3, max_builds=2)
    with pytest.raises(GeneratorConfigError, match="methods"):
        TestCaseConfig(methods=("magic",))
