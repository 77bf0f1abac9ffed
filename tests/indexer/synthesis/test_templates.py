"""The template synthesizer: valid, executable SQL over the traversal, questions people would
ask, deterministic per seed, honouring the operators feedback asks for."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from indexer.synthesis.feedback import operators_in
from indexer.synthesis.pairs import Feedback, QAPair, SynthesisRequest, Synthesizer
from indexer.synthesis.reward import reward
from indexer.synthesis.templates import TEMPLATE_OPERATORS, TemplateSynthesizer, feasible_operators
from indexer.validate import validate_sql
from schemagraph import (
    Catalog,
    Database,
    DatabaseSample,
    Traversal,
    build_graph,
    enumerate_traversals,
    load_spider,
    sample_database,
)

SYNTH = TemplateSynthesizer()


@pytest.fixture(scope="module")
def catalog(sample_dir: Path) -> Catalog:
    return load_spider(sample_dir)


@pytest.fixture(scope="module")
def samples(catalog: Catalog) -> dict[str, DatabaseSample | None]:
    return {db.id: sample_database(db) for db in catalog}


@pytest.fixture(scope="module")
def traversals(catalog: Catalog) -> list[Traversal]:
    return enumerate_traversals(build_graph(catalog))


def _request(
    catalog: Catalog,
    samples: dict[str, DatabaseSample | None],
    db_id: str,
    tables: tuple[str, ...],
    **changes: object,
) -> SynthesisRequest:
    db = catalog.database(db_id)
    request = SynthesisRequest(db, Traversal(db.id, tables, "enumerated"), samples[db.id])
    return replace(request, **changes)  # type: ignore[arg-type]


def _scope(db: Database, traversal: Traversal) -> Database:
    """The database restricted to the traversal's tables: SQL must not use any other."""
    return Database(db.id, tuple(db.table(t) for t in traversal.tables), db.origin, db.path)


def _assert_valid(request: SynthesisRequest, pair: QAPair) -> None:
    check = validate_sql(_scope(request.db, request.traversal), pair.sql)
    assert check.ok, f"{pair.sql}: {check.reason}"


def test_it_is_a_synthesizer() -> None:
    assert isinstance(SYNTH, Synthesizer)
    assert SYNTH.name == "template"


def test_every_sample_traversal_gets_valid_executable_pairs(
    catalog: Catalog, samples: dict[str, DatabaseSample | None], traversals: list[Traversal]
) -> None:
    """A sweep over all 139 traversals of the sample databases, two seeds, four pairs each."""
    produced = 0
    for traversal in traversals:
        db = catalog.database(traversal.db_id)
        for seed in (0, 1):
            request = SynthesisRequest(db, traversal, samples[db.id], count=4, seed=seed)
            pairs = SYNTH.synthesize(request)
            assert pairs, traversal
            assert len({p.sql for p in pairs}) == len(pairs)
            for pair in pairs:
                _assert_valid(request, pair)
            produced += len(pairs)
    assert produced >= 3.5 * 2 * len(traversals)


@settings(max_examples=80, deadline=None)
@given(
    index=st.integers(min_value=0, max_value=10_000),
    seed=st.integers(min_value=0, max_value=2**32),
    operators=st.lists(st.sampled_from(sorted(TEMPLATE_OPERATORS)), max_size=4, unique=True),
)
def test_template_sql_is_valid_for_any_seed_and_operators(
    catalog: Catalog,
    samples: dict[str, DatabaseSample | None],
    traversals: list[Traversal],
    index: int,
    seed: int,
    operators: list[str],
) -> None:
    traversal = traversals[index % len(traversals)]
    db = catalog.database(traversal.db_id)
    feedback = Feedback("use these", tuple(operators)) if operators else None
    request = SynthesisRequest(db, traversal, samples[db.id], count=2, seed=seed, feedback=feedback)
    for pair in SYNTH.synthesize(request):
        _assert_valid(request, pair)


