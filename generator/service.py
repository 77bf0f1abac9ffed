"""`generate`: what `POST /v1/generate` and `schemarag ask` call.

    request = GenerateRequest.from_dict({"question": "How many singers are there?",
                                         "db_id": "concert_singer", "execute": True})
    result = generate(request, catalog=catalog, models=Models((llm,)))
    result.as_dict()   # JSON-ready: sql, tables, trace, execution rows, usage

Without `db_id` a retriever (anything with `retrieve(question, top_databases, top_tables)`
returning a `retriever.RetrievalResult`) chooses the database, its tables and the few-shot
examples; without either, `RetrievalNeededError`. When the retriever abstains (no database
seems to fit), the result has no SQL and says so.

JSON contract of `GenerateResult.as_dict()`:
`{"question", "db_id", "sql", "strategy", "tables", "presql", "hardness", "abstained",
  "execution": null | {"ok", "columns", "rows", "row_count", "truncated"} | {"ok": false,
  "error"}, "retrieval": null | {"confidence", "databases": [{"db_id", "score",
  "chosen_tables"}], "examples": n}, "trace": [{"stage", ...}], "usage": null | {...}}`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from generator.errors import GeneratorConfigError, GeneratorError, RetrievalNeededError
from generator.execution import database_runner, outcome_summary
from generator.limits import MAX_QUESTION_CHARS
from generator.prompt import FewShot
from generator.strategies import (
    DEFAULT_STRATEGY,
    STRATEGIES,
    GenerationConfig,
    GenerationResult,
    Models,
    generate_sql,
)
from providers import UsageMeter
from retriever.result import Example, RetrievalResult
from schemagraph import Catalog, Database, compact_text
from schemagraph.sql import Limits


class SchemaRetriever(Protocol):
    """What `generate` needs from a retriever (`retriever.Retriever` is one)."""

    def retrieve(
        self,
        question: str,
        top_databases: int = 5,
        top_tables: int = 10,
        *,
        dialect: str | None = None,
    ) -> RetrievalResult: ...


@dataclass(frozen=True)
class GenerateRequest:
    """One generation: the question, optionally the database and its tables, the strategy,
    whether to run the final SQL and how many rows to return."""

    question: str
    db_id: str | None = None
    tables: tuple[str, ...] | None = None
    strategy: str = DEFAULT_STRATEGY
    execute: bool = False
    max_rows: int = 100
    top_databases: int = 5
    top_tables: int = 10
    #: retrieval ranks only the databases whose SQL is written in it (`Retriever.retrieve`)
    dialect: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.question, str) or not self.question.strip():
            raise GeneratorConfigError("question must be a non-empty string")
        if len(self.question) > MAX_QUESTION_CHARS:
            raise GeneratorConfigError(
                f"question must be at most {MAX_QUESTION_CHARS} characters, "
                f"got {len(self.question)}"
            )
        if self.strategy not in STRATEGIES:
            raise GeneratorConfigError(
                f"unknown strategy {self.strategy!r}; choose one of {', '.join(STRATEGIES)}"
            )
        if not 1 <= self.max_rows <= 10_000:
            raise GeneratorConfigError(f"max_rows must be in 1..10000, got {self.max_rows}")
        if self.top_databases < 1 or self.top_tables < 1:
            raise GeneratorConfigError("top_databases and top_tables must be >= 1")
        if self.tables is not None:
            object.__setattr__(self, "tables", tuple(self.tables))
            if not self.tables:
                raise GeneratorConfigError("tables must not be empty when given")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GenerateRequest:
        """A request from a JSON body; unknown or mistyped fields are named in the error."""
        if not isinstance(data, Mapping):
            raise GeneratorConfigError("the request body must be a JSON object")
        fields = {
            "question": str,
            "db_id": (str, type(None)),
            "tables": (list, type(None)),
            "strategy": str,
            "execute": bool,
            "max_rows": int,
            "top_databases": int,
            "top_tables": int,
        }
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise GeneratorConfigError(f"unknown field(s): {', '.join(unknown)}")
        if "question" not in data:
            raise GeneratorConfigError("field 'question' is required")
        for name, kinds in fields.items():
            if name in data:
                value = data[name]
                bad_bool = isinstance(value, bool) and kinds is int
                if not isinstance(value, kinds) or bad_bool:  # type: ignore[arg-type]
                    raise GeneratorConfigError(f"field {name!r} has the wrong type")
        values = dict(data)
        if values.get("tables") is not None:
            if not all(isinstance(t, str) for t in values["tables"]):
                raise GeneratorConfigError("field 'tables' must be a list of strings")
            values["tables"] = tuple(values["tables"])
        return cls(**values)


@dataclass(frozen=True)
class GenerateResult:
    """A generation's outcome (see the module docstring for its JSON form)."""

    question: str
    generation: GenerationResult | None
    execution: Mapping[str, Any] | None = None
    retrieval: Mapping[str, Any] | None = None
    usage: Mapping[str, Any] | None = None

    @property
    def sql(self) -> str | None:
        return self.generation.sql if self.generation is not None else None

    @property
    def abstained(self) -> bool:
        return self.generation is None

    def as_dict(self) -> dict[str, Any]:
        generation = self.generation
        base: dict[str, Any] = (
            generation.as_dict()
            if generation is not None
            else {
                "question": self.question,
                "db_id": None,
                "strategy": None,
                "sql": None,
                "refused": None,
                "tables": [],
                "presql": None,
                "hardness": None,
                "trace": [],
            }
        )
        base["abstained"] = self.abstained
        base["execution"] = dict(self.execution) if self.execution is not None else None
        base["retrieval"] = dict(self.retrieval) if self.retrieval is not None else None
        base["usage"] = dict(self.usage) if self.usage is not None else None
        return base


