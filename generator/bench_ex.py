"""End-to-end execution accuracy on a benchmark (Spider dev): generation with a real LLM,
scored with the SQL toolkit's execution-accuracy rules, overall and by hardness, with tokens
and cost per question.

Settings, each run over the same questions:

- `gold-tables`: the gold database with only the gold SQL's tables (the "gold schema given"
  setting the papers report);
- `gold-database`: the gold database with all its tables (the usual Spider setting);
- `retrieved`: the retriever chooses the database, its tables and few-shot examples; a
  question whose database is not found (wrong database, or abstention) counts as wrong.

Questions whose database has no SQLite file are left out. A generation that fails (the
provider errors, the prompt cannot fit) counts as a wrong prediction and is reported.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from generator.errors import GeneratorConfigError, GeneratorError
from generator.service import GenerateRequest, SchemaRetriever, generate
from generator.strategies import GenerationConfig, Models, generate_sql
from providers import Price, ProviderError, UsageMeter
from retriever.datasets import BenchDataset, BenchQuestion
from schemagraph.model import fold
from schemagraph.sql import EvalCase, EvalOptions, evaluate_cases

log = logging.getLogger(__name__)

SETTINGS = ("gold-tables", "gold-database", "retrieved")


def run_ex_bench(
    dataset: BenchDataset,
    db_dir: Path,
    models: Models,
    config: GenerationConfig,
    *,
    prices: Mapping[str, Price],
    settings: Sequence[str] = ("gold-tables", "gold-database"),
    retriever: SchemaRetriever | None = None,
    limit: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Generate and score every question in every setting (see the module docstring)."""
    unknown = [s for s in settings if s not in SETTINGS]
    if unknown:
        raise GeneratorConfigError(f"unknown setting(s) {unknown}; choose from {SETTINGS}")
    if "retrieved" in settings and retriever is None:
        raise GeneratorConfigError("the retrieved setting needs a knowledge base (--store)")
    questions = [
        q
        for q in dataset.questions
        if q.db_id in dataset.catalog and dataset.catalog.database(q.db_id).path is not None
    ]
    left_out = len(dataset.questions) - len(questions)
    if limit is not None:
        questions = questions[:limit]
    report: dict[str, Any] = {
        "dataset": dataset.name,
        "strategy": config.strategy,
        "llms": [llm.name for llm in models.generators],
        "critic": models.judge.name,
        "questions": len(questions),
        "left_out_no_database_file": left_out,
        "settings": {},
    }
    for setting in settings:
        started = time.perf_counter()
        report["settings"][setting] = _run_setting(
            setting, questions, dataset, db_dir, models, config, prices, retriever, progress
        )
        report["settings"][setting]["seconds"] = round(time.perf_counter() - started, 1)
    return report


def _run_setting(
    setting: str,
    questions: Sequence[BenchQuestion],
    dataset: BenchDataset,
    db_dir: Path,
    models: Models,
    config: GenerationConfig,
    prices: Mapping[str, Price],
    retriever: SchemaRetriever | None,
    progress: Callable[[str, int, int], None] | None,
) -> dict[str, Any]:
    cases: list[EvalCase] = []
    tokens: list[int] = []
    costs: list[float] = []
    errors: list[str] = []
    right_db = 0
    for number, question in enumerate(questions, 1):
        meter = UsageMeter(prices)
        try:
            sql, db_id = _predict(setting, question, dataset, models, config, retriever, meter)
        except (GeneratorError, ProviderError) as exc:
            log.warning("question %d (%s): %s", number, setting, exc)
            errors.append(f"{number}: {exc}")
            sql, db_id = None, None
        right_db += db_id is not None and fold(db_id) == fold(question.db_id)
        if db_id is not None and fold(db_id) != fold(question.db_id):
            sql = None  # the query runs on the wrong database: wrong, whatever it returns
        cases.append(EvalCase(number, question.sql, question.db_id, " ".join((sql or "").split())))
        total = meter.report()["total"]
        tokens.append(
            total["input_tokens"]
            + total["output_tokens"]
            + total["cache_read_tokens"]
            + total["cache_write_tokens"]
        )
        costs.append(meter.total_cost())
        if progress is not None:
            progress(setting, number, len(questions))
    evaluation = evaluate_cases(cases, db_dir, EvalOptions(skip_missing_db=True)).to_json()
    count = max(len(questions), 1)
    by_level: dict[str, list[int]] = defaultdict(list)
    for case in evaluation["cases"]:
        by_level[case["hardness"]].append(tokens[case["line"] - 1])
    result = {
        "execution_accuracy": evaluation["execution_accuracy"],
        "count": evaluation["count"],
        "by_hardness": evaluation["by_hardness"],
        "tokens_per_question": round(sum(tokens) / count, 1),
        "tokens_per_question_by_hardness": {
            level: round(sum(v) / len(v), 1) for level, v in sorted(by_level.items())
        },
        "cost_per_question_usd": round(sum(costs) / count, 6),
        "generation_errors": len(errors),
        "errors": errors[:20],
    }
    if setting == "retrieved":
        result["database_accuracy"] = round(100 * right_db / count, 2)
    return result


def _predict(
    setting: str,
    question: BenchQuestion,
    dataset: BenchDataset,
    models: Models,
    config: GenerationConfig,
    retriever: SchemaRetriever | None,
    meter: UsageMeter,
) -> tuple[str | None, str | None]:
    """The predicted SQL and the database it was written for."""
    if setting == "retrieved":
        request = GenerateRequest(question.question, strategy=config.strategy)
        result = generate(
            request,
            catalog=dataset.catalog,
            models=models,
            config=config,
            retriever=retriever,
            meter=meter,
        )
        generation = result.generation
        return (result.sql, generation.db_id if generation is not None else None)
    db = dataset.catalog.database(question.db_id)
    tables = None
    if setting == "gold-tables":
        gold = {table for db_key, table in question.gold if db_key == fold(db.id)}
        tables = [t.name for t in db.tables if fold(t.name) in gold] or None
    generation = generate_sql(
        question.question, db, models, tables=tables, config=config, meter=meter
    )
    return generation.sql, db.id


def table_lines(report: dict[str, Any]) -> list[str]:
    """A markdown table: accuracy by hardness, tokens and cost per question, per setting."""
    lines = [
        "| setting | easy | medium | hard | extra | all | count | tokens/q | USD/q |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in report["settings"].items():
        levels = row["by_hardness"]
        cells = [
            f"{levels.get(k, {}).get('execution_accuracy', 0.0):.1f}"
            for k in ("easy", "medium", "hard", "extra")
        ]
        lines.append(
            f"| {name} | {' | '.join(cells)} | {row['execution_accuracy']:.1f} | {row['count']} | "
            f"{row['tokens_per_question']:.0f} | {row['cost_per_question_usd']:.5f} |"
        )
    return lines