def test_same_request_same_pairs_and_seeds_vary_them(
    catalog: Catalog, samples: dict[str, DatabaseSample | None]
) -> None:
    request = _request(catalog, samples, "pets_1", ("Student", "Has_Pet", "Pets"), count=5)
    assert SYNTH.synthesize(request) == SYNTH.synthesize(request)
    others = {tuple(SYNTH.synthesize(replace(request, seed=s))) for s in range(1, 6)}
    assert len(others) > 1


def test_several_pairs_have_different_shapes(
    catalog: Catalog, samples: dict[str, DatabaseSample | None]
) -> None:
    request = _request(catalog, samples, "concert_singer", ("singer",), count=6, seed=3)
    pairs = SYNTH.synthesize(request)
    assert len(pairs) == 6
    shapes = {frozenset(operators_in(reward(p.sql))) for p in pairs}
    assert len(shapes) >= 4


def test_previous_questions_are_not_repeated(
    catalog: Catalog, samples: dict[str, DatabaseSample | None]
) -> None:
    request = _request(catalog, samples, "car_1", ("countries", "car_makers"), count=4)
    first = SYNTH.synthesize(request)
    again = SYNTH.synthesize(replace(request, previous=tuple(first)))
    assert again
    assert not {p.sql for p in again} & {p.sql for p in first}


@pytest.mark.parametrize(
    ("db_id", "tables", "operators"),
    [
        ("concert_singer", ("singer",), ("GROUP BY", "HAVING")),
        ("concert_singer", ("singer",), ("LIKE",)),
        ("concert_singer", ("singer",), ("BETWEEN", "ORDER BY", "LIMIT")),
        ("concert_singer", ("singer",), ("SUBQUERY",)),
        ("concert_singer", ("singer",), ("DISTINCT",)),
        ("concert_singer", ("singer",), ("AVG", "MAX")),
        ("dog_kennels", ("Owners",), ("NOT", "IN")),
        ("concert_singer", ("singer",), ("AND", "OR")),
        ("concert_singer", ("stadium", "concert"), ("LEFT JOIN",)),
        ("concert_singer", ("stadium", "concert"), ("JOIN", "GROUP BY", "ORDER BY", "DESC")),
        ("pets_1", ("Student", "Has_Pet", "Pets"), ("JOIN", "LIKE", "COUNT")),
        ("pets_1", ("Student", "Has_Pet", "Pets"), ("SUBQUERY", "NOT")),
        ("dog_kennels", ("Dogs",), ("ASC", "LIMIT")),
    ],
)
def test_requested_operators_appear_in_the_sql(
    catalog: Catalog,
    samples: dict[str, DatabaseSample | None],
    db_id: str,
    tables: tuple[str, ...],
    operators: tuple[str, ...],
) -> None:
    for seed in range(5):
        request = _request(
            catalog,
            samples,
            db_id,
            tables,
            seed=seed,
            feedback=Feedback("add them", operators),
        )
        (pair,) = SYNTH.synthesize(request)
        found = operators_in(reward(pair.sql))
        assert set(operators) <= found, (pair.sql, found)
        _assert_valid(request, pair)


def test_feasible_operators_follow_the_schema_and_data(
    catalog: Catalog, samples: dict[str, DatabaseSample | None]
) -> None:
    one = feasible_operators(_request(catalog, samples, "concert_singer", ("singer",)))
    assert {"GROUP BY", "LIKE", "AVG", "BETWEEN", "SUBQUERY"} <= one
    assert "JOIN" not in one
    joined = feasible_operators(
        _request(catalog, samples, "concert_singer", ("stadium", "concert"))
    )
    assert {"JOIN", "LEFT JOIN"} <= joined
    bare = feasible_operators(_request(catalog, samples, "pets_1", ("Has_Pet",), sample=None))
    assert not {"AVG", "LIKE", "BETWEEN", "JOIN"} & bare


