"""`generate` (what /v1/generate and `ask` call): requests, retrieval, execution, JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator import GenerateRequest, Models, RetrievalNeededError, generate
from generator.errors import GeneratorConfigError, GeneratorError
from providers import ScriptedLLM, UsageMeter
from retriever import Example, RankedDatabase, RankedTable, RetrievalResult
from schemagraph import Catalog

GOOD = "SELECT count(*) FROM singer WHERE Country = 'France'"


class FakeRetriever:
    def __init__(self, result: RetrievalResult) -> None:
        self.result = result
        self.asked: list[tuple[str, int, int]] = []

    def retrieve(
        self, question: str, top_databases: int = 5, top_tables: int = 10, *, dialect=None
    ):
        self.asked.append((question, top_databases, top_tables))
        return self.result


def _retrieval(db_id: str = "concert_singer", abstained: bool = False) -> RetrievalResult:
    tables = (RankedTable("singer", 0.9, chosen=True), RankedTable("stadium", 0.2))
    return RetrievalResult(
        question="q",
        databases=(RankedDatabase(db_id, 0.8, tables),),
        tables=((db_id, "singer"),),
        confidence=0.1 if abstained else 0.9,
        abstained=abstained,
        examples=(
            Example(
                "How many concerts are there?",
                "SELECT count(*) FROM concert",
                "concert_singer",
                ("concert",),
                0.7,
            ),
        ),
    )


def _models() -> Models:
    return Models((ScriptedLLM(f"```sql\n{GOOD}\n```", model="a"),))


def test_generate_with_a_database_executes_and_reports_usage(catalog: Catalog) -> None:
    request = GenerateRequest(
        "How many singers are from France?", db_id="concert_singer", execute=True, max_rows=5
    )
    result = generate(request, catalog=catalog, models=_models(), meter=UsageMeter({}))
    data = json.loads(json.dumps(result.as_dict()))
    assert data["sql"] == GOOD and data["db_id"] == "concert_singer"
    assert data["execution"] == {
        "ok": True,
        "columns": ["count(*)"],
        "rows": [[4]],
        "row_count": 1,
        "truncated": False,
    }
    assert data["retrieval"] is None and data["abstained"] is False
    assert data["usage"]["total"]["calls"] == 2
    assert {"question", "strategy", "tables", "presql", "hardness", "trace"} <= data.keys()


def test_failed_execution_is_reported_not_raised(catalog: Catalog) -> None:
    models = Models((ScriptedLLM("SELECT nope FROM singer"),))
    request = GenerateRequest("q?", db_id="concert_singer", execute=True, strategy="single")
    result = generate(request, catalog=catalog, models=models)
    assert result.execution is not None and result.execution["ok"] is False
    assert "no such column" in result.execution["error"]


def test_without_database_or_retriever_retrieval_is_needed(catalog: Catalog) -> None:
    with pytest.raises(RetrievalNeededError, match="--db ID"):
        generate(GenerateRequest("How many singers?"), catalog=catalog, models=_models())


def test_retriever_chooses_database_tables_and_examples(catalog: Catalog) -> None:
    retriever = FakeRetriever(_retrieval())
    llm = ScriptedLLM(f"```sql\n{GOOD}\n```")
    request = GenerateRequest("How many singers are from France?", top_databases=3)
    result = generate(request, catalog=catalog, models=Models((llm,)), retriever=retriever)
    assert retriever.asked == [("How many singers are from France?", 3, 10)]
    assert result.sql == GOOD and result.generation is not None
    assert result.generation.db_id == "concert_singer"
    first_prompt = llm.calls[0].messages[-1].content
    assert "CREATE TABLE singer" in first_prompt and "CREATE TABLE stadium" not in first_prompt
    assert "How many concerts are there?" in first_prompt  # the few-shot example
    assert result.as_dict()["retrieval"]["databases"][0]["chosen_tables"] == ["singer"]


def test_abstaining_retriever_gives_no_sql(catalog: Catalog) -> None:
    llm = ScriptedLLM(GOOD)
    result = generate(
        GenerateRequest("What is the weather?"),
        catalog=catalog,
        models=Models((llm,)),
        retriever=FakeRetriever(_retrieval(abstained=True)),
    )
    assert result.sql is None and result.abstained and llm.call_count == 0
    assert json.loads(json.dumps(result.as_dict()))["abstained"] is True


def test_retrieved_database_missing_from_the_catalog_is_an_error(catalog: Catalog) -> None:
    with pytest.raises(GeneratorError, match="not in the catalog"):
        generate(
            GenerateRequest("q"),
            catalog=catalog,
            models=_models(),
            retriever=FakeRetriever(_retrieval("elsewhere")),
        )


def test_request_from_json_validates_fields() -> None:
    request = GenerateRequest.from_dict(
        {"question": "How many?", "db_id": "pets_1", "tables": ["Pets"], "execute": True}
    )
    assert request.tables == ("Pets",) and request.execute
    cases: list[tuple[dict[str, Any], str]] = [
        ({}, "question"),
        ({"question": "q", "color": "red"}, "unknown field"),
        ({"question": "q", "max_rows": "10"}, "max_rows"),
        ({"question": "q", "max_rows": True}, "max_rows"),
        ({"question": "q", "tables": [1]}, "tables"),
        ({"question": "q", "strategy": "magic"}, "unknown strategy"),
        ({"question": "  "}, "non-empty"),
        ({"question": "q", "max_rows": 0}, "max_rows"),
        ({"question": "x" * 5000}, "at most"),
    ]
    for body, message in cases:
        with pytest.raises(GeneratorConfigError, match=message):
            GenerateRequest.from_dict(body)
    with pytest.raises(GeneratorConfigError):
        GenerateRequest.from_dict(["not", "an", "object"])  # type: ignore[arg-type]