def generate(
    request: GenerateRequest,
    *,
    catalog: Catalog,
    models: Models,
    config: GenerationConfig | None = None,
    retriever: SchemaRetriever | None = None,
    meter: UsageMeter | None = None,
) -> GenerateResult:
    """Run `request` (see the module docstring). `config.strategy` is replaced by the
    request's strategy."""
    config = replace(config or GenerationConfig(), strategy=request.strategy)
    retrieval: dict[str, Any] | None = None
    examples: list[FewShot] = []
    tables = request.tables
    if request.db_id is not None:
        db = catalog.database(request.db_id)
    elif retriever is None:
        raise RetrievalNeededError(
            "no database named and no retriever available: name the database (--db ID, or "
            "db_id in the request) or build a knowledge base with `schemarag index build`"
        )
    else:
        found = retriever.retrieve(
            request.question, request.top_databases, request.top_tables, dialect=request.dialect
        )
        retrieval = _retrieval_summary(found)
        best = found.database
        if best is None:
            return GenerateResult(request.question, None, None, retrieval, _usage(meter))
        if best.db_id not in catalog:
            raise GeneratorError(
                f"the retriever chose database {best.db_id!r}, which is not in the catalog; "
                "load the source the index was built from (--source KIND:PATH)"
            )
        db = catalog.database(best.db_id)
        tables = tables or (best.chosen_tables or None)
        examples = few_shots(catalog, found.examples)
    generation = generate_sql(
        request.question, db, models, tables=tables, examples=examples, config=config, meter=meter
    )
    execution = None
    if request.execute:
        execution = execute_final(db, generation.sql, request.max_rows, config.limits)
    return GenerateResult(request.question, generation, execution, retrieval, _usage(meter))


def execute_final(db: Database, sql: str | None, max_rows: int, limits: Limits) -> dict[str, Any]:
    """Run the final SQL through the safe executor; the rows, or the error, as JSON."""
    if sql is None:
        return outcome_summary(None)
    run = database_runner(
        db,
        Limits(
            timeout_s=limits.timeout_s, max_rows=max_rows, max_value_bytes=limits.max_value_bytes
        ),
    )
    return outcome_summary(run(sql), max_rows=max_rows)


def few_shots(catalog: Catalog, examples: Sequence[Example]) -> list[FewShot]:
    """Retrieved examples as few-shot prompts, with their tables' schema when it is known."""
    shots = []
    for example in examples:
        schema = ""
        if example.db_id in catalog:
            db = catalog.database(example.db_id)
            known = [t for t in example.tables if db.has_table(t)]
            schema = compact_text(db, known or None)
        shots.append(FewShot(example.question, example.sql, schema))
    return shots


def _retrieval_summary(found: RetrievalResult) -> dict[str, Any]:
    return {
        "confidence": found.confidence,
        "abstained": found.abstained,
        "databases": [
            {"db_id": d.db_id, "score": d.score, "chosen_tables": list(d.chosen_tables)}
            for d in found.databases
        ],
        "examples": len(found.examples),
    }


def _usage(meter: UsageMeter | None) -> dict[str, Any] | None:
    if meter is None:
        return None
    report = meter.report()
    return {"stages": report["stages"], "total": report["total"]}