_FLAG_VALUES = {"0", "1", "t", "f", "y", "n", "yes", "no", "true", "false"}
_SQL_WORDS = re.compile(r"\b(SELECT|FROM|WHERE|GROUP BY|ORDER BY|HAVING|COUNT\(|T1\.)")


def _literals(sql: str) -> list[tuple[str, str]]:
    """(kind, text) of the string literals compared with = and the LIKE patterns."""
    tree = sqlglot.parse_one(sql, read="sqlite")
    found = [
        ("eq", str(node.expression.this))
        for node in tree.find_all(exp.EQ)
        if isinstance(node.expression, exp.Literal) and node.expression.is_string
    ]
    found += [("like", str(n.expression.this).strip("%")) for n in tree.find_all(exp.Like)]
    return found


def test_questions_read_like_questions_and_quote_sampled_values(
    catalog: Catalog, samples: dict[str, DatabaseSample | None], traversals: list[Traversal]
) -> None:
    checked = 0
    for traversal in traversals:
        db = catalog.database(traversal.db_id)
        request = SynthesisRequest(db, traversal, samples[db.id], count=4, seed=11)
        for pair in SYNTH.synthesize(request):
            question = pair.question
            assert question[0].isupper() and question[-1] in "?.", question
            assert not _SQL_WORDS.search(question), question
            for kind, value in _literals(pair.sql):
                if value.strip().lower() in _FLAG_VALUES:
                    continue  # a yes/no flag reads "that are abandoned", not "abandoned is 1"
                assert value.strip() in question, (kind, value, question)
                checked += 1
            text = re.sub(r"'[^']*'", "", question)
            for literal in (v for _, v in _literals(pair.sql)):
                text = text.replace(literal.strip(), "")
            assert "_" not in text, question
    assert checked > 100


def test_questions_name_the_tables_in_plain_words(
    catalog: Catalog, samples: dict[str, DatabaseSample | None]
) -> None:
    request = _request(catalog, samples, "pets_1", ("Student", "Has_Pet", "Pets"), count=6)
    for pair in SYNTH.synthesize(request):
        lowered = pair.question.lower()
        assert "student" in lowered or "pet" in lowered, pair.question
        assert "stuid" not in lowered and "has_pet" not in lowered


def test_without_data_placeholders_keep_the_sql_valid(catalog: Catalog) -> None:
    db = catalog.database("concert_singer")
    no_data = replace(db, path=None)
    traversal = Traversal(db.id, ("singer",), "enumerated")
    placeholders = 0
    for seed in range(12):
        request = SynthesisRequest(
            no_data,
            traversal,
            None,
            count=3,
            seed=seed,
            feedback=Feedback("filter", ("WHERE",)),
        )
        for pair in SYNTH.synthesize(request):
            assert validate_sql(no_data, pair.sql, execute_sql=False).ok, pair.sql
            if "'a given" in pair.sql:
                placeholders += 1
                assert "a given" in pair.question
    assert placeholders > 0


@pytest.mark.spider
@pytest.mark.slow
def test_template_sql_is_valid_on_full_spider(spider_dir: Path) -> None:
    """Every fourth traversal of the 166 Spider databases, with and without feedback."""
    catalog = load_spider(spider_dir)
    samples = {db.id: sample_database(db) for db in catalog}
    traversals = enumerate_traversals(build_graph(catalog))[::4]
    operators = sorted(TEMPLATE_OPERATORS)
    failures = []
    for number, traversal in enumerate(traversals):
        db = catalog.database(traversal.db_id)
        wanted = (operators[number % len(operators)], operators[(number * 7) % len(operators)])
        for feedback in (None, Feedback("add", wanted)):
            request = SynthesisRequest(
                db, traversal, samples[db.id], count=2, seed=number, feedback=feedback
            )
            for pair in SYNTH.synthesize(request):
                check = validate_sql(_scope(db, traversal), pair.sql)
                if not check.ok:
                    failures.append((db.id, pair.sql, check.reason))
    assert len(traversals) > 500
    assert failures == []
